"""From nothing to the whole archive served, step by step, as a user runs it.

    python bench/moonshot.py [--scale 1.0] [--work /tmp/kg-moonshot] [--pages 20]

The generator's files of the 2025 archive (`kg.testing.dumps.write_archive(scale,
names="2025")`, made once and kept in WORK/mirror) are served by a loopback mirror
(`python -m http.server`; the benchmark has no internet), then each step runs as a command,
start-up to exit, measured from outside (bench/measure.py's run_command: wall, CPU, the
process tree's peak RSS, the load average before and after):

1. `kg fetch --base-url MIRROR --into WORK/data`
2. `kg --store WORK/store ingest WORK/data --json` (its own phase timings)
3. `kg --store WORK/store suggest --train`
4. `kg --store WORK/store serve`, until its first page (the front page, /) is answered

The store folder's bytes (search index and trained models included) are read at the end.
With --pages N, `bench/pages.py --store WORK/store --sample N` then times every page kind
warm (p50/p95/max). The goal: the four steps in under 15 minutes on a quiet 2-core machine,
the store under 10 GB, every page kind's p95 under 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measure import load_average, run_command, tree_rss_kb  # noqa: E402  bench/measure.py

KG = [sys.executable, "-m", "kg"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def folder_bytes(path: Path) -> int:
    """Bytes of the files under `path`, each file once (a store's publication is hard links
    to its tables, as `du` counts them)."""
    seen: dict[tuple[int, int], int] = {}
    for f in path.rglob("*"):
        if f.is_file():
            st = f.stat()
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


def make_mirror(mirror: Path, scale: float) -> float:
    """The generator's five files in `mirror` (made once per scale); seconds it took."""
    done = mirror / f".scale-{scale}"
    if done.exists():
        return 0.0
    from kg.testing.dumps import write_archive

    shutil.rmtree(mirror, ignore_errors=True)
    start = time.perf_counter()
    write_archive(mirror, scale=scale, names="2025")
    done.touch()
    return time.perf_counter() - start


def step(name: str, argv: list[str]) -> dict[str, Any]:
    print(f"{name} ...", file=sys.stderr, flush=True)
    out = run_command(argv)
    if out["returncode"] != 0:
        sys.exit(f"{name} failed ({out['returncode']}): {out['stderr'][-2000:]}")
    row = {k: v for k, v in out.items() if k not in ("stdout", "stderr")}
    print(f"{name}: {row['wall_seconds']:.1f} s wall, {row['cpu_seconds']:.1f} CPU-s, "
          f"{row['peak_rss_mb']:.0f} MB peak", file=sys.stderr, flush=True)
    return {"step": name, **row, "stdout": out["stdout"]}


def first_page(store: Path) -> dict[str, Any]:
    """Start `kg serve` and time it until / answers 200; then stop it."""
    port = free_port()
    load = load_average()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*KG, "--store", str(store), "serve", "--port", str(port), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    peak, stop = 0, threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.wait(0.05):
            peak = max(peak, tree_rss_kb(proc.pid))

    threading.Thread(target=sample, daemon=True).start()
    try:
        while True:
            if proc.poll() is not None:
                sys.exit(f"kg serve exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=600) as r:
                    if r.status == 200:
                        r.read()
                        break
            except OSError:
                time.sleep(0.1)
        wall = time.perf_counter() - start
    finally:
        stop.set()
        proc.terminate()
        proc.wait(30)
    return {"step": "kg serve, first page", "wall_seconds": wall, "peak_rss_mb": peak / 1024,
            "load_before": load, "load_after": load_average()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-moonshot"))
    parser.add_argument("--pages", type=int, default=0, help="sample size of bench/pages.py")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    work: Path = args.work
    mirror, data, store = work / "mirror", work / "data", work / "store"
    made = make_mirror(mirror, args.scale)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(store, ignore_errors=True)
    port = free_port()
    http = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=mirror, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        steps = [
            step("kg fetch", [*KG, "fetch", "--base-url", f"http://127.0.0.1:{port}/",
                              "--into", str(data), "--quiet"]),
        ]
    finally:
        http.terminate()
    steps.append(step("kg ingest", [*KG, "--store", str(store), "ingest", str(data), "--json"]))
    report = json.loads(steps[-1].pop("stdout"))
    steps[-1]["quads"] = report.get("quads_written")
    steps[-1]["store_quads"] = report.get("store_quads")
    steps[-1]["timings"] = report.get("timings")
    steps.append(step("kg suggest --train", [*KG, "--store", str(store), "suggest", "--train"]))
    steps.append(first_page(store))
    for s in steps:
        s.pop("stdout", None)
    total = sum(s["wall_seconds"] for s in steps)
    result: dict[str, Any] = {
        "scale": args.scale, "mirror_made_seconds": made,
        "mirror_bytes": folder_bytes(mirror), "store_bytes": folder_bytes(store),
        "steps": steps, "total_wall_seconds": total,
        "total_cpu_seconds": sum(s.get("cpu_seconds", 0.0) for s in steps),
        "cores": os.cpu_count(),
    }
    print(f"{'step':<22} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'load':>10}")
    for s in steps:
        cpu = s.get("cpu_seconds")
        print(f"{s['step']:<22} {s['wall_seconds']:8.1f} "
              f"{'' if cpu is None else f'{cpu:8.1f}':>8} {s['peak_rss_mb']:8.0f} "
              f"{s['load_before']:4.1f}-{s['load_after']:4.1f}")
    print(f"{'total':<22} {total:8.1f}   (goal 900 s); store {result['store_bytes']:,} bytes "
          "(goal < 10e9)")
    for s in steps:
        if s.get("tree_peak_by_process_mb"):
            print(f"{s['step']}: the tree's peak at {s['tree_peak_at']:.0%} of its wall time: "
                  f"{s['tree_peak_by_process_mb']}")
    if args.pages:
        pages = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "pages.py"), "--store", str(store),
             "--sample", str(args.pages), "--workers", "2", "--leaderboards", str(args.pages),
             "--kinds", "paper,method,task,dataset,author,collection,area,repository,dump,"
             "record,leaderboard,search,query"],
            capture_output=True, text=True,
        )
        result["pages"] = pages.stdout
        print(pages.stdout, pages.stderr[-2000:] if pages.returncode else "")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
