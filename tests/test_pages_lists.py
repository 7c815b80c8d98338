"""The pages' lists from the matrix kept beside the store (kg.graph.lists): an item's papers
newest first and its counted lists (a task's methods, an author's co-authors and tasks, an
area's tasks, a collection's methods).

The library is compared with the same lists computed with rdflib over the store's quads (the
paths of kg.graph.relations walked by hand, the order and the labels as the pages' SPARQL
defines them), for every item of the generated dumps and the seeds; the served pages with
the pages of a memory copy of the store, whose lists come from the SPARQL queries. A write
to the store makes the kept matrix stale: the pages then answer from SPARQL, with the new
paper counted.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib
from starlette.testclient import TestClient

from kg.graph import cache, lists
from kg.rdf.store import GraphStore
from kg.testing.dumps import write_archive
from tests.query_data import build
from tests.serve_support import BASE, client_for, memory_store

KG = "https://w3id.org/kg/ontology#"
DC = "http://purl.org/dc/terms/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
NAME = "http://xmlns.com/foaf/0.1/name"
HTML = {"Accept": "text/html"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> list[Path]:
    dumps = write_archive(tmp_path_factory.mktemp("lists-dumps"), scale=0.0005, seed=7)
    return [*seed_paths, *dumps.values()]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory, inputs: list[Path]) -> Path:
    """A disk store with its matrix kept beside it (as the first similarity lookup keeps it)."""
    path = tmp_path_factory.mktemp("lists") / "store"
    with GraphStore.open(path) as store:
        build(store, [str(p) for p in inputs])
    with GraphStore.open(path, read_only=True) as store:
        cache.incidence(store)
    return path


class Facts:
    """The store's statements (every graph), walked in plain Python."""

    def __init__(self, path: Path) -> None:
        with GraphStore.open(path, read_only=True) as store:
            text = "".join(store.quads_nquads())
        data = rdflib.Dataset()
        data.parse(data=text, format="nquads")
        self.out: dict[str, dict[str, set[rdflib.term.Node]]] = defaultdict(
            lambda: defaultdict(set)
        )
        for s, p, o, _ in data.quads((None, None, None, None)):
            self.out[str(s)][str(p)].add(o)

    def objects(self, s: str, p: str) -> set[rdflib.term.Node]:
        return self.out.get(s, {}).get(p, set())

    def papers(self, relation: str) -> dict[str, set[str]]:
        """item -> its papers, through every path of the relation."""
        by: dict[str, set[str]] = defaultdict(set)
        for s, props in self.out.items():
            reached: set[rdflib.term.Node] = set()
            if relation == "tasks":
                reached |= props.get(KG + "hasTask", set())
                for r in props.get(KG + "hasResult", set()):
                    reached |= self.objects(str(r), KG + "onTask")
            elif relation == "methods":
                reached |= props.get(KG + "usesMethod", set()) | props.get(
                    KG + "introducesMethod", set()
                )
            elif relation == "authors":
                reached |= props.get(DC + "creator", set())
            elif relation == "datasets":
                reached |= props.get(KG + "introducesDataset", set())
                for r in props.get(KG + "hasResult", set()):
                    reached |= self.objects(str(r), KG + "onDataset")
            for item in reached:
                if isinstance(item, rdflib.URIRef):
                    by[str(item)].add(s)
        return by

    def least(self, s: str, p: str) -> str | None:
        values = [str(o) for o in self.objects(s, p)]
        return min(values) if values else None

    def newest_first(self, papers: set[str]) -> list[tuple[str, str | None, str | None]]:
        rows = [(p, self.least(p, DC + "title"), self.least(p, DC + "issued")) for p in papers]
        rows.sort(key=lambda r: (r[1] is not None, r[1] or "", r[0]))
        rows.sort(key=lambda r: r[2] or "", reverse=True)  # no date: last
        return rows

    def label(self, s: str, props: tuple[str, ...]) -> str | None:
        for p in props:
            found = self.least(s, p)
            if found is not None:
                return found
        return None


@pytest.fixture(scope="module")
def facts(store_path: Path) -> Facts:
    return Facts(store_path)


def test_the_path_walk_here_is_the_relations_path(store_path: Path, facts: Facts) -> None:
    """The hand walk above reads the same papers as kg.graph.relations' paths (else the
    comparisons below would compare with the wrong lists)."""
    from kg.graph.incidence import relation_pairs

    with GraphStore.open(store_path, read_only=True) as store:
        for relation in ("tasks", "methods", "authors", "datasets"):
            pairs: dict[str, set[str]] = defaultdict(set)
            for paper, item in relation_pairs(store, relation):
                pairs[item].add(paper)
            assert pairs == facts.papers(relation), relation


