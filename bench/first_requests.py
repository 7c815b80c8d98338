"""First requests against later ones, on a freshly started `kg serve`.

    python bench/first_requests.py --store /tmp/kg-readme-store [--runs 3] [--fresh-cache]

Starts a real `kg serve` on loopback (this checkout's, with the given store) and, once it
says it serves (the "kg serve: http://…" line, printed after its start-up warm-up), times
the first request of each page below, then the same request --runs more times (warm:
median). It does so twice, side by side: with `--warm 0` (no warm-up: what a first request
cost before the server prepared it) and with kg serve's default warm-up, which also gives
the seconds from start to "serving". `--fresh-cache` first copies the store and removes its
cache of similarity matrices and lists (.kg-cache), as just after an ingest.

Pages: the NoisyStudent paper (its similar papers and suggested links need the similarity
index and the suggestion model), the site feed /feeds/sota.atom (every leaderboard's
results), the front page, a task page, and a misspelt leaderboard (a 404 with "did you
mean"). Prints a Markdown table and writes bench/out/first_requests.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KG = str(Path(sys.executable).with_name("kg"))
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PAGES = {
    "paper page": "/paper/self-training-with-noisy-student-improves",
    "site feed": "/feeds/sota.atom",
    "front page": "/",
    "task page": "/task/image-classification",
    "404 with did you mean": "/leaderboard/image-classification/imagenett",
}


def timed(url: str) -> tuple[float, int]:
    request = urllib.request.Request(url, headers={"Accept": BROWSER})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        exc.read()
        status = exc.code
    return time.perf_counter() - start, status


def serve(store: Path, warm: float | None) -> tuple[subprocess.Popen[str], str, float]:
    args = [KG, "--store", str(store), "serve", "--port", "0", "-q"]
    if warm is not None:
        args += ["--warm", str(warm)]
    start = time.perf_counter()
    process = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("kg serve: http://"):
            return process, line.split()[2].rstrip("/"), time.perf_counter() - start
    raise SystemExit(f"kg serve did not start: {process.wait()}")


def measure(store: Path, warm: float | None, runs: int) -> dict[str, Any]:
    process, url, ready = serve(store, warm)
    try:
        out: dict[str, Any] = {"ready_s": ready, "pages": {}}
        for name, path in PAGES.items():
            first, status = timed(url + path)
            later = [timed(url + path)[0] for _ in range(runs)]
            out["pages"][name] = {
                "status": status,
                "first_s": first,
                "warm_s": statistics.median(later),
            }
        return out
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fresh-cache", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, warm in (("no warm-up (--warm 0)", 0.0), ("warm-up (default)", None)):
            store = args.store
            if args.fresh_cache:
                store = Path(tmp) / label.split()[0]
                skip = shutil.ignore_patterns("*.lock", "LOCK", ".kg-readers")
                shutil.copytree(args.store, store, ignore=skip)
                shutil.rmtree(store / ".kg-cache", ignore_errors=True)
            results[label] = measure(store, warm, args.runs)
    labels = list(results)
    print("| page | " + " | ".join(f"{lb}: first s | {lb}: warm s" for lb in labels) + " |")
    print("| --- | " + " | ".join("---: | ---:" for _ in labels) + " |")
    for name in PAGES:
        cells = []
        for lb in labels:
            page = results[lb]["pages"][name]
            cells += [f"{page['first_s']:.3f}", f"{page['warm_s']:.3f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| seconds from start to serving | " + " | ".join(
        f"{results[lb]['ready_s']:.1f} | " for lb in labels
    ) + " |")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "first_requests.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
