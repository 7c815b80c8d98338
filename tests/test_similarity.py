"""Explained similarity: exact scores on hand-made graphs, the seeds, generated records and
the real Papers-with-Code slices, each checked against a direct computation on Python sets."""

from __future__ import annotations

import gzip
import json
import math
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kg.cli.app import as_flag
from kg.errors import NotFoundError, Param, ParameterError, UsageError
from kg.graph.incidence import RELATIONS, Incidence, load_incidence, relation_names
from kg.graph.similarity import (
    METRICS,
    SimilarityIndex,
    bm25_idf,
    resolve_paper,
    shared,
    similar,
)
from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.conftest import BASE, RAW_DIR
from tests.test_fidelity import reference_slug
from tests.test_queries_slices import walk

P = "https://example.org/paper/"
IT = "https://example.org/item/"
A_SLUG = "attention-module-is-not-only-a-weight"
B_SLUG = "self-attention-attribution-interpreting"


def hand_made() -> Incidence:
    """p1 {a b c}, p2 {a b}, p3 {c d}, p4 {e}, p5 {a b c d}."""
    sets = {"p1": "abc", "p2": "ab", "p3": "cd", "p4": "e", "p5": "abcd"}
    return Incidence.from_pairs(
        {"methods": [(P + p, IT + i) for p, items in sets.items() for i in items]}
    )


def top(inc: Incidence, metric: str, paper: str, k: int = 10) -> list[tuple[str, float]]:
    index = SimilarityIndex(inc, METRICS[metric])
    return [(m.paper.removeprefix(P), m.score) for m in index.top(P + paper, k)]


# --- direct computation on sets, the reference --------------------------------------------


def set_scores(sets: dict[str, set[str]], metric: str, q: str) -> list[tuple[str, float]]:
    """Every other paper's score with q, from Python sets and the formulas in the docs."""
    df: dict[str, int] = defaultdict(int)
    for items in sets.values():
        for i in items:
            df[i] += 1
    n = len(sets)

    def weight(i: str) -> float:
        if metric in ("idf", "idf-cosine"):
            return math.log1p((n - df[i] + 0.5) / (df[i] + 0.5)) ** 2
        if metric == "adamic-adar":
            return 1 / math.log(df[i]) if df[i] > 1 else 0.0
        return 1.0

    def mass(items: set[str]) -> float:
        return sum(weight(i) for i in items)

    out = []
    for p, items in sets.items():
        common = sets[q] & items
        if p == q or not common:
            continue
        d = sum(weight(i) for i in common)
        a, b = mass(sets[q]), mass(items)
        score = {
            "jaccard": len(common) / len(sets[q] | items),
            "overlap": len(common) / min(len(sets[q]), len(items)),
            "cosine": len(common) / math.sqrt(len(sets[q]) * len(items)),
            "adamic-adar": d,
            "idf": d / (a**0.75 * b**0.25) if a and b else 0.0,
            "idf-cosine": d / math.sqrt(a * b) if a and b else 0.0,
        }[metric]
        if score > 0:
            out.append((p, score))
    return out


