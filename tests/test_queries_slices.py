"""The dump-based named queries on the real Papers-with-Code slices in shared/data/raw.

The store holds the real methods.json.gz (2022) and four whole top-level tasks, with their
subtask trees, cut from the real 2020 evaluation-tables.json.gz. Each expected answer is
computed here straight from the JSON, independently of kg's mapping and of the SPARQL.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from typing import Any

import pytest

from kg.ingest.identity import arxiv_id, pwc_slug, title_key
from kg.ingest.ingestor import ingest
from kg.ingest.values import metric_value
from kg.query.named import bind, find_query, run_local
from kg.rdf.results import SelectResult, compact
from kg.rdf.store import GraphStore
from tests.conftest import RAW_DIR

BASE = "https://w3id.org/kg/id/"
METHODS = RAW_DIR / "pwc-methods-2022" / "methods.json.gz"
TABLES = RAW_DIR / "pwc-evaluation-tables-2020" / "evaluation-tables.json.gz"
ROOTS = ("Zero-Shot Learning", "Speech Recognition", "Machine Translation", "Image Classification")

pytestmark = pytest.mark.skipif(
    not (METHODS.exists() and TABLES.exists()), reason="the raw slices are not in shared/"
)


@pytest.fixture(scope="module")
def tables() -> list[dict[str, Any]]:
    with gzip.open(TABLES, "rt", encoding="utf-8") as f:
        data = json.load(f)
    picked = [t for t in data if t["task"] in ROOTS]
    assert sorted(t["task"] for t in picked) == sorted(ROOTS)
    return picked


@pytest.fixture(scope="module")
def methods() -> list[dict[str, Any]]:
    with gzip.open(METHODS, "rt", encoding="utf-8") as f:
        data: list[dict[str, Any]] = json.load(f)
    return data


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, tables: list[dict[str, Any]]) -> GraphStore:
    path = tmp_path_factory.mktemp("slices") / "evaluation-tables.json"
    path.write_text(json.dumps(tables), encoding="utf-8")
    graph = GraphStore.memory()
    report = ingest(graph, [str(METHODS), str(path)], base_iri=BASE)
    assert report.rejected == 0
    return graph


def rows(store: GraphStore, name: str, **params: str) -> list[tuple[str, ...]]:
    query = find_query(name)
    result = run_local(store, query, bind(query, params, BASE))
    assert isinstance(result, SelectResult)
    return [tuple(compact(t, {"": BASE}) for t in row) for row in result.rows]


def walk(task: dict[str, Any], ancestors: tuple[dict[str, Any], ...] = ()) -> Any:
    """(task, its ancestors from the root) for every named task of a tree."""
    if task.get("task"):
        yield task, ancestors
        ancestors = (*ancestors, task)
    for sub in task.get("subtasks", []):
        yield from walk(sub, ancestors)


def slug(name: str) -> str:
    return pwc_slug(name) or name.strip()


def test_methods_per_year_follows_the_documented_rule(methods: list[dict[str, Any]]) -> None:
    """On the methods dump alone (its papers carry no dates): the introducing paper's arXiv
    year, known when some method's source is that paper on arXiv, else the stated year
    unless it is the 2000 placeholder."""
    store = GraphStore.memory()
    assert ingest(store, [str(METHODS)], base_iri=BASE).rejected == 0
    # A paper's arXiv id, from any method whose source is that paper on arXiv.
    paper_arxiv: dict[str, set[str]] = defaultdict(set)
    for method in methods:
        paper, source = method.get("paper"), method.get("source_url")
        titles = (paper or {}).get("title"), method.get("source_title")
        if (
            source
            and titles[0]
            and titles[1]
            and title_key(titles[0], None) == title_key(titles[1], None)
        ):
            arxiv = arxiv_id(source)
            if arxiv:
                paper_arxiv[paper["url"]].add(arxiv)  # type: ignore[index]
    per_year: dict[int, int] = defaultdict(int)
    for method in methods:
        candidates = []
        for arxiv in paper_arxiv.get((method.get("paper") or {}).get("url", ""), ()):
            if "/" not in arxiv:
                candidates.append(2000 + int(arxiv[:2]))
            else:
                yy = int(arxiv.split("/")[1][:2])
                candidates.append((1900 if yy > 90 else 2000) + yy)
        if method.get("introduced_year") not in (None, 2000):
            candidates.append(method["introduced_year"])
        if candidates:
            per_year[min(candidates)] += 1
    expected = [(str(year), str(n)) for year, n in sorted(per_year.items())]
    assert rows(store, "methods-per-year") == expected
    assert sum(per_year.values()) > 1000  # most years come from arXiv ids, not the dump


def test_tasks_per_area_counts_subtasks_under_their_ancestors_areas(
    store: GraphStore, tables: list[dict[str, Any]]
) -> None:
    areas: dict[str, set[str]] = defaultdict(set)
    labels: dict[str, str] = {}
    for root in tables:
        for task, ancestors in walk(root):
            for holder in (task, *ancestors):
                for category in holder.get("categories") or []:
                    areas[slug(category)].add(slug(task["task"]))
                    labels[slug(category)] = category
    expected = sorted(
        ((f":area/{a}", labels[a], str(len(t))) for a, t in areas.items()),
        key=lambda r: (-int(r[2]), r[1], r[0]),
    )
    assert rows(store, "tasks-per-area") == expected
    assert rows(store, "tasks-per-area", area="Speech") == [
        r for r in expected if r[0] == ":area/speech"
    ]


def test_task_tree_lists_every_subtask_with_its_depth_and_parents(
    store: GraphStore, tables: list[dict[str, Any]]
) -> None:
    root_name = "Zero-Shot Learning"
    root = next(t for t in tables if t["task"] == root_name)
    parents: dict[str, set[str]] = defaultdict(set)
    names: dict[str, set[str]] = defaultdict(set)
    for task, ancestors in walk(root):
        names[slug(task["task"])].add(task["task"])
        if ancestors:
            parents[slug(task["task"])].add(slug(ancestors[-1]["task"]))

    def above(node: str) -> set[str]:  # every task of this tree above the node
        out: set[str] = set()
        for parent in parents.get(node, ()):
            out |= {parent} | above(parent)
        return out

    expected = []
    for node in list(parents):
        parent_labels = " | ".join(sorted(min(names[p]) for p in parents[node]))
        expected.append(
            (
                f":task/{slug(root_name)}",
                f":task/{node}",
                min(names[node]),
                str(len(above(node))),
                parent_labels,
            )
        )
    expected.sort(key=lambda r: (int(r[3]), r[2], r[1]))
    got = [
        (*r[:4], " | ".join(sorted(r[4].split(" | "))))
        for r in rows(store, "task-tree", task="zero-shot-learning")
    ]
    assert got == expected
    assert max(int(r[3]) for r in got) == 4


def test_leaderboard_ranks_a_real_table_numerically(
    store: GraphStore, tables: list[dict[str, Any]]
) -> None:
    """ImageNet top-1 in the 2020 dump: values such as "88.5%" rank by their number. Model
    names are compared as kg states them: trimmed, inner whitespace runs one space."""
    found: set[tuple[str, str]] = set()
    for root in tables:
        for task, _ in walk(root):
            if task["task"] != "Image Classification":
                continue
            for dataset in task.get("datasets", []):
                if dataset["dataset"] == "ImageNet":
                    for row in dataset["sota"]["rows"]:
                        value = row["metrics"].get("Top 1 Accuracy")
                        if value is not None:
                            found.add((" ".join(row["model_name"].split()), value))
    got = rows(
        store,
        "leaderboard",
        task="image-classification",
        dataset="imagenet",
        metric="top 1 accuracy",
    )
    # columns: rank, model, value (as published), date, paper, title
    assert sorted((r[1], r[2]) for r in got) == sorted(found)
    numbers = [metric_value(r[2]).number for r in got]
    parsed = [float(n) for n in numbers if n is not None]
    assert parsed == sorted(parsed, reverse=True) and len(parsed) > 150
    assert numbers[len(parsed) :] == [None] * (len(numbers) - len(parsed))  # unparsed last
    assert got[0][:3] == ("1", "FixEfficientNet-L2", "88.5%")
    assert [r[0] for r in got[: len(parsed)]] == [  # equal values share a rank
        str(1 + sum(1 for q in parsed if q > n)) for n in parsed
    ]


def test_provenance_of_a_real_method_names_its_dump(store: GraphStore) -> None:
    got = rows(store, "provenance", entity="method/adam")
    assert got[0] == (":method/adam", ":graph/entities", "subject", "", "", "", "", "")
    entry = got[1]
    assert entry[:8][:7] == (
        ":method/adam",
        ":graph/pwc-methods/adam",
        "object | subject",
        ":dump/methods/2022-05-20",
        "methods.json.gz",
        "Papers with Code",
        "2022-05-20",
    )
    assert len(got) == 2
