"""How long `kg` takes to import what a command needs, before it does anything.

Measured with `python -X importtime` (the sum of the top-level imports' cumulative times),
for `kg --help`, `kg stats` and `kg query --list`, in fresh interpreters, the current
checkout side by side with a baseline checkout (another commit's tree) so that both see the
same machine load. The figure is import time, not wall time: interpreter start-up and the
command's own work are left out.

    python bench/startup.py --baseline /tmp/kg-before --runs 7

where /tmp/kg-before is `git worktree add /tmp/kg-before <commit>` of the baseline.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {"kg --help": ["--help"], "kg stats": ["--memory", "stats"], "kg query --list": ["query", "--list"]}
_TOP_LEVEL = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def import_seconds(tree: Path, argv: list[str]) -> tuple[float, float]:
    """Seconds of imports for one run of `kg ARGV` from `tree`, in a fresh interpreter:
    what -X importtime adds up (wall time), and the CPU time of the whole command, imports
    included (less swayed by other processes on a busy machine)."""
    code = (
        "import time\n_t = time.process_time()\nfrom kg.cli import app\ntry:\n"
        f"    app({argv!r})\nexcept SystemExit:\n    pass\n"
        "import sys\nprint(f'cpu {time.process_time() - _t:.6f}', file=sys.stderr)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
        )
    lines = done.stderr.splitlines()
    micros = sum(int(m.group(1)) for line in lines if (m := _TOP_LEVEL.match(line)))
    cpu = next(float(line.split()[1]) for line in lines if line.startswith("cpu "))
    return micros / 1e6, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="a checkout of the baseline commit")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    trees = {"now": ROOT} | ({"baseline": args.baseline} if args.baseline else {})
    heads = " | ".join(f"{t}: importtime s | {t}: command CPU s" for t in trees)
    print(f"| command (median of {args.runs}) | {heads} |{' ratio (importtime) |' if args.baseline else ''}")
    print(f"| --- | {' | '.join('---' for _ in trees for _ in (0, 1))} |{' --- |' if args.baseline else ''}")
    for name, argv in COMMANDS.items():
        samples: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
        for _ in range(args.runs):  # interleaved, so both see the same load
            for label, tree in trees.items():
                samples[label].append(import_seconds(tree, argv))
        wall = {t: statistics.median(s[0] for s in v) for t, v in samples.items()}
        cpu = {t: statistics.median(s[1] for s in v) for t, v in samples.items()}
        cells = " | ".join(f"{wall[t]:.3f} | {cpu[t]:.3f}" for t in trees)
        ratio = f" {wall['baseline'] / wall['now']:.1f}x faster |" if args.baseline else ""
        print(f"| `{name}` | {cells} |{ratio}")


if __name__ == "__main__":
    main()
