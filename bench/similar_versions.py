"""Cold and warm `kg similar` of two kg source trees, side by side (issue 24).

    python bench/similar_versions.py STORE BASE_SRC NEW_SRC [--rounds 3] [--paper 2003.08237]

BASE_SRC and NEW_SRC are folders holding a `kg` package (for the base, e.g.
`git archive <commit> kg | tar -x -C /tmp/base`). Each round runs, for each tree in turn,
`python -m kg --store STORE similar PAPER --json` in a fresh process twice: cold (the
store's `.kg-cache` removed first, so the links are read from the store and the index
built and written) and warm (the cache of the run before). The trees alternate within a
round so that load drifts hit both alike. Prints the medians and the ratios new / base,
with the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _run(src: Path, store: Path, paper: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-m", "kg", "--store", str(store), "similar", paper, "--json"]
    start = time.perf_counter()
    # From the source folder: `-m` puts the working directory first on sys.path.
    proc = subprocess.run(
        command, env=env, cwd=src, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--paper", default="2003.08237")
    args = parser.parse_args()
    for src in (args.base, args.new):
        probe = subprocess.run(
            [sys.executable, "-c", "import kg, sys; sys.stdout.write(kg.__file__)"],
            env={**os.environ, "PYTHONPATH": str(src)},
            cwd=src,
            capture_output=True,
            text=True,
            check=True,
        )
        if not probe.stdout.startswith(str(src.resolve())):
            raise SystemExit(f"{src} does not provide the kg package ({probe.stdout})")
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name, src in (("base", args.base), ("new", args.new)):
            shutil.rmtree(args.store / ".kg-cache", ignore_errors=True)
            times.setdefault((name, "cold"), []).append(_run(src, args.store, args.paper))
            times.setdefault((name, "warm"), []).append(_run(src, args.store, args.paper))
    load = os.getloadavg()
    print(f"kg similar {args.paper}, {args.rounds} rounds; load average {load[0]:.1f}")
    for kind in ("cold", "warm"):
        base = statistics.median(times[("base", kind)])
        new = statistics.median(times[("new", kind)])
        print(f"{kind}: base {base:.2f} s, new {new:.2f} s, new / base {new / base:.2f}")


if __name__ == "__main__":
    main()
