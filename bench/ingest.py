"""Ingest benchmark (issue 2): kg ingest vs Oxigraph's bulk loader vs an rdflib-built ingest.

    python bench/ingest.py [--records 100000] [--repeat 1]

1. Generate N seed-format records (kg.testing.records: archive-like distributions) into a JSONL file.
2. Run, each in a fresh child process (so peak RSS belongs to one variant), side by side:
   * kg       — `kg ingest` end to end: read JSONL, validate, map, write crash-safe batches
                into an on-disk store;
   * bulk     — `Store.bulk_load` of the very graph kg produced, dumped as N-Quads
                (the practical limit: no JSON, no mapping, no journal);
   * rdflib   — the usual way: each record mapped into an rdflib graph with rdflib terms,
                serialised as N-Quads per batch and loaded into an on-disk Oxigraph store.
3. Check that the rdflib variant produced the same graph (canonical digest) on a sample, and
   print records/s, triples/s, peak RSS and the ratios kg/bulk and kg/rdflib.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


# --- variants (each runs in its own process) ----------------------------------------------


def run_kg(records: Path, store: Path) -> dict[str, Any]:
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import Ingestor
    from kg.rdf.store import GraphStore

    start = time.perf_counter()
    with GraphStore.open(store) as gs:
        report = Ingestor(gs, Iris(BASE)).run([str(records)])
        gs.flush()
        seconds = time.perf_counter() - start  # the ingest, not the count below
        quads = gs.count()
    return {"seconds": seconds, "records": report.added, "quads": quads, "rss_mb": peak_rss_mb()}


def run_bulk(nquads: Path, store: Path) -> dict[str, Any]:
    import pyoxigraph as ox

    start = time.perf_counter()
    st = ox.Store(str(store))
    st.bulk_load(path=str(nquads), format=ox.RdfFormat.N_QUADS)
    st.flush()
    seconds = time.perf_counter() - start
    quads = len(st)
    return {"seconds": seconds, "quads": quads, "rss_mb": peak_rss_mb()}


def rdflib_map(rec: dict[str, Any], ingested_at: str) -> Any:
    """Map one record the usual way: an rdflib graph built from rdflib terms."""
    import hashlib

    from rdflib import RDF, RDFS, XSD, Dataset, Literal, Namespace, URIRef
    from rdflib.namespace import DCTERMS, FOAF, PROV, SKOS

    from kg.ingest.identity import Iris, arxiv_id, repository

    KG = Namespace("https://w3id.org/kg/ontology#")
    SDO = Namespace("https://schema.org/")
    iris = Iris(BASE)
    slug = rec["url"].rsplit("/", 1)[-1]
    paper_iri = iris.paper(slug)
    graph_iri = iris.record_graph(f"paper/{slug}")
    ds = Dataset()
    g = ds.graph(URIRef(graph_iri))
    e = ds.graph(URIRef(iris.entities_graph()))
    p = URIRef(paper_iri)
    g.add((p, RDF.type, KG.Paper))
    g.add((p, KG.pwcSlug, Literal(slug)))
    g.add((p, RDFS.seeAlso, URIRef(f"https://paperswithcode.com/paper/{slug}")))
    g.add((p, DCTERMS.title, Literal(rec["title"])))
    g.add((p, DCTERMS.abstract, Literal(rec["abstract"])))
    g.add((p, DCTERMS.issued, Literal(rec["date"], datatype=XSD.date)))
    arxiv = arxiv_id(rec["arxiv_id"])
    g.add((p, KG.arxivId, Literal(arxiv)))
    g.add((p, RDFS.seeAlso, URIRef(f"https://arxiv.org/abs/{arxiv}")))
    g.add((p, KG.abstractPage, URIRef(rec["url_abs"])))
    g.add((p, KG.pdf, URIRef(rec["url_pdf"])))
    if rec.get("proceeding"):
        venue, year, month = rec["proceeding"].rsplit(" ", 2)
        v = URIRef(iris.venue(venue))
        e.add((v, RDF.type, KG.Venue))
        e.add((v, RDFS.label, Literal(venue)))
        g.add((p, KG.proceeding, Literal(rec["proceeding"])))
        g.add((p, KG.venue, v))
        g.add((p, KG.venueYear, Literal(int(year))))
        g.add((p, KG.venueMonth, Literal(int(month))))
    for pos, name in enumerate(rec["authors"], start=1):
        a = URIRef(iris.author(name))
        e.add((a, RDF.type, KG.Author))
        e.add((a, FOAF.name, Literal(name)))
        ship = URIRef(f"{paper_iri}/authorship/{pos}")
        g.add((p, DCTERMS.creator, a))
        g.add((p, KG.authorship, ship))
        g.add((ship, RDF.type, KG.Authorship))
        g.add((ship, KG.author, a))
        g.add((ship, KG.position, Literal(pos)))
        g.add((ship, KG.authorName, Literal(name)))
    for t in rec["tasks"]:
        node = URIRef(iris.task(t["task_slug"]))
        e.add((node, RDF.type, KG.Task))
        e.add((node, RDFS.label, Literal(t["task_name"])))
        g.add((p, KG.hasTask, node))
    for m in rec["methods"]:
        node = URIRef(iris.method(m["method_slug"]))
        e.add((node, RDF.type, KG.Method))
        e.add((node, RDFS.label, Literal(m["method_name"])))
        g.add((p, KG.usesMethod, node))

    def repo(url: str) -> URIRef:
        ref = repository(url)
        assert ref is not None
        node = URIRef(iris.repository(ref))
        e.add((node, RDF.type, KG.Repository))
        e.add((node, RDFS.label, Literal(ref.key.split("/", 1)[1])))
        e.add((node, SDO.codeRepository, URIRef(ref.url)))
        e.add((node, KG.host, Literal(ref.key.split("/", 1)[0])))
        return node

    for link in rec["code_links"]:
        ref = repository(link["repo_url"])
        assert ref is not None
        r = repo(link["repo_url"])
        node = URIRef(f"{paper_iri}/code/{ref.key}")
        g.add((p, KG.codeLink, node))
        g.add((p, KG.hasRepository, r))
        g.add((node, RDF.type, KG.CodeLink))
        g.add((node, KG.repository, r))
        g.add((node, KG.linkedUrl, URIRef(link["repo_url"])))
        g.add((node, KG.isOfficial, Literal(bool(link["is_official"]))))
        g.add((node, KG.mentionedInPaper, Literal(bool(link["mentioned_in_paper"]))))
        g.add((node, KG.mentionedInGithub, Literal(bool(link["mentioned_in_github"]))))
        g.add((node, KG.framework, Literal(link["framework"])))
        if link["reach"]:
            g.add((node, KG.reachStatus, Literal(link["reach"]["status"])))
    syn = rec["syntology"]
    for s in syn["samples"]:
        node = URIRef(f"{paper_iri}/sample/{s['code_sha256_prefix']}")
        g.add((p, KG.hasSample, node))
        g.add((node, RDF.type, KG.Sample))
        g.add((node, KG.codeSha256Prefix, Literal(s["code_sha256_prefix"])))
        g.add((node, KG.entry, Literal(s["entry"])))
        g.add((node, KG.repository, repo(s["repo"])))
        kind = URIRef(iris.repo_kind(s["repo_kind"]))
        e.add((kind, RDF.type, KG.RepoKind))
        e.add((kind, RDF.type, SKOS.Concept))
        e.add((kind, SKOS.prefLabel, Literal(s["repo_kind"])))
        g.add((node, KG.repoKind, kind))
        g.add((node, KG.filePath, Literal(s["path"])))
        g.add((node, KG.fileUrl, URIRef(s["file_url"])))
        g.add((node, KG.linkBasis, Literal(s["link_basis"])))
        g.add((node, SDO.programmingLanguage, Literal(s["language"])))
        g.add((node, KG.executionStatus, Literal(s["status"])))
        g.add((node, KG.verificationLevel, Literal(s["verification_level"])))
        if s["contract_check"]:
            g.add((node, KG.contractCheck, Literal(s["contract_check"])))
        if s["metamorphic_tier"]:
            g.add((node, KG.metamorphicTier, Literal(s["metamorphic_tier"])))
        g.add((node, KG.behaviourFingerprint, Literal(s["behaviour_fingerprint"])))
        g.add((node, KG.licenceName, Literal(s["licence"])))
        g.add((node, KG.inlineOk, Literal(s["inline_ok"])))
        g.add((node, KG.mcpCall, Literal(json.dumps(s["mcp_get_code"], sort_keys=True, separators=(",", ":")), datatype=RDF.JSON)))
    gr = URIRef(graph_iri)
    text = json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    g.add((gr, RDF.type, KG.Record))
    g.add((gr, RDF.type, PROV.Entity))
    g.add((gr, KG.describes, p))
    g.add((gr, KG.contentHash, Literal("sha256:" + hashlib.sha256(text.encode()).hexdigest())))
    g.add((gr, KG.sourceFile, Literal("records.jsonl")))
    g.add((gr, KG.ingestedAt, Literal(ingested_at, datatype=XSD.dateTime)))
    src = rec["source"]
    g.add((gr, KG.sourceArchive, Literal(src["archive"])))
    g.add((gr, KG.snapshot, Literal(src["snapshot"], datatype=XSD.date)))
    g.add((gr, DCTERMS.license, URIRef(src["licence_url"])))
    g.add((gr, KG.rowKind, Literal(src["row_kind"])))
    g.add((gr, KG.readAt, Literal(syn["read_at"], datatype=XSD.dateTime)))
    for status, n in syn["summary"].items():
        node = URIRef(f"{graph_iri}/status/{status}")
        g.add((gr, KG.statusCount, node))
        g.add((node, RDF.type, KG.StatusCount))
        g.add((node, KG.status, Literal(status)))
        g.add((node, KG["count"], Literal(n)))
    return ds


def run_rdflib(records: Path, store: Path, limit: int | None = None) -> dict[str, Any]:
    import pyoxigraph as ox

    from kg.ingest.ingestor import ingest_time

    start = time.perf_counter()
    st = ox.Store(str(store))
    ingested_at = ingest_time()
    batch: list[bytes] = []
    n = 0
    with open(records, encoding="utf-8") as f:
        for line in f:
            ds = rdflib_map(json.loads(line), ingested_at)
            batch.append(ds.serialize(format="nquads", encoding="utf-8"))
            n += 1
            if len(batch) == 2000:
                st.load(b"".join(batch), format=ox.RdfFormat.N_QUADS)
                batch = []
            if limit and n >= limit:
                break
    if batch:
        st.load(b"".join(batch), format=ox.RdfFormat.N_QUADS)
    st.flush()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "records": n, "quads": len(st), "rss_mb": peak_rss_mb()}


# --- orchestration ------------------------------------------------------------------------


def child(variant: str, *args: str) -> dict[str, Any]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    out = subprocess.run(
        [sys.executable, __file__, "--child", variant, *args],
        capture_output=True, text=True, env=env, check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{out.stderr}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def check_same_graph(records: Path, work: Path, sample: int) -> bool:
    """The rdflib baseline must build the very graph kg builds (canonical digests match)."""
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import Ingestor
    from kg.rdf.store import GraphStore

    head = work / "head.jsonl"
    with open(records, encoding="utf-8") as f, open(head, "w", encoding="utf-8") as out:
        for _ in range(sample):
            out.write(f.readline())
    os.environ["SOURCE_DATE_EPOCH"] = "1764460800"
    with GraphStore.open(work / "check-kg") as a:
        Ingestor(a, Iris(BASE)).run([str(head)])
        digest_kg = a.canonical_digest(["https://w3id.org/kg/ontology#sourceFile"])
    run_rdflib(head, work / "check-rdflib")
    with GraphStore.open(work / "check-rdflib") as b:
        digest_rdflib = b.canonical_digest(["https://w3id.org/kg/ontology#sourceFile"])
    return digest_kg == digest_rdflib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rdflib-records", type=int, default=None,
                        help="records for the rdflib variant (default: all); its rate is per record")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        variant, *rest = args.child
        if variant == "kg":
            result = run_kg(Path(rest[0]), Path(rest[1]))
        elif variant == "bulk":
            result = run_bulk(Path(rest[0]), Path(rest[1]))
        else:
            result = run_rdflib(Path(rest[0]), Path(rest[1]), int(rest[2]) if len(rest) > 2 else None)
        print(json.dumps(result))
        return

    from kg.testing.records import records

    work = args.work or Path(tempfile.mkdtemp(prefix="kg-bench-ingest-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "records.jsonl"
    t = time.perf_counter()
    with open(data, "w", encoding="utf-8") as f:
        for rec in records(args.records, seed=1):
            f.write(json.dumps(rec) + "\n")
    print(f"generated {args.records:,} records ({data.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - t:.1f} s")

    same = check_same_graph(data, work, 500)
    print(f"rdflib baseline builds the same graph as kg on 500 records: {same}")

    kg_res = child("kg", str(data), str(work / "kg-store"))
    nq = work / "graph.nq"
    from kg.rdf.store import GraphStore

    # What the store holds: the named graphs and the default graph's merge (issue 13).
    with GraphStore.open(work / "kg-store", read_only=True) as gs, open(nq, "wb") as out:
        gs.dump(out, "nquads", include_merge=True)
    bulk_res = child("bulk", str(nq), str(work / "bulk-store"))
    named_nq = work / "named.nq"
    with GraphStore.open(work / "kg-store", read_only=True) as gs, open(named_nq, "wb") as out:
        gs.dump(out, "nquads")
    named_res = child("bulk", str(named_nq), str(work / "bulk-named-store"))
    rd_args = [str(data), str(work / "rdflib-store")]
    if args.rdflib_records:
        rd_args.append(str(args.rdflib_records))
    rd_res = child("rdflib", *rd_args)

    n = kg_res["records"]
    quads = kg_res["quads"]
    kg_rate = quads / kg_res["seconds"]
    bulk_rate = bulk_res["quads"] / bulk_res["seconds"]
    rd_rec_rate = rd_res["records"] / rd_res["seconds"]
    rd_rate = rd_res["quads"] / rd_res["seconds"]
    print(f"kg ingest : {n:,} records, {quads:,} quads in {kg_res['seconds']:.1f} s = "
          f"{n / kg_res['seconds']:,.0f} records/s, {kg_rate:,.0f} quads/s, peak RSS {kg_res['rss_mb']:,.0f} MB")
    print(f"bulk_load : {bulk_res['quads']:,} quads in {bulk_res['seconds']:.1f} s = {bulk_rate:,.0f} quads/s, "
          f"peak RSS {bulk_res['rss_mb']:,.0f} MB")
    print(f"rdflib    : {rd_res['records']:,} records in {rd_res['seconds']:.1f} s = {rd_rec_rate:,.0f} records/s, "
          f"{rd_rate:,.0f} quads/s, peak RSS {rd_res['rss_mb']:,.0f} MB")
    print(f"bulk_load (named graphs only, no merge): {named_res['quads']:,} quads in "
          f"{named_res['seconds']:.1f} s")
    print(f"ratio (a) kg / bulk_load (same quads, time)  : {bulk_res['seconds'] / kg_res['seconds']:.2f}x")
    print(f"ratio (a') kg / bulk_load of the named graphs only: "
          f"{named_res['seconds'] / kg_res['seconds']:.2f}x")
    print(f"ratio (b) kg / rdflib (records per second)   : {(n / kg_res['seconds']) / rd_rec_rate:.1f}x")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
