"""Ingest benchmark: `kg ingest` as the user runs it vs Oxigraph's bulk loader vs rdflib.

    python bench/ingest.py [--records 100000] [--generator archive wide] [--rounds 2]
                           [--rdflib-records M | --skip-rdflib] [--library] [--work DIR]

1. Generate N seed-format records into a JSONL file, for each generator asked for
   (kg.testing.records.GENERATORS: `archive`, the archive's distributions; `wide`, uniform
   counts with 1–12 authors, 0–25 methods, 0–6 tasks, 0–8 code links a paper and one record
   in 250 of 100 authors and 200 methods).
2. Side by side, alternated round by round (kg first, then the bulk load first):
   * kg       — `kg --store DIR ingest --json RECORDS`, the real entry point as a command,
                start-up to exit (reading, mapping, loading, the search index, publication):
                wall time, each phase's share (the report's `timings`), and the peak RSS of
                its whole process tree (bench/measure.py run_command);
   * bulk     — `Store.bulk_load` of the very quads kg stored (the named graphs and the
                default graph's merge), dumped as N-Quads, in a child process measured the
                same way (the practical limit: no JSON, no mapping, no journal, no index);
   and the ratio of their times.
3. Optionally: `--library`, the library's `Ingestor.run` in process (no CLI, no search
   index); the rdflib variant (each record mapped with rdflib terms into an rdflib Dataset,
   serialised as N-Quads per batch and loaded into an on-disk Oxigraph store), after a check
   that it builds the very graph kg builds (canonical digests equal, kg:sourceFile aside) on
   the first 500 records; and Oxigraph's `optimize` of kg's store (unless --skip-compact).
   Figures go to bench/out/ingest.json.
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

from measure import (  # bench/measure.py
    command_phases,
    format_phases,
    format_settled,
    optimize_store,
    peak_rss_mb,
    run_command,
    settled,
)

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


def store_bytes(path: Path) -> int:
    from kg.rdf.stamp import size_on_disk

    return size_on_disk(path)


def run_compact(store: Path) -> dict[str, Any]:
    """Oxigraph's `optimize` (RocksDB's full compaction) on kg's store: its bytes before
    and after (kg does not run it: it grows the store)."""
    from kg.rdf.store import GraphStore

    before = store_bytes(store)
    cpu, start = time.process_time(), time.perf_counter()
    with GraphStore.open(store) as gs:
        gs.optimize()
        gs.flush()
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "bytes_before": before, "bytes_after": store_bytes(store)}


def rdflib_map(rec: dict[str, Any], ingested_at: str) -> Any:
    """Map one record the usual way: an rdflib graph built from rdflib terms.

    The very quads kg's mapping (kg/ingest/mapping.py) writes for the fields that generated
    and seed records carry: the record's own triples in its graph, the types and labels of
    shared entities (authors, tasks, methods, venues, repositories, repository kinds) in the
    entities graph, licence URLs as their normalised IRIs. kg's validation is not repeated,
    and results and introduced methods/datasets (empty in both kinds of records) are not
    mapped. `check_same_graph` below compares the two graphs.
    """
    import hashlib
    import re

    from rdflib import RDF, RDFS, XSD, Dataset, Literal, Namespace, URIRef
    from rdflib.namespace import DCTERMS, FOAF, PROV, SKOS

    from kg.ingest.identity import Iris, arxiv_id, licence_iri, pwc_slug, repository, slug_from_url
    from kg.rdf.terms import safe_iri, segment

    KG = Namespace("https://w3id.org/kg/ontology#")
    SDO = Namespace("https://schema.org/")
    iris = Iris(BASE)

    def text(d: dict[str, Any], key: str) -> str | None:  # kg's rule: a blank string is no value
        value = d.get(key)
        return value if isinstance(value, str) and value.strip() else None

    def canonical(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    slug = slug_from_url(rec["url"], "paper")
    assert slug
    paper_iri = iris.paper(slug)
    graph_iri = iris.record_graph(iris.local_key(paper_iri))
    ds = Dataset()
    g = ds.graph(URIRef(graph_iri))
    e = ds.graph(URIRef(iris.entities_graph()))
    p = URIRef(paper_iri)
    gr = URIRef(graph_iri)

    def put(s: URIRef, pred: URIRef, d: dict[str, Any], key: str, kind: str = "text") -> None:
        """One optional field of `d` as a literal (or a link), left out when absent."""
        value = d.get(key)
        if kind == "text":
            if text(d, key) is not None:
                g.add((s, pred, Literal(value)))
        elif value is None:
            return
        elif kind == "flag":
            g.add((s, pred, Literal(bool(value))))
        elif kind == "int":
            g.add((s, pred, Literal(value)))
        elif kind == "json":
            g.add((s, pred, Literal(canonical(value), datatype=RDF.JSON)))
        elif text(d, key) is not None and kind == "link":
            g.add((s, pred, URIRef(safe_iri(value.strip()))))
        elif text(d, key) is not None and kind == "licence":
            g.add((s, pred, URIRef(safe_iri(licence_iri(value).strip()))))
        elif text(d, key) is not None and kind == "date":
            g.add((s, pred, Literal(value.strip()[:10], datatype=XSD.date)))
        elif text(d, key) is not None and kind == "datetime":
            g.add((s, pred, Literal(value.strip(), datatype=XSD.dateTime)))

    def entity(iri: str, cls: URIRef, label_p: URIRef, label: str | None) -> URIRef:
        """A shared entity: its type and label in the entities graph; a label given by a
        specific property (foaf:name, skos:prefLabel) is also its rdfs:label."""
        node = URIRef(iri)
        e.add((node, RDF.type, cls))
        if label:
            e.add((node, label_p, Literal(label)))
            e.add((node, RDFS.label, Literal(label)))
        return node

    def repo(ref: Any) -> URIRef:
        node = entity(iris.repository(ref), KG.Repository, RDFS.label, ref.key.split("/", 1)[-1])
        e.add((node, SDO.codeRepository, URIRef(ref.url)))
        e.add((node, KG.host, Literal(ref.key.split("/", 1)[0])))
        return node

    def repo_kind(kind: str) -> URIRef:
        node = entity(iris.repo_kind(kind), KG.RepoKind, SKOS.prefLabel, kind)
        e.add((node, RDF.type, SKOS.Concept))
        return node

    def segments(key: str) -> str:
        return "/".join(segment(s) for s in key.split("/"))

    # The paper.
    g.add((p, RDF.type, KG.Paper))
    g.add((p, KG.pwcSlug, Literal(slug)))
    g.add((p, RDFS.seeAlso, URIRef(f"https://paperswithcode.com/paper/{segment(slug)}")))
    if text(rec, "title"):
        g.add((p, DCTERMS.title, Literal(rec["title"])))
        g.add((p, RDFS.label, Literal(rec["title"])))
    put(p, DCTERMS.abstract, rec, "abstract")
    put(p, DCTERMS.issued, rec, "date", "date")
    if text(rec, "arxiv_id"):
        arxiv = arxiv_id(rec["arxiv_id"])
        assert arxiv
        g.add((p, KG.arxivId, Literal(arxiv)))
        g.add((p, RDFS.seeAlso, URIRef(f"https://arxiv.org/abs/{safe_iri(arxiv)}")))
    put(p, KG.abstractPage, rec, "url_abs", "link")
    put(p, KG.pdf, rec, "url_pdf", "link")
    if text(rec, "proceeding"):
        g.add((p, KG.proceeding, Literal(rec["proceeding"])))
        words = " ".join(rec["proceeding"].split())
        m = re.match(r"^(.*?)\s+((?:19|20)\d{2})(?:\s+(\d{1,2}))?$", words)  # venue year [month]
        venue = m.group(1) if m and m.group(1) else words
        g.add((p, KG.venue, entity(iris.venue(venue), KG.Venue, RDFS.label, venue)))
        if m and m.group(1):
            g.add((p, KG.venueYear, Literal(int(m.group(2)))))
            if m.group(3) and 1 <= int(m.group(3)) <= 12:
                g.add((p, KG.venueMonth, Literal(int(m.group(3)))))
    names = [name for name in rec.get("authors") or [] if name.strip()]
    for pos, name in enumerate(names, start=1):
        a = entity(iris.author(name), KG.Author, FOAF.name, name.strip())
        ship = URIRef(f"{paper_iri}/authorship/{pos}")
        g.add((p, DCTERMS.creator, a))
        g.add((p, KG.authorship, ship))
        g.add((ship, KG.author, a))
        g.add((ship, KG.position, Literal(pos)))
        g.add((ship, KG.authorName, Literal(name)))
    for t in rec.get("tasks") or []:
        name = text(t, "task_name")
        slug_t = text(t, "task_slug") or pwc_slug(name or "") or (name or "").strip()
        g.add((p, KG.hasTask, entity(iris.task(slug_t), KG.Task, RDFS.label, name)))
    for mt in rec.get("methods") or []:
        name = text(mt, "method_name")
        slug_m = text(mt, "method_slug") or pwc_slug(name or "") or (name or "").strip()
        g.add((p, KG.usesMethod, entity(iris.method(slug_m), KG.Method, RDFS.label, name)))
    put(p, KG.arxivMetadata, rec, "arxiv_metadata", "json")
    put(p, KG.extractedResults, rec, "syntology_extracted_results", "json")

    # Code links (one node per normalised link: a repeat says nothing new).
    seen: set[str] = set()
    for link in rec.get("code_links") or []:
        ref = repository(link["repo_url"])
        assert ref is not None
        r = repo(ref)
        tail = segments(ref.key) + (f"/-/{segments(ref.path)}" if ref.path else "")
        if tail in seen:
            continue
        seen.add(tail)
        node = URIRef(f"{paper_iri}/code/{tail}")
        g.add((p, KG.codeLink, node))
        g.add((p, KG.hasRepository, r))
        g.add((node, RDF.type, KG.CodeLink))
        g.add((node, KG.repository, r))
        g.add((node, KG.linkedUrl, URIRef(ref.link_url)))
        if ref.path:
            g.add((node, KG.repositoryPath, Literal(ref.path)))
        put(node, KG.isOfficial, link, "is_official", "flag")
        put(node, KG.mentionedInPaper, link, "mentioned_in_paper", "flag")
        put(node, KG.mentionedInGithub, link, "mentioned_in_github", "flag")
        put(node, KG.framework, link, "framework")
        if link.get("reach"):
            put(node, KG.reachStatus, link["reach"], "status")

    # The record's provenance.
    content = canonical(rec)
    g.add((gr, RDF.type, KG.Record))
    g.add((gr, RDF.type, PROV.Entity))
    g.add((gr, KG.describes, p))
    g.add((gr, KG.contentHash, Literal("sha256:" + hashlib.sha256(content.encode()).hexdigest())))
    g.add((gr, KG.sourceFile, Literal("records.jsonl")))
    g.add((gr, KG.ingestedAt, Literal(ingested_at, datatype=XSD.dateTime)))
    src = rec.get("source") or {}
    put(gr, KG.sourceArchive, src, "archive")
    put(gr, KG.snapshot, src, "snapshot", "date")
    put(gr, KG.archiveLicence, src, "licence_url", "licence")
    put(gr, KG.rowKind, src, "row_kind")
    about = rec.get("about") or {}
    put(gr, KG.republishedBy, about, "site", "link")
    put(gr, KG.licenceName, about, "licence")
    put(gr, DCTERMS.license, about, "licence_url", "licence")
    put(gr, KG.attribution, about, "attribution", "link")
    put(gr, KG.modificationNote, about, "modified")
    put(gr, KG.nonAffiliation, about, "non_affiliation")

    # What Syntology says about the paper's code.
    syn = rec.get("syntology") or {}
    put(p, RDFS.seeAlso, syn, "syntology_url", "link")
    put(gr, KG.atlasPage, syn, "atlas_url", "link")
    put(gr, KG.developersPage, syn, "developers", "link")
    put(gr, KG.mcpCall, syn, "mcp", "json")
    put(gr, KG.readAt, syn, "read_at", "datetime")
    put(gr, KG.readAtMeaning, syn, "read_at_is")
    put(gr, KG.harvestClaim, syn, "claim")
    put(gr, KG.pointerOnlyForLicence, syn, "n_pointer_only_for_licence", "int")
    for kind, definition in (syn.get("repo_kind_vocabulary") or {}).items():
        e.add((repo_kind(kind), SKOS.definition, Literal(definition)))
    for h in syn.get("repos") or []:
        ref = repository(h["url"])
        assert ref is not None
        node = URIRef(f"{graph_iri}/harvest/{segments(ref.key)}")
        g.add((gr, KG.harvestedRepository, node))
        g.add((node, RDF.type, KG.HarvestedRepository))
        g.add((node, KG.repository, repo(ref)))
        put(node, KG.harvestProvenance, h, "provenance")
        if h.get("reach"):
            put(node, KG.reachStatus, h["reach"], "status")
    for status, n in (syn.get("summary") or {}).items():
        node = URIRef(f"{graph_iri}/status/{segment(status)}")
        g.add((gr, KG.statusCount, node))
        g.add((node, RDF.type, KG.StatusCount))
        g.add((node, KG.status, Literal(status)))
        g.add((node, KG["count"], Literal(n)))
    for kind, counts in (syn.get("by_repo_kind") or {}).items():
        node = URIRef(f"{graph_iri}/repo-kind/{segment(kind)}")
        g.add((gr, KG.repoKindSummary, node))
        g.add((node, RDF.type, KG.RepoKindSummary))
        g.add((node, KG.repoKind, repo_kind(kind)))
        put(node, KG.sampleCount, counts, "samples", "int")
        put(node, KG.ranCount, counts, "ran", "int")
        put(node, KG.repositoryCount, counts, "repositories", "int")
    seen = set()
    for s in syn.get("samples") or []:
        sha, entry = text(s, "code_sha256_prefix"), text(s, "entry")
        key = canonical([entry, s.get("repo"), s.get("path")])
        local = segment(sha) if sha else "h" + hashlib.sha1(key.encode()).hexdigest()[:16]
        node_iri = f"{paper_iri}/sample/{local}"
        if node_iri in seen:  # the same code twice: told apart by entry, then by order
            node_iri += "-" + segment(entry or "")
            base_iri, k = node_iri, 2
            while node_iri in seen:
                node_iri, k = f"{base_iri}-{k}", k + 1
        seen.add(node_iri)
        node = URIRef(node_iri)
        g.add((p, KG.hasSample, node))
        g.add((node, RDF.type, KG.Sample))
        put(node, KG.codeSha256Prefix, s, "code_sha256_prefix")
        put(node, KG.entry, s, "entry")
        if text(s, "repo"):
            ref = repository(s["repo"])
            assert ref is not None
            g.add((node, KG.repository, repo(ref)))
        if text(s, "repo_kind"):
            g.add((node, KG.repoKind, repo_kind(s["repo_kind"])))
        put(node, KG.filePath, s, "path")
        put(node, KG.fileUrl, s, "file_url", "link")
        put(node, KG.linkBasis, s, "link_basis")
        put(node, SDO.programmingLanguage, s, "language")
        put(node, KG.executionStatus, s, "status")
        put(node, KG.verificationLevel, s, "verification_level", "int")
        put(node, KG.contractCheck, s, "contract_check")
        put(node, KG.metamorphicTier, s, "metamorphic_tier")
        put(node, KG.behaviourFingerprint, s, "behaviour_fingerprint", "flag")
        put(node, KG.licenceName, s, "licence")
        put(node, KG.inlineOk, s, "inline_ok", "flag")
        put(node, KG.mcpCall, s, "mcp_get_code", "json")
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
    from kg.rdf.stamp import stamp

    stamp(work / "check-rdflib")  # written by pyoxigraph alone: kg's layout, unstamped
    with GraphStore.open(work / "check-rdflib") as b:
        digest_rdflib = b.canonical_digest(["https://w3id.org/kg/ontology#sourceFile"])
    return digest_kg == digest_rdflib


def kg_command() -> list[str]:
    """The real `kg` entry point of this Python (its console script, else `python -m kg`)."""
    script = Path(sys.executable).with_name("kg")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kg"]


def command(records: Path, store: Path, source: Path | None = None) -> dict[str, Any]:
    """`kg --store STORE ingest --json RECORDS` as a command, start-up to exit: its wall
    time, the phases' shares (its report's timings) and the peak RSS of its process tree.
    With `source`, the kg of that source tree (`python -m kg` with it first on the path)."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    argv = kg_command()
    if source is not None:
        env["PYTHONPATH"] = str(source)
        argv = [sys.executable, "-m", "kg"]
    run = run_command([*argv, "--store", str(store), "ingest", "--json", str(records)], env=env,
                      cwd=source)  # `python -m` puts the working folder first on the path
    if run["returncode"] != 0:
        raise SystemExit(f"kg ingest failed:\n{run['stderr'][-3000:]}")
    report = json.loads(run.pop("stdout"))
    run.pop("stderr")
    return {**run, "report": report, "records": report["added"],
            "phases": command_phases(run["wall_seconds"], report)}