def best(scored: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    return sorted(scored, key=lambda ps: (-round(ps[1], 9), ps[0]))[:k]


def same_ranking(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> bool:
    """The same papers in the same order, with the same scores up to float rounding."""
    return [p for p, _ in got] == [p for p, _ in expected] and all(
        math.isclose(a, b, rel_tol=1e-9) for (_, a), (_, b) in zip(got, expected, strict=True)
    )


# --- hand-made ----------------------------------------------------------------------------


def test_jaccard_overlap_cosine_exact_on_a_hand_made_graph() -> None:
    inc = hand_made()
    assert top(inc, "jaccard", "p1") == [("p5", 0.75), ("p2", round(2 / 3, 12)), ("p3", 0.25)]
    # Overlap ties p2 and p5 at 1.0: ties go by IRI.
    assert top(inc, "overlap", "p1") == [("p2", 1.0), ("p5", 1.0), ("p3", 0.5)]
    assert top(inc, "cosine", "p1") == [
        ("p5", round(3 / math.sqrt(12), 12)),
        ("p2", round(2 / math.sqrt(6), 12)),
        ("p3", round(1 / math.sqrt(6), 12)),
    ]
    # p4 shares nothing with anyone: no results, not zeros.
    assert top(inc, "jaccard", "p4") == []
    assert top(inc, "jaccard", "p1", k=1) == [("p5", 0.75)]


def test_adamic_adar_and_idf_exact_on_a_hand_made_graph() -> None:
    inc = hand_made()
    ln3 = math.log(3)
    assert same_ranking(
        top(inc, "adamic-adar", "p1"), [("p5", 3 / ln3), ("p2", 2 / ln3), ("p3", 1 / ln3)]
    )
    # idf = log(1 + (N - n + 0.5) / (n + 0.5)) with N = 5; a, b, c in 3 papers, d in 2.
    w3 = math.log1p(2.5 / 3.5) ** 2
    w2 = math.log1p(3.5 / 2.5) ** 2
    # By the cosine, p5 shares more but also holds d, which p1 lacks: p2 is closer.
    by_cosine = [
        ("p2", 2 * w3 / math.sqrt(3 * w3 * 2 * w3)),
        ("p5", 3 * w3 / math.sqrt(3 * w3 * (3 * w3 + w2))),
        ("p3", w3 / math.sqrt(3 * w3 * (w3 + w2))),
    ]
    assert same_ranking(top(inc, "idf-cosine", "p1"), by_cosine)
    # idf weighs p1's share (3/4) above p5's (1/4): p5 has all of p1, and ranks first.
    q = 3 * w3
    expected = [
        ("p5", 3 * w3 / (q**0.75 * (3 * w3 + w2) ** 0.25)),
        ("p2", 2 * w3 / (q**0.75 * (2 * w3) ** 0.25)),
        ("p3", w3 / (q**0.75 * (w3 + w2) ** 0.25)),
    ]
    assert same_ranking(top(inc, "idf", "p1"), expected)
    index = SimilarityIndex(inc, METRICS["idf"])
    assert index.score(P + "p1", P + "p3") == pytest.approx(expected[2][1], rel=1e-12)
    assert index.score(P + "p1", P + "p4") == 0.0
    # Not symmetric: the query's own mass weighs 3/4.
    assert index.score(P + "p3", P + "p1") == pytest.approx(
        w3 / ((w3 + w2) ** 0.75 * q**0.25), rel=1e-12
    )


def test_idf_puts_one_rare_shared_item_above_two_ubiquitous_ones() -> None:
    """q shares Adam and Dropout (in nearly every paper) with `common`, and one rare method
    with `rare`: Jaccard prefers `common`, idf prefers `rare`, and the explanations say why."""
    sets = {
        "q": {"adam", "dropout", "rare-method", "x1"},
        "common": {"adam", "dropout", "y1"},
        "rare": {"rare-method", "z1"},
        **{f"other{i}": {"adam", "dropout", f"o{i}"} for i in range(20)},
    }
    inc = Incidence.from_pairs({"methods": [(P + p, IT + i) for p, s in sets.items() for i in s]})
    by_jaccard = [p for p, _ in top(inc, "jaccard", "q", 30)]
    assert by_jaccard[0] == "common" and by_jaccard[-1] == "rare"  # last of 22
    ranked = SimilarityIndex(inc, METRICS["idf"]).top(P + "q", 2)
    assert [m.paper.removeprefix(P) for m in ranked] == ["rare", "common"]
    assert [(s.iri.removeprefix(IT), s.papers) for s in ranked[0].shared] == [("rare-method", 2)]
    assert [(s.iri.removeprefix(IT), s.papers) for s in ranked[1].shared] == [
        ("adam", 22),
        ("dropout", 22),
    ]
    assert ranked[0].shared[0].weight > 1000 * ranked[1].shared[0].weight


def test_idf_weights() -> None:
    idf = bm25_idf(np.array([1, 50, 100]), 100)
    assert idf[0] == pytest.approx(math.log1p(99.5 / 1.5))
    assert idf[2] == pytest.approx(math.log1p(0.5 / 100.5))  # in every paper: near 0, not 0
    assert idf[0] > idf[1] > idf[2] > 0


def test_unknown_metric_and_bad_k() -> None:
    with pytest.raises(UsageError, match="unknown metric 'dice'; use one of: idf, idf-cosine, jaccard"):
        from kg.graph.similarity import metric_named

        metric_named("dice")
    with pytest.raises(UsageError, match="'top' must be at least 1") as info:
        SimilarityIndex(hand_made()).top_rows(np.array([0]), 0)
    assert info.value.parameter == Param("top")
    assert info.value.worded(as_flag) == "--top must be at least 1"
    with pytest.raises(UsageError, match="unknown relation 'method'"):
        relation_names("method")


# --- generated records: every metric against sets, every code path ----------------------


@pytest.fixture(scope="module")
def synth_store(tmp_path_factory: pytest.TempPathFactory) -> GraphStore:
    path = tmp_path_factory.mktemp("synth") / "records.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for record in records(400, seed=5):
            handle.write(json.dumps(record) + "\n")
    store = GraphStore.memory()
    report = ingest(store, [str(path)], base_iri=BASE)
    assert report.added == 400 and report.rejected == 0
    return store


def sets_from_sparql(store: GraphStore, relations: tuple[str, ...]) -> dict[str, set[str]]:
    """paper -> items, read with one plain SPARQL query per relation (not kg.graph.incidence)."""
    out: dict[str, set[str]] = defaultdict(set)
    for name in relations:
        query = f"SELECT DISTINCT ?p ?i WHERE {{ ?p {RELATIONS[name].path} ?i }}"
        for p, i in store.select_values(query):
            assert p is not None and i is not None
            out[p].add(name + " " + i)
    return dict(out)


@pytest.mark.parametrize("by", ["methods", "tasks", "authors", "all"])
def test_incidence_matches_sparql(synth_store: GraphStore, by: str) -> None:
    inc = load_incidence(synth_store, by)
    expected = sets_from_sparql(synth_store, relation_names(by))
    got = {
        inc.papers[r]: {f"{inc.relation_of(c)} {inc.items[c]}" for c in inc.items_of(r)}
        for r in range(len(inc.papers))
    }
    assert got == expected
    assert inc.papers == sorted(inc.papers)


@pytest.mark.parametrize("metric", list(METRICS))
@pytest.mark.parametrize("by", ["methods", "all"])
def test_generated_records_agree_with_sets(synth_store: GraphStore, metric: str, by: str) -> None:
    inc = load_incidence(synth_store, by)
    sets = sets_from_sparql(synth_store, relation_names(by))
    index = SimilarityIndex(inc, METRICS[metric])
    for q in sorted(sets)[::7]:
        expected = best(set_scores(sets, metric, q), 10)
        got = index.top(q, 10)
        assert same_ranking([(m.paper, m.score) for m in got], expected), q
        for m in got:  # the explanation is the intersection, heaviest first
            shared_items = {f"{s.relation} {s.iri}" for s in m.shared}
            assert shared_items == sets[q] & sets[m.paper]
            weights = [s.weight for s in m.shared]
            assert weights == sorted(weights, reverse=True)


@pytest.mark.parametrize("metric", list(METRICS))
def test_every_code_path_gives_the_same_ranking(synth_store: GraphStore, metric: str) -> None:
    """Blocks, the dense path, tiny work slices, no seed threshold, one or many mass bands:
    identical results."""
    inc = load_incidence(synth_store, "all")
    plain = SimilarityIndex(inc, METRICS[metric])
    reference = [plain.top_rows(np.array([r]), 10) for r in range(len(inc.papers))]
    variants = [
        SimilarityIndex(inc, METRICS[metric], dense_work=1),
        SimilarityIndex(inc, METRICS[metric], max_work=50, seed_postings=1),
        SimilarityIndex(inc, METRICS[metric], seed_postings=0),
        SimilarityIndex(inc, METRICS[metric], mass_bands=1),
        SimilarityIndex(inc, METRICS[metric], mass_bands=16, max_work=500),
    ]
    for variant in [plain, *variants]:
        for rows, neighbours, scores in variant.top_all(10, chunk=37):
            for i, r in enumerate(rows):
                assert neighbours[i].tolist() == reference[r][0][0].tolist()
                assert scores[i] == pytest.approx(reference[r][1][0], rel=1e-12)


# --- the seeds ----------------------------------------------------------------------------


def test_the_seeds_share_19_of_20_methods(seed_store: GraphStore) -> None:
    result = similar(seed_store, A_SLUG, base_iri=BASE, by="methods", metric="jaccard")
    assert result.item_count == 19
    [match] = result.matches
    assert match.paper == BASE + "paper/" + B_SLUG
    assert match.score == 0.95
    assert len(match.shared) == 19
    names = {s.label for s in match.shared}
    assert {"Multi-Head Attention", "Adam", "BPE", "WordPiece", "Transformer"} <= names
    assert "ReLU" not in names  # the one method only B uses
    back = similar(seed_store, B_SLUG, base_iri=BASE, by="methods", metric="jaccard")
    assert back.matches[0].score == 0.95 and back.item_count == 20
    overlap = similar(seed_store, A_SLUG, base_iri=BASE, by="methods", metric="overlap")
    assert overlap.matches[0].score == 1.0
    cosine = similar(seed_store, A_SLUG, base_iri=BASE, by="methods", metric="cosine")
    assert cosine.matches[0].score == round(19 / math.sqrt(19 * 20), 12)


def test_the_seeds_by_everything_share_only_methods(seed_store: GraphStore) -> None:
    """Different authors, tasks and repositories: all 19 shared items are methods, and the
    idf score follows the formula with N = 2 (shared: n = 2; ReLU and the rest: n = 1)."""
    result = similar(seed_store, "2004.10102v2", base_iri=BASE)  # the defaults: all, idf
    [match] = result.matches
    assert {s.relation for s in match.shared} == {"methods"}
    assert len(match.shared) == 19
    common, own = math.log1p(0.5 / 2.5) ** 2, math.log1p(1.5 / 1.5) ** 2
    # A: 19 methods, 4 authors, 3 tasks, 1 repository; B: 20, 4, 1, 2 (one more each).
    a_mass = 19 * common + (4 + 3 + 1) * own
    b_mass = 19 * common + (1 + 4 + 1 + 2) * own
    assert match.score == pytest.approx(
        19 * common / (a_mass**0.75 * b_mass**0.25), rel=1e-12
    )
    assert result.item_count == 19 + 4 + 3 + 1


def test_shared_lists_everything_two_papers_share(seed_store: GraphStore) -> None:
    result = shared(seed_store, A_SLUG, "https://arxiv.org/abs/2004.11207", base_iri=BASE)
    by_relation = {r.relation: r for r in result.relations}
    methods = by_relation["methods"]
    assert (methods.count_a, methods.count_b, len(methods.items)) == (19, 20, 19)
    assert methods.jaccard == 0.95
    assert all(i.papers == 2 for i in methods.items)
    for name in ("repositories", "tasks", "authors", "datasets"):
        assert by_relation[name].items == []
    assert (by_relation["authors"].count_a, by_relation["authors"].count_b) == (4, 4)
    assert result.label_b.startswith("Self-Attention Attribution")


# --- naming a paper -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        A_SLUG,
        "2004.10102",
        "2004.10102v2",
        "https://arxiv.org/abs/2004.10102v2",
        "arxiv.org/pdf/2004.10102v1.pdf",
        f"https://paperswithcode.com/paper/{A_SLUG}",
        f"{BASE}paper/{A_SLUG}",
        f"paper/{A_SLUG}",
    ],
)
def test_a_paper_by_slug_arxiv_id_or_iri(seed_store: GraphStore, ref: str) -> None:
    assert resolve_paper(seed_store, ref, BASE) == f"{BASE}paper/{A_SLUG}"