@pytest.mark.parametrize("relation", ["tasks", "methods", "authors", "datasets"])
def test_every_items_papers_newest_first_as_walked_by_hand(
    store_path: Path, facts: Facts, relation: str
) -> None:
    by = facts.papers(relation)
    assert by
    with GraphStore.open(store_path, read_only=True) as store:
        for item, papers in by.items():
            want = facts.newest_first(papers)
            for offset in (0, 50) if len(want) > 50 else (0,):
                got = lists.item_papers(store, relation, item, offset, 50)
                assert got is not None
                assert got["total"] == len(papers), item
                rows = [(p["paper"], p["title"], p["date"]) for p in got["papers"]]
                assert rows == want[offset : offset + 50], item
        nothing = lists.item_papers(store, relation, BASE + "method/no-such-thing", 0, 50)
        assert nothing == {"total": 0, "papers": []}


@pytest.mark.parametrize(
    ("relation", "other", "labels"),
    [
        ("tasks", "methods", (LABEL,)),
        ("authors", "authors", (NAME, LABEL)),
        ("authors", "tasks", (LABEL,)),
    ],
)
def test_counted_lists_as_counted_by_hand(
    store_path: Path, facts: Facts, relation: str, other: str, labels: tuple[str, ...]
) -> None:
    own, theirs = facts.papers(relation), facts.papers(other)
    with GraphStore.open(store_path, read_only=True) as store:
        for item, papers in own.items():
            counts = {o: len(papers & ps) for o, ps in theirs.items() if o != item}
            ranked = sorted(
                ((o, facts.label(o, labels), n) for o, n in counts.items() if n),
                key=lambda r: (-r[2], r[1] is not None, r[1] or "", r[0]),
            )
            got = lists.shared_items(
                store, relation, item, other, 25, tuple(f"<{p}>" for p in labels)
            )
            assert got is not None
            assert [(r["item"], r["label"], r["n"]) for r in got["items"]] == ranked[:25], item


def _section(html: str, name: str) -> str:
    start = html.find(f'<section id="{name}"')
    return html[start : html.index("</section>", start)] if start >= 0 else ""


def _copy(store_path: Path, to: Path) -> Path:
    """A copy of the store and its kept matrix (the same key: copytree keeps the files' times),
    without the order, which the served pages then make."""
    shutil.copytree(store_path, to, ignore=shutil.ignore_patterns("order-v*.npy"))
    return to


def _order_file(path: Path) -> Path:
    with GraphStore.open(path, read_only=True) as store:
        directory = cache.cache_directory(store, cache.content_key(store))
    assert directory is not None
    return directory / f"order-v{cache.ORDER_VERSION}.npy"


