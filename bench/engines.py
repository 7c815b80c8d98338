"""Regenerate docs/scale-out.md's engine × named query table from a real test run.

    python bench/engines.py            # run tests/test_engines.py, print the table, update the doc
    python bench/engines.py --print    # print only

It runs the engine tests (Virtuoso, Jena, the oxigraph server and `kg serve`, each loaded
with the export of a slice of the README's example store; .ci/engines.sh installs the first two), which write the
table of outcomes to the file KG_ENGINES_TABLE names, times the whole step, and copies the
table between the `<!-- engines:start -->` and `<!-- engines:end -->` marks of the doc.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "scale-out.md"
START, END = "<!-- engines:start -->", "<!-- engines:end -->"


def splice(doc: str, table: str) -> str:
    head, _, rest = doc.partition(START)
    _, _, tail = rest.partition(END)
    if not rest:
        raise SystemExit(f"{DOC} has no {START} … {END} marks")
    return f"{head}{START}\n{table.strip()}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print the table, change no file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table_path = Path(tmp) / "engines-table.md"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             str(ROOT / "tests" / "test_engines.py")],
            cwd=ROOT,
            env={**os.environ, "KG_ENGINES_TABLE": str(table_path)},
        )
        seconds = time.monotonic() - started
        if not table_path.exists():
            print("the engine tests wrote no table (were they all skipped?)", file=sys.stderr)
            return 1
        table = table_path.read_text(encoding="utf-8")
    table += f"The whole engine test step took {seconds / 60:.1f} min on this machine.\n"
    print(table)
    if done.returncode != 0:
        print(f"the engine tests failed (exit {done.returncode}); the doc is left alone",
              file=sys.stderr)
        return done.returncode
    if not args.print:
        DOC.write_text(splice(DOC.read_text(encoding="utf-8"), table), encoding="utf-8")
        print(f"updated {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
