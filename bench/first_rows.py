"""How soon `kg sparql` prints its first row on a pipe, and how long it takes in all, in each
format, beside a baseline tree run side by side with the same venv (issue 25).

    python bench/first_rows.py --store STORE --baseline /path/to/old/tree \\
        --query 'SELECT * WHERE { ?s ?p ?o }' --formats table,tsv,json

Each run is a fresh `kg` process whose standard output is a pipe read line by line; the
figures include the process's start. Report them as ratios with the load (`uptime`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = str(Path(__file__).resolve().parent.parent)


def measure(tree: str, argv: list[str]) -> tuple[float | None, float, int]:
    """(seconds to the first line, seconds in all, lines) of `kg ARGV` from `tree`, run in a
    neutral directory (`python -c` puts the working directory first on the path)."""
    env = {**os.environ, "PYTHONPATH": tree}
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kg.cli import main; main()", *argv],
        stdout=subprocess.PIPE,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    assert proc.stdout is not None
    first = None
    lines = 0
    for _ in proc.stdout:
        if first is None:
            first = time.monotonic() - start
        lines += 1
    proc.wait()
    return first, time.monotonic() - start, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--baseline", help="a tree holding the kg package to compare with")
    parser.add_argument("--query", default="SELECT * WHERE { ?s ?p ?o }")
    parser.add_argument("--formats", default="table,tsv,json")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f}", flush=True)
    runs: list[tuple[str, str]] = [("baseline", args.baseline)] if args.baseline else []
    runs.append(("this tree", HERE))
    for fmt in args.formats.split(","):
        for name, tree in runs:
            first, total, lines = measure(
                tree, ["--store", args.store, "sparql", args.query, "--format", fmt]
            )
            shown = "-" if first is None else f"{first:.2f}"
            print(
                f"{name:9} {fmt:6} first line {shown:>7} s  all {total:7.2f} s  {lines:,} lines",
                flush=True,
            )
    print(f"load: {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
