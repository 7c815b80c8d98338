"""The default graph is an RDF merge (issue 13): each distinct triple once.

Checked on the seeds, the bundled example records, a shared raw slice (evaluation tables,
where the same results sit under several top-level tasks: that check lives in
test_fidelity.py, on the store it ingests anyway), and generated records and dumps:
`COUNT(*)` equals the distinct triples of the N-Quads export, papers count once, and an
rdflib graph built independently from the export answers a dozen ad-hoc SELECTs and
aggregates as kg does (library, CLI, a real `kg serve`). On layout-done main, COUNT(*)
counted a triple once per graph stating it, so these tests failed there.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.errors import StoreError
from kg.export.exporter import export
from kg.ingest.ingestor import ingest
from kg.rdf import journal
from kg.rdf.merge import MERGE_ONLY_MARK
from kg.rdf.results import SelectResult
from kg.rdf.stamp import STORE_VERSION, VERSION_FILE
from kg.rdf.store import GraphStore
from kg.rdf.vocab import JOURNAL_GRAPH, PREFIXES
from kg.testing.dumps import write_archive
from kg.testing.records import records
from tests.conftest import run
from tests.serve_support import ServeProcess

BASE = "https://w3id.org/kg/id/"
ROOT = Path(__file__).resolve().parent.parent

#: Ad-hoc queries as users write them: no DISTINCT, counts and aggregates over the default
#: graph. Each answer is compared as a sorted list of rows (a bag: duplicates matter).
QUERIES = [
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }",
    "SELECT ?p WHERE { ?p a kg:Paper }",
    "SELECT ?type (COUNT(?s) AS ?n) WHERE { ?s a ?type } GROUP BY ?type",
    "SELECT ?p (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p",
    "SELECT ?paper ?title WHERE { ?paper a kg:Paper ; dcterms:title ?title }",
    "SELECT (COUNT(?r) AS ?n) WHERE { ?r a kg:EvaluationResult }",
    "SELECT ?d (COUNT(?r) AS ?n) WHERE { ?r kg:onDataset ?d } GROUP BY ?d",
    "SELECT ?paper (COUNT(?a) AS ?n) WHERE { ?paper dcterms:creator ?a } GROUP BY ?paper",
    "SELECT ?m (COUNT(?paper) AS ?n) WHERE { ?paper kg:usesMethod ?m } GROUP BY ?m",
    "SELECT ?t ?label WHERE { ?t a kg:Task ; rdfs:label ?label }",
    "SELECT (COUNT(?x) AS ?n) WHERE { ?x rdfs:label ?l . ?x a ?c }",
    "SELECT (SUM(?one) AS ?n) WHERE { ?s a kg:Paper BIND(1 AS ?one) }",
    "ASK { ?s ?p ?o }",
]


def _prefixed(query: str) -> str:
    return "".join(f"PREFIX {k}: <{v}>\n" for k, v in PREFIXES.items()) + query


def _nquads(store: GraphStore) -> bytes:
    out = io.BytesIO()
    export(store, out, "nquads")
    return out.getvalue()


def _rdflib_merge(nquads: bytes) -> Any:
    """An rdflib graph holding the RDF merge of the export's graphs, built without kg."""
    import rdflib

    dataset = rdflib.Dataset()
    dataset.parse(data=nquads, format="nquads")
    merge = rdflib.Graph()
    for s, p, o, _ in dataset.quads((None, None, None, None)):
        merge.add((s, p, o))
    return merge


def _distinct_triples(nquads: bytes) -> set[str]:
    lines = nquads.decode("utf-8").splitlines()
    return {line[: line.rindex(" <")] for line in lines if line}


def _norm(value: Any) -> str:
    """A term's value as kg and rdflib both print it (numbers by value)."""
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        return text
    return repr(number)


def _rdflib_rows(graph: Any, query: str) -> Any:
    result = graph.query(_prefixed(query))
    if result.type == "ASK":
        return bool(result.askAnswer)
    return sorted(tuple(_norm(v) if v is not None else "" for v in row) for row in result)


