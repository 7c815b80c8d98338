"""Exports: every format reads back into the same graph, deterministically, streaming.

Round trips run on the seeds, on the real dump slices and on generated records with awkward
strings: export, re-import into a fresh store, compare canonicalised (RDFC-1.0 digests, or
sets of canonical N-Quads lines where the graphs are large and hold no blank nodes).
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import itertools
import json
import random
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.errors import KgError, NotFoundError, StoreError, UsageError
from kg.export.exporter import construct, export, export_file, subset_query
from kg.export.jsonld import Compactor, context
from kg.ingest.dumps import EVALUATION, METHODS
from kg.ingest.identity import Iris
from kg.ingest.ingestor import ingest
from kg.rdf.formats import WRITABLE_RDF as FORMATS
from kg.rdf.results import AskResult, GraphResult
from kg.rdf.store import GraphStore
from kg.rdf.vocab import JOURNAL_GRAPH
from kg.testing.records import records as synth_records
from tests.conftest import BASE, KG, RAW_DIR

ALL = sorted(FORMATS)
DATASET = sorted(f for f, spec in FORMATS.items() if spec.dataset)
ENTITIES = Iris(BASE).entities_graph()


# --- helpers ---------------------------------------------------------------------------------


def exported(store: GraphStore, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    export(store, out, fmt, **options)
    return out.getvalue()


def reimport(data: bytes, fmt: str) -> GraphStore:
    back = GraphStore.memory()
    back.bulk_load(data, fmt)
    return back


def union_lines(store: GraphStore) -> set[str]:
    """The union of all graphs as a set of N-Triples lines (Oxigraph's own CONSTRUCT)."""
    result = store.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    assert isinstance(result, GraphResult)
    return set(result.ntriples.splitlines())


def assert_same_graph(original: GraphStore, data: bytes, fmt: str, *, exact: bool = True) -> None:
    """`data` (an export of `original` in `fmt`) holds exactly the same graph or dataset."""
    back = reimport(data, fmt)
    if exact:  # RDFC-1.0 canonical digests: isomorphism, blank nodes included
        if FORMATS[fmt].dataset:
            assert back.canonical_digest() == original.canonical_digest()
        else:
            assert back.canonical_union_digest() == original.canonical_union_digest()
    else:  # large and blank-node free: compare sets of canonical lines
        blank = original.query("ASK { ?s ?p ?o FILTER(isBLANK(?s) || isBLANK(?o)) }")
        assert isinstance(blank, AskResult) and not blank.value
        if FORMATS[fmt].dataset:
            assert set(back.quads_nquads()) == set(original.quads_nquads())
        else:
            assert union_lines(back) == union_lines(original)


def ingest_records(store: GraphStore, records: Iterable[dict[str, Any]], name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
        report = ingest(store, [str(path)], base_iri=BASE)
    assert report.rejected == 0, report.errors[:3]


def assert_grouped_by_subject(lines: list[bytes]) -> None:
    """Each subject's lines form one block, sorted; no line twice."""
    assert len(lines) == len(set(lines))
    blocks = [(s, list(b)) for s, b in itertools.groupby(lines, key=lambda x: x.split(b" ")[0])]
    subjects = [s for s, _ in blocks]
    assert len(subjects) == len(set(subjects))
    for _, block in blocks:
        assert block == sorted(block)


def add_quads(store: GraphStore, nquads: str) -> None:
    store.update(f"INSERT DATA {{ {nquads} }}")


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ALL)
def test_every_format_round_trips_on_the_seeds(seed_store: GraphStore, fmt: str) -> None:
    data = exported(seed_store, fmt)
    assert_same_graph(seed_store, data, fmt)


@pytest.mark.parametrize("fmt", ALL)
def test_statement_counts_match_the_store(seed_store: GraphStore, fmt: str) -> None:
    out = io.BytesIO()
    report = export(seed_store, out, fmt)
    expected = seed_store.count() if FORMATS[fmt].dataset else len(union_lines(seed_store))
    assert report.statements == expected
    # two records and the entities graph; the triple formats read their merge, one graph
    assert report.graphs == (3 if FORMATS[fmt].dataset else 1)


@pytest.fixture(scope="module")
def dump_store() -> GraphStore:
    """The real methods dump and the sota-extractor task files, ingested with kg."""
    files = sorted((RAW_DIR / "pwc-methods-2022").glob("*.json.gz"))
    files += sorted((RAW_DIR / "sota-extractor-tasks").glob("*.json"))
    store = GraphStore.memory()
    report = ingest(store, [str(f) for f in files], base_iri=BASE)
    assert report.rejected == 0 and report.read > 2000
    assert report.kinds[METHODS] > 1000 and report.kinds[EVALUATION] > 0  # read as dumps
    return store


@pytest.mark.parametrize("fmt", ALL)
def test_every_format_round_trips_on_the_real_dump_slices(dump_store: GraphStore, fmt: str) -> None:
    data = exported(dump_store, fmt)
    assert_same_graph(dump_store, data, fmt, exact=False)


def test_dump_slices_state_triples_in_several_graphs_and_the_union_writes_them_once(
    dump_store: GraphStore,
) -> None:
    lines = exported(dump_store, "ntriples").splitlines()
    assert len(lines) == len(set(lines)) == len(union_lines(dump_store))
    assert len(lines) < dump_store.count()  # the dumps do repeat triples across graphs
    nodes = json.loads(exported(dump_store, "jsonld"))["@graph"]
    ids = [n["id"] for n in nodes]
    assert len(ids) == len(set(ids))  # one object per entity, however many graphs describe it


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ALL)
def test_every_format_round_trips_on_all_the_raw_slices(fmt: str) -> None:
    store = GraphStore.memory()
    files = sorted(p for p in RAW_DIR.glob("*/*") if p.name.endswith((".json", ".json.gz")))
    assert ingest(store, [str(f) for f in files], base_iri=BASE).rejected == 0
    assert_same_graph(store, exported(store, fmt), fmt, exact=False)


