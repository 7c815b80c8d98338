"""Analytics on projections: components, Louvain communities named by lift, PageRank."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from kg.cli.app import as_flag
from kg.errors import UsageError
from kg.graph.analytics import (
    characteristic,
    communities,
    components,
    describe,
    member_papers,
    pagerank,
)
from kg.graph.incidence import Incidence
from kg.graph.projections import item_graph, paper_graph
from kg.rdf.store import GraphStore
from tests.conftest import BASE

P = "https://example.org/paper/"
IT = "https://example.org/item/"


def two_topics() -> Incidence:
    """Six vision papers (conv, resnet) and six language papers (bpe, transformer); all use
    adam; one vision paper also uses transformer. Tasks follow the topic."""
    methods: list[tuple[str, str]] = []
    tasks: list[tuple[str, str]] = []
    for i in range(6):
        v, t = f"{P}v{i}", f"{P}t{i}"
        methods += [(v, IT + "adam"), (v, IT + "conv"), (v, IT + "resnet")]
        methods += [(t, IT + "adam"), (t, IT + "bpe"), (t, IT + "transformer")]
        tasks += [(v, IT + "image-classification"), (t, IT + "machine-translation")]
    methods.append((P + "v0", IT + "transformer"))
    return Incidence.from_pairs({"methods": methods, "tasks": tasks})


def test_components_largest_first() -> None:
    graph = nx.Graph([("a", "b"), ("b", "c"), ("x", "y")])
    graph.add_node("z")
    assert components(graph) == [["a", "b", "c"], ["x", "y"], ["z"]]


def test_louvain_splits_the_topics_and_names_them_by_lift() -> None:
    inc = two_topics()
    graph = paper_graph(inc.only(["methods"]), max_share=0.9)  # adam is on every paper
    groups = communities(graph, seed=1)
    assert groups == [[f"{P}t{i}" for i in range(6)], [f"{P}v{i}" for i in range(6)]]
    assert communities(graph, seed=1) == groups  # the same seed, the same split
    found = describe(graph, groups, inc, inc, top=2, terms=3, ranks=pagerank(graph))
    language, vision = found
    assert [t.iri.removeprefix(IT) for t in language.terms] == [
        "bpe",
        "machine-translation",
        "transformer",
    ]
    assert [t.lift for t in language.terms] == [2.0, 2.0, round(2 / (7 / 12) / 2, 4)]
    assert {t.iri.removeprefix(IT) for t in vision.terms} == {
        "conv",
        "resnet",
        "image-classification",
    }
    assert language.papers == 6 and vision.rank == 2
    # v0 also uses transformer, so it links to the language papers: the most central.
    assert vision.central[0] == P + "v0"


def test_item_communities_map_to_their_papers() -> None:
    inc = two_topics()
    methods = inc.only(["methods"])
    graph = item_graph(methods, max_share=0.9)
    rows = member_papers(graph, [IT + "bpe"], methods)
    assert [methods.papers[r] for r in rows] == [f"{P}t{i}" for i in range(6)]
    groups = communities(graph, seed=0)
    found = describe(graph, groups, inc.only(["tasks"]), methods, top=5)
    names = sorted(t.iri.removeprefix(IT) for c in found for t in c.terms)
    assert names == ["image-classification", "machine-translation"]


def test_characteristic_needs_support() -> None:
    inc = two_topics()
    # One vision paper alone: its items have support 1 < 2 and cannot name it.
    assert characteristic(inc, np.array([inc.row(P + "v3")])) != []
    assert characteristic(inc, np.array([inc.row(P + "v3")]), min_share=0.1)[0].inside == 1
    both = np.array([inc.row(P + "v0"), inc.row(P + "v3")])
    terms = characteristic(inc, both, top=10)
    assert "transformer" not in {t.iri.removeprefix(IT) for t in terms}  # only v0 has it
    assert characteristic(inc, np.zeros(0, dtype=np.int64)) == []


def test_pagerank_matches_networkx_and_sums_to_one() -> None:
    graph = paper_graph(two_topics().only(["methods"]))
    ranks = pagerank(graph)
    assert sum(ranks.values()) == pytest.approx(1.0)
    assert ranks == pytest.approx(nx.pagerank(graph, weight="weight"))
    assert pagerank(nx.Graph()) == {} and communities(nx.Graph()) == []


def test_a_backend_that_is_not_installed() -> None:
    with pytest.raises(UsageError, match=r"backend 'graphblas' is not installed.*drop 'backend'") as info:
        pagerank(nx.path_graph(3), backend="graphblas")
    assert info.value.worded(as_flag).endswith("drop --backend")
    # The default dispatcher is NetworkX itself, named explicitly.
    assert pagerank(nx.path_graph(3), backend="networkx") == pytest.approx(
        nx.pagerank(nx.path_graph(3))
    )


def test_seed_communities(seed_store: GraphStore) -> None:
    from kg.graph.incidence import load_incidence
    from kg.graph.projections import project

    inc = load_incidence(seed_store, ("authors", "methods", "tasks"))
    graph = project(seed_store, "author-author", incidence=inc)
    groups = communities(graph)
    assert [len(g) for g in groups] == [4, 4]  # the two papers' author teams
    found = describe(graph, groups, inc.only(["methods", "tasks"]), inc.only(["authors"]), top=2)
    # Each team has one paper: what sets it apart (lift 2) comes first. B's team sorts first
    # (furu-wei < goro-kobayashi); B's own items are ReLU and its task, then shared methods.
    assert [[t.iri.removeprefix(BASE) for t in c.terms] for c in found] == [
        ["method/relu", "task/attribute", "method/absolute-position-encodings"],
        ["task/machine-translation", "task/translation", "task/word-alignment"],
    ]
    assert [t.lift for t in found[0].terms] == [2.0, 2.0, 1.0]
