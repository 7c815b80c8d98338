"""Suggested links (kg.graph.suggest): removed links come back, existing ones never do, the
evaluation is deterministic, and every face answers the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rdflib
from typer.testing import CliRunner

from kg.cli import app
from kg.graph import cache
from kg.graph.holdout import Evidence, evaluate, split
from kg.graph.incidence import load_incidence
from kg.graph.suggest import Text, read_text, suggest, tune, votes_of
from kg.rdf.store import GraphStore
from kg.serve.app import ServerConfig, create_app
from kg.serve.pool import Source
from tests.serve_support import TestClient

BASE = "https://w3id.org/kg/id/"
KG = "https://w3id.org/kg/ontology#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
PAPER = "attention-module-is-not-only-a-weight"
#: Hits@10 of links removed on purpose from the README store (seed 0: 567 paper–task,
#: 1,176 paper–dataset and 178 paper–method links) measured 0.7813, 0.6650 and 0.6573 with
#: the papers' texts (0.4744, 0.6488 and 0.0112 without); the thresholds sit just under.
HITS_AT_10 = {"tasks": 0.76, "datasets": 0.65, "methods": 0.63}


@pytest.fixture(scope="module")
def readme(readme_store: Path) -> Any:
    with GraphStore.open(readme_store, read_only=True) as store:
        full = load_incidence(store)
        yield store, full, Evidence.read(store, full), read_text(store, full)


def measure(evidence: Evidence, seed: int, text: Text | None) -> dict[str, dict[str, float]]:
    test = split(evidence, seed=seed)
    trained = tune(evidence, kept=test.kept, seed=seed + 1, text=text)
    votes = votes_of(test.train(), text)
    return evaluate(
        test,
        {
            r: (lambda g, c, r=r: votes.scores(g, c, trained.for_relation(r)))
            for r in test.held_out
        },
    )


def test_the_units_give_exactly_the_incidence_of_paper_to(readme: Any) -> None:
    _, full, evidence, _ = readme
    assert (evidence.incidence().matrix != full.matrix).nnz == 0


def test_a_held_out_link_leaves_no_path_to_it(readme: Any) -> None:
    store, full, evidence, _ = readme
    test = split(evidence, seed=0)
    train = test.train()
    assert sum(len(h[0]) for h in test.held_out.values()) >= 200
    for rows, cols in test.held_out.values():
        assert train.matrix[rows, cols].sum() == 0
    # and no kept result of a paper names a held-out task of it (read straight from SPARQL)
    rows, cols = test.held_out["tasks"]
    held = {(full.papers[r], full.items[c]) for r, c in zip(rows, cols, strict=True)}
    query = (
        f"SELECT ?p ?t WHERE {{ ?p <{KG}hasResult> ?r . ?r <{KG}onTask> ?t }}"
    )
    with_result = {(p, t) for p, t in store.select_values(query)}
    assert held & with_result  # results would have leaked them


def test_removed_links_come_back_in_the_top_10(readme: Any) -> None:
    _, _, evidence, text = readme
    scores = measure(evidence, seed=0, text=text)
    assert scores["tasks"]["links"] + scores["datasets"]["links"] >= 200
    for relation, floor in HITS_AT_10.items():
        assert scores[relation]["hits@10"] >= floor, (relation, scores[relation])


def test_the_evaluation_is_deterministic_for_a_seed(readme: Any) -> None:
    _, _, evidence, text = readme
    first = split(evidence, seed=7)
    second = split(evidence, seed=7)
    other = split(evidence, seed=8)
    for relation, (rows, cols) in first.held_out.items():
        assert np.array_equal(rows, second.held_out[relation][0])
        assert np.array_equal(cols, second.held_out[relation][1])
    assert not np.array_equal(first.held_out["tasks"][0], other.held_out["tasks"][0])
    assert measure(evidence, seed=3, text=text) == measure(evidence, seed=3, text=text)


def existing_links(store: GraphStore, papers: list[str]) -> dict[str, set[str]]:
    """Every item each paper has, walked in plain Python over an rdflib graph of the papers'
    own triples and their results' triples."""
    values = " ".join(f"<{p}>" for p in papers)
    text = store.query(
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ VALUES ?paper {{ {values} }} "
        f"{{ ?paper ?p ?o BIND(?paper AS ?s) }} UNION "
        f"{{ ?paper <{KG}hasResult> ?s . ?s ?p ?o }} }}"
    )
    graph = rdflib.Graph()
    graph.parse(data=text.ntriples, format="nt")
    direct = {KG + n for n in ("hasTask", "usesMethod", "introducesMethod",
                               "introducesDataset", "hasRepository")}
    out: dict[str, set[str]] = {p: set() for p in papers}
    for paper in papers:
        node = rdflib.URIRef(paper)
        for _, pred, obj in graph.triples((node, None, None)):
            if str(pred) in direct:
                out[paper].add(str(obj))
            if str(pred) == KG + "hasResult":
                for name in ("onTask", "onDataset"):
                    out[paper].update(
                        str(o) for o in graph.objects(obj, rdflib.URIRef(KG + name))
                    )
    return out


