"""Export benchmark (issue 6): `kg export` in each format vs Oxigraph's own `Store.dump`.

    python bench/export.py [--records 100000] [--repeat 1] [--store PATH] [--formats ...]

1. Generate N seed-format records (kg.testing.records) and ingest them with kg into an on-disk store
   (or reuse --store PATH when it already holds a store).
2. For each format, run side by side, each in a fresh child process on a read-only
   snapshot (so peak RSS belongs to one variant), alternating, --repeat times:
   * kg     — `kg.export.exporter.export_file`: sorted, deterministic, the union deduplicated for
              triple formats, the journal left out, JSON-LD compacted against the context;
   * native — Oxigraph's `Store.dump` in the same format: the whole dataset for N-Quads,
              TriG and (expanded) JSON-LD; for the triple formats, which `Store.dump` writes
              one graph at a time, every named graph in turn into one file. No sorting, no
              deduplication, no compaction.
3. JSON-LD's compaction is also compared with rdflib's (`kg.export.jsonld.compact_ntriples`, what
   `kg sparql --format jsonld` uses) on the first --jsonld-sample triples.
4. Print the medians, native/kg ratios (the goal: >= 0.8 for N-Triples, N-Quads and
   Turtle) and peak RSS, and write them to bench/out/export.json.
5. With --unmarked, the dataset formats (N-Quads, TriG) also run as kg did before a store
   carried kg.rdf.merge.MERGE_ONLY_MARK: the mark is moved aside for that child, so the
   export scans the whole default graph for statements of its own (a query per triple).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import peak_rss_mb  # bench/measure.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BASE = "https://w3id.org/kg/id/"
FORMATS = ("ntriples", "nquads", "turtle", "trig", "rdfxml", "jsonld")
GOAL = {"ntriples": 0.8, "nquads": 0.8, "turtle": 0.8}


# --- variants (each runs in its own process) ----------------------------------------------


def run_kg(store: Path, fmt: str, out: Path) -> dict[str, Any]:
    from kg.export.exporter import export_file
    from kg.rdf.store import GraphStore

    start = time.perf_counter()
    with GraphStore.open(store, read_only=True) as gs:
        report = export_file(gs, fmt, out)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "statements": report.statements,
        "bytes": out.stat().st_size,
        "rss_mb": peak_rss_mb(),
    }


def run_native(store: Path, fmt: str, out: Path) -> dict[str, Any]:
    import pyoxigraph as ox

    from kg.rdf.vocab import PREFIXES

    formats = {
        "ntriples": ox.RdfFormat.N_TRIPLES,
        "nquads": ox.RdfFormat.N_QUADS,
        "turtle": ox.RdfFormat.TURTLE,
        "trig": ox.RdfFormat.TRIG,
        "rdfxml": ox.RdfFormat.RDF_XML,
        "jsonld": ox.RdfFormat.JSON_LD,
    }
    rfmt = formats[fmt]
    prefixes: dict[str, Any] = {"prefixes": PREFIXES} if fmt in ("turtle", "trig", "rdfxml") else {}
    start = time.perf_counter()
    st = ox.Store.read_only(str(store))
    if rfmt.supports_datasets:
        st.dump(str(out), format=rfmt, **prefixes)
    else:
        with open(out, "wb", buffering=1 << 20) as f:
            for graph in st.named_graphs():
                st.dump(f, format=rfmt, from_graph=graph, **prefixes)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "bytes": out.stat().st_size, "rss_mb": peak_rss_mb()}


def run_jsonld_sample(ntriples: Path, n: int) -> dict[str, Any]:
    """kg's compactor vs rdflib's JSON-LD serializer on the same first `n` sorted triples."""
    import io
    import itertools

    from kg.export.jsonld import JsonLdWriter, compact_ntriples
    from kg.rdf.engine import parse_triples

    with open(ntriples, "rb") as f:
        data = b"".join(itertools.islice(f, n))
    start = time.perf_counter()
    writer = JsonLdWriter(io.BytesIO())
    triples = parse_triples(data)
    for subject, group in itertools.groupby(triples, key=lambda t: t[0]):
        writer.node(subject, ((p, o) for _, p, o in group))
    writer.close()
    ours = time.perf_counter() - start
    start = time.perf_counter()
    compact_ntriples(data.decode("utf-8"))
    rdflib = time.perf_counter() - start
    return {"triples": n, "kg_seconds": ours, "rdflib_seconds": rdflib}


def child(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --- setup ------------------------------------------------------------------------------------


def build_store(records: int, store: Path, work: Path) -> dict[str, Any]:
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import Ingestor
    from kg.rdf.store import GraphStore
    from kg.testing.records import records as synth_records

    path = work / "records.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for rec in synth_records(records, seed=6):
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    start = time.perf_counter()
    with GraphStore.open(store) as gs:
        report = Ingestor(gs, Iris(BASE)).run([str(path)])
        quads = gs.count()
        gs.optimize()
    path.unlink()
    return {"records": report.added, "quads": quads, "seconds": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--store", type=Path, help="reuse (or create) this store directory")
    parser.add_argument("--formats", nargs="*", default=list(FORMATS), choices=FORMATS)
    parser.add_argument("--jsonld-sample", type=int, default=100_000)
    parser.add_argument("--unmarked", action="store_true", help="also kg without the mark")
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child is not None:
        kind, *rest = args.child
        if kind == "kg":
            result = run_kg(Path(rest[0]), rest[1], Path(rest[2]))
        elif kind == "native":
            result = run_native(Path(rest[0]), rest[1], Path(rest[2]))
        else:
            result = run_jsonld_sample(Path(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return

    with tempfile.TemporaryDirectory(prefix="kg-bench-export-") as tmp:
        work = Path(tmp)
        store = args.store or work / "store"
        if (store / "CURRENT").exists():
            setup: dict[str, Any] = {"reused": str(store)}
        else:
            print(f"building a store of {args.records:,} generated records ...", flush=True)
            setup = build_store(args.records, store, work)
            print(f"  {setup['quads']:,} quads in {setup['seconds']:.0f} s", flush=True)
        from kg.rdf.merge import MERGE_ONLY_MARK

        mark = store / MERGE_ONLY_MARK
        setup["marked"] = mark.exists()
        results: dict[str, Any] = {"setup": setup, "repeat": args.repeat, "formats": {}}
        for fmt in args.formats:
            runs: dict[str, list[dict[str, Any]]] = {"kg": [], "native": [], "kg-unmarked": []}
            variants = ["kg", "native"]
            if args.unmarked and fmt in ("nquads", "trig") and mark.exists():
                variants.append("kg-unmarked")
            for i in range(args.repeat):
                # Alternate which variant goes first, so none always meets a warm cache.
                order = variants[i % len(variants) :] + variants[: i % len(variants)]
                for variant in order:
                    out = work / f"{variant}.{fmt}"
                    if variant == "kg-unmarked":
                        aside = mark.rename(store / f"{MERGE_ONLY_MARK}.aside")
                        try:
                            runs[variant].append(child(["kg", str(store), fmt, str(out)]))
                        finally:
                            aside.rename(mark)
                    else:
                        runs[variant].append(child([variant, str(store), fmt, str(out)]))
                    if not (fmt == "ntriples" and variant == "kg"):
                        out.unlink()
            kg = statistics.median(r["seconds"] for r in runs["kg"])
            native = statistics.median(r["seconds"] for r in runs["native"])
            entry = {
                "repeat": args.repeat,
                "kg_seconds": kg,
                "native_seconds": native,
                "ratio": native / kg,
                "kg_rss_mb": max(r["rss_mb"] for r in runs["kg"]),
                "native_rss_mb": max(r["rss_mb"] for r in runs["native"]),
                "kg_bytes": runs["kg"][0]["bytes"],
                "native_bytes": runs["native"][0]["bytes"],
                "statements": runs["kg"][0]["statements"],
            }
            if runs["kg-unmarked"]:
                unmarked = statistics.median(r["seconds"] for r in runs["kg-unmarked"])
                entry["kg_unmarked_seconds"] = unmarked
                entry["unmarked_over_marked"] = unmarked / kg
                assert runs["kg-unmarked"][0]["bytes"] == entry["kg_bytes"]  # the same export
                print(f"{fmt:9s} kg without the mark {unmarked:7.1f} s: {unmarked / kg:.1f}x")
            results["formats"][fmt] = entry
            goal = GOAL.get(fmt)
            verdict = "" if goal is None else (" ok" if entry["ratio"] >= goal else " BELOW GOAL")
            print(
                f"{fmt:9s} kg {kg:7.1f} s  native {native:7.1f} s  ratio {entry['ratio']:.2f}"
                f"{verdict}  RSS kg {entry['kg_rss_mb']:.0f} MB / native "
                f"{entry['native_rss_mb']:.0f} MB",
                flush=True,
            )
        nt = work / "kg.ntriples"
        if nt.exists():
            sample = child(["jsonld-sample", str(nt), str(args.jsonld_sample)])
            results["jsonld_compaction"] = sample
            per = 1e5 / sample["triples"]
            print(
                f"JSON-LD compaction per 100k triples: kg {sample['kg_seconds'] * per:.2f} s, "
                f"rdflib {sample['rdflib_seconds'] * per:.2f} s",
                flush=True,
            )
    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "export.json"
    if path.exists():  # a run of some formats updates those and keeps the others
        earlier = json.loads(path.read_text(encoding="utf-8"))
        results["formats"] = {**earlier.get("formats", {}), **results["formats"]}
        results.setdefault("jsonld_compaction", earlier.get("jsonld_compaction"))
    path.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
