"""Archive-scale benchmark (issue 3): the five Papers-with-Code dumps, end to end.

    python bench/archive.py [--scale 1.0] [--work /tmp/kg-archive] [--batch-quads 300000]

1. Generate the five dumps at `--scale` of the final archive (kg.testing.dumps: 576,261
   papers, 300,161 code links, 8,725 methods, 15,008 datasets, 2,254 top-level evaluation
   tables at 1.0), gzipped, unless the work directory already holds them for that scale.
2. `kg ingest` them into a fresh on-disk store as the user runs it: the `kg` command,
   start-up to exit (mapping, loading, the search index, publication), with each phase's
   share (its `--json` report's timings) and the peak RSS of its whole process tree. With
   `--library`, the library's `Ingestor.run` in a child process instead (no CLI, no search
   index), with the size of the run's duplicate-detection dict (graph -> content hash).
3. Dump that store as N-Quads (the same graph), and bulk-load the file with Oxigraph's
   `Store.bulk_load` into a fresh on-disk store, in a child process: the baseline. With
   `--rounds 2`, a second round loads the baseline first, then runs kg again (alternated,
   for a shared machine); the ratio is reported per round. Each store is then read as its
   command left it (every quad of 1,000 papers, warm): an ingest that leaves compactions
   pending looks fast here and is slow to read later. Then the baseline's store is
   compacted in full, as `kg ingest` compacts its own, for two more ratios by round
   (bench/measure.py `settled`): like for like (the bulk load and that compaction against
   kg's command) and the ceiling (the most kg could reach with its own final compaction).
4. Map the dumps without a store (reading + mapping only), in a child process, to split
   the ingest time between Python and the store.
5. Unless `--skip-compact`: compact kg's store (Oxigraph's `optimize`) and write a compact
   copy of it (`kg compact NEW`: one dump, one bulk load), each with its bytes on disk
   before and after and its time (the baseline's, from the last round).
6. Print the figures and the ratio ingest/bulk_load, and write bench/out/archive.json.
   With RocksDB's `ldb` installed (Debian's rocksdb-tools), also where each store's bytes
   are: the named graphs' six indexes, the default graph's three, and the strings.

The goal is the whole archive in under 5 minutes with a peak RSS under 4 GB on the 2-core
project machine. The machine is shared, so compare the ratio, not absolute seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from measure import (
    command_phases,
    format_phases,
    format_settled,
    index_bytes,
    optimize_store,
    peak_rss_mb,
    run_command,
    settled,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BASE = "https://w3id.org/kg/id/"


def usage() -> dict[str, float]:
    self = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "cpu_seconds": self.ru_utime + self.ru_stime,
        "peak_rss_mb": peak_rss_mb(),
    }


# --- the variants, each in its own process ----------------------------------------------------


def child_ingest(
    dumps: Path, store_path: Path, batch_size: int, batch_quads: int
) -> dict[str, Any]:
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import Ingestor
    from kg.rdf.store import GraphStore

    start = time.perf_counter()
    with GraphStore.open(store_path) as store:
        ingestor = Ingestor(store, Iris(BASE), batch_size=batch_size, batch_quads=batch_quads)
        report = ingestor.run([str(dumps)])
        store.flush()
        seconds = time.perf_counter() - start  # the ingest, not the counts below
        quads = store.count()
        stored = len(store)  # with the default graph's merge: what the baseline loads
    seen = ingestor._seen
    seen_bytes = seen.nbytes()
    return {
        "seconds": seconds,
        "store_quads": quads,
        "stored_quads": stored,
        "quads_written": report.quads,
        "read": report.read,
        "added": report.added,
        "rejected": report.rejected,
        "papers_merged": report.renamed,
        "kinds": dict(report.kinds),
        "seen_entries": len(seen),
        "seen_mb": seen_bytes / 2**20,
        # the compaction `kg ingest` ends with when it pays (inside "seconds")
        "compaction": None if report.compaction is None else report.compaction.as_dict(),
        "bytes_on_disk": store_bytes(store_path),  # closed, the newest publication included
        "index_bytes": index_bytes(store_path),
        **usage(),
    }


def child_map_only(dumps: Path) -> dict[str, Any]:
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import KINDS, detect_kind
    from kg.ingest.mapping import Context
    from kg.ingest.reader import expand, read_items

    iris = Iris(BASE)
    start = time.perf_counter()
    read_seconds = 0.0
    quads = 0
    memo: dict[str, Any] = {}
    for name in expand([str(dumps)]):
        kind = None
        items = read_items(name)
        while True:
            t = time.perf_counter()
            item = next(items, None)
            read_seconds += time.perf_counter() - t
            if item is None:
                break
            kind = kind or detect_kind(item.value)
            ctx = Context(iris, source_file=Path(name).name, memo=memo)
            for mapped in KINDS[kind.name].map(item.value, ctx):
                quads += len(mapped.triples) + len(mapped.shared)
    return {
        "seconds": time.perf_counter() - start,
        "read_seconds": read_seconds,
        "quads": quads,
        **usage(),
    }


def child_dump(store_path: Path, out: Path) -> dict[str, Any]:
    """Oxigraph's own N-Quads dump (the journal graph is empty after a finished ingest)."""
    import pyoxigraph as ox

    start = time.perf_counter()
    store = ox.Store.read_only(str(store_path))
    store.dump(str(out), format=ox.RdfFormat.N_QUADS)
    del store
    return {"seconds": time.perf_counter() - start, "bytes": out.stat().st_size, **usage()}


