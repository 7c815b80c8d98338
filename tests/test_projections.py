"""Projections: exact weights on hand-made graphs and the seeds, the same graphs as NetworkX's
own bipartite projection on generated records and the real slices, and files that read back."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from networkx.algorithms import bipartite

import kg.graph.projections
from kg.cli.app import as_flag
from kg.errors import UsageError
from kg.graph.incidence import Incidence, load_incidence
from kg.graph.projections import (
    bipartite_graph,
    item_graph,
    paper_graph,
    project,
    projection_kind,
    write_graph,
)
from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.conftest import BASE, RAW_DIR

P = "https://example.org/paper/"
IT = "https://example.org/item/"


def hand_made() -> Incidence:
    """methods: p1 {a b c}, p2 {a b}, p3 {c}; tasks: p1 {t}, p3 {t}."""
    return Incidence.from_pairs(
        {
            "methods": [
                (P + p, IT + i) for p, s in {"p1": "abc", "p2": "ab", "p3": "c"}.items() for i in s
            ],
            "tasks": [(P + "p1", IT + "t"), (P + "p3", IT + "t")],
        }
    )


def edges(graph: nx.Graph, strip: str) -> dict[tuple[str, str], dict[str, int]]:
    return {
        tuple(sorted((u.removeprefix(strip), v.removeprefix(strip)))): data  # type: ignore[misc]
        for u, v, data in graph.edges(data=True)
    }


def test_bipartite_graph_of_a_hand_made_incidence() -> None:
    graph = bipartite_graph(hand_made().only(["methods"]))
    assert graph.number_of_nodes() == 6 and graph.number_of_edges() == 6
    assert graph.nodes[P + "p1"] == {
        "iri": P + "p1",
        "type": "Paper",
        "label": P + "p1",
        "bipartite": 0,
    }
    assert graph.nodes[IT + "a"]["type"] == "Method" and graph.nodes[IT + "a"]["bipartite"] == 1
    assert bipartite.is_bipartite(graph)


def test_paper_projection_weights_and_per_relation_counts() -> None:
    graph = paper_graph(hand_made())
    assert edges(graph, P) == {
        ("p1", "p2"): {"weight": 2, "methods": 2, "tasks": 0},
        ("p1", "p3"): {"weight": 2, "methods": 1, "tasks": 1},
    }
    assert set(graph.nodes) == {P + "p1", P + "p2", P + "p3"}
    only_methods = paper_graph(hand_made().only(["methods"]), min_weight=2)
    assert edges(only_methods, P) == {("p1", "p2"): {"weight": 2}}


def test_item_projection_and_max_share() -> None:
    methods = hand_made().only(["methods"])
    assert edges(item_graph(methods), IT) == {
        ("a", "b"): {"weight": 2},
        ("a", "c"): {"weight": 1},
        ("b", "c"): {"weight": 1},
    }
    # With p4 {a}, a is on 3 of 4 papers: --max-share 0.6 leaves it out.
    four = Incidence.from_pairs(
        {
            "methods": [
                (P + p, IT + i)
                for p, s in {"p1": "abc", "p2": "ab", "p3": "c", "p4": "a"}.items()
                for i in s
            ]
        }
    )
    assert edges(item_graph(four, max_share=0.6), IT) == {("b", "c"): {"weight": 1}}
    assert edges(paper_graph(four, max_share=0.6), P) == {
        ("p1", "p2"): {"weight": 1},
        ("p1", "p3"): {"weight": 1},
    }
    assert edges(paper_graph(four), P)[("p1", "p4")] == {"weight": 1}
    with pytest.raises(UsageError, match="'max_share' is a fraction") as info:
        paper_graph(methods, max_share=2.0)
    assert info.value.worded(as_flag).startswith("--max-share is a fraction")


def test_kinds_and_aliases() -> None:
    assert projection_kind("coauthorship").name == "author-author"
    assert projection_kind("Method-Cooccurrence").name == "method-method"
    assert projection_kind("repository-couse").name == "repository-repository"
    assert projection_kind("paper-dataset").mode == "bipartite"
    with pytest.raises(UsageError, match="unknown graph kind 'papers'; use one of: paper-method"):
        projection_kind("papers")


def test_too_large_a_projection_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kg.graph.projections, "MAX_PAIRS", 1)
    with pytest.raises(UsageError, match=r"would weigh up to 4 pairs.*'max_share'") as info:
        paper_graph(hand_made())
    assert "--max-share (e.g. 0.01)" in info.value.worded(as_flag)


# --- the same graphs as NetworkX ----------------------------------------------------------


@pytest.fixture(scope="module")
def synth_store(tmp_path_factory: pytest.TempPathFactory) -> GraphStore:
    path = tmp_path_factory.mktemp("synth") / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(250, seed=11)), encoding="utf-8")
    store = GraphStore.memory()
    assert ingest(store, [str(path)], base_iri=BASE).added == 250
    return store


def networkx_projection(graph: nx.Graph, side: int) -> nx.Graph:
    nodes = [n for n, d in graph.nodes(data=True) if d["bipartite"] == side]
    return bipartite.weighted_projected_graph(graph, nodes)


@pytest.mark.parametrize("relation", ["methods", "tasks", "authors"])
def test_projections_equal_networkx_weighted_projection(
    synth_store: GraphStore, relation: str
) -> None:
    inc = load_incidence(synth_store, relation)
    whole = bipartite_graph(inc)
    for ours, side in ((paper_graph(inc), 0), (item_graph(inc), 1)):
        theirs = networkx_projection(whole, side)
        assert set(ours.nodes) == set(theirs.nodes)
        assert edges(ours, "") == edges(theirs, "")


def test_real_slices_dataset_projection_equals_networkx() -> None:
    sources = [
        RAW_DIR / "sota-extractor-tasks" / f"{name}.json"
        for name in ("squad", "nlp-progress", "snli", "coqa")
    ]
    if not all(p.exists() for p in sources):
        pytest.skip(f"the real slices are not in {RAW_DIR}")
    store = GraphStore.memory()
    assert ingest(store, [str(p) for p in sources], base_iri=BASE).rejected == 0
    inc = load_incidence(store, "datasets")
    assert inc.matrix.nnz > 300
    ours = project(store, "dataset-dataset", incidence=inc)
    theirs = networkx_projection(bipartite_graph(inc), 1)
    assert edges(ours, "") == edges(theirs, "")
    # Real labels from the tables, e.g. SQuAD's two versions.
    assert {"SQuAD1.1", "SQuAD2.0"} <= {d["label"] for _, d in ours.nodes(data=True)}


# --- the seeds ----------------------------------------------------------------------------


def test_seed_projections(seed_store: GraphStore) -> None:
    papers = project(seed_store, "paper-paper", by="methods")
    assert [d["weight"] for *_, d in papers.edges(data=True)] == [19]
    assert {d["label"] for _, d in papers.nodes(data=True)} == {
        "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms",
        "Self-Attention Attribution: Interpreting Information Interactions Inside Transformer",
    }
    coauthors = project(seed_store, "coauthorship")
    # Two papers of four authors each, no one in common: two 4-cliques.
    assert coauthors.number_of_nodes() == 8 and coauthors.number_of_edges() == 12
    assert {d["type"] for _, d in coauthors.nodes(data=True)} == {"Author"}
    assert nx.has_path(coauthors, BASE + "author/goro-kobayashi", BASE + "author/kentaro-inui")
    assert not nx.has_path(coauthors, BASE + "author/goro-kobayashi", BASE + "author/li-dong")
    methods = project(seed_store, "method-method")
    weights = sorted(d["weight"] for *_, d in methods.edges(data=True))
    # 19 shared methods pair up on both papers (weight 2); ReLU meets them on one.
    assert weights == [1] * 19 + [2] * (19 * 18 // 2)
    repos = project(seed_store, "repository-repository")
    assert repos.number_of_nodes() == 3 and repos.number_of_edges() == 1  # B's two repositories


@pytest.mark.parametrize("suffix", [".graphml", ".gexf", ".json"])
def test_files_read_back(seed_store: GraphStore, tmp_path: Path, suffix: str) -> None:
    graph = project(seed_store, "paper-method")
    path = tmp_path / f"g{suffix}"
    write_graph(graph, path)
    if suffix == ".graphml":
        back = nx.read_graphml(path)
    elif suffix == ".gexf":
        back = nx.read_gexf(path)
    else:
        back = nx.node_link_graph(json.loads(path.read_text(encoding="utf-8")), edges="edges")
    assert set(back.nodes) == set(graph.nodes)
    assert {frozenset(e) for e in back.edges} == {frozenset(e) for e in graph.edges}
    for node, data in graph.nodes(data=True):
        assert back.nodes[node]["label"] == data["label"]
        assert back.nodes[node]["type"] == data["type"]
        assert back.nodes[node]["iri"] == node


def test_weights_read_back_from_graphml(seed_store: GraphStore, tmp_path: Path) -> None:
    path = tmp_path / "p.graphml"
    write_graph(project(seed_store, "method-method"), path)
    back = nx.read_graphml(path)
    assert sorted(d["weight"] for *_, d in back.edges(data=True))[-1] == 2


def test_unknown_file_extension(seed_store: GraphStore, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"end the file name with \.graphml, \.gexf, \.json"):
        write_graph(nx.Graph(), tmp_path / "g.csv")
