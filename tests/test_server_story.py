"""Similarity as a service and the story pages, on the seeds behind the real app and workers.

/similar and /shared are compared with the library computed directly in this process (the
matrix read from the store, not through the server's cache); the pages' sections with the
seed records' own JSON, and the leaderboard ranks with a plain count over a hand-made
evaluation table's JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from kg.graph.incidence import load_incidence
from kg.graph.similarity import shared, similar
from kg.rdf.results import SelectResult, Term
from kg.rdf.store import GraphStore
from kg.serve.pages.paper import lower_is_better, rank_of
from tests.serve_support import BASE, client_for, memory_store

A = "attention-module-is-not-only-a-weight"
S = "self-attention-attribution-interpreting"
HTML = {"Accept": "text/html"}


@pytest.fixture(scope="module")
def store(seed_paths: list[Path]) -> GraphStore:
    return memory_store(list(seed_paths))


@pytest.fixture(scope="module")
def client(store: GraphStore) -> Iterator[TestClient]:
    with client_for(store, workers=1) as c:
        yield c


@pytest.mark.parametrize(
    ("query", "by", "metric", "top"),
    [("", "all", "idf", 10), ("?by=methods&metric=jaccard&top=1", "methods", "jaccard", 1)],
)
def test_similar_answers_kg_similars_json(
    client: TestClient, store: GraphStore, query: str, by: str, metric: str, top: int
) -> None:
    got = client.get(f"/similar/{S}{query}")
    assert got.status_code == 200 and got.headers["content-type"] == "application/json"
    want = similar(
        store, S, base_iri=BASE, by=by, metric=metric, top=top, incidence=load_incidence(store, by)
    ).as_dict()
    assert got.json() == json.loads(json.dumps(want))
    assert got.json()["results"][0]["paper"] == BASE + "paper/" + A
    # an arXiv id and the paper's key name the same paper
    assert client.get(f"/similar/2004.11207{query}").json() == got.json()
    assert client.get(f"/similar/paper/{S}{query}").json() == got.json()


def test_shared_answers_kg_shareds_json(client: TestClient, store: GraphStore) -> None:
    got = client.get(f"/shared/{S}/{A}?by=methods")
    assert got.status_code == 200
    assert got.json() == json.loads(
        json.dumps(shared(store, S, A, base_iri=BASE, by="methods").as_dict())
    )
    assert got.json()["relations"][0]["shared"] == 19


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        (f"/similar/{S}?top=0", 400, "top="),
        (f"/similar/{S}?top=ten", 400, "top="),
        (f"/similar/{S}?metric=euclid", 400, "metric="),
        (f"/similar/{S}?by=colours", 400, "unknown relation"),
        (f"/similar/{S}?k=3", 400, "unknown parameter 'k'"),
        ("/similar/no-such-paper-at-all", 404, "no paper"),
        (f"/shared/{S}/no-such-paper", 404, "no paper"),
    ],
)
def test_bad_similarity_requests(client: TestClient, path: str, status: int, words: str) -> None:
    got = client.get(path)
    assert got.status_code == status and words in got.text, got.text


def _section(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}">(.*?)</section>', html, re.S)
    assert match, f"no section {name}"
    return match.group(1)


def test_a_paper_page_tells_its_story(client: TestClient) -> None:
    html = client.get(f"/paper/{S}", headers=HTML).text
    authors = _section(html, "authors")
    assert 'href="/author/yaru-hao"' in authors and "Authors (4)" in authors
    similar_part = _section(html, "similar")
    assert f'href="/paper/{A}"' in similar_part and "shares" in similar_part
    code = _section(html, "code")
    assert 'class="flag official"' in code and "pytorch" in code
    assert "yrdddream/attattr" in code
    topics = _section(html, "topics")
    assert "Methods used (20)" in topics and 'href="/method/' in topics
    provenance = _section(html, "provenance")
    assert f'href="/graph/record/paper/{S}"' in provenance
    assert "creativecommons.org" in provenance
    facts = html.split('<section id="authors">')[0]
    assert "<dt>arXiv</dt><dd>2004.11207</dd>" in facts and "2020-04-23" in facts
    assert '<details class="all">' in html  # the statements are still there, folded


def test_an_item_page_lists_its_papers_paged(client: TestClient, store: GraphStore) -> None:
    html = client.get("/method/adam", headers=HTML).text
    papers = _section(html, "papers")
    want = {
        p
        for (p,) in store.select_values(
            "SELECT DISTINCT ?p WHERE { ?p <https://w3id.org/kg/ontology#usesMethod> "
            "<https://w3id.org/kg/id/method/adam> }"
        )
        if p
    }
    assert f"Papers ({len(want)})" in html
    for iri in want:
        assert f'href="/{iri[len(BASE) :]}"' in papers
    assert client.get("/method/adam?page=x", headers=HTML).status_code == 400
    later = _section(client.get("/method/adam?page=1", headers=HTML).text, "papers")
    assert "none on this page" in later and 'rel="prev"' in later


def test_rank_on_a_leaderboard_is_best_first() -> None:
    def row(metric: str, above: int, below: int) -> dict[str, Term]:
        lit = lambda v: Term("literal", str(v))  # noqa: E731
        return {
            "lb": Term("uri", "https://w3id.org/kg/id/leaderboard/x"),
            "metric": lit(metric),
            "entries": lit(above + below + 1),
            "above": lit(above),
            "below": lit(below),
        }

    assert rank_of(row("Top 1 Accuracy", 3, 10)) == (4, 14)  # three scored higher
    assert rank_of(row("Top-1 Error Rate", 3, 10)) == (11, 14)  # ten scored lower
    assert lower_is_better("MAE") and lower_is_better("FID") and not lower_is_better("BLEU")


def _row(model: str, url: str, metrics: dict[str, str]) -> dict[str, Any]:
    return {
        "model_name": model,
        "paper_title": None,
        "paper_url": url,
        "paper_date": None,
        "metrics": metrics,
        "code_links": [],
        "model_links": [],
    }


_OURS = "https://arxiv.org/abs/2004.11207"  # the seed paper S
#: Two leaderboards the seed paper S is on (twice on one, for the same metrics), with ties,
#: a percentage, a value that is no number, and a metric where lower is better.
BOARDS = {
    "SST-2": [
        _row("Ours", _OURS, {"Accuracy": "91.5", "Error": "8.5"}),
        _row("Ours large", _OURS, {"Accuracy": "93.25", "Error": "6.75"}),
        _row("A", "", {"Accuracy": "95.1", "Error": "4.9"}),
        _row("B", "", {"Accuracy": "91.5", "Error": "8.5"}),
        _row("C", "", {"Accuracy": "90.0%", "Error": "10"}),
        _row("D", "", {"Accuracy": "-", "Error": "12"}),
        _row("E", "", {"Accuracy": "88"}),
    ],
    "IMDb": [
        _row("E", "", {"Accuracy": "96.2"}),
        _row("Ours", _OURS, {"Accuracy": "94"}),
        _row("F", "", {"Accuracy": "94.0"}),
        _row("G", "", {"Accuracy": "n/a"}),
    ],
}
_LOWER = {"Accuracy": False, "Error": True}


@pytest.fixture(scope="module")
def ranked_client(
    seed_paths: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    datasets = [
        {
            "dataset": name,
            "description": "",
            "dataset_citations": [],
            "dataset_links": [],
            "subdatasets": [],
            "sota": {"metrics": ["Accuracy", "Error"], "rows": rows},
        }
        for name, rows in BOARDS.items()
    ]
    table = {
        "task": "Sentiment Analysis",
        "description": "",
        "categories": [],
        "source_link": None,
        "synonyms": [],
        "subtasks": [],
        "datasets": datasets,
    }
    path = tmp_path_factory.mktemp("ranks") / "evaluation-tables.json"
    path.write_text(json.dumps([table]), encoding="utf-8")
    with client_for(memory_store([*seed_paths, path]), workers=1) as c:
        yield c


def _number(text: str) -> float | None:
    return float(text.rstrip("%")) if re.fullmatch(r"-?\d+(\.\d+)?%?", text) else None


def test_leaderboard_ranks_match_a_count_over_the_tables_json(ranked_client: TestClient) -> None:
    """Each of the paper's results: #(1 + entries ahead) of (entries with a number), counted
    here over the raw rows for that dataset and metric."""
    results = _section(ranked_client.get(f"/paper/{S}", headers=HTML).text, "results")
    cells = [
        (metric, value, model, rank)
        for model, row in re.findall(r'<tr><td class="model">([^<]*)</td>(.*?)</tr>', results, re.S)
        for metric, value, rank in re.findall(
            r'<td class="num" data-label="([^"]*)">([^<]*) <span class="rank"[^>]*>([^<]*)</span>', row
        )
    ]
    want = []
    for rows in BOARDS.values():
        for ours in (r for r in rows if r["paper_url"] == _OURS):
            for metric, value in ours["metrics"].items():
                mine = _number(value)
                assert mine is not None
                numbers = [_number(r["metrics"].get(metric, "")) for r in rows]
                scored = [n for n in numbers if n is not None]
                ahead = [n for n in scored if (n < mine if _LOWER[metric] else n > mine)]
                want.append(
                    (metric, value, ours["model_name"], f"#{len(ahead) + 1} of {len(scored)}")
                )
    assert sorted(cells) == sorted(want)
    assert ("Accuracy", "91.5", "Ours", "#3 of 6") in cells  # a tie shares the rank
    assert ("Error", "6.75", "Ours large", "#2 of 6") in cells  # lower is better


#: Results no finite number ranks (an infinite value, as another source or an update may
#: state it: kg's own ingest reads "Infinity" as no number), beside the real ones.
_UNBOUNDED = {"Accuracy": "INF", "Error": "-INF"}


@pytest.fixture(scope="module")
def unbounded(
    seed_paths: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """The seeds and the tables above, with one more result on each board and metric whose
    number is ±Infinity (xsd:double); the leaderboards' paths by dataset name."""
    table = {
        "task": "Sentiment Analysis", "description": "", "categories": [], "source_link": None,
        "synonyms": [], "subtasks": [],
        "datasets": [
            {"dataset": name, "description": "", "dataset_citations": [], "dataset_links": [],
             "subdatasets": [], "sota": {"metrics": ["Accuracy", "Error"], "rows": rows}}
            for name, rows in BOARDS.items()
        ],
    }
    path = tmp_path_factory.mktemp("unbounded") / "evaluation-tables.json"
    path.write_text(json.dumps([table]), encoding="utf-8")
    store = memory_store([*seed_paths, path])
    kg, rdfs = "https://w3id.org/kg/ontology#", "http://www.w3.org/2000/01/rdf-schema#"
    boards: dict[str, str] = {}
    for name in BOARDS:
        found = store.query(
            f'SELECT ?lb WHERE {{ ?lb a <{kg}Leaderboard> ; <{kg}onDataset> ?d . ?d <{rdfs}label> "{name}" }}'
        )
        assert isinstance(found, SelectResult) and len(found.rows) == 1, name
        lb = found.rows[0][0]
        assert lb is not None
        boards[name] = lb.value.removeprefix(BASE)
        for metric, number in _UNBOUNDED.items():
            node = f"<{lb.value}/result/unbounded-{metric.lower()}>"
            store.update(
                f"""PREFIX kg: <{kg}>
INSERT {{ GRAPH <{BASE}graph/test-unbounded> {{
  {node} a kg:EvaluationResult ; kg:inLeaderboard <{lb.value}> ; kg:onTask ?t ;
    kg:onDataset ?d ; kg:metricName "{metric}" ; kg:metricValue "{number.lower()}" ;
    kg:metricNumber "{number}"^^<http://www.w3.org/2001/XMLSchema#double> ;
    kg:modelName "Unbounded" }} }}
WHERE {{ <{lb.value}> kg:onTask ?t ; kg:onDataset ?d }}"""
            )
    with client_for(store, workers=1) as c:
        yield c, boards