def test_an_unknown_paper_gives_near_matches(seed_store: GraphStore) -> None:
    with pytest.raises(NotFoundError) as caught:
        resolve_paper(seed_store, "attention-module-is-not-only-a-wieght", BASE)
    message = str(caught.value)
    assert message.startswith("no paper named 'attention-module-is-not-only-a-wieght'; ")
    assert f"did you mean: {A_SLUG} (" in message
    with pytest.raises(NotFoundError, match=r"no paper named '1999\.99999'; give a paper by"):
        resolve_paper(seed_store, "1999.99999", BASE)
    with pytest.raises(ParameterError, match="is empty; give a paper"):
        resolve_paper(seed_store, "  ", BASE)


# --- the real Papers-with-Code slices -----------------------------------------------------

METHODS_GZ = RAW_DIR / "pwc-methods-2022" / "methods.json.gz"
EVALUATION_GZ = RAW_DIR / "pwc-evaluation-tables-2020" / "evaluation-tables.json.gz"


@pytest.fixture(scope="module")
def real_store() -> Iterator[GraphStore]:
    if not (METHODS_GZ.exists() and EVALUATION_GZ.exists()):
        pytest.skip(f"the real slices are not in {RAW_DIR}")
    store = GraphStore.memory()
    report = ingest(store, [str(METHODS_GZ), str(EVALUATION_GZ)], base_iri=BASE)
    assert report.rejected == 0
    yield store


