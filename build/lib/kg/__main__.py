"""`python -m kg` runs the CLI."""

from kg.cli import main

main()
