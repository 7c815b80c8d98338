"""kg search: the index beside the store, its upkeep by ingest, its ranking on real text, the
kg search block in SPARQL, and the CLI. The server and the browser are in
tests/test_search_serve.py and tests/test_server_browser.py."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.errors import QuerySyntaxError, UsageError
from kg.rdf.results import SelectResult, Term
from kg.rdf.store import GraphStore
from kg.search import StoreSearch, rebuild
from kg.search.index import Index, IndexLock, Writer, index_path, normalise
from kg.search.query import Hit, clauses
from kg.search.sparql import SERVICE_IRI, expand, find_blocks, uses_search
from tests.conftest import BASE, ROOT, run

KG_BIN = str(Path(sys.executable).with_name("kg"))
EXAMPLES = ROOT / "examples"
METHODS = EXAMPLES / "pwc" / "methods.json.gz"
SEED_TITLE = "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms"
SEED = f"{BASE}paper/attention-module-is-not-only-a-weight"
KGS = "PREFIX kgs: <https://w3id.org/kg/search#>\n"


def kg(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG_BIN, *args], capture_output=True, text=True, timeout=600, **kwargs)


def index_docs(store_path: Path) -> set[tuple[str, str, str]]:
    """(key, type, label) of every document in the store's index."""
    import tantivy

    index = Index.open(index_path(store_path))
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), 1_000_000).hits
    docs = {tuple(searcher.doc(a)[f][0] if searcher.doc(a)[f] else "" for f in
                  ("key", "type", "label")) for _, a in hits}
    return {d for d in docs if d[1] != "_state"}  # type: ignore[misc]


# --- the examples store: built once by the real `kg ingest` --------------------------------


@pytest.fixture(scope="module")
def examples_store(readme_store: Path) -> Path:
    """`kg ingest examples/`: the README store, built once per run (read only here)."""
    return readme_store


@pytest.fixture(scope="module")
def examples_graph(examples_store: Path) -> Any:
    store = GraphStore.open(examples_store, read_only=True)
    yield store
    store.close()


@pytest.fixture(scope="module")
def examples(examples_graph: GraphStore, examples_store: Path) -> StoreSearch:
    return StoreSearch(examples_graph, examples_store)


def test_the_seed_paper_comes_first(cli: CliRunner, examples_store: Path) -> None:
    done = run(cli, "--store", str(examples_store), "search", "attention is not only a weight",
               "--json")
    assert done.exit_code == 0, done.output
    hits = json.loads(done.stdout)["hits"]
    assert hits[0]["iri"] == SEED and hits[0]["label"] == SEED_TITLE
    assert hits[0]["year"] == 2020 and hits[0]["has_code"] is True
    assert "Word Alignment" in hits[0]["tasks"]
    # the marked words of the snippet are words of the query
    marked = {hits[0]["snippet"][a:b].lower() for a, b in hits[0]["marks"]}
    assert marked and marked <= {"attention", "is", "not", "only", "a", "weight", "weights"}
    table = run(cli, "--store", str(examples_store), "search", "attention is not only a weight")
    assert table.exit_code == 0 and table.stdout.lstrip().startswith("1 paper")
    assert SEED_TITLE in table.stdout.splitlines()[0]


def test_ingest_built_a_clean_index_that_a_rebuild_reproduces(
    examples_store: Path, tmp_path: Path
) -> None:
    """The index ingest kept batch by batch holds what a rebuild from the store holds."""
    kept = index_docs(examples_store)
    copy = tmp_path / "copy"
    store = GraphStore.open(examples_store, read_only=True)
    try:
        rebuild(store, copy)
    finally:
        store.close()
    assert kept == index_docs(copy)
    assert Index.open(index_path(examples_store)).state()["state"] == "clean"
    # and it is what the store says, computed independently: every paper and method is there
    by_type: dict[str, int] = {}
    for _, kind, _ in kept:
        by_type[kind] = by_type.get(kind, 0) + 1
    with gzip.open(EXAMPLES / "pwc" / "methods.json.gz", "rt", encoding="utf-8") as f:
        methods = json.load(f)
    assert by_type["method"] >= len({m["url"] for m in methods})
    assert by_type["paper"] > 4000 and by_type["repository"] > 10000