@pytest.fixture(scope="module")
def real_incidence(real_store: GraphStore) -> Incidence:
    """kg's incidence of the real slices, read once for the tests below (they only read it)."""
    return load_incidence(real_store, "all")


@pytest.fixture(scope="module")
def real_sets(real_store: GraphStore) -> dict[str, set[str]]:
    """The reference: paper -> items of the real slices by plain SPARQL, read once."""
    return sets_from_sparql(real_store, relation_names("all"))


def test_real_slices_relations_match_sparql(
    real_incidence: Incidence, real_sets: dict[str, set[str]]
) -> None:
    inc, sets = real_incidence, real_sets
    assert sum(len(s) for s in sets.values()) == inc.matrix.nnz
    counts = {r: int((inc.item_relation == i).sum()) for i, r in enumerate(inc.relations)}
    # methods.json names who introduced 1,746 methods; the 2020 tables link 10,310
    # repositories, 626 tasks and the datasets counted from the raw JSON to their papers.
    assert counts == {
        "methods": 1746,
        "repositories": 10310,
        "tasks": 626,
        "authors": 0,
        "datasets": len(datasets_with_a_paper(EVALUATION_GZ)),
    }


def datasets_with_a_paper(path: Path) -> set[str]:
    """Straight from the evaluation tables: the slugs (PwC's rule, the plain reference) of
    datasets with a row that names a paper (a title, an arXiv or a Papers-with-Code URL)."""
    found: set[str] = set()

    def visit(dataset: dict[str, Any]) -> None:
        rows = (dataset.get("sota") or {}).get("rows") or []
        urls = [row.get("paper_url") or "" for row in rows]
        if any(row.get("paper_title") for row in rows) or any(
            "arxiv.org" in url or "paperswithcode.com" in url for url in urls
        ):
            found.add(reference_slug(dataset["dataset"]))
        for sub in dataset.get("subdatasets") or []:
            visit(sub)

    with gzip.open(path) as handle:
        for root in json.load(handle):
            for task, _ in walk(root):
                for dataset in task.get("datasets") or []:
                    visit(dataset)
    return found