@pytest.fixture(scope="module")
def served_path(store_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = _copy(store_path, tmp_path_factory.mktemp("lists-served") / "store")
    assert (_order_file(path).parent / "incidence.npz").is_file()
    assert not _order_file(path).exists()
    return path


@pytest.fixture(scope="module")
def both(served_path: Path, inputs: list[Path]) -> Iterator[tuple[TestClient, TestClient]]:
    """The disk store (lists from the kept matrix) and a memory copy (lists by SPARQL)."""
    with (
        GraphStore.open(served_path, read_only=True) as disk,
        client_for(disk, workers=1) as kept,
        client_for(memory_store(inputs), workers=1) as sparql,
    ):
        yield kept, sparql


def test_pages_show_the_same_lists_as_the_sparql(
    both: tuple[TestClient, TestClient], served_path: Path, facts: Facts
) -> None:
    kept, sparql = both
    busiest = {
        kind: sorted(facts.papers(relation).items(), key=lambda kv: (-len(kv[1]), kv[0]))[:3]
        for kind, relation in (("task", "tasks"), ("method", "methods"), ("author", "authors"))
    }
    for items in busiest.values():
        for item, _ in items:
            path = "/" + item[len(BASE) :]
            pages = [c.get(path, headers=HTML).text for c in (kept, sparql)]
            for section in ("papers", "methods", "coauthors", "tasks"):
                assert _section(pages[0], section) == _section(pages[1], section), (path, section)
            assert _section(pages[0], "papers")
            if len(items[0][1]) > 50:
                later = [c.get(path + "?page=1", headers=HTML).text for c in (kept, sparql)]
                assert _section(later[0], "papers") == _section(later[1], "papers")
    with GraphStore.open(served_path, read_only=True) as store:
        groups = sorted(
            iri
            for cls in ("Area", "Collection")
            for (iri,) in store.select_values(f"SELECT ?x WHERE {{ ?x a <{KG}{cls}> }}")
            if iri
        )
    assert any("/area/" in g for g in groups) and any("/collection/" in g for g in groups)
    for iri in groups:
        path = "/" + iri[len(BASE) :]
        pages = [c.get(path, headers=HTML).text for c in (kept, sparql)]
        for section in ("tasks", "methods", "collections"):
            assert _section(pages[0], section) == _section(pages[1], section), (path, section)
    assert _order_file(served_path).is_file()  # the pages' lists came from the kept matrix


def test_a_write_makes_the_kept_lists_stale(store_path: Path, facts: Facts, tmp_path: Path) -> None:
    """A new paper (newest of all) of the busiest method and author: their pages count and
    list it first at once (the matrix is keyed to the store's files, so the pages answer
    from SPARQL until it is read again), and the named query page kept for the old store
    version is made again."""
    path = _copy(store_path, tmp_path / "store")
    method = max(facts.papers("methods").items(), key=lambda kv: (len(kv[1]), kv[0]))
    author = max(facts.papers("authors").items(), key=lambda kv: (len(kv[1]), kv[0]))
    paper = BASE + "paper/written-after-the-matrix"
    update = (
        f"INSERT DATA {{ GRAPH <{BASE}graph/record/paper/new> {{ <{paper}> a <{KG}Paper> ; "
        f'<{DC}title> "Written after the matrix" ; '
        f'<{DC}issued> "2999-01-01"^^<http://www.w3.org/2001/XMLSchema#date> ; '
        f"<{KG}usesMethod> <{method[0]}> ; <{DC}creator> <{author[0]}> }} }}"
    )
    auth = {"Authorization": "Bearer t", "Content-Type": "application/sparql-update"}
    named = "/queries/papers-by-author?author=" + author[0][len(BASE) :]
    with (
        GraphStore.open(path, read_only=True) as disk,
        client_for(disk, workers=1, allow_update=True, update_token="t") as c,
    ):
        method_path, author_path = "/" + method[0][len(BASE) :], "/" + author[0][len(BASE) :]
        before = c.get(method_path, headers=HTML).text
        assert f"Papers ({len(method[1])})" in before
        assert "Written after the matrix" not in c.get(named, headers=HTML).text
        assert c.post("/update", content=update, headers=auth).status_code == 204
        for where, papers in ((method_path, method[1]), (author_path, author[1])):
            papers_section = _section(c.get(where, headers=HTML).text, "papers")
            assert f"Papers ({len(papers) + 1})" in papers_section
            first = papers_section.index('href="/paper/')
            assert papers_section[first:].startswith('href="/paper/written-after-the-matrix"')
        assert "Written after the matrix" in c.get(named, headers=HTML).text


def test_an_areas_tasks_counted_as_by_hand(store_path: Path, facts: Facts) -> None:
    """Every task of each area (with none: 0), by its papers through every path."""
    papers = facts.papers("tasks")
    areas = {str(a) for props in facts.out.values() for a in props.get(KG + "area", set())}
    assert areas
    with GraphStore.open(store_path, read_only=True) as store:
        for area in sorted(areas):
            tasks = [
                s
                for s, props in facts.out.items()
                if rdflib.URIRef(area) in props.get(KG + "area", set())
                and rdflib.URIRef(KG + "Task") in props.get(str(rdflib.RDF.type), set())
            ]
            want = sorted(
                ((t, facts.label(t, (LABEL,)), len(papers.get(t, set()))) for t in tasks),
                key=lambda r: (-r[2], r[1] is not None, r[1] or "", r[0]),
            )
            items = (
                f"SELECT ?item (MIN(?l) AS ?label) WHERE {{ ?item <{KG}area> <{area}> ; "
                f"a <{KG}Task> . OPTIONAL {{ ?item <{LABEL}> ?l }} }} GROUP BY ?item"
            )
            got = lists.counted_items(store, "tasks", items, 500)
            assert got is not None
            assert [(r["item"], r["label"], r["n"]) for r in got["items"]] == want, area