def test_known_item_titles(examples: StoreSearch, examples_graph: GraphStore) -> None:
    """Each paper's exact title finds that paper first (a paper sharing the very same title
    counts too): at least 99 %."""
    rows = examples_graph.query(
        "SELECT DISTINCT ?p ?t WHERE { ?p a <https://w3id.org/kg/ontology#Paper> ; "
        "<http://purl.org/dc/terms/title> ?t }"
    )
    assert isinstance(rows, SelectResult)
    titles: dict[str, set[str]] = {}
    for p, t in rows.rows:
        assert p is not None and t is not None
        titles.setdefault(p.value, set()).add(t.value)
    first = found = 0
    for paper, names in titles.items():
        title = min(names, key=len)
        hits = examples.search(title, None, 1, snippets=False)
        first += 1
        if hits and (hits[0].iri == paper or normalise(hits[0].label) == normalise(title)):
            found += 1
    share = found / first
    print(f"known-item titles: {found}/{first} = {share:.4f}")
    assert first > 4000 and share >= 0.99


def test_known_item_method_names(examples: StoreSearch) -> None:
    """Each method's name in the real 2022 methods dump finds that method first: >= 95 %."""
    with gzip.open(EXAMPLES / "pwc" / "methods.json.gz", "rt", encoding="utf-8") as f:
        methods = json.load(f)
    found = 0
    for m in methods:
        iri = f"{BASE}method/{m['url'].rstrip('/').rsplit('/', 1)[-1]}"
        hits = examples.search(m["name"], None, 1, snippets=False)
        found += bool(hits) and hits[0].iri == iri
    share = found / len(methods)
    print(f"known-item methods: {found}/{len(methods)} = {share:.4f}")
    assert len(methods) > 1900 and share >= 0.95


def test_matching_rules(examples: StoreSearch) -> None:
    def top(text: str, type_: str | None = None, n: int = 5) -> list[Hit]:
        return examples.search(text, type_, n, snippets=False)

    # case, accents and stemming
    assert top("ATTENTION IS NOT ONLY A WEIGHT")[0].iri == SEED
    assert top("attentión is nót only a weight")[0].iri == SEED
    assert top("attention weights norms analyzing")[0].iri == SEED
    # a phrase must be in order; the words alone are not
    assert any(h.iri == SEED for h in top('"vector norms"', "paper"))
    assert not any(h.iri == SEED for h in top('"norms vector"', "paper"))
    # prefix
    assert all("transf" in (h.label.lower()) for h in top("transf*", "paper", 3))
    # types
    assert {h.type for h in top("adam", "method", 10)} == {"method"}
    assert top("tensorflow/models", "repository")[0].label == "tensorflow/models"
    assert top("Goro Kobayashi", "author")[0].iri == f"{BASE}author/goro-kobayashi"
    # a name match outranks an abstract match: the method named Adam first
    assert top("adam")[0].iri == f"{BASE}method/adam"
    with pytest.raises(UsageError, match="no words"):
        examples.search("!! ??")
    with pytest.raises(UsageError, match="'person' is not a class"):
        examples.search("adam", "person")


