"""kg's command line: a thin skin over the library. Each module registers its commands."""

from kg.cli import core  # noqa: F401  (registers ingest, stats, sparql, validate)
from kg.cli import query  # noqa: F401  (registers query)
from kg.cli import serve  # noqa: F401  (registers serve)
from kg.cli.app import app, main

__all__ = ["app", "main"]
