"""Issue 27 on the README store (`kg ingest examples/`, index built by that ingest):
identifiers find their thing first, whole names rank first, classes interleave, pages, plain
snippets, and an index of an older format is rebuilt rather than misread. Expected answers
come from the raw JSON of examples/ or from the store by SPARQL, never from the index."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.search import StoreSearch
from kg.search.index import SCHEMA_VERSION, index_path, normalise
from kg.search.text import plain_text, query_ids
from tests.conftest import BASE, ROOT, run
from tests.serve_support import TestClient, client_for

EXAMPLES = ROOT / "examples"
KGS = "PREFIX kgs: <https://w3id.org/kg/search#>\n"
#: Markdown a plain-text snippet must not show: emphasis, links, code, headings, tags.
MARKUP = re.compile(r"\*\*|__|\]\(|`|(^|\s)#{1,6}\s|</?[a-z][^>]*>|!\[")


def _record(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / "records" / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


SEEDS = [_record(p.name) for p in sorted((EXAMPLES / "records").glob("*.json"))]


def _iri(record: dict[str, Any]) -> str:
    return f"{BASE}paper/{record['url'].rsplit('/', 1)[-1]}"


@pytest.fixture(scope="module")
def graph(readme_store: Path) -> Iterator[GraphStore]:
    store = GraphStore.open(readme_store, read_only=True)
    yield store
    store.close()


@pytest.fixture(scope="module")
def searched(graph: GraphStore, readme_store: Path) -> StoreSearch:
    return StoreSearch(graph, readme_store)


def cli_json(readme_store: Path, *args: str) -> dict[str, Any]:
    done = run(CliRunner(), "--store", str(readme_store), "search", *args, "--json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def block_hits(searched: StoreSearch, graph: GraphStore, text: str, limit: int = 10) -> list[str]:
    query = (KGS + "SELECT ?hit ?score WHERE { SERVICE <https://w3id.org/kg/search> { "
             f"[] kgs:query {json.dumps(text)} ; kgs:limit {limit} ; kgs:hit ?hit ; "
             "kgs:score ?score . } } ORDER BY DESC(?score)")
    rows = graph.query(searched.expand(query))
    assert isinstance(rows, SelectResult)
    return [r[0].value for r in rows.rows if r[0] is not None]


# --- 1. identifiers ------------------------------------------------------------------------


def _identifier_cases() -> list[tuple[str, str]]:
    cases = []
    for seed in SEEDS:
        arxiv, iri = seed["arxiv_id"], _iri(seed)
        cases += [(arxiv, iri), (f"{arxiv}v1", iri), (f"arXiv:{arxiv}", iri),
                  (f"ARXIV:{arxiv}v3", iri), (f"https://arxiv.org/abs/{arxiv}v2", iri),
                  (seed["url"].rsplit("/", 1)[-1], iri),
                  (f"https://paperswithcode.com{seed['url']}", iri)]
    return cases


@pytest.mark.parametrize(("text", "iri"), _identifier_cases())
def test_an_identifier_finds_its_paper_first(
    readme_store: Path, searched: StoreSearch, graph: GraphStore, text: str, iri: str
) -> None:
    """In `kg search`, in the library, and in the SPARQL search block."""
    answer = cli_json(readme_store, text)
    assert answer["hits"][0]["iri"] == iri and answer["hits"][0]["match"] == "identifier"
    assert searched.search(text, "paper", 1)[0].iri == iri
    assert block_hits(searched, graph, text)[0] == iri


def test_the_issues_example(readme_store: Path) -> None:
    """`kg search 2004.11207` said "No hits"; now the seed paper first, in the table too."""
    done = run(CliRunner(), "--store", str(readme_store), "search", "2004.11207")
    assert done.exit_code == 0, done.output
    first = next(line for line in done.stdout.splitlines() if line.strip())
    assert first.split()[:2] == ["1", "paper"] and "Self-Attention Attribution" in first


def _dois() -> dict[str, set[str]]:
    """The DOIs of the evaluation tables' papers, with their titles, from the raw JSON."""
    with gzip.open(EXAMPLES / "pwc" / "evaluation-tables.json.gz", "rt", encoding="utf-8") as f:
        tasks = json.load(f)
    out: dict[str, set[str]] = {}

    def walk(task: dict[str, Any]) -> None:
        for dataset in task.get("datasets") or []:
            for row in (dataset.get("sota") or {}).get("rows") or []:
                url, title = row.get("paper_url") or "", row.get("paper_title") or ""
                if url.startswith("https://doi.org/10.") and title:
                    out.setdefault(url.removeprefix("https://doi.org/").lower(), set()).add(
                        normalise(title))
        for sub in task.get("subtasks") or []:
            walk(sub)

    for task in tasks:
        walk(task)
    return out