def child_bulk_load(nquads: Path, store_path: Path) -> dict[str, Any]:
    import pyoxigraph as ox

    start = time.perf_counter()
    store = ox.Store(str(store_path))
    store.bulk_load(path=str(nquads), format=ox.RdfFormat.N_QUADS)
    store.flush()
    seconds = time.perf_counter() - start
    quads = len(store)
    del store
    return {
        "seconds": seconds, "store_quads": quads, "bytes_on_disk": store_bytes(store_path),
        "index_bytes": index_bytes(store_path),
        **usage(),
    }


def child_lookups(
    store_path: Path, made_by: str, subjects: int = 1_000, passes: int = 3
) -> dict[str, Any]:
    """The store as the command left it, read the way pages read it: every quad about each of
    `subjects` papers (a fixed sample of the first 20,000 titled), the best of `passes`
    (warm), in ms a paper. A store `made_by` kg is read as `kg serve`'s workers read it (a
    pin of its newest publication); the bulk load's plain Oxigraph store from its files. A
    store left with compactions pending (level-0 files each reader merges) answers slower
    until a writer compacts it: an ingest can look fast by leaving its compaction to its
    readers. A range read sees it most (12-17x at scale 1: docs/performance.md), so the
    store's paper-task pairs, as the similarity projection reads them, are read once too
    (`scan_seconds`)."""
    import random

    import pyoxigraph as ox

    from kg.graph.incidence import relation_query
    from kg.graph.relations import RELATIONS
    from kg.rdf.store import GraphStore

    pin = GraphStore.share_snapshot(store_path)[0] if made_by == "kg" else None
    try:
        store = ox.Store.read_only(str(pin or store_path))
        title = ox.NamedNode("http://purl.org/dc/terms/title")
        titled = []
        for quad in store.quads_for_pattern(None, title, None, ox.DefaultGraph()):
            titled.append(quad.subject)
            if len(titled) >= 20_000:
                break
        sample = random.Random(1).sample(titled, min(subjects, len(titled)))
        best = float("inf")
        for _ in range(passes):
            start = time.perf_counter()
            quads = sum(len(list(store.quads_for_pattern(s, None, None, None))) for s in sample)
            best = min(best, time.perf_counter() - start)
        start = time.perf_counter()
        solutions = store.query(relation_query(RELATIONS["tasks"]))
        assert isinstance(solutions, ox.QuerySolutions)
        for _ in solutions:
            pass
        scan = time.perf_counter() - start
        del store
    finally:
        if pin is not None:
            GraphStore.release_snapshot(pin)
    return {"ms_a_subject": best / max(1, len(sample)) * 1e3, "subjects": len(sample),
            "quads": quads, "scan_seconds": scan}


