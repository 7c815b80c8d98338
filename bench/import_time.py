"""How long `import kg` takes, beside the imports a script or the CLI paid before.

Each variant is timed as the wall time of `python -c CODE` in a fresh interpreter, minus
the median of `python -c pass` (the interpreter's own start-up), median of RUNS runs
interleaved so that every variant sees the same machine load. The variants:

- `import kg`: the library's front door (kg.open loads the store on first use);
- `import kg; kg.open`: the front door's names resolved (kg.library, still no pyoxigraph);
- `import kg.cli.app`: what the CLI imports before it parses a command;
- the old script path: the imports docs/similarity.md's script needed before kg.open
  (kg.rdf.store, kg.graph.incidence, kg.graph.similarity: pyoxigraph, numpy, scipy).

    python bench/import_time.py --runs 15
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BARE = "pass"
VARIANTS = {
    "import kg": "import kg",
    "import kg; kg.open": "import kg; kg.open, kg.KnowledgeGraph",
    "import kg.cli.app": "import kg.cli.app",
    "old script imports": (
        "from kg.rdf.store import GraphStore; from kg.graph.incidence import load_incidence; "
        "from kg.graph.similarity import SimilarityIndex, METRICS, with_labels"
    ),
}


def wall(code: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {name: [] for name in (BARE, *VARIANTS)}
    for _ in range(args.runs):
        samples[BARE].append(wall(BARE))
        for name, code in VARIANTS.items():
            samples[name].append(wall(code))
    bare = statistics.median(samples[BARE])
    seconds = {name: statistics.median(samples[name]) - bare for name in VARIANTS}
    load = os.getloadavg()[0]
    print(f"python start-up {bare * 1000:.0f} ms (subtracted); load {load:.1f}; "
          f"median of {args.runs}")
    print("| imports | ms | against `import kg` |")
    print("| --- | ---: | ---: |")
    for name in VARIANTS:
        ratio = seconds[name] / seconds["import kg"] if seconds["import kg"] > 0 else float("nan")
        print(f"| `{name}` | {seconds[name] * 1000:.0f} | {ratio:.1f}× |")


if __name__ == "__main__":
    main()