# Generated records in the seed format, with the strings that break naive serialisers:
# quotes, backslashes, newlines, tabs, control characters, non-BMP and combining characters.
AWKWARD = st.sampled_from(
    ['"', "'", "\\", "\n", "\r", "\t", "\x00", "\x01", "\x0b", "\x7f", "\x85", "\u2028",
     "é", "ß", "中", "🙂", "e\u0301", " ", "<", ">", "{", "}", "@", "#", ":", "_:", ".", "%"]
)  # fmt: skip
TEXT = st.lists(st.one_of(AWKWARD, st.text(max_size=6)), max_size=8).map("".join)
NAME = TEXT.filter(lambda s: s.strip() != "")
SLUG = st.text(
    st.characters(categories=("Ll", "Nd", "Lo"), include_characters="-_.~%:"),
    min_size=1,
    max_size=12,
)


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    slug = draw(SLUG)
    date = draw(st.dates(min_value=dt.date(1990, 1, 1)))
    record: dict[str, Any] = {
        "url": f"/paper/{slug}",
        "title": draw(NAME),
        "abstract": draw(TEXT),
        "date": date.isoformat(),
        "authors": draw(st.lists(NAME, max_size=4)),
        "tasks": [
            {"task_slug": s, "task_name": n}
            for s, n in draw(st.lists(st.tuples(SLUG, NAME), max_size=3))
        ],
        "methods": [
            {"method_slug": s, "method_name": n}
            for s, n in draw(st.lists(st.tuples(SLUG, NAME), max_size=3))
        ],
        "code_links": [
            {
                "repo_url": f"https://github.com/{owner}/{name}",
                "is_official": draw(st.booleans()),
                "framework": draw(TEXT),
            }
            for owner, name in draw(st.lists(st.tuples(SLUG, SLUG), max_size=2, unique=True))
        ],
        "results": [
            {"task": draw(NAME), "dataset": draw(NAME), "metric": draw(NAME), "value": v}
            for v in draw(
                st.lists(st.sampled_from(["15.8", "96.95%", "-", "N/A", "1e3"]), max_size=2)
            )
        ],
    }
    if draw(st.booleans()):
        record["proceeding"] = f"{draw(st.sampled_from(['EMNLP', 'ICML', 'Ünï Conf']))} 2020 11"
    return record


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batch=st.lists(records(), min_size=1, max_size=4, unique_by=lambda r: r["url"]))
def test_every_format_round_trips_generated_records(batch: list[dict[str, Any]]) -> None:
    store = GraphStore.memory()
    ingest_records(store, batch, "generated.jsonl")
    for fmt in ALL:
        assert_same_graph(store, exported(store, fmt), fmt)


XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
LOCAL = st.one_of(st.just("type"), st.text(st.sampled_from("aZ_-.:1é%~/#"), max_size=6))
NAMESPACE = st.sampled_from(
    [KG, "http://purl.org/dc/terms/", "http://e.org/other/", BASE, RDF, XSD]
)
LEXICAL = st.one_of(
    TEXT,
    st.sampled_from(["1", "+01", "-7", "1.", ".5", "2.50", "1e3", "true", "TRUE", "0", " 1"]),
)
DATATYPE = st.sampled_from(
    [f"{XSD}{t}" for t in ("integer", "decimal", "boolean", "double", "date", "string")]
    + ["http://e.org/dt", f"{KG}weird.type"]
)


@st.composite
def terms_ntriples(draw: st.DrawFn) -> str:
    """N-Triples lines of IRIs in and out of the prefixes' namespaces, blank nodes and
    literals of every kind, for the Turtle writer."""
    from kg.rdf.terms import literal, segment, typed

    def iri() -> str:
        return f"<{draw(NAMESPACE)}{segment(draw(LOCAL))}>"

    lines = []
    for _ in range(draw(st.integers(1, 12))):
        subject = draw(st.one_of(st.builds(iri), st.sampled_from(["_:b1", "_:b2"])))
        obj = draw(
            st.one_of(
                st.builds(iri),
                st.sampled_from(["_:b1", "_:b3"]),
                st.builds(literal, LEXICAL),
                st.builds(typed, LEXICAL, DATATYPE),
                st.builds(
                    lambda t, lang: f"{literal(t)}@{lang}", TEXT, st.sampled_from(["en", "de-CH"])
                ),
            )
        )
        predicate = draw(
            st.one_of(
                st.builds(iri),
                st.just("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"),
            )
        )
        graph = draw(st.sampled_from(["", " <http://e.org/g1>", " <http://e.org/g2>"]))
        lines.append(f"{subject} {predicate} {obj}{graph} .\n")
    return "".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nquads=terms_ntriples())
def test_turtle_and_trig_text_reads_back_for_any_terms(nquads: str) -> None:
    store = GraphStore.memory()
    store.load(nquads.encode("utf-8"), "nquads")
    for fmt in ("turtle", "trig"):
        assert_same_graph(store, exported(store, fmt), fmt)


# --- determinism -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_records(seed_records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [*seed_records, *synth_records(60, seed=6)]