def _kg_rows(store: GraphStore, query: str) -> Any:
    result = store.query(_prefixed(query))
    if not isinstance(result, SelectResult):
        return bool(result.value)  # type: ignore[attr-defined]
    return sorted(
        tuple(_norm(t.value) if t is not None else "" for t in row) for row in result.rows
    )


def _sources(tmp: Path) -> dict[str, list[str]]:
    generated = tmp / "generated.jsonl"
    with open(generated, "w", encoding="utf-8") as f:
        for rec in records(150, seed=7):
            f.write(json.dumps(rec) + "\n")
    dumps = write_archive(tmp / "dumps", scale=0.0005, seed=3)
    return {
        "seeds": ["/work/shared/seeds"],
        "examples-records": [str(ROOT / "examples" / "records")],
        "generated": [str(generated), *(str(p) for p in dumps.values())],
    }


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GraphStore]:
    tmp = tmp_path_factory.mktemp("merge")
    out = {}
    for name, paths in _sources(tmp).items():
        store = GraphStore.memory()
        report = ingest(store, paths, base_iri=BASE)
        assert report.rejected == 0, report.errors[:3]
        out[name] = store
    return out


def _check_counts(store: GraphStore) -> None:
    nquads = _nquads(store)
    triples = _distinct_triples(nquads)
    assert nquads.count(b"\n") > len(triples) or len(triples) > 0
    assert _kg_rows(store, QUERIES[0]) == [(_norm(len(triples)),)]
    assert store.merge_size() == len(triples)
    papers = {line.split(" ", 1)[0] for line in triples if line.endswith("#Paper>")}
    assert _kg_rows(store, QUERIES[1]) == [(_norm(len(papers)),)]
    assert JOURNAL_GRAPH.encode() not in nquads


@pytest.mark.parametrize("name", ["seeds", "examples-records", "generated"])
def test_count_star_is_the_number_of_distinct_triples(
    stores: dict[str, GraphStore], name: str
) -> None:
    _check_counts(stores[name])


# The real 2020 evaluation tables (the same table under several top-level tasks) are checked
# with _check_counts in test_fidelity.py (test_evaluation_tables_state_each_result_once),
# on the store that file ingests anyway: the tables are ingested once for both.


@pytest.mark.parametrize("name", ["seeds", "generated"])
def test_rdflib_over_the_export_answers_as_kg(stores: dict[str, GraphStore], name: str) -> None:
    store = stores[name]
    graph = _rdflib_merge(_nquads(store))
    for query in QUERIES:
        assert _kg_rows(store, query) == _rdflib_rows(graph, query), query


def test_rdflib_answers_as_the_cli_and_a_real_server(tmp_path: Path, cli: Any) -> None:
    store_dir = tmp_path / "store"
    generated = tmp_path / "g.jsonl"
    with open(generated, "w", encoding="utf-8") as f:
        for rec in records(80, seed=11):
            f.write(json.dumps(rec) + "\n")
    paths = [str(generated), "/work/shared/seeds"]
    assert run(cli, "--store", str(store_dir), "ingest", *paths).exit_code == 0
    with GraphStore.open(store_dir, read_only=True) as store:
        graph = _rdflib_merge(_nquads(store))
    count = QUERIES[0]
    expected = _rdflib_rows(graph, count)
    out = run(cli, "--store", str(store_dir), "sparql", "--format", "json", count)
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert [(_norm(b["n"]["value"]),) for b in body["results"]["bindings"]] == expected
    server = ServeProcess(["--store", str(store_dir)], [])
    try:
        for query in QUERIES[:-1]:
            answer = httpx.post(
                server.sparql,
                data={"query": _prefixed(query)},
                headers={"Accept": "application/sparql-results+json"},
                timeout=60,
            )
            assert answer.status_code == 200, answer.text
            data = answer.json()
            names = data["head"]["vars"]
            rows = sorted(
                tuple(_norm(b[v]["value"]) if v in b else "" for v in names)
                for b in data["results"]["bindings"]
            )
            assert rows == _rdflib_rows(graph, query), query
    finally:
        server.stop()