def where_the_bytes_are(groups: dict[str, int], named: int, default: int) -> str:
    """The table bytes of each group of indexes, and per quad of the named graphs and per
    triple of the default graph's merge."""
    mb = {group: size / 2**20 for group, size in groups.items()}
    return (
        f"named graphs {mb['named_graphs']:,.0f} MB ({groups['named_graphs'] / named:.0f} "
        f"bytes a quad), default graph {mb['default_graph']:,.0f} MB "
        f"({groups['default_graph'] / max(default, 1):.0f} bytes a triple), strings "
        f"{mb['strings']:,.0f} MB, other {mb['other']:,.0f} MB"
    )


def store_bytes(path: Path) -> int:
    from kg.rdf.stamp import size_on_disk

    return size_on_disk(path)


def child_copy(store_path: Path, into: Path) -> dict[str, Any]:
    """`kg compact NEW`: a compact copy of the store (one dump, one bulk load)."""
    from kg.rdf.store import GraphStore

    cpu = time.process_time()
    with GraphStore.open(store_path) as store:
        done = store.rebuild(into)
    return {
        "seconds": done.seconds,
        "copy_cpu_seconds": time.process_time() - cpu,
        "bytes_before": done.bytes_before,
        "bytes_after": done.bytes_after,
        **usage(),
    }


def kg_command() -> list[str]:
    """The real `kg` entry point of this Python (its console script, else `python -m kg`)."""
    script = Path(sys.executable).with_name("kg")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kg"]


def command_ingest(
    dumps: Path, store_path: Path, batch_size: int, source: Path | None = None
) -> dict[str, Any]:
    """`kg --store STORE ingest --json DUMPS` as a command, measured from outside
    (bench/measure.py run_command), and what the store holds afterwards. With `source`,
    the kg of that source tree (`python -m kg` with it first on the path)."""
    from kg.rdf.store import GraphStore

    shutil.rmtree(store_path, ignore_errors=True)
    argv, env = kg_command(), None
    if source is not None:
        argv, env = [sys.executable, "-m", "kg"], {**os.environ, "PYTHONPATH": str(source)}
    argv = [*argv, "--store", str(store_path), "ingest", "--json",
            "--batch-size", str(batch_size), str(dumps)]
    run = run_command(argv, env=env, cwd=source)  # `python -m` puts the folder first
    if run["returncode"] != 0:
        raise SystemExit(f"kg ingest failed:\n{run['stderr'][-3000:]}")
    report = json.loads(run.pop("stdout"))
    run.pop("stderr")
    with GraphStore.open(store_path, read_only=True) as store:
        stored = len(store)  # with the default graph's merge: what the baseline loads
    result = {
        **run,
        "seconds": run["wall_seconds"],
        "report_seconds": report["seconds"],
        "store_quads": report["store_quads"],
        "stored_quads": stored,
        "read": report["read"],
        "added": report["added"],
        "papers_merged": report["papers_merged"],
        "compaction": report["compaction"],
        "timings": report.get("timings", {}),
        "phases": command_phases(run["wall_seconds"], report),
        "bytes_on_disk": store_bytes(store_path),
        "index_bytes": index_bytes(store_path),
    }
    print(f"  kg ingest: {json.dumps(result)}", flush=True)
    return result


def bulk_load_command(nquads: Path, store_path: Path) -> dict[str, Any]:
    """The baseline in a child process measured as the command is (peak RSS of its tree)."""
    shutil.rmtree(store_path, ignore_errors=True)
    run = run_command([sys.executable, __file__, "--child", "bulk_load", str(nquads),
                       str(store_path)])
    if run["returncode"] != 0:
        raise SystemExit(f"bulk_load failed:\n{run['stderr'][-3000:]}")
    result: dict[str, Any] = json.loads(run.pop("stdout").strip().splitlines()[-1])
    run.pop("stderr")
    result.update(run)  # wall_seconds, peak_rss_mb of the tree, load averages
    print(f"  bulk_load: {json.dumps(result)}", flush=True)
    return result


