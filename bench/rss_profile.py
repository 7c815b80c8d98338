"""Where `kg ingest`'s memory goes as the archive grows: peak RSS by process of its tree.

    python bench/rss_profile.py --scale 0.02 0.05 [--work DIR]

For each scale, generates the five dumps (kg.testing.dumps, cached in WORK/SCALE/dumps),
runs `kg --store … ingest --json` into a fresh store as a command, and samples every
process of its tree every 0.25 s (bench/measure.py's tree walk): the ingest's own process
(mapping, the writer's Oxigraph loads) and the search index's child (kg.search.beside),
apart. Prints each one's peak, the tree's peak, when in the run each peak fell (the share
of the wall time), the quads stored, and the peak per million stored quads, so a holder
that grows with the input stands out from one bounded by the batch; writes
bench/out/rss_profile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import _children, _rss_kb, load_average  # bench/measure.py

ROOT = Path(__file__).resolve().parents[1]


def _role(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ")
    except OSError:
        return "other"
    if b"kg.search.beside" in cmd:
        return "index_child"
    if b"ingest" in cmd:
        return "ingest"
    return "other"


def sample_tree(pid: int) -> dict[str, int]:
    """KB resident by role of each process of `pid`'s tree now."""
    out: dict[str, int] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        role = _role(p)
        out[role] = out.get(role, 0) + _rss_kb(p)
        todo.extend(_children(p))
    return out


def profile(dumps: Path, store: Path) -> dict[str, Any]:
    script = Path(sys.executable).with_name("kg")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "kg"]
    argv += ["--store", str(store), "ingest", "--json", str(dumps)]
    load = load_average()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    series: list[tuple[float, dict[str, int]]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.25):
            series.append((time.perf_counter() - start, sample_tree(proc.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("kg ingest failed")
    report = json.loads(out)
    peaks: dict[str, dict[str, float]] = {}
    tree_peak, tree_at = 0, 0.0
    for t, by_role in series:
        total = sum(by_role.values())
        if total > tree_peak:
            tree_peak, tree_at = total, t
        for role, kb in by_role.items():
            if kb > peaks.get(role, {}).get("mb", 0) * 1024:
                peaks[role] = {"mb": kb / 1024, "at_share": t / wall}
    quads = report.get("store_quads") or report["quads_written"]
    return {
        "wall_seconds": wall,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "load": [load, load_average()],
        "quads": quads,
        "tree_peak_mb": tree_peak / 1024,
        "tree_peak_at_share": tree_at / wall,
        "peaks": peaks,
        "tree_mb_per_million_quads": tree_peak / 1024 / (quads / 1e6),
        "timings": report.get("timings", {}),
        "series": [(round(t, 2), {k: v // 1024 for k, v in r.items()}) for t, r in series[::8]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, nargs="+", default=[0.02, 0.05])
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-rss-profile"))
    args = parser.parse_args()
    from kg.testing.dumps import write_archive

    results: dict[str, Any] = {}
    for scale in args.scale:
        work = args.work / str(scale)
        dumps = work / "dumps"
        if not dumps.exists():
            write_archive(dumps, scale=scale)
        store = work / "store"
        subprocess.run(["rm", "-rf", str(store)], check=True)
        r = profile(dumps, store)
        results[str(scale)] = r
        roles = ", ".join(f"{role} {p['mb']:,.0f} MB (at {p['at_share']:.0%})"
                          for role, p in sorted(r["peaks"].items()))
        print(f"scale {scale}: {r['quads']:,} quads, {r['wall_seconds']:.0f} s wall, "
              f"{r['cpu_seconds']:.0f} CPU-s, load {r['load'][0]:.1f}-{r['load'][1]:.1f}; "
              f"tree peak {r['tree_peak_mb']:,.0f} MB (at {r['tree_peak_at_share']:.0%}), "
              f"{r['tree_mb_per_million_quads']:,.0f} MB per million quads; by process: {roles}",
              flush=True)
    out = ROOT / "bench" / "out" / "rss_profile.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