@pytest.mark.parametrize("type_", ["paper", "method", "task", "dataset", "author", "repository"])
def test_a_class_search_finds_what_the_filtered_query_finds(
    examples: StoreSearch, type_: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best hits of all classes, then those of the class (`Searcher._best`), must equal
    the hits of the query with the class as a required clause: the same entities, in the
    same order, with the same scores. Words from real titles and method names, common and
    rare, so that both the fast answer and its fallback run."""
    from kg.search import query as search_query

    words = ["attention", "graph neural network", "learning", "adam", "image", "resnet",
             "tensorflow", "segmentation", "convolution", "dropout", '"neural network"',
             "transf*", "kobayashi", "reinforcement learning", "bert", "detection"]
    fast_answers = 0
    for text in words:
        for limit in (1, 5, 10, 50):
            fast = examples.search(text, type_, limit, snippets=False)
            with monkeypatch.context() as patch:
                patch.setattr(search_query, "_PREFILTER_MAX", 0)  # the filtered query only
                filtered = examples.search(text, type_, limit, snippets=False)
            assert [(h.iri, h.type, round(h.score, 4)) for h in fast] == [
                (h.iri, h.type, round(h.score, 4)) for h in filtered
            ], (text, limit)
            assert all(h.type == type_ for h in fast)
            fast_answers += len(fast) == limit
    assert fast_answers > 0


def test_clause_parsing_never_fails() -> None:
    for text in ['"', '"""', "*", "a*", "x**", 'AND OR NOT "a b', "title:x", "(", ")"]:
        assert isinstance(clauses(text), list)


def test_cli_errors_are_one_line(cli: CliRunner, examples_store: Path) -> None:
    bad = run(cli, "--store", str(examples_store), "search", "adam", "--type", "person")
    assert bad.exit_code == 2 and "--type 'person' is not a class" in bad.output
    empty = run(cli, "--store", str(examples_store), "search")
    assert empty.exit_code == 2 and "give a QUERY" in empty.output


# --- SPARQL ---------------------------------------------------------------------------------


def fake(hits: list[Hit], seen: list[tuple[str, str | None, int]]) -> Any:
    def search(text: str, type_: str | None, limit: int) -> list[Hit]:
        seen.append((text, type_, limit))
        return hits

    return search


def test_the_block_is_read_with_prefixes_escapes_and_values() -> None:
    hit = Hit(f"{BASE}paper/x", "paper", 'A "title"', 2.5)
    queries = [
        KGS + 'SELECT * { SERVICE <https://w3id.org/kg/search> { [] kgs:query "g n" ; '
        'kgs:hit ?p ; kgs:score ?s ; kgs:type "paper" ; kgs:limit 7 } }',
        # the properties through another prefix, a long string, a blank node label
        'PREFIX s: <https://w3id.org/kg/search#> SELECT * { SERVICE <https://w3id.org/kg/'
        'search> { _:b s:query """g n""" ; s:hit ?p ; s:score ?s ; s:type "paper" ; '
        "s:limit 7 . } }",
        # as a named query's parameters arrive: a VALUES block inside the block
        KGS + "SELECT * { SERVICE <https://w3id.org/kg/search> { VALUES (?t ?n) { "
        '("g n" "7"^^<http://www.w3.org/2001/XMLSchema#integer>) } [] kgs:query ?t ; '
        'kgs:hit ?p ; kgs:score ?s ; kgs:type "paper" ; kgs:limit ?n } }',
    ]
    for sparql in queries:
        seen: list[tuple[str, str | None, int]] = []
        out = expand(sparql, fake([hit], seen))
        assert seen == [("g n", "paper", 7)], sparql
        assert "SERVICE" not in out and f"<{SERVICE_IRI}>" not in out
        assert f'VALUES (?p ?s) {{ (<{BASE}paper/x> "2.5"^^' in out
        assert uses_search(sparql)
    assert not uses_search("SELECT * { SERVICE <http://elsewhere.example/sparql> { ?s ?p ?o } }")
    # pyoxigraph reads \u escapes in IRIs: a block written so is refused, never passed on
    escaped = queries[0].replace("kg/search>", "kg/\\u0073earch>")
    assert uses_search(escaped)
    with pytest.raises(QuerySyntaxError, match="without"):
        expand(escaped, fake([hit], []))
    bound = find_blocks(KGS + "SELECT * { SERVICE <https://w3id.org/kg/search> { [] kgs:query "
                        "?text ; kgs:hit ?p } }", {"text": Term("literal", "x y")})
    assert bound[0].query == "x y" and bound[0].limit == 100


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("[] kgs:hit ?p", "needs kgs:query"),
        ('[] kgs:query "x"', "needs kgs:hit"),
        ('[] kgs:query "x" ; kgs:hit ?p ; kgs:type "person"', "kgs:type 'person'"),
        ('[] kgs:query "x" ; kgs:hit ?p ; kgs:limit 0', "kgs:limit"),
        ('[] kgs:query "x" ; kgs:hit ?p ; kgs:colour "red"', "kgs:colour"),
        ('[] kgs:query "x" ; kgs:hit "p"', "needs a variable"),
        ('[] kgs:query ?unbound ; kgs:hit ?p', "bound parameter"),
        ('[] kgs:query "x" ; kgs:hit ?p { ?a ?b ?c }', "where ';', '.'"),
        ('?s kgs:query "x" ; kgs:hit ?p', "must start with []"),
    ],
)
def test_a_block_it_cannot_read_is_an_error(block: str, message: str) -> None:
    sparql = KGS + f"SELECT * {{ SERVICE <https://w3id.org/kg/search> {{ {block} }} }}"
    with pytest.raises(QuerySyntaxError, match=re.escape(message)):
        expand(sparql, fake([], []))