CHILDREN = {
    "ingest": lambda a: child_ingest(Path(a[0]), Path(a[1]), int(a[2]), int(a[3])),
    "map": lambda a: child_map_only(Path(a[0])),
    "dump": lambda a: child_dump(Path(a[0]), Path(a[1])),
    "bulk_load": lambda a: child_bulk_load(Path(a[0]), Path(a[1])),
    "compact": lambda a: optimize_store(Path(a[0])),
    "copy": lambda a: child_copy(Path(a[0]), Path(a[1])),
    "lookups": lambda a: child_lookups(Path(a[0]), a[1]),
}


def in_child(name: str, *args: str) -> dict[str, Any]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", name, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = time.perf_counter() - start
    print(f"  {name}: {json.dumps(result)}", flush=True)
    return result


# --- the benchmark --------------------------------------------------------------------------


def generate(work: Path, scale: float) -> Path:
    from kg.testing.dumps import write_archive

    dumps = work / f"dumps-{scale:g}-2025"  # the files of the last archive, as kg fetch gets them
    marker = dumps / ".complete"
    if not marker.exists():
        shutil.rmtree(dumps, ignore_errors=True)
        start = time.perf_counter()
        write_archive(dumps, scale=scale, names="2025")
        marker.write_text("ok")
        print(f"generated the dumps in {time.perf_counter() - start:.0f} s", flush=True)
    sizes = {p.name: p.stat().st_size for p in sorted(dumps.glob("*.json.gz"))}
    print(f"dumps in {dumps}: {json.dumps(sizes)}", flush=True)
    return dumps


