"""What publishing costs (issue 35): kg ingest with and without its publications, side by side.

    python bench/publish.py [--records 20000] [--batch-size 1000] [--rounds 1] [--one-load]

The writer publishes a checkpoint of its store at the end of each whole write (an ingest
batch, a recovery), and readers open only the newest publication (kg.rdf.snapshots). This
runs the same ingest of N generated records (kg.testing.records, seed 1) into a fresh
store in child processes, alternately with publishing off (`kg.rdf.snapshots.PUBLISHING
= False`, the library switch kept for this bench) and on, and prints:

* the ingest's wall time off and on, and their ratio;
* the publications made, and the time each took (mean, median, max; their sum);
* the extra disk they hold: just before each publication replaces the newest one (and
  after the ingest), the bytes of that one's files that the live store no longer has (the
  tables the writer compacted away since, its copied manifest and log), the largest and
  the last; and the store's bytes on disk at the end, off and on.

The disk measurement before each publication is not counted in the wall time. With
`--one-load`, a third variant (publishing on, each batch in one bulk load, as before the
parts came back: `kg.rdf.journal.LOAD_THREADS = 1`) gives what loading in parts gains.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BASE = "https://w3id.org/kg/id/"


def extra_bytes(store: Path, publication: Path) -> int:
    """Bytes of `publication`'s files that the live store directory does not link."""
    live = {(st.st_dev, st.st_ino) for st in (e.stat() for e in os.scandir(store) if e.is_file())}
    total = 0
    for entry in os.scandir(publication):
        st = entry.stat()
        if (st.st_dev, st.st_ino) not in live:
            total += st.st_size
    return total


def run(records: Path, store: Path, batch_size: int, variant: str) -> dict[str, Any]:
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import Ingestor
    from kg.rdf import journal, snapshots
    from kg.rdf.stamp import size_on_disk
    from kg.rdf.store import GraphStore

    snapshots.PUBLISHING = variant != "off"
    if variant == "one":  # each batch in one bulk load, as before the parts came back
        journal.LOAD_THREADS = 1
    original = snapshots.publish
    took: list[float] = []
    extra: list[int] = []
    measuring = 0.0

    def newest(path: Path) -> Path | None:
        found = sorted((path / snapshots.PUBLISHED_DIR).glob("[0-9]*"))
        return found[-1] if found else None

    def publish(engine: Any, path: Path) -> Path:
        nonlocal measuring
        start = time.perf_counter()
        last = newest(path)  # what it holds now, just before it is replaced: its most
        if last is not None:
            extra.append(extra_bytes(path, last))
        measuring += time.perf_counter() - start
        start = time.perf_counter()
        made = original(engine, path)
        took.append(time.perf_counter() - start)
        return made

    snapshots.publish = publish
    start = time.perf_counter()
    with GraphStore.open(store) as gs:
        # batch by batch: a first load publishes once (kg.rdf.first_load)
        report = Ingestor(gs, Iris(BASE), batch_size=batch_size, first_load=False).run(
            [str(records)]
        )
        gs.flush()
    seconds = time.perf_counter() - start - measuring
    last = newest(store)
    if last is not None:
        extra.append(extra_bytes(store, last))
    return {
        "seconds": seconds,
        "records": report.added,
        "publications": len(took),
        "publish_seconds": took,
        "extra_bytes": extra,
        "store_bytes": size_on_disk(store),
    }


def child(*args: str) -> dict[str, Any]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{out.stderr}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=1, help="off/on pairs, alternated")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument(
        "--one-load",
        action="store_true",
        help="also a third variant: publishing on, each batch in one bulk load (no parts)",
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        records, store, batch, on = args.child
        print(json.dumps(run(Path(records), Path(store), int(batch), on)))
        return

    from kg.testing.records import records as generate

    work = args.work or Path(tempfile.mkdtemp(prefix="kg-bench-publish-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "records.jsonl"
    with open(data, "w", encoding="utf-8") as f:
        for rec in generate(args.records, seed=1):
            f.write(json.dumps(rec) + "\n")
    variants = ("off", "on", "one") if args.one_load else ("off", "on")
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for n in range(args.rounds):
        for variant in variants:
            store = work / f"store-{variant}-{n}"
            results[variant].append(child(str(data), str(store), str(args.batch_size), variant))
            subprocess.run(["rm", "-rf", str(store)], check=True)
    off = min(r["seconds"] for r in results["off"])
    on = min(r["seconds"] for r in results["on"])
    best = min(results["on"], key=lambda r: r["seconds"])
    took = [s * 1000 for r in results["on"] for s in r["publish_seconds"]]
    extra = best["extra_bytes"]
    print(
        f"{args.records:,} records in batches of {args.batch_size:,} "
        f"({best['records']:,} added), best of {args.rounds}; load: {os.getloadavg()}"
    )
    print(f"ingest: publishing off {off:.1f} s, on {on:.1f} s: on/off {on / off:.3f}")
    print(
        f"publications: {best['publications']} per ingest; each took mean "
        f"{statistics.mean(took):.1f} ms, median {statistics.median(took):.1f} ms, "
        f"max {max(took):.1f} ms; {sum(best['publish_seconds']):.2f} s in all"
    )
    extra = extra or [0]
    print(
        f"extra disk held by the newest publication: max {max(extra) / 1e6:.1f} MB, "
        f"at the end {extra[-1] / 1e6:.1f} MB; store on disk at the end: off "
        f"{results['off'][0]['store_bytes'] / 1e6:.1f} MB, on {best['store_bytes'] / 1e6:.1f} MB"
    )
    if "one" in results:
        one = min(r["seconds"] for r in results["one"])
        print(
            f"each batch in one bulk load (publishing on) {one:.1f} s; in parts, one per core "
            f"(publishing on) {on:.1f} s: parts/one {on / one:.3f}"
        )


if __name__ == "__main__":
    main()