def test_search_text_is_data(examples: StoreSearch, examples_graph: GraphStore) -> None:
    """Text that would break out of the query if pasted reaches the search as text, and the
    expanded query holds only the hits."""
    hostile = '"x" } ; DROP ALL ; SELECT * { ?s ?p ?o } #'
    seen: list[tuple[str, str | None, int]] = []
    literal = hostile.replace("\\", "\\\\").replace('"', '\\"')
    sparql = KGS + (
        f'SELECT ?p WHERE {{ SERVICE <https://w3id.org/kg/search> {{ [] kgs:query "{literal}" ; '
        "kgs:hit ?p } }"
    )
    out = expand(sparql, fake([], seen))
    assert seen[0][0] == hostile
    assert "DROP" not in out and "VALUES (?p) {  }" in out
    # run for real: no rows, no error
    result = examples_graph.query(examples.expand(sparql))
    assert isinstance(result, SelectResult) and result.rows == []


def test_a_joined_query_agrees_with_a_scan(
    examples: StoreSearch, examples_graph: GraphStore
) -> None:
    """Search joined with the graph: papers matching "neural machine translation" that work on
    the Machine Translation task, checked against a REGEX scan over the same titles."""
    joined = KGS + """PREFIX kg: <https://w3id.org/kg/ontology#>
    SELECT DISTINCT ?paper WHERE {
      SERVICE <https://w3id.org/kg/search> {
        [] kgs:query '"neural machine translation"' ; kgs:type "paper" ; kgs:limit 10000 ;
           kgs:hit ?paper ; kgs:score ?score .
      }
      ?paper <http://purl.org/dc/terms/title> ?t .
    } ORDER BY ?paper"""
    scan = """SELECT DISTINCT ?paper WHERE {
      ?paper a <https://w3id.org/kg/ontology#Paper> ; <http://purl.org/dc/terms/title> ?t .
      FILTER (REGEX(?t, "neural[^a-z0-9]+machine[^a-z0-9]+translation", "i"))
    } ORDER BY ?paper"""
    a = examples_graph.query(examples.expand(joined))
    b = examples_graph.query(scan)
    assert isinstance(a, SelectResult) and isinstance(b, SelectResult)
    assert len(b.rows) > 10 and {r[0] for r in b.rows} <= {r[0] for r in a.rows}


def test_kg_sparql_and_kg_query_run_the_block(cli: CliRunner, examples_store: Path) -> None:
    sparql = KGS + (
        "SELECT ?p ?s WHERE { SERVICE <https://w3id.org/kg/search> { [] kgs:query "
        '"attention is not only a weight" ; kgs:hit ?p ; kgs:score ?s ; kgs:limit 3 } } '
        "ORDER BY DESC(?s)"
    )
    done = run(cli, "--store", str(examples_store), "sparql", sparql, "--format", "csv")
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[1].startswith(SEED + ",")
    named = run(cli, "--store", str(examples_store), "query", "search-papers", "-p",
                "text=attention is not only a weight", "-p", "limit=5", "--format", "csv")
    assert named.exit_code == 0, named.output
    assert named.output.splitlines()[1].startswith(SEED + ",")
    titled = run(cli, "--store", str(examples_store), "query", "papers-by-title", "-p",
                 "text=Only a Weight", "--format", "csv")
    assert titled.exit_code == 0 and titled.output.splitlines()[1:] == [
        f"{SEED},{SEED_TITLE},2020-04-21"
    ]


# --- upkeep and crashes ------------------------------------------------------------------------


def _records(seed_paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in seed_paths]


def test_a_changed_record_is_reindexed(tmp_path: Path, seed_paths: list[Path]) -> None:
    store = tmp_path / "store"
    assert kg("--store", str(store), "ingest", "-q", *map(str, seed_paths)).returncode == 0
    before = index_docs(store)
    records = _records(seed_paths)
    records[0]["title"] = "Zebra Crossings Considered Harmful"
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert kg("--store", str(store), "ingest", "-q", str(changed)).returncode == 0
    after = index_docs(store)
    key = f"{BASE}paper/{records[0]['url'].rsplit('/', 1)[-1]}"
    assert (key, "paper", "Zebra Crossings Considered Harmful") in after
    assert {d for d in before if d[0] != key} == {d for d in after if d[0] != key}
    old = next(d for d in before if d[0] == key)
    assert old not in after
    found = json.loads(kg("--store", str(store), "search", old[2], "--json", "--type",
                          "paper").stdout or '{"hits": []}')["hits"]
    assert key not in [h["iri"] for h in found]
    zebra = json.loads(kg("--store", str(store), "search", "zebra crossing", "--json").stdout)
    assert zebra["hits"][0]["iri"] == key
    # and the incremental index is what a rebuild gives
    with GraphStore.open(store, read_only=True) as s:
        rebuild(s, tmp_path / "fresh")
    assert after == index_docs(tmp_path / "fresh")


