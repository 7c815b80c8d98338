"""What `kg pull` costs, against the loopback fake of the Papers with Code API (tests/pwc_fake.py).

A generated catalogue of PAPERS papers (one a day from 2026-01-01 back) and BENCHMARKS
benchmarks with RESULTS results each is served on 127.0.0.1; a first pull (no rate limit)
reads it into an empty disk store, a second pull finds nothing new. Printed: wall seconds,
requests and what they read, for each; the second pull's requests are the incremental cost
(list pages only: no request of its own for a paper or benchmark held unchanged). With the
default politeness (1 request a second) the time of a pull is its request count in seconds.

    python bench/pull.py --papers 2000 --benchmarks 50 --results 20
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kg  # noqa: E402
from tests.pwc_fake import FakeApi, base_data, evaluation, paper, serve  # noqa: E402


def catalogue(papers: int, benchmarks: int, results: int) -> dict[str, object]:
    data = base_data()
    start = dt.date(2026, 1, 1)
    data["papers"] = [
        paper(i, f"2601.{i:05d}", f"Generated paper {i}",
              (start - dt.timedelta(days=i % 3000)).isoformat(),
              [f"Author {i % 997}", f"Author {(i * 7) % 991}"], tasks=[10], methods=[7],
              repos=[(f"https://github.com/gen/repo-{i}", i % 2 == 0)])
        for i in range(1, papers + 1)
    ]  # fmt: skip
    data["datasets"] = [
        {"id": 1000 + b, "slug": f"bench-{b}", "name": f"Bench {b}"} for b in range(benchmarks)
    ]
    data["evaluations"] = [
        evaluation(10_000 + b * results + r, 1 + (b * results + r) % papers, 10, 1000 + b,
                   f"model-{r}", {"Accuracy": round(50 + r * 0.37, 2)})
        for b in range(benchmarks) for r in range(results)
    ]  # fmt: skip
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=2000)
    parser.add_argument("--benchmarks", type=int, default=50)
    parser.add_argument("--results", type=int, default=20)
    args = parser.parse_args()
    api = FakeApi(data=catalogue(args.papers, args.benchmarks, args.results))
    server = serve(api)
    next(server)
    figures = {}
    with tempfile.TemporaryDirectory() as tmp, kg.open(Path(tmp) / "s", read_only=False) as g:
        for run in ("first", "second"):
            before = len(api.requests)
            started = time.perf_counter()
            report = g.pull(base_url=api.base_url, rate=0, until="2026-06-01")
            seconds = time.perf_counter() - started
            figures[run] = {
                "seconds": round(seconds, 2),
                "requests": len(api.requests) - before,
                "fetched": dict(report.fetched),
                "added": report.ingest.added,
                "quads": len(g),
            }
    figures["papers_per_second_first"] = round(args.papers / figures["first"]["seconds"], 1)
    print(json.dumps({"papers": args.papers, "benchmarks": args.benchmarks,
                      "results": args.results, **figures}, indent=1))  # fmt: skip
    server.close()


if __name__ == "__main__":
    main()