@pytest.mark.parametrize("metric", list(METRICS))
def test_real_slices_agree_with_sets(
    real_incidence: Incidence, real_sets: dict[str, set[str]], metric: str
) -> None:
    inc, sets = real_incidence, real_sets
    index = SimilarityIndex(inc, METRICS[metric])
    # The papers with most items, and a spread of the others.
    papers = sorted(sets, key=lambda p: (-len(sets[p]), p))
    for q in papers[:5] + papers[5::500]:
        expected = best(set_scores(sets, metric, q), 10)
        got = index.top(q, 10)
        assert same_ranking([(m.paper, m.score) for m in got], expected), q
        for m in got:
            assert {f"{s.relation} {s.iri}" for s in m.shared} == sets[q] & sets[m.paper]


def test_real_slices_explain_a_known_pair(real_store: GraphStore) -> None:
    """ResNet and the DenseNet papers report results on the same ImageNet/CIFAR tables."""
    result = similar(real_store, "https://arxiv.org/abs/1512.03385v1", base_iri=BASE, by="datasets")
    assert result.label and "Residual" in result.label
    assert result.matches, "ResNet shares benchmark datasets with other papers"
    first = result.matches[0]
    assert all(s.relation == "datasets" for s in first.shared)
    labels = {s.label for s in first.shared}
    assert labels & {"ImageNet", "CIFAR-10", "CIFAR-100"}


def test_incidence_only_and_missing_relation() -> None:
    inc = Incidence.from_pairs(
        {"methods": [(P + "a", IT + "m")], "tasks": [(P + "a", IT + "t"), (P + "b", IT + "t")]}
    )
    tasks = inc.only(["tasks"])
    assert tasks.items == [IT + "t"] and tasks.relations == ("tasks",)
    assert tasks.matrix.toarray().tolist() == [[1.0], [1.0]]
    with pytest.raises(UsageError, match="relation 'authors' was not loaded"):
        inc.only(["authors"])


@pytest.mark.parametrize("first", ["a", "missing"])
def test_a_paper_row_is_the_same_by_scan_and_by_map(first: str) -> None:
    """The first lookup scans the list, later ones build a map: both give the same rows."""
    inc = Incidence.from_pairs({"methods": [(P + x, IT + "m") for x in "cab"]})
    asked = [first, "a", "b", "c", "missing", first]
    rows = [inc.row(P + x) for x in asked]
    assert inc._paper_rows is not None  # the map was built after the first lookup
    want = {P + x: i for i, x in enumerate(sorted("abc"))}
    assert rows == [want.get(P + x) for x in asked]


def test_paper_without_items_has_no_matches(seed_store: GraphStore) -> None:
    result = similar(seed_store, A_SLUG, base_iri=BASE, by="datasets")
    assert result.item_count == 0 and result.matches == []