def test_a_store_without_an_index_gets_one(tmp_path: Path, seed_paths: list[Path]) -> None:
    """A store built by the library (no upkeep) or before kg had search: the first search
    builds the index, with a note on stderr."""
    from tests.query_data import build

    path = tmp_path / "store"
    with GraphStore.open(path) as store:
        build(store, [str(p) for p in seed_paths])
    done = kg("--store", str(path), "search", "vector norms", "--json")
    assert done.returncode == 0 and "does not exist yet" in done.stderr
    assert json.loads(done.stdout)["hits"][0]["iri"] == SEED
    again = kg("--store", str(path), "search", "vector norms", "--json")
    assert "building" not in again.stderr


@pytest.mark.reliability
def test_an_ingest_killed_mid_way_leaves_an_index_that_is_rebuilt(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    """kill -9 during an ingest: a reader beside the live writer searches the index as it
    is; after the kill the index is found stale (dirty, no writer) and rebuilt from the
    store, so it agrees with the store again."""
    store = tmp_path / "store"
    assert kg("--store", str(store), "ingest", "-q", *map(str, seed_paths)).returncode == 0
    proc = subprocess.Popen(
        [KG_BIN, "--store", str(store), "ingest", "-q", "--batch-size", "50", str(METHODS)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    lock = IndexLock(store)
    deadline = time.monotonic() + 120
    while not lock.held_elsewhere():  # the writer has marked the index dirty
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.05)
    time.sleep(3)  # a few batches in
    beside = kg("--store", str(store), "search", "vector norms", "--json")
    assert beside.returncode == 0 and "building" not in beside.stderr, beside.stderr
    assert json.loads(beside.stdout)["hits"][0]["iri"] == SEED
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert Index.open(index_path(store)).state()["state"] == "dirty"
    after = kg("--store", str(store), "search", "vector norms", "--json")
    assert after.returncode == 0 and "is stale" in after.stderr, after.stderr
    assert json.loads(after.stdout)["hits"][0]["iri"] == SEED
    assert Index.open(index_path(store)).state()["state"] == "clean"
    # the rebuilt index agrees with the store (a writer would recover the store first:
    # the next ingest finishes the run, and its index again matches a rebuild)
    assert kg("--store", str(store), "ingest", "-q", str(METHODS)).returncode == 0
    with GraphStore.open(store, read_only=True) as s:
        rebuild(s, tmp_path / "fresh")
    assert index_docs(store) == index_docs(tmp_path / "fresh")
    assert not list(tmp_path.glob("store/search.new-*"))


#: An ingest that dies, as kill -9 would, right after its second batch is committed and
#: before it is published (its first publication is the open's, after recovery).
_DIES_BEFORE_PUBLISHING = """
import os, sys
import kg
from kg.rdf import snapshots
snapshots.PUBLISH_GAP = 0  # every batch published, as the kill needs
calls, publish = [], snapshots.publish
def dying(engine, path):
    calls.append(path)
    if len(calls) == 3:
        os._exit(137)
    return publish(engine, path)
snapshots.publish = dying
kg.open(sys.argv[1], read_only=False).ingest([sys.argv[2]], batch_size=50)
"""


@pytest.mark.reliability
def test_a_batch_written_but_never_published_is_indexed(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    """Seen once in ten runs of the kill test above: the kill landed after a batch was
    committed but before it was published. A reader then rebuilt the index from the older
    publication and marked it clean; the next writer published the store, found the
    batch's entries unchanged and never indexed them. The next writer now rebuilds."""
    store = tmp_path / "store"
    assert kg("--store", str(store), "ingest", "-q", *map(str, seed_paths)).returncode == 0
    died = subprocess.run(
        [sys.executable, "-c", _DIES_BEFORE_PUBLISHING, str(store), str(METHODS)],
        capture_output=True, text=True,
    )
    assert died.returncode == 137, died.stderr
    with GraphStore.open(store, read_only=True) as published:
        rebuild(published, tmp_path / "published")
    after = kg("--store", str(store), "search", "vector norms", "--json")
    assert after.returncode == 0 and "is stale" in after.stderr, after.stderr
    assert index_docs(store) == index_docs(tmp_path / "published")  # the reader's view
    assert kg("--store", str(store), "ingest", "-q", str(METHODS)).returncode == 0
    with GraphStore.open(store, read_only=True) as s:
        rebuild(s, tmp_path / "fresh")
    assert len(index_docs(tmp_path / "fresh")) > len(index_docs(tmp_path / "published"))
    assert index_docs(store) == index_docs(tmp_path / "fresh")


def test_a_writer_after_one_killed_inside_a_commit_commits(tmp_path: Path) -> None:
    """kill -9 inside a commit leaves the commit's delete file but not the meta naming it.
    Seen in the kill test: the next ingest's first commit stopped at FileAlreadyExists."""
    import tantivy

    killed, landed = tmp_path / "killed", tmp_path / "landed"
    # one segment (one thread): deleting one of its documents writes a delete file, where
    # a segment of that document alone would simply be dropped
    first = Index.create(killed).inner.writer(heap_size=15_000_000, num_threads=1)
    for key in "xyz":
        first.add_document(tantivy.Document(key=key, type="paper", label=f"paper {key}"))
    first.commit()
    first.wait_merging_threads()
    del first
    shutil.copytree(killed, landed)
    writer = Writer(Index.open(landed), heap=40_000_000)
    writer.delete(["x"])
    writer.commit()
    writer.close()
    del writer
    written = {p.name for p in landed.iterdir()} - {p.name for p in killed.iterdir()}
    orphans = [name for name in written if name.endswith(".del")]
    assert orphans, written  # the commit wrote a delete file
    for name in [*orphans, ".managed.json"]:  # the kill: its files, not its meta
        shutil.copy(landed / name, killed / name)
    index = Index.open(killed)
    assert index.doc_count() == 3
    writer = Writer(index, heap=40_000_000)
    writer.delete(["x"])
    writer.commit()
    assert index.doc_count() == 2


def test_reindex(cli: CliRunner, tmp_path: Path, seed_paths: list[Path]) -> None:
    store = tmp_path / "store"
    assert kg("--store", str(store), "ingest", "-q", *map(str, seed_paths)).returncode == 0
    done = run(cli, "--store", str(store), "search", "--reindex")
    assert done.exit_code == 0 and "rebuilt" in done.output
    assert os.path.isdir(index_path(store))


def _union_of_blocks(n: int, limit: int = 1000) -> str:
    block = (
        "{ SERVICE <https://w3id.org/kg/search> { [] kgs:query \"attention\" ; "
        f"kgs:limit {limit} ; kgs:hit ?paper }} }}"
    )
    return (
        "PREFIX kgs: <https://w3id.org/kg/search#>\nSELECT ?paper WHERE { "
        + " UNION ".join([block] * n)
        + " }"
    )


def test_too_many_search_blocks_are_refused_before_any_search() -> None:
    """Issue 31: 1,500 UNION'ed blocks (a 164 KB body) once ran 1,500 searches and grew the
    text quadratically in the server; now they are counted first and no search runs."""
    from kg.errors import QueryTooComplexError
    from kg.search.sparql import MAX_BLOCKS, MAX_TOTAL_HITS

    searched: list[str] = []

    def search(text: str, type_: str | None, limit: int) -> list[Hit]:
        searched.append(text)
        return []

    with pytest.raises(QueryTooComplexError, match="1,500 kg search blocks"):
        expand(_union_of_blocks(1500), search)
    assert searched == []
    # many hits asked by few blocks: refused as well, before any search
    few = MAX_TOTAL_HITS // 1000 + 1
    assert few <= MAX_BLOCKS
    with pytest.raises(QueryTooComplexError, match="hits in all"):
        expand(_union_of_blocks(few), search)
    assert searched == []
    # within both limits the blocks run, one search each
    expanded = expand(_union_of_blocks(3, limit=5), search)
    assert searched == ["attention"] * 3 and expanded.count("VALUES (?paper)") == 3