def test_graph_patterns_and_dataset_clauses_keep_their_meaning(
    stores: dict[str, GraphStore],
) -> None:
    store = stores["seeds"]
    graphs = _kg_rows(store, "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert graphs == [(_norm(store.count()),)]  # GRAPH ?g: each graph's own statements
    one = next(g for g in store.named_graphs() if "/record/" in g)
    in_one = store.count(one)
    assert _kg_rows(store, f"SELECT (COUNT(*) AS ?n) FROM <{one}> WHERE {{ ?s ?p ?o }}") == [
        (_norm(in_one),)
    ]
    # FROM NAMED alone: an empty default graph (SPARQL 1.1)
    assert _kg_rows(
        store, f"SELECT (COUNT(*) AS ?n) FROM NAMED <{one}> WHERE {{ ?s ?p ?o }}"
    ) == [(_norm(0),)]
    result = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", named_graphs=[one])
    assert isinstance(result, SelectResult) and result.rows[0][0].value == "0"  # type: ignore[union-attr]
    result = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", default_graphs=[one])
    assert isinstance(result, SelectResult) and result.rows[0][0].value == str(in_one)  # type: ignore[union-attr]


# --- updates stay exact ------------------------------------------------------------------

POOL = [f"<{BASE}s{i % 3}> <{BASE}p{i % 2}> \"{i}\"" for i in range(8)]
GRAPHS = [f"{BASE}graph/record/g{i}" for i in range(3)]

operation = st.tuples(
    st.sampled_from(["write", "rewrite", "drop"]),
    st.sampled_from(range(len(GRAPHS))),
    st.frozensets(st.sampled_from(POOL), min_size=1, max_size=5),
)


def _write(store: GraphStore, graph: str, triples: frozenset[str], exists: bool) -> None:
    data = "".join(f"{t} <{graph}> .\n" for t in sorted(triples)).encode()
    store.write_batch(data, [graph], [graph] if exists else [])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=12))
def test_any_order_of_writes_converges_to_the_merge(ops: list[Any]) -> None:
    """Random add / replace / identical re-write / drop of graphs sharing triples: the
    default graph is always the set of triples some graph states, and equals the default
    graph of a fresh store that gets only the final versions."""
    store = GraphStore.memory()
    model: dict[str, frozenset[str]] = {}
    for kind, index, triples in ops:
        graph = GRAPHS[index]
        if kind == "drop":
            if graph in model:
                store.remove_graph(graph)
                del model[graph]
            continue
        if kind == "rewrite" and graph in model:
            triples = model[graph]  # the identical version again
        _write(store, graph, triples, graph in model)
        model[graph] = triples
        merge = {line[:-3] for line in store.merge_ntriples()}
        assert merge == set().union(*model.values()) if model else merge == set()
    fresh = GraphStore.memory()
    for graph, triples in sorted(model.items()):
        _write(fresh, graph, triples, False)
    assert sorted(store.merge_ntriples()) == sorted(fresh.merge_ntriples())
    assert sorted(store.quads_nquads()) == sorted(fresh.quads_nquads())


def _load_in_many_parts(patch: pytest.MonkeyPatch) -> None:
    """Make the ingest write every batch it can in three parts loaded side by side."""
    patch.setattr(journal, "LEAST_PART_QUADS", 1)
    patch.setattr(journal, "LOAD_THREADS", 3)