def bulk_command(nquads: Path, store: Path) -> dict[str, Any]:
    """`Store.bulk_load` of `nquads` in a child process measured as the command is."""
    shutil.rmtree(store, ignore_errors=True)
    run = run_command([sys.executable, __file__, "--child", "bulk", str(nquads), str(store)])
    if run["returncode"] != 0:
        raise SystemExit(f"bulk load failed:\n{run['stderr'][-3000:]}")
    inner = json.loads(run.pop("stdout").strip().splitlines()[-1])
    run.pop("stderr")
    return {**run, **inner}


def side_by_side(
    data: Path, work: Path, rounds: int, compare: Path | None = None
) -> dict[str, Any]:
    """`kg ingest` as a command against `Store.bulk_load` of the very quads it stored
    (the named graphs and the default graph's merge), alternated round by round (kg first,
    then the bulk load first) so that both meet the same load on a shared machine. With
    `compare`, the command of that source tree too, in the same round (e.g. an archive of
    main's `kg/`: `git archive main kg | tar x -C DIR`)."""
    from kg.rdf.store import GraphStore

    nq = work / "graph.nq"
    runs: list[dict[str, Any]] = []
    for r in range(rounds):
        store = work / "kg-store"
        shutil.rmtree(store, ignore_errors=True)
        if r % 2 == 1 and nq.exists():  # the bulk load first this round
            bulk = bulk_command(nq, work / "bulk-store")
            kg = command(data, store)
        else:
            kg = command(data, store)
            with GraphStore.open(store, read_only=True) as gs, open(nq, "wb") as out:
                gs.dump(out, "nquads", include_merge=True)
            bulk = bulk_command(nq, work / "bulk-store")
        if compare is not None:
            other = command(data, work / "compare-store", compare)
            shutil.rmtree(work / "compare-store", ignore_errors=True)
            o_cpu = bulk["cpu_seconds"] / other["cpu_seconds"]
            print(f"  round {r + 1}, {compare}: kg ingest {other['wall_seconds']:.1f} s, CPU "
                  f"{other['cpu_seconds']:.0f} s ({o_cpu:.2f}x of the bulk load's), wall ratio "
                  f"{bulk['seconds'] / other['wall_seconds']:.2f}x, peak RSS of its tree "
                  f"{other['peak_rss_mb']:,.0f} MB, load {other['load_before']:.1f}-"
                  f"{other['load_after']:.1f}", flush=True)
            print(f"    phases: {format_phases(other['phases'])}", flush=True)
            runs_compare = {"compare": other, "compare_cpu_ratio": o_cpu}
        else:
            runs_compare = {}
        ratio = bulk["seconds"] / kg["wall_seconds"]
        # CPU seconds of each whole process tree: steadier than wall time on a loaded machine
        cpu_ratio = bulk["cpu_seconds"] / kg["cpu_seconds"]
        # the bulk load's store compacted in full, as `kg ingest` leaves its own
        settle = child("optimize", str(work / "bulk-store"))
        compaction = kg["report"].get("compaction") or {}
        runs.append({"kg": kg, "bulk": bulk, "ratio": ratio, "cpu_ratio": cpu_ratio,
                     "bulk_settle": settle,
                     **settled(kg["wall_seconds"], compaction.get("seconds"), bulk["seconds"],
                               settle["seconds"]),
                     **runs_compare})
        print(f"  round {r + 1}: kg ingest {kg['wall_seconds']:.1f} s (its report "
              f"{kg['report']['seconds']:.1f} s), peak RSS of its tree {kg['peak_rss_mb']:,.0f} MB; "
              f"bulk_load {bulk['seconds']:.1f} s, peak RSS {bulk['peak_rss_mb']:,.0f} MB; ratio {ratio:.2f}x "
              f"(CPU {kg['cpu_seconds']:.0f} s against {bulk['cpu_seconds']:.0f} s: {cpu_ratio:.2f}x); load "
              f"{kg['load_before']:.1f}-{bulk['load_after']:.1f}", flush=True)
        print(f"    phases: {format_phases(kg['phases'])}", flush=True)
        print(f"    settled: {format_settled(runs[-1])}", flush=True)
    ratios = sorted(run["ratio"] for run in runs)
    return {"runs": runs, "median_ratio": ratios[len(ratios) // 2]}


def main() -> None:
    from kg.testing.records import GENERATORS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--generator", nargs="+", default=["archive"], choices=sorted(GENERATORS),
                        help="record generators (kg.testing.records.GENERATORS), each reported")
    parser.add_argument("--rounds", type=int, default=1,
                        help="kg ingest / bulk load comparisons per generator, alternated")
    parser.add_argument("--library", action="store_true",
                        help="also time the library's Ingestor.run in process (no CLI, no "
                        "search index), the figure this benchmark used to report")
    parser.add_argument("--skip-rdflib", action="store_true", help="skip the rdflib variant")
    parser.add_argument("--rdflib-records", type=int, default=None,
                        help="records for the rdflib variant (default: all); its rate is per record")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--skip-compact", action="store_true",
                        help="skip compacting kg's store afterwards (Oxigraph's optimize)")
    parser.add_argument("--compare-source", type=Path, default=None,
                        help="a source tree holding another kg/ (e.g. main's): its `kg ingest` "
                        "timed too, in each round")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        variant, *rest = args.child
        if variant == "kg":
            result = run_kg(Path(rest[0]), Path(rest[1]))
        elif variant == "bulk":
            result = run_bulk(Path(rest[0]), Path(rest[1]))
        elif variant == "compact":
            result = run_compact(Path(rest[0]))
        elif variant == "optimize":
            result = optimize_store(Path(rest[0]))
        else:
            result = run_rdflib(Path(rest[0]), Path(rest[1]), int(rest[2]) if len(rest) > 2 else None)
        print(json.dumps(result))
        return

    root = args.work or Path(tempfile.mkdtemp(prefix="kg-bench-ingest-"))
    summary: dict[str, Any] = {"records": args.records}
    for generator in args.generator:
        work = root / generator
        work.mkdir(parents=True, exist_ok=True)
        print(f"== generator {generator}", flush=True)
        summary[generator] = one_generator(args, generator, work)
    out = ROOT / "bench" / "out" / "ingest.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"written to {out.relative_to(ROOT)}")
    if args.work is None:
        shutil.rmtree(root, ignore_errors=True)


