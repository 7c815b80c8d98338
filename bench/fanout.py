"""Peak RSS of `kg ingest` for one record with 250,000 authors (issue 15).

    python bench/fanout.py [--authors 250000] [--unlimited]

Writes 20 generated records (kg.testing.records) with one more among them that has
--authors authors (a 5.9 MB line at 250,000), ingests them with the real CLI into a fresh
store, and reports the peak RSS of the `kg` process (wait4) beside the same run without the
big record. By default the record is rejected at the array limit (kg ingest --max-items,
10,000), as it is in production; --unlimited also measures it landing (--max-items above
its size), which is what one such record cost before the limit (2.3 GB at 250,000).
Figures go to bench/out/fanout.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.testing.records import records  # noqa: E402
from tests.reliability.helpers import run_measured, write_jsonl  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=int, default=250_000)
    parser.add_argument("--unlimited", action="store_true")
    args = parser.parse_args()
    good = list(records(20, seed=18))
    huge = dict(next(iter(records(1, seed=19))))
    huge["url"] = "/paper/many-authors"
    huge["authors"] = [f"Author Number {i:06d}" for i in range(args.authors)]
    figures: dict[str, float | int] = {"authors": args.authors}
    with tempfile.TemporaryDirectory(prefix="kg-fanout-") as tmp:
        work = Path(tmp)
        big = write_jsonl(work / "big.jsonl", [huge, *good])
        small = write_jsonl(work / "small.jsonl", good)
        figures["line_mb"] = round(big.stat().st_size / 1_048_576, 1)
        runs = {"small": ([str(small)], 0), "limited": ([str(big)], 1)}
        if args.unlimited:
            runs["unlimited"] = ([str(big), "--max-items", str(args.authors + 1)], 0)
        for name, (inputs, expected) in runs.items():
            store = work / f"store-{name}"
            code, _, err, peak = run_measured(
                ["--store", str(store), "ingest", *inputs], work / f"{name}.json", 3600
            )
            if code != expected:
                print(f"{name}: exit {code}, expected {expected}\n{err[-2000:]}", file=sys.stderr)
                return 1
            figures[f"{name}_peak_rss_mb"] = round(peak)
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "fanout.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