def test_a_batch_loaded_in_parts_stores_what_one_load_stores(tmp_path: Path) -> None:
    """The same 60 generated records, ingested with every batch in one bulk load and cut
    into three parts loaded side by side: the same named graphs and the same merge."""
    data = tmp_path / "r.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records(60, seed=9)))
    dumps = []
    for parts in (1, 3):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # the same ingest time in both
            patch.setattr(journal, "LOAD_THREADS", 1)
            if parts > 1:
                _load_in_many_parts(patch)
            store = GraphStore.open(tmp_path / f"store-{parts}")
            ingest(store, [str(data)], base_iri=BASE, batch_size=7)
            dumps.append((sorted(store.quads_nquads()), sorted(store.merge_ntriples())))
            assert not store.pending_graphs()
            store.close()
    assert dumps[0] == dumps[1]
    assert len(dumps[0][0]) > 5_000 and len(dumps[0][1]) > 5_000


def test_a_bad_line_in_one_part_leaves_no_part_of_the_batch(tmp_path: Path) -> None:
    """The parse error is in the last part; the part before it loaded. All of the batch
    must go again, from its graphs and from the merge, and what was there stays."""
    store = GraphStore.open(tmp_path / "s")
    _write(store, GRAPHS[0], frozenset(POOL[:2]), False)
    before = (sorted(store.quads_nquads()), sorted(store.merge_ntriples()))
    first, second = ("".join(f"{t} <{g}> .\n" for t in POOL) for g in GRAPHS[1:])
    with pytest.raises(StoreError, match="did not parse"):
        store.write_batch([first.encode(), (second + "<broken line\n").encode()], GRAPHS[1:])
    assert (sorted(store.quads_nquads()), sorted(store.merge_ntriples())) == before
    assert not store.pending_graphs()
    store.close()


def test_a_bad_line_leaves_no_part_of_the_batch(tmp_path: Path) -> None:
    """The parse error is in the batch's last line. All of the batch must go again, from
    its graphs and from the merge, and what was there stays."""
    store = GraphStore.open(tmp_path / "s")
    _write(store, GRAPHS[0], frozenset(POOL[:2]), False)
    before = (sorted(store.quads_nquads()), sorted(store.merge_ntriples()))
    good = "".join(f"{t} <{g}> .\n" for g in GRAPHS[1:] for t in POOL)
    with pytest.raises(StoreError, match="did not parse"):
        store.write_batch((good + "<broken line\n").encode(), GRAPHS[1:])
    assert (sorted(store.quads_nquads()), sorted(store.merge_ntriples())) == before
    assert not store.pending_graphs()
    store.close()


def test_a_replaced_record_keeps_a_triple_another_graph_states(tmp_path: Path) -> None:
    shared = f'<{BASE}paper/x> <http://purl.org/dc/terms/title> "X"'
    own = f'<{BASE}paper/x> <{BASE}p> "only in a"'
    a, b = GRAPHS[0], GRAPHS[1]
    store = GraphStore.open(tmp_path / "s")
    _write(store, a, frozenset({shared, own}), False)
    _write(store, b, frozenset({shared}), False)
    assert store.merge_size() == 2
    _write(store, a, frozenset({f'<{BASE}paper/x> <{BASE}p> "new"'}), True)
    merge = sorted(line[:-3] for line in store.merge_ntriples())
    assert merge == sorted([shared, f'<{BASE}paper/x> <{BASE}p> "new"'])  # shared stays, once
    store.remove_graph(b)
    assert sorted(line[:-3] for line in store.merge_ntriples()) == [
        f'<{BASE}paper/x> <{BASE}p> "new"'
    ]
    store.close()


def test_a_store_without_the_merge_gets_it_when_opened_for_writing(tmp_path: Path) -> None:
    """A store written by kg before the merge (named graphs, an empty default graph)."""
    import pyoxigraph as ox

    path = tmp_path / "old"
    old = ox.Store(str(path))
    old.load(
        "".join(f"{t} <{g}> .\n" for g in GRAPHS[:2] for t in POOL[:3]).encode(),
        format=ox.RdfFormat.N_QUADS,
    )
    old.flush()
    del old
    # stamped as this kg's (an unstamped store is refused whole: tests/reliability/
    # test_store_version.py); the merge is rebuilt for any store that lacks it
    (path / VERSION_FILE).write_text(f"{STORE_VERSION}\n", encoding="ascii")
    with GraphStore.open(path, read_only=True) as reader:  # before: the bag, as it was
        assert not reader.keeps_merge()
    with GraphStore.open(path) as writer:
        assert writer.merge_size() == 3
        assert writer.count() == 6