def test_same_graph_same_bytes_whatever_the_store_and_load_order(
    mixed_records: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the same kg:ingestedAt everywhere
    shuffled = mixed_records[:]
    random.Random(1).shuffle(shuffled)
    in_memory = GraphStore.memory()
    ingest_records(in_memory, mixed_records, "records.jsonl")
    reordered = GraphStore.memory()
    ingest_records(reordered, shuffled, "records.jsonl")
    with GraphStore.open(tmp_path / "store") as on_disk:
        ingest_records(on_disk, reversed(mixed_records), "records.jsonl")
        for fmt in ALL:
            first = exported(in_memory, fmt)
            assert exported(in_memory, fmt) == first
            assert exported(reordered, fmt) == first, fmt
            assert exported(on_disk, fmt) == first, fmt


@pytest.mark.parametrize("fmt", ["ntriples", "nquads", "turtle", "jsonld"])
def test_spilling_sorted_runs_to_disk_changes_no_byte(
    mixed_records: list[dict[str, Any]], fmt: str
) -> None:
    store = GraphStore.memory()
    ingest_records(store, mixed_records, "records.jsonl")
    in_memory = exported(store, fmt)
    assert exported(store, fmt, sort_budget=4096) == in_memory  # dozens of runs, merged
    assert_same_graph(store, in_memory, fmt)


def test_ntriples_and_nquads_are_sorted_lines(seed_store: GraphStore) -> None:
    triples = exported(seed_store, "ntriples").splitlines()
    assert_grouped_by_subject(triples)
    entities = [t for t in triples if t.startswith(f"<{BASE}author/".encode())]
    assert triples[: len(entities)] == entities  # the entities graph comes first, sorted
    quads = exported(seed_store, "nquads").decode().splitlines()
    graphs = [line.rsplit(" ", 2)[1] for line in quads]
    assert graphs == sorted(graphs)  # graph by graph, in IRI order
    for graph in set(graphs):
        block = [q for q, g in zip(quads, graphs, strict=True) if g == graph]
        assert block == sorted(block)


def test_turtle_and_trig_use_the_prefixes_and_group_by_subject(seed_store: GraphStore) -> None:
    turtle = exported(seed_store, "turtle").decode()
    assert "@prefix kg: <https://w3id.org/kg/ontology#> ." in turtle
    assert "kg:Paper" in turtle and f"<{KG}Paper>" not in turtle
    subjects = [line.split(" ", 1)[0] for line in turtle.splitlines() if line.startswith("<")]
    assert len(subjects) == len(set(subjects))  # each subject once: one block per entity
    trig = exported(seed_store, "trig").decode()
    assert "@prefix dcterms: <http://purl.org/dc/terms/> ." in trig
    assert trig.count(f"<{ENTITIES}> {{") == 1


# --- the union, the journal, single graphs ------------------------------------------------------


def store_with_shared_triples() -> GraphStore:
    store = GraphStore.memory()
    add_quads(
        store,
        """<http://e/s> <http://e/p> "default" .
        GRAPH <http://e/g1> { <http://e/s> <http://e/p> "both" . <http://e/s> <http://e/q> "g1" .
                               <http://e/t> <http://e/p> <http://e/s> . }
        GRAPH <http://e/g2> { <http://e/s> <http://e/p> "both" . <http://e/s> <http://e/r> "g2" .
                               <http://e/t> <http://e/p> <http://e/s> . }""",
    )
    return store


@pytest.mark.parametrize("fmt", ALL)
def test_the_union_holds_each_triple_once(fmt: str) -> None:
    store = store_with_shared_triples()
    data = exported(store, fmt)
    assert_same_graph(store, data, fmt)
    if fmt == "ntriples":  # the default graph (the merge), sorted, no repeats
        assert data.decode().splitlines() == [
            '<http://e/s> <http://e/p> "both" .',
            '<http://e/s> <http://e/p> "default" .',
            '<http://e/s> <http://e/q> "g1" .',
            '<http://e/s> <http://e/r> "g2" .',
            "<http://e/t> <http://e/p> <http://e/s> .",
        ]
    if fmt == "jsonld":  # one object per entity, whichever graphs describe it
        nodes = json.loads(data)["@graph"]
        assert [n["id"] for n in nodes] == ["http://e/s", "http://e/t"]
        assert nodes[0]["http://e/p"] == [{"@value": "both"}, {"@value": "default"}]


@pytest.mark.parametrize("fmt", ["jsonld"])
def test_shared_subjects_are_found_across_query_batches_and_collisions_cost_nothing(
    mixed_records: list[dict[str, Any]], fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kg.export.exporter

    store = store_with_shared_triples()
    ingest_records(store, mixed_records, "records.jsonl")
    expected = exported(store, fmt)
    monkeypatch.setattr(kg.export.exporter, "_GRAPHS_PER_QUERY", 1)  # every graph its own batch
    assert exported(store, fmt) == expected
    real = kg.export.exporter._sharing

    class Everything(set[int]):
        def __contains__(self, key: object) -> bool:
            return True

    def all_shared(store: GraphStore, graphs: Any) -> Any:
        found = real(store, graphs)  # as if every hash collided: all subjects look shared
        return kg.export.exporter._Sharing(Everything(), set(found.batch_of.values()), found.batch_of)

    monkeypatch.setattr(kg.export.exporter, "_sharing", all_shared)
    assert exported(store, fmt) == expected  # every subject read whole from the store
    assert_same_graph(store, expected, fmt)


@pytest.mark.parametrize("fmt", ["ntriples", "turtle", "rdfxml"])
def test_bloom_false_positives_change_no_byte(
    mixed_records: list[dict[str, Any]], fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kg.export.exporter

    store = store_with_shared_triples()
    ingest_records(store, mixed_records, "records.jsonl")
    expected = exported(store, fmt)
    # As if the filter said "seen" for every subject: each line is checked in the store.
    monkeypatch.setattr(kg.export.exporter._SeenSubjects, "check_add", lambda self, key: True)
    assert exported(store, fmt) == expected
    assert_same_graph(store, expected, fmt)


def test_the_journal_and_half_written_graphs_are_never_exported(seed_store: GraphStore) -> None:
    before = {fmt: exported(seed_store, fmt) for fmt in ALL}
    half = BASE + "graph/record/paper/half-written"
    add_quads(
        seed_store,
        f"""GRAPH <{JOURNAL_GRAPH}> {{ <{half}> <{KG}pendingLoad> true }}
        GRAPH <{half}> {{ <{half}> <{KG}contentHash> "x" }}""",
    )
    for fmt in ALL:
        out = io.BytesIO()
        report = export(seed_store, out, fmt)
        assert out.getvalue() == before[fmt]
        assert report.skipped_graphs == [half]
    with pytest.raises(UsageError, match="journal"):
        export(seed_store, io.BytesIO(), "nquads", graph=JOURNAL_GRAPH)
    with pytest.raises(StoreError, match="being written"):
        export(seed_store, io.BytesIO(), "nquads", graph=half)


@pytest.mark.parametrize("fmt", ALL)
def test_one_graph_exports_alone(seed_store: GraphStore, fmt: str) -> None:
    graph = BASE + "graph/record/paper/self-attention-attribution-interpreting"
    data = exported(seed_store, fmt, graph=graph)
    back = reimport(data, fmt)
    expected = GraphStore.memory()
    expected.load("".join(seed_store.quads_nquads(graph)).encode(), "nquads")
    if FORMATS[fmt].dataset:
        assert back.canonical_digest() == expected.canonical_digest()
        assert list(back.named_graphs()) == [graph]
    else:
        assert back.canonical_union_digest() == expected.canonical_union_digest()
    assert back.count() == seed_store.count(graph)


def test_an_unknown_graph_is_a_clear_error(seed_store: GraphStore) -> None:
    with pytest.raises(NotFoundError, match="no graph <http://e/nowhere>; list the graphs"):
        export(seed_store, io.BytesIO(), "turtle", graph="http://e/nowhere")
    with pytest.raises(UsageError, match="unknown export format 'yaml'"):
        export(seed_store, io.BytesIO(), "yaml")


# --- subsets -----------------------------------------------------------------------------------


def test_a_named_construct_query_exports_one_paper_and_its_neighbourhood(
    seed_store: GraphStore,
) -> None:
    subset = subset_query("paper-card", {"paper": "self-attention-attribution-interpreting"}, BASE)
    assert subset.name == "paper-card"
    card = construct(seed_store, subset)
    titles = card.query("SELECT ?t WHERE { ?p <http://purl.org/dc/terms/title> ?t }")
    assert [r[0].value for r in titles.rows] == [  # type: ignore[union-attr]
        "Self-Attention Attribution: Interpreting Information Interactions Inside Transformer"
    ]
    assert 20 < card.count() < seed_store.count() / 2  # one paper, not the whole store
    for fmt in ALL:
        assert_same_graph(card, exported(card, fmt), fmt)


def test_a_query_file_exports_its_construct(seed_store: GraphStore, tmp_path: Path) -> None:
    plain = tmp_path / "methods.rq"
    plain.write_text(
        f"CONSTRUCT {{ ?m a <{KG}Method> }} WHERE {{ ?p <{KG}usesMethod> ?m }}", encoding="utf-8"
    )
    graph = construct(seed_store, subset_query(f"@{plain}", {}, BASE))
    assert graph.count() == 20
    with pytest.raises(KgError, match="declares no parameters"):
        subset_query(f"@{plain}", {"paper": "x"}, BASE)
    select = tmp_path / "select.rq"
    select.write_text("SELECT * WHERE { ?s ?p ?o }", encoding="utf-8")
    with pytest.raises(UsageError, match="needs a CONSTRUCT or DESCRIBE query"):
        construct(seed_store, subset_query(f"@{select}", {}, BASE))
    with pytest.raises(UsageError, match="cannot read the query file"):
        subset_query(f"@{tmp_path / 'missing.rq'}", {}, BASE)


# --- JSON-LD ------------------------------------------------------------------------------------


def test_jsonld_is_compacted_against_the_context_one_object_per_entity(
    seed_store: GraphStore,
) -> None:
    doc = json.loads(exported(seed_store, "jsonld"))
    ctx = context()
    assert doc["@context"] == ctx  # inline, so the file reads back on its own
    nodes = doc["@graph"]
    ids = [n["id"] for n in nodes]
    assert len(ids) == len(set(ids)) == len({s.split(" ")[0] for s in union_lines(seed_store)})
    for node in nodes:
        for key in node:
            assert key in ("id", "type") or key in ctx, key  # readable keys, never IRIs
        types = node.get("type", [])
        for t in types if isinstance(types, list) else [types]:
            assert t in ctx, t
    paper = next(
        n for n in nodes if n["id"] == BASE + "paper/attention-module-is-not-only-a-weight"
    )
    assert paper["type"] == "Paper"
    assert paper["issued"] == "2020-04-21"  # typed by the context, so a bare string
    assert paper["venueYear"] == "2020"
    assert isinstance(paper["creator"], list) and len(paper["creator"]) == 4  # @set
    assert paper["title"].startswith("Attention is Not Only a Weight")


def test_jsonld_reads_back_in_rdflib_too(seed_store: GraphStore) -> None:
    import rdflib
    from rdflib.compare import to_isomorphic

    data = exported(seed_store, "jsonld")
    ours = rdflib.Graph().parse(data=data, format="json-ld")
    truth = rdflib.Graph().parse(data="\n".join(union_lines(seed_store)), format="nt")
    assert to_isomorphic(ours) == to_isomorphic(truth)


def test_jsonld_keeps_what_no_term_fits() -> None:
    store = GraphStore.memory()
    add_quads(
        store,
        f"""<http://e/s> <{KG}position> "not a number" .
        <http://e/s> <{KG}position> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .
        <http://e/s> <http://purl.org/dc/terms/title> "Titel"@de .
        <http://e/s> <http://purl.org/dc/terms/title> <http://e/not-a-literal> .
        <http://e/s> <http://e/unknown> "x"^^<http://e/type> .
        <http://e/s> <{KG}unknownTerm> _:b .
        _:b <http://e/p> "blank" .
        <http://e/s> a <http://e/Class>, <{KG}Paper> .""",
    )
    data = exported(store, "jsonld")
    assert_same_graph(store, data, "jsonld")
    node = next(n for n in json.loads(data)["@graph"] if n["id"] == "http://e/s")
    assert node["type"] == ["http://e/Class", "Paper"]
    assert node["position"] == "3"
    assert node["kg:position"] == {"@value": "not a number"}
    assert {"@value": "Titel", "@language": "de"} in node["title"]
    assert {"id": "http://e/not-a-literal"} in node["title"]
    assert node["http://e/unknown"] == {"@value": "x", "@type": "http://e/type"}


def test_construct_results_are_compacted_the_same_way(seed_store: GraphStore) -> None:
    """`kg sparql/query --format jsonld` and the server use the same compactor."""
    from kg.export.jsonld import compact_ntriples

    card = seed_store.query(f"CONSTRUCT {{ ?p ?x ?y }} WHERE {{ ?p a <{KG}Paper> ; ?x ?y }}")
    assert isinstance(card, GraphResult)
    text = compact_ntriples(card.ntriples + card.ntriples)  # duplicates are dropped
    nodes = json.loads(text)["@graph"]
    assert [n["type"] for n in nodes] == ["Paper", "Paper"]
    back = reimport(text.encode(), "jsonld")
    assert union_lines(back) == set(card.ntriples.splitlines())
    assert json.loads(compact_ntriples(""))["@graph"] == []


def test_jsonld_refuses_an_iri_that_would_read_back_as_a_compact_iri() -> None:
    compactor = Compactor(context())
    assert compactor.compact_iri(f"{KG}Paper") == "kg:Paper"
    assert compactor.compact_iri("https://github.com/a/b") == "https://github.com/a/b"
    with pytest.raises(KgError, match="scheme 'foaf' is a prefix"):
        compactor.compact_iri("foaf:bob")


# --- files and the CLI -------------------------------------------------------------------------


def test_export_file_is_atomic_and_gzip_is_deterministic(
    seed_store: GraphStore, tmp_path: Path
) -> None:
    path = tmp_path / "out" / "kg.nq.gz"
    first = export_file(seed_store, "nquads", path, compress=True)
    data = path.read_bytes()
    assert first.bytes == len(data) and data[4:8] == b"\0\0\0\0"  # no time in the header
    export_file(seed_store, "nquads", path, compress=True)
    assert path.read_bytes() == data
    assert gzip.decompress(data) == exported(seed_store, "nquads")
    with pytest.raises(UsageError):
        export_file(seed_store, "yaml", path)
    assert path.read_bytes() == data  # a failed export leaves the earlier file alone
    assert sorted(p.name for p in path.parent.iterdir()) == ["kg.nq.gz"]