def one_generator(args: argparse.Namespace, generator: str, work: Path) -> dict[str, Any]:
    from kg.testing.records import records

    data = work / "records.jsonl"
    t = time.perf_counter()
    with open(data, "w", encoding="utf-8") as f:
        for rec in records(args.records, seed=1, generator=generator):
            f.write(json.dumps(rec) + "\n")
    print(f"generated {args.records:,} records ({data.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - t:.1f} s")

    if not args.skip_rdflib:
        same = check_same_graph(data, work, 500)
        print(f"rdflib baseline builds the same graph as kg on 500 records: {same}")

    figures = side_by_side(data, work, args.rounds, args.compare_source)
    last = figures["runs"][-1]
    kg_run, bulk_res = last["kg"], last["bulk"]
    n = kg_run["records"]
    quads = kg_run["report"]["store_quads"]
    print(f"kg ingest (command): {n:,} records, {quads:,} quads in {kg_run['wall_seconds']:.1f} s = "
          f"{n / kg_run['wall_seconds']:,.0f} records/s, {quads / kg_run['wall_seconds']:,.0f} quads/s, "
          f"peak RSS of its process tree {kg_run['peak_rss_mb']:,.0f} MB")
    print(f"bulk_load : {bulk_res['quads']:,} quads in {bulk_res['seconds']:.1f} s = "
          f"{bulk_res['quads'] / bulk_res['seconds']:,.0f} quads/s, peak RSS {bulk_res['rss_mb']:,.0f} MB")
    print(f"ratio kg ingest (command) / bulk_load (same stored quads, time): "
          f"{figures['median_ratio']:.2f}x (median of {len(figures['runs'])})")

    nq = work / "graph.nq"
    store = work / "kg-store"
    if args.library:
        lib = child("kg", str(data), str(work / "lib-store"))
        figures["library"] = lib
        print(f"library Ingestor.run: {lib['seconds']:.1f} s, peak RSS {lib['rss_mb']:,.0f} MB; "
              f"ratio to the bulk load {bulk_res['seconds'] / lib['seconds']:.2f}x")
    from kg.rdf.store import GraphStore

    named_nq = work / "named.nq"
    with GraphStore.open(store, read_only=True) as gs, open(named_nq, "wb") as out:
        gs.dump(out, "nquads")
    named_res = child("bulk", str(named_nq), str(work / "bulk-named-store"))
    print(f"bulk_load (named graphs only, no merge): {named_res['quads']:,} quads in "
          f"{named_res['seconds']:.1f} s; ratio {named_res['seconds'] / kg_run['wall_seconds']:.2f}x")
    figures["bulk_named"] = named_res
    stored = bulk_res["quads"]  # the named graphs and the merge, as both stores hold them
    # the bulk load's store as it left it (each round then compacted it)
    kg_bytes, bulk_bytes = store_bytes(store), last["bulk_settle"]["bytes_before"]
    compact_res = None if args.skip_compact else child("compact", str(store))
    if compact_res:
        kg_bytes = compact_res["bytes_before"]
    print(f"store size: kg {kg_bytes / 2**20:,.0f} MB = {kg_bytes / stored:.0f} bytes/stored quad "
          f"(the search index included); bulk_load {bulk_bytes / 2**20:,.0f} MB = "
          f"{bulk_bytes / bulk_res['quads']:.0f} bytes/stored quad")
    if compact_res:
        figures["compact"] = compact_res
        print(f"optimize  : {compact_res['seconds']:.1f} s (CPU {compact_res['cpu_seconds']:.1f} s): "
              f"{compact_res['bytes_after'] / 2**20:,.0f} MB = "
              f"{compact_res['bytes_after'] / stored:.0f} bytes/stored quad")
    if not args.skip_rdflib:
        rd_args = [str(data), str(work / "rdflib-store")]
        if args.rdflib_records:
            rd_args.append(str(args.rdflib_records))
        rd_res = child("rdflib", *rd_args)
        figures["rdflib"] = rd_res
        rd_rec_rate = rd_res["records"] / rd_res["seconds"]
        print(f"rdflib    : {rd_res['records']:,} records in {rd_res['seconds']:.1f} s = "
              f"{rd_rec_rate:,.0f} records/s, {rd_res['quads'] / rd_res['seconds']:,.0f} quads/s, "
              f"peak RSS {rd_res['rss_mb']:,.0f} MB")
        print(f"ratio kg ingest (command) / rdflib (records per second): "
              f"{(n / kg_run['wall_seconds']) / rd_rec_rate:.1f}x")
    for path in (nq, named_nq):
        path.unlink(missing_ok=True)
    return figures


if __name__ == "__main__":
    main()