own_default_operation = st.one_of(
    operation,
    st.tuples(
        st.sampled_from(
            ["update-default", "update-named", "delete-named", "load-default", "load-named"]
        ),
        st.sampled_from(range(len(GRAPHS))),
        st.sampled_from(POOL),
    ),
)


def _own_default_triples(store: GraphStore) -> set[str]:
    """The default graph's triples that no named graph states, counted in plain Python."""
    named: set[str] = set()
    for graph in GRAPHS:
        if store.has_graph(graph):
            named.update(line[: -len(f" <{graph}> .\n")] for line in store.quads_nquads(graph))
    return {line[:-3] for line in store.merge_ntriples()} - named


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(own_default_operation, min_size=1, max_size=10))
def test_a_store_kg_created_knows_when_its_default_graph_is_only_the_merge(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Any]
) -> None:
    """kg marks a store it creates as holding only the merge in its default graph, so a
    dataset export need not scan the whole default graph for statements of its own. Any
    mix of record writes, SPARQL updates and loads: while the mark stands, there are none
    (a plain Python difference of the graphs); once gone, the scan finds exactly those,
    and the N-Quads export keeps them."""
    path = tmp_path_factory.mktemp("own") / "store"
    store = GraphStore.open(path)
    assert (path / MERGE_ONLY_MARK).exists()
    for kind, index, what in ops:
        graph = GRAPHS[index]
        if kind in ("write", "rewrite"):
            _write(store, graph, what, store.has_graph(graph))
        elif kind == "drop":
            if store.has_graph(graph):
                store.remove_graph(graph)
        elif kind == "update-default":
            store.update(f"INSERT DATA {{ {what} }}")
        elif kind == "update-named":
            store.update(f"INSERT DATA {{ GRAPH <{graph}> {{ {what} }} }}")
        elif kind == "delete-named":  # the triple stays in the merge: now the default's own
            store.update(f"DELETE DATA {{ GRAPH <{graph}> {{ {what} }} }}")
        elif kind == "load-default":
            store.load(f"{what} .\n".encode(), "ntriples")
        else:
            store.load(f"{what} <{graph}> .\n".encode(), "nquads")
        own = _own_default_triples(store)
        assert store.has_own_default() == bool(own), (kind, own)
        if own:
            assert not (path / MERGE_ONLY_MARK).exists()
        if store.derived_default():
            exported = {line[:-3] for line in store.quads_nquads() if line.count(" <") == 1}
            assert own <= exported
    store.close()


def test_a_reimported_export_keeps_the_mark_unless_it_states_default_triples(
    tmp_path: Path,
) -> None:
    """`bulk_load` into a fresh store (kg import): an export of named graphs only keeps the
    mark; one with a default-graph statement of its own loses it, and that statement is
    found and exported again."""
    source = GraphStore.open(tmp_path / "source")
    _write(source, GRAPHS[0], frozenset(POOL[:3]), False)
    clean = "".join(source.quads_nquads()).encode()
    source.update(f"INSERT DATA {{ {POOL[5]} }}")
    with_own = "".join(source.quads_nquads()).encode()
    source.close()
    for name, data, own in (("clean", clean, False), ("own", with_own, True)):
        path = tmp_path / name
        with GraphStore.open(path) as store:
            store.bulk_load(data, "nquads")
            assert (path / MERGE_ONLY_MARK).exists() is not own
            assert store.has_own_default() is own
            assert (f"{POOL[5]} .\n" in set(store.quads_nquads())) is own
    with GraphStore.open(tmp_path / "source") as reopened:  # no mark for a store kg reopens
        assert not (tmp_path / "source" / MERGE_ONLY_MARK).exists()
        assert reopened.has_own_default()