def ingest_once(args: argparse.Namespace, dumps: Path, store: Path) -> dict[str, Any]:
    """One kg ingest of the dumps into a fresh store: the command, or with --library the
    library's Ingestor.run in a child process."""
    shutil.rmtree(store, ignore_errors=True)
    if args.library:
        return in_child(
            "ingest", str(dumps), str(store), str(args.batch_size), str(args.batch_quads)
        )
    return command_ingest(dumps, store, args.batch_size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-archive"))
    parser.add_argument("--batch-size", type=int, default=20_000, help="records per batch at most")
    parser.add_argument("--batch-quads", type=int, default=300_000,
                        help="quads per batch at most (--library only; the command's is 300,000)")
    parser.add_argument("--skip-map", action="store_true", help="skip the mapping-only run")
    parser.add_argument("--library", action="store_true", help="time the library's "
                        "Ingestor.run in process instead of the kg command (no CLI, no search "
                        "index: the figure this benchmark used to report)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="kg ingest / bulk load comparisons, alternated")
    parser.add_argument(
        "--skip-compact", action="store_true", help="skip compacting both stores afterwards"
    )
    parser.add_argument("--compare-source", type=Path, default=None,
                        help="a source tree holding another kg/ (e.g. main's): its `kg "
                        "ingest` timed too in each round, against the same bulk load")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child[0]](args.child[1:])))
        return

    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    dumps = generate(work, args.scale)
    store, baseline_store, nquads = work / "store", work / "baseline-store", work / "graph.nq"
    for path in (store, baseline_store):
        shutil.rmtree(path, ignore_errors=True)

    rounds: list[dict[str, Any]] = []
    for r in range(max(1, args.rounds)):
        if r % 2 == 1:  # the baseline first this round: both meet the machine's load alike
            baseline = bulk_load_command(nquads, baseline_store)
            ingest = ingest_once(args, dumps, store)
        else:
            ingest = ingest_once(args, dumps, store)
            dump = in_child("dump", str(store), str(nquads))
            baseline = bulk_load_command(nquads, baseline_store)
        # each store as its command left it (the dump above only read kg's)
        for run, path, made_by in ((ingest, store, "kg"), (baseline, baseline_store, "bulk")):
            read = in_child("lookups", str(path), made_by)
            run["lookup_ms"], run["scan_seconds"] = read["ms_a_subject"], read["scan_seconds"]
        # then the baseline's store settled as kg's command leaves its own (see `settled`)
        settle = in_child("compact", str(baseline_store))
        rounds.append({"ratio": baseline["seconds"] / ingest["seconds"],
                       **settled(ingest["seconds"], (ingest["compaction"] or {}).get("seconds"),
                                 baseline["seconds"], settle["seconds"]),
                       "cpu_ratio": baseline["cpu_seconds"] / ingest["cpu_seconds"],
                       "kg_seconds": ingest["seconds"], "bulk_load_seconds": baseline["seconds"],
                       "kg_peak_rss_mb": ingest["peak_rss_mb"],
                       "lookup_ms": [ingest["lookup_ms"], baseline["lookup_ms"]],
                       "scan_seconds": [ingest["scan_seconds"], baseline["scan_seconds"]],
                       "load": [ingest.get("load_before"), baseline.get("load_after")],
                       "phases": ingest.get("phases")})
        print(f"round {r + 1}: ratio {rounds[-1]['ratio']:.2f}x (CPU "
              f"{rounds[-1]['cpu_ratio']:.2f}x); kg {ingest['seconds']:.1f} s, "
              f"bulk_load {baseline['seconds']:.1f} s; load {rounds[-1]['load']}; a paper's "
              f"quads read from each store as left: kg {ingest['lookup_ms']:.2f} ms, bulk "
              f"{baseline['lookup_ms']:.2f} ms; its paper-task pairs: kg "
              f"{ingest['scan_seconds']:.1f} s, bulk {baseline['scan_seconds']:.1f} s", flush=True)
        print(f"round {r + 1}, settled: {format_settled(rounds[-1])}", flush=True)
        if args.compare_source is not None:  # the other tree's command, the same round
            other = command_ingest(dumps, work / "compare-store", args.batch_size,
                                   args.compare_source)
            read = in_child("lookups", str(work / "compare-store"), "kg")
            other["lookup_ms"], other["scan_seconds"] = read["ms_a_subject"], read["scan_seconds"]
            rounds[-1]["compare"] = {"seconds": other["seconds"],
                                     "cpu_seconds": other["cpu_seconds"],
                                     "peak_rss_mb": other["peak_rss_mb"],
                                     "ratio": baseline["seconds"] / other["seconds"],
                                     "phases": other["phases"],
                                     "lookup_ms": other["lookup_ms"],
                                     "scan_seconds": other["scan_seconds"]}
            shutil.rmtree(work / "compare-store", ignore_errors=True)
            print(f"round {r + 1}, {args.compare_source}: ratio "
                  f"{rounds[-1]['compare']['ratio']:.2f}x; kg {other['seconds']:.1f} s "
                  f"({other['cpu_seconds']:.0f} CPU-s, this tree's {ingest['cpu_seconds']:.0f}); "
                  f"a paper's quads read from its store as left {other['lookup_ms']:.2f} ms, "
                  f"its paper-task pairs {other['scan_seconds']:.1f} s", flush=True)
    mapping = None if args.skip_map else in_child("map", str(dumps))
    compact = None if args.skip_compact else in_child("compact", str(store))
    copy_store = work / "compact-copy"
    shutil.rmtree(copy_store, ignore_errors=True)
    copy = None if args.skip_compact else in_child("copy", str(store), str(copy_store))
    shutil.rmtree(copy_store, ignore_errors=True)
    baseline_compact = settle  # the last round's (its store is settled already)
    nquads.unlink()
    for path in (store, baseline_store):
        shutil.rmtree(path, ignore_errors=True)

    quads, stored = ingest["store_quads"], ingest["stored_quads"]
    figures = {
        "scale": args.scale,
        "batch_size": args.batch_size,
        "batch_quads": args.batch_quads,
        "ingest": ingest,
        "rounds": rounds,
        "dump": dump,
        "bulk_load": baseline,
        "map_only": mapping,
        "compact": compact,
        "compact_copy": copy,
        "bulk_load_compact": baseline_compact,
        "ingest_quads_per_second": ingest["stored_quads"] / ingest["seconds"],
        "bulk_load_quads_per_second": baseline["store_quads"] / baseline["seconds"],
        # Both load the same stored quads (named graphs and the merge): a ratio of times.
        "ratio_ingest_to_bulk_load": baseline["seconds"] / ingest["seconds"],
    }
    assert baseline["store_quads"] == ingest["stored_quads"], "the baseline loaded other quads"
    out = ROOT / "bench" / "out" / "archive.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=1) + "\n")
    print()
    print(f"archive at scale {args.scale:g}: {ingest['read']:,} items, {quads:,} quads")
    print(
        f"kg ingest : {ingest['seconds']:8.1f} s  {figures['ingest_quads_per_second']:>9,.0f} "
        f"quads/s  CPU {ingest['cpu_seconds']:.0f} s  peak RSS {ingest['peak_rss_mb']:,.0f} MB"
    )
    print(
        f"bulk_load : {baseline['seconds']:8.1f} s  {figures['bulk_load_quads_per_second']:>9,.0f} "
        f"quads/s  CPU {baseline['cpu_seconds']:.0f} s  peak RSS {baseline['peak_rss_mb']:,.0f} MB"
    )
    print(f"ratio     : {figures['ratio_ingest_to_bulk_load']:.2f} (bulk_load's time / kg's); "
          f"by round: {', '.join(format(r['ratio'], '.2f') for r in rounds)}")
    print(f"settled   : like for like by round "
          f"{', '.join(format(r['like_for_like'], '.2f') for r in rounds)}; ceiling by round "
          f"{', '.join('-' if r['ceiling'] is None else format(r['ceiling'], '.2f') for r in rounds)}")
    if ingest.get("phases"):
        print(f"phases    : {format_phases(ingest['phases'])}")
    print(f"reads     : a paper's quads from each store as its command left it, warm: kg "
          f"{ingest['lookup_ms']:.2f} ms, bulk_load {baseline['lookup_ms']:.2f} ms "
          f"({ingest['lookup_ms'] / baseline['lookup_ms']:.2f}x); the paper-task pairs: kg "
          f"{ingest['scan_seconds']:.1f} s, bulk_load {baseline['scan_seconds']:.1f} s")
    for name, run in (("kg store", ingest), ("bulk store", baseline)):
        print(
            f"{name:10}: {run['bytes_on_disk'] / 2**20:,.0f} MB on disk, "
            f"{run['bytes_on_disk'] / ingest['stored_quads']:.0f} bytes a stored quad"
        )
        if run["index_bytes"]:  # where the bytes are (bench/measure.py INDEX_GROUPS)
            print(f"{'':10}  {where_the_bytes_are(run['index_bytes'], quads, stored - quads)}")
    if mapping:
        print(
            f"map only  : {mapping['seconds']:8.1f} s (reading {mapping['read_seconds']:.1f} s) "
            f"peak RSS {mapping['peak_rss_mb']:,.0f} MB"
        )
    compactions: list[tuple[str, dict[str, Any] | None]] = [
        ("kg store", compact), ("bulk store", baseline_compact)]
    for name, done in compactions:
        if done:
            print(
                f"{name:10}: {done['bytes_before'] / 2**20:,.0f} MB, "
                f"{done['bytes_per_quad_before']:.0f} bytes/quad; compacted in "
                f"{done['seconds']:.1f} s (CPU {done['compact_cpu_seconds']:.1f} s): "
                f"{done['bytes_after'] / 2**20:,.0f} MB, {done['bytes_per_quad_after']:.0f} bytes/quad"
            )
    if copy:
        print(
            f"copy      : kg compact NEW in {copy['seconds']:.1f} s (CPU "
            f"{copy['copy_cpu_seconds']:.1f} s, peak RSS {copy['peak_rss_mb']:,.0f} MB): "
            f"{copy['bytes_after'] / 2**20:,.0f} MB, "
            f"{copy['bytes_after'] / ingest['stored_quads']:.0f} bytes/quad"
        )
    if "seen_entries" in ingest:
        print(
            f"dedup dict: {ingest['seen_entries']:,} graphs, about {ingest['seen_mb']:,.0f} MB; "
            f"papers merged by alias: {ingest['papers_merged']:,}"
        )
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