def test_a_paper_pages_rank_is_its_leaderboard_pages_rank(
    unbounded: tuple[TestClient, dict[str, str]],
) -> None:
    """With an infinite value on the board, the paper page ranks each of its results where
    the leaderboard page does (both read numbers by kg.rdf.results.decimal_value: an
    infinite value is ranked by neither)."""
    client, boards = unbounded
    page = client.get(f"/paper/{S}", headers=HTML)
    assert page.status_code == 200
    on_paper = [
        (metric, model, int(rank))
        for model, row in re.findall(
            r'<tr><td class="model">([^<]*)</td>(.*?)</tr>',
            _section(page.text, "results"), re.S,
        )
        for metric, rank in re.findall(
            r'<td class="num" data-label="([^"]*)">[^<]* <span class="rank"[^>]*>#(\d+) of', row
        )
    ]
    on_boards = []
    for name, path in boards.items():
        for metric in ("Accuracy", "Error"):
            board = client.get(f"/{path}?sort={metric}", headers=HTML)
            assert board.status_code == 200
            for rank, model in re.findall(
                r'<td class="num rank">([^<]*)</td>\s*<td class="model">(?:<a [^>]*>)?([^<]*)',
                board.text,
            ):
                if model.startswith("Ours") and rank != "–":
                    on_boards.append((metric, model, int(rank)))
                if model == "Unbounded":
                    assert rank == "–", (name, metric)  # listed, not ranked
    assert len(on_paper) == 5  # Ours's results with a number: 2 + 2 on SST-2, 1 on IMDb
    assert sorted(on_paper) == sorted(on_boards)
    assert ("Accuracy", "Ours large", 2) in on_paper  # only 95.1 ahead, not the infinite one
    assert ("Error", "Ours large", 2) in on_paper  # only 4.9 ahead, not the -infinite one