def test_suggestions_never_repeat_an_existing_link(readme: Any) -> None:
    store, full, _, _ = readme
    model = cache.suggest_model(store)
    counts = np.asarray(full.paper_items)
    papers = [full.papers[int(r)] for r in np.argsort(-counts, kind="stable")[:25]]
    papers.append(BASE + "paper/" + PAPER)
    have = existing_links(store, papers)
    assert sum(map(len, have.values())) > 100
    for paper in papers:
        for kind in (None, "task", "dataset", "method", "repository"):
            result = suggest(store, paper, base_iri=BASE, model=model, kind=kind, top=30)
            items = [s.item for s in result.suggestions]
            assert items and not set(items) & have[paper], (paper, kind)
            assert len(items) == len(set(items))


def test_kept_co_occurrence_rows_give_the_same_votes_as_the_postings(readme: Any) -> None:
    """At the whole archive, `reach` reads the items whose papers hold most links (Adam)
    from their kept co-occurrence rows; the README store has no such item, so here every
    item is read that way, then none: the votes and the suggestions are the same."""
    store, full, _, _ = readme
    model = cache.suggest_model(store)
    votes = model.votes
    rows = np.argsort(-np.asarray(full.paper_items), kind="stable")[:40]
    counted, found = {}, {}
    try:
        for heavy in (False, True):
            votes._heavy = np.full(full.shape[1], heavy)
            counted[heavy] = votes.reach(rows, 0.5)
            found[heavy] = [
                suggest(store, full.papers[int(r)], base_iri=BASE, model=model).as_dict()
                for r in rows[:10]
            ]
    finally:
        votes._heavy = None  # the module's model: the next test reads it as it was made
    assert votes._heavy_rows, "no row was read from a kept co-occurrence row"
    assert counted[True][0].any()
    np.testing.assert_allclose(counted[True][0], counted[False][0], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(counted[True][1], counted[False][1])
    assert found[True] == found[False]


def test_the_seed_paper_gets_methods_with_reasons(readme_store: Path) -> None:
    seed = json.loads(next((Path(__file__).parent.parent / "examples" / "records").glob(
        "000_*.json")).read_text())
    named = {m["method_name"] for m in seed["methods"]}
    assert len(named) == 19
    result = CliRunner().invoke(
        app, ["--store", str(readme_store), "suggest", PAPER, "--kind", "method", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["suggestions"]) == 10
    assert all(s["kind"] == "method" for s in data["suggestions"])
    assert not {s["label"] for s in data["suggestions"]} & named
    for s in data["suggestions"]:  # each with a reason: neighbours, co-occurrence or text
        assert any(s["because"][k] for k in ("similar_papers", "cooccurring", "text")), s
    assert any(s["because"]["similar_papers"] and s["because"]["cooccurring"]
               for s in data["suggestions"])
    assert any(s["because"]["text"] for s in data["suggestions"])


def served(readme_store: Path, path: str) -> tuple[int, Any]:
    config = ServerConfig(base_iri=BASE, workers=1, refresh=0.0)
    with TestClient(create_app(Source(path=readme_store), config), base_url="http://kg.test") as c:
        response = c.get(path, headers={"Accept": "application/json"})
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text


def test_the_cli_and_the_server_give_the_same_json(readme_store: Path) -> None:
    cli = CliRunner().invoke(
        app, ["--store", str(readme_store), "suggest", PAPER, "--top", "5", "--json"]
    )
    assert cli.exit_code == 0, cli.output
    status, data = served(readme_store, f"/suggest/{PAPER}?top=5")
    assert status == 200
    assert data == json.loads(cli.output)
    assert {s["kind"] for s in data["suggestions"]} <= {"task", "dataset", "method"}


@pytest.mark.parametrize("name", ["<script>alert(1)</script>", "no such paper", "2099.99999"])
def test_hostile_or_unknown_papers_get_the_resolvers_error(readme_store: Path, name: str) -> None:
    result = CliRunner().invoke(app, ["--store", str(readme_store), "suggest", name])
    assert result.exit_code == 1
    assert "no paper named" in result.output and "Traceback" not in result.output


def test_bad_options_are_worded_as_flags(readme_store: Path) -> None:
    result = CliRunner().invoke(app, ["--store", str(readme_store), "suggest", PAPER,
                                      "--kind", "author"])
    assert result.exit_code == 2 and "--kind" in result.output
    result = CliRunner().invoke(app, ["--store", str(readme_store), "suggest", PAPER,
                                      "--top", "0"])
    assert result.exit_code == 2 and "--top" in result.output


def test_the_model_is_kept_beside_the_store_and_goes_stale_with_it(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    from kg.ingest.ingestor import ingest

    path = tmp_path / "store"

    def add(record: Path) -> None:
        with GraphStore.open(path) as writer:
            ingest(writer, [str(record)], base_iri=BASE)

    add(seed_paths[0])
    with GraphStore.open(path, read_only=True) as store:
        cache.suggest_model(store)
        key = cache.content_key(store)
        directory = cache.cache_directory(store, key)
        assert directory is not None and any(directory.glob("suggest-v*.json"))
        assert any(directory.glob("content-v*.npz"))
    add(seed_paths[1])
    with GraphStore.open(path, read_only=True) as store:
        assert cache.content_key(store) != key
        model = cache.suggest_model(store)
        assert model.votes.incidence.shape[0] == 2
        assert not directory.exists()  # the stale cache went with the write


def test_no_dataset_is_offered_to_a_paper_that_has_it_under_another_name(
    readme_store: Path,
) -> None:
    """EfficientNet reports on Flowers-102; Oxford 102 Flowers is the same dataset under
    another name, so it is not suggested (it was the first suggestion). The README store's
    dataset names hold four such pairs, each checked here by eye."""
    from kg.ingest.identity import possibly_same_dataset

    with GraphStore.open(readme_store, read_only=True) as store:
        names = dict(store.select_values(
            f"SELECT ?d ?l WHERE {{ ?d a <{KG}Dataset> ; <{RDFS}label> ?l }}"
        ))
        full = load_incidence(store)
    ordered = sorted(names.items())
    pairs = {
        frozenset((a[1], b[1]))
        for i, a in enumerate(ordered)
        for b in ordered[i + 1 :]
        if possibly_same_dataset(a[1], b[1])
    }
    assert pairs == {
        frozenset(p)
        for p in (
            ("Oxford 102 Flowers", "Flowers-102"),
            ("Moments in Time", "Moments in Time Dataset"),
            ("Freiburg Forest", "Freiburg Forest Dataset"),
            ("TCIA Pancreas-CT", "TCIA Pancreas-CT Dataset"),
        )
    }
    paper = BASE + "paper/efficientnet-rethinking-model-scaling-for"
    row = full.row(paper)
    assert row is not None
    assert BASE + "dataset/flowers-102" in {full.items[c] for c in full.items_of(row)}
    result = CliRunner().invoke(
        app,
        ["--store", str(readme_store), "suggest", paper, "--kind", "dataset", "--top", "30",
         "--json"],
    )
    assert result.exit_code == 0, result.output
    offered = [s["item"] for s in json.loads(result.output)["suggestions"]]
    assert len(offered) == 30 and BASE + "dataset/oxford-102-flowers" not in offered