def test_a_doi_finds_its_paper_first(searched: StoreSearch, graph: GraphStore) -> None:
    dois = _dois()
    assert len(dois) > 20
    for doi, titles in dois.items():
        for text in (doi, f"doi:{doi.upper()}", f"https://doi.org/{doi}"):
            hits = searched.search(text, None, 3)
            assert hits and hits[0].match == "identifier", text
            assert normalise(hits[0].label) in titles, (text, hits[0].label, titles)
    doi = sorted(dois)[0]
    first = block_hits(searched, graph, doi)[0]
    assert normalise(searched.search(doi, None, 1)[0].label) in dois[doi] and first


def test_a_repository_and_a_slug_find_their_thing_first(
    searched: StoreSearch, graph: GraphStore
) -> None:
    rows = graph.query(
        "SELECT ?r ?l WHERE { ?r a <https://w3id.org/kg/ontology#Repository> ; "
        "<http://www.w3.org/2000/01/rdf-schema#label> ?l } ORDER BY ?l LIMIT 200"
    )
    assert isinstance(rows, SelectResult) and len(rows.rows) == 200
    for iri, label in rows.rows:
        assert iri is not None and label is not None
        for text in (label.value, f"https://github.com/{label.value}"):
            first = searched.search(text, None, 1)[0]
            assert (first.iri, first.match) == (iri.value, "identifier"), text
    assert block_hits(searched, graph, "tensorflow/models")[0].endswith("/tensorflow/models")
    # a method's slug, with a separator: the method first
    assert searched.search("attention-dropout", None, 1)[0].iri == f"{BASE}method/attention-dropout"


def test_identifier_parsing() -> None:
    assert query_ids("2004.11207v12") == ["arxiv:2004.11207"]
    assert query_ids("https://doi.org/10.1109/TAMD.2015.2431497") == [
        "doi:10.1109/tamd.2015.2431497"]
    assert query_ids("attention") == []  # a word is a name, not a slug
    assert query_ids("graph neural network") == []
    assert query_ids("https://example.org/a/b") == []


# --- 2. whole names first ------------------------------------------------------------------


def test_exact_names_rank_first(readme_store: Path, searched: StoreSearch) -> None:
    methods = cli_json(readme_store, "transf*", "--type", "method", "--limit", "3")
    assert "Transformer" in [h["label"] for h in methods["hits"]]
    assert cli_json(readme_store, "bert")["hits"][0]["label"] == "BERT"
    assert searched.search("bert*", "method", 1)[0].label == "BERT"  # the query without `*`
    for name in ("Adam", "ResNet", "Dropout", "Attention Dropout", "Transformer"):
        first = searched.search(name.lower(), "method", 1)[0]
        assert (first.label, first.match) == (name, "name")


def test_a_prefix_ranks_short_names_of_its_common_completion_first(
    searched: StoreSearch,
) -> None:
    """Before, every completion scored a flat 5.0 (Transformer came 35th of 99)."""
    hits = searched.search("transf*", "method", 20, snippets=False)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) >= 3
    assert all(re.search(r"\btransf", h.label, re.IGNORECASE) for h in hits[:10])


# --- 3. classes interleaved, labelled, counted ---------------------------------------------


def test_papers_appear_among_the_first_ten_for_attention(
    readme_store: Path, searched: StoreSearch
) -> None:
    answer = cli_json(readme_store, "attention")
    kinds = [h["type"] for h in answer["hits"]]
    papers = [h for h in answer["hits"] if h["type"] == "paper"]
    assert papers and all("attention" in h["label"].lower() for h in papers)
    assert {"method", "paper"} <= set(kinds)
    # the ranks are scores, best first, so a SPARQL block's ORDER BY DESC(?score) agrees
    scores = [h["score"] for h in answer["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert sum(answer["counts"].values()) == answer["total"]
    typed = searched.find("attention", "paper", limit=5)
    assert typed.total == answer["counts"]["paper"] and {h.type for h in typed.hits} == {"paper"}


def test_class_counts_agree_with_the_store(searched: StoreSearch, graph: GraphStore) -> None:
    """Repositories have only a name (owner/name): the count of those with the word, split
    as the index splits words, computed from the store's labels (words whose stem is the
    word itself: the index matches stems too)."""
    rows = graph.query(
        "SELECT ?l WHERE { ?r a <https://w3id.org/kg/ontology#Repository> ; "
        "<http://www.w3.org/2000/01/rdf-schema#label> ?l }"
    )
    assert isinstance(rows, SelectResult)
    for word in ("tensorflow", "pytorch", "keras"):
        expected = sum(
            word in re.split(r"[^0-9a-z]+", r[0].value.lower()) for r in rows.rows if r[0]
        )
        found = searched.find(word, "repository", limit=1)
        assert expected > 0 and found.counts["repository"] == expected == found.total


@pytest.mark.parametrize("text", ["attention", "graph neural network", "transf*", "adam"])
def test_the_class_by_class_answer_is_the_fast_one(
    searched: StoreSearch, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best hits of all classes split by class (`Searcher._by_class`) must rank as one
    query per class does (what it falls back to, and what large pages run)."""
    from kg.search import query as search_query

    fast = searched.find(text, None, limit=20, snippets=False)
    with monkeypatch.context() as patch:
        patch.setattr(search_query, "_PREFILTER_MAX", 0)
        slow = searched.find(text, None, limit=20, snippets=False)
    assert [(h.iri, round(h.score, 6)) for h in fast.hits] == [
        (h.iri, round(h.score, 6)) for h in slow.hits]
    assert fast.counts == slow.counts


# --- 4. pages ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "type_"), [("attention", None), ("transf*", "method"),
                                             ("graph neural network", None)])
def test_pages_are_slices_of_one_ranking(
    searched: StoreSearch, text: str, type_: str | None
) -> None:
    whole = searched.find(text, type_, limit=40, snippets=False)
    pages = [searched.find(text, type_, page=p, limit=10, snippets=False) for p in (1, 2, 3, 4)]
    assert [h.iri for p in pages for h in p.hits] == [h.iri for h in whole.hits]
    assert {p.total for p in pages} == {whole.total} and whole.total > 40
    assert [(p.has_previous, p.has_next) for p in (pages[0], pages[3])] == [
        (False, True), (True, True)]
    last = searched.find(text, type_, page=whole.total // 10 + 1, limit=10, snippets=False)
    assert not last.has_next and len(last.hits) == (whole.total % 10 or 10)


def test_cli_pages(readme_store: Path) -> None:
    second = cli_json(readme_store, "attention", "--page", "2", "--limit", "5")
    assert (second["page"], second["limit"], second["previous"], second["next"]) == (2, 5, 1, 3)
    done = run(CliRunner(), "--store", str(readme_store), "search", "attention", "-p", "2",
               "-n", "5")
    assert done.exit_code == 0
    assert f"hits 6–10 of {second['total']:,}" in done.stderr
    assert "--page 1 for the previous, --page 3 for the next" in done.stderr
    assert done.stdout.lstrip().startswith("6 ")
    far = run(CliRunner(), "--store", str(readme_store), "search", "attention", "-p", "9999",
              "-n", "5")
    assert far.exit_code == 2 and "out of reach" in far.output


@pytest.fixture(scope="module")
def client(graph: GraphStore) -> Iterator[TestClient]:
    with client_for(graph) as c:
        yield c


def test_search_pages_over_http(client: TestClient) -> None:
    r = client.get("/search", params={"q": "attention", "page": "2", "limit": "5"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["page"], body["limit"], body["previous"], body["next"]) == (2, 5, 1, 3)
    assert body["links"]["next"] == "/search?q=attention&page=3&limit=5"
    assert body["links"]["previous"] == "/search?q=attention&limit=5"
    assert sum(body["counts"].values()) == body["total"] > 10
    first = client.get("/search", params={"q": "2004.11207"}).json()["hits"][0]
    assert first["iri"] == _iri(SEEDS[1]) and first["year"] == 2020
    page = client.get("/search", params={"q": "attention", "page": "2", "limit": "5"},
                      headers={"Accept": "text/html"}).text
    assert 'rel="next" href="/search?q=attention&amp;page=3&amp;limit=5"' in page
    assert 'rel="prev" href="/search?q=attention&amp;limit=5"' in page
    assert f"hits 6–10 of {body['total']:,}" in page
    assert f'type=paper&amp;limit=5">paper ({body["counts"]["paper"]:,})</a>' in page
    for hit in body["hits"]:
        assert f'<span class="t">{hit["type"]}</span>' in page
    bad = client.get("/search", params={"q": "attention", "page": "0"})
    assert bad.status_code == 400 and "page" in bad.text


# --- 5. plain snippets ---------------------------------------------------------------------


def test_snippets_show_no_markdown(readme_store: Path, searched: StoreSearch) -> None:
    """The dumps' descriptions hold Markdown (checked in the raw JSON); no snippet shows it,
    and what is marked is a word of the query."""
    with gzip.open(EXAMPLES / "pwc" / "methods.json.gz", "rt", encoding="utf-8") as f:
        raw = [m.get("description") or "" for m in json.load(f)]
    assert sum(bool(MARKUP.search(d)) for d in raw) > 100
    for text in ("attention dropout", "dropout", "convolution", "adam", "transf*"):
        for hit in searched.find(text, "method", limit=50).hits:
            assert not MARKUP.search(hit.snippet), (text, hit.label, hit.snippet)
            words = [w[:5].rstrip("*") for w in text.split()]
            for a, b in hit.marks:
                assert hit.snippet[a:b].lower().startswith(tuple(words)), (text, hit.snippet)
    dropout = cli_json(readme_store, "attention dropout", "--type", "method")["hits"][0]
    assert dropout["label"] == "Attention Dropout" and "**" not in dropout["snippet"]


def test_plain_text_keeps_the_words() -> None:
    text = "**Attention Dropout** is [dropout](https://x.org/d) on `attn`\n\n## Notes\n- a\n- b"
    assert plain_text(text) == "Attention Dropout is dropout on attn Notes a b"
    assert plain_text("a <b>bold</b> 2 < 3") == "a bold 2 < 3"


# --- the index format ----------------------------------------------------------------------


def test_an_index_of_an_older_format_is_rebuilt(tmp_path: Path, seed_paths: list[Path]) -> None:
    """An index written with schema 1 (no identifiers) is rebuilt on first use, not read."""
    import tantivy

    store_path = tmp_path / "store"
    done = run(CliRunner(), "--store", str(store_path), "ingest", "-q", *map(str, seed_paths))
    assert done.exit_code == 0, done.output
    path = index_path(store_path)
    for old in path.iterdir():
        old.unlink()
    sb = tantivy.SchemaBuilder()  # schema 1, as kg wrote it before issue 27
    for name in ("key", "type", "label", "label_stem", "alt", "body", "exact", "graphs", "state"):
        sb.add_text_field(name, stored=name in ("key", "type", "label", "alt", "body", "state"),
                          tokenizer_name="raw")
    old_index = tantivy.Index(sb.build(), path=str(path))
    writer = old_index.writer(heap_size=15_000_000, num_threads=1)
    writer.add_document(tantivy.Document(key="urn:x-kg:search-state", type="_state",
                                         state=["clean", "1", "x"]))
    writer.commit()
    writer.wait_merging_threads()
    assert SCHEMA_VERSION != "1"
    store = GraphStore.open(store_path, read_only=True)
    try:
        hits = StoreSearch(store, store_path, quiet=True).search("2004.10102")
    finally:
        store.close()
    assert hits[0].iri == _iri(SEEDS[0])
