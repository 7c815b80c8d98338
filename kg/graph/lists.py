"""The pages' lists from the matrix kept beside the store: an item's papers, newest first,
and the items its papers share (a task's methods, an author's co-authors and tasks).

In SPARQL, the first page of a popular item's papers joins every one of them with its title
and date before sorting: the archive-scale generator's busiest method (28,051 papers)
costs 1.8 s of CPU for 50 of them, a method with 8,329 papers 0.6 s, and counting a task's
methods through its 14,916 papers 1 s. The incidence matrix (kg.graph.cache, kept for
`kg similar`) already holds every item's papers through every path of its relation
(kg.graph.relations), so a list is a slice of it:

* `item_papers`: the count and a page of an item's papers, in the order of the pages' SPARQL
  (`ORDER BY DESC(?date) ?title ?paper`, of each paper's least date and title). That order
  is made once per version of the store, from two scans (every date, every title: 1.5 s
  of CPU at that scale), and kept beside the store (`order-v1.npy`); a page then sorts its
  item's papers by their places and asks the titles and dates of the 50 it shows.
* `shared_items`: the items of another relation on an item's papers, each with how many of
  them it is on (`COUNT(DISTINCT ?paper)`), most first, then by label: a product of two
  slices of the matrix, and one query for the labels of the candidates.

Both answer None, and the page runs its SPARQL, when the matrix is not kept (a fresh store:
reading every link takes minutes at archive size, which no page waits for; the first paper
page's similarity lookup keeps it), and `item_papers` also when a date or title is not of a
kind Python orders as SPARQL does (an xsd:date written YYYY-MM-DD; a plain string).
tests/test_pages_lists.py compares both with the SPARQL they replace.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kg.graph import cache
from kg.graph.incidence import Incidence
from kg.graph.relations import RELATIONS
from kg.rdf.store import GraphStore
from kg.rdf.vocab import STD, XSD

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATES = f"SELECT ?paper ?d (DATATYPE(?d) AS ?t) WHERE {{ ?paper {STD.issued} ?d }}"
_TITLES = (
    f"SELECT ?paper ?v (DATATYPE(?v) AS ?t) (LANG(?v) AS ?l) WHERE {{ ?paper {STD.title} ?v }}"
)
_BATCH = 500


def _order_of(store: GraphStore) -> Callable[[Incidence], np.ndarray | None]:
    """How to make each row's place in `ORDER BY DESC(?date) ?title ?paper` (unbound dates
    last, unbound titles first, rows already in IRI order); None when Python cannot order
    a value as SPARQL does."""

    def make(inc: Incidence) -> np.ndarray | None:
        rows = {paper: i for i, paper in enumerate(inc.papers)}
        n = len(rows)
        dates: list[str | None] = [None] * n
        titles: list[str | None] = [None] * n
        for paper, value, datatype in store.select_values(_DATES):
            i = rows.get(paper or "")
            if i is None or value is None:
                continue
            if datatype != XSD.date or not _DATE.fullmatch(value):
                return None
            known = dates[i]
            if known is None or value < known:
                dates[i] = value
        for paper, value, datatype, lang in store.select_values(_TITLES):
            i = rows.get(paper or "")
            if i is None or value is None:
                continue
            if lang or datatype != XSD.string:
                return None
            known = titles[i]
            if known is None or value < known:
                titles[i] = value
        order = sorted(range(n), key=lambda i: (titles[i] is not None, titles[i] or ""))
        order.sort(key=lambda i: dates[i] or "", reverse=True)  # stable: ties keep titles'
        place = np.empty(n, dtype=np.int64)
        place[np.asarray(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
        return place

    return make


def _span(inc: Incidence, relation: str) -> tuple[int, int] | None:
    """The columns of a relation (columns are grouped by relation, each sorted by IRI)."""
    if relation not in inc.relations:
        return None
    # the key in the array's own dtype: a Python int makes numpy cast the whole array first
    # (0.15 ms a lookup at the archive's 745,000 columns; an area's page looks up hundreds)
    r = inc.item_relation.dtype.type(inc.relations.index(relation))
    lo = int(np.searchsorted(inc.item_relation, r, side="left"))
    hi = int(np.searchsorted(inc.item_relation, r, side="right"))
    return lo, hi


def _column(inc: Incidence, relation: str, item: str) -> int | None:
    span = _span(inc, relation)
    if span is None:
        return None
    i = bisect_left(inc.items, item, *span)
    return i if i < span[1] and inc.items[i] == item else None


def _papers_of(inc: Incidence, relation: str, item: str) -> np.ndarray:
    """The rows of the item's papers (none if it has no column)."""
    column = _column(inc, relation, item)
    if column is None:
        return np.zeros(0, dtype=np.int64)
    t = inc.transposed
    return np.asarray(t.indices[t.indptr[column] : t.indptr[column + 1]], dtype=np.int64)


def _values(iris: Sequence[str]) -> str:
    return " ".join(f"<{iri}>" for iri in iris)


def prepare(store: GraphStore) -> bool:
    """Make (or load) the lists' order now, so that no page waits for it (a server's
    warm-up, once the matrix is kept: `cache.similarity_index` keeps it); whether the lists
    can be drawn from the matrix."""
    loaded = cache.kept(store)
    return loaded is not None and cache.keep_order(store, loaded, _order_of(store)) is not None


def item_papers(
    store: GraphStore, relation: str, item: str, offset: int, limit: int
) -> dict[str, Any] | None:
    """How many papers reach `item` through `relation`'s path, and `limit` of them from
    `offset`, newest first, each with its least title and date (or None)."""
    loaded = cache.kept(store)
    if loaded is None or relation not in RELATIONS:
        return None
    place = cache.keep_order(store, loaded, _order_of(store))
    if place is None:
        return None
    inc = loaded.full
    rows = _papers_of(inc, relation, item)
    keys = place[rows]
    wanted = min(len(rows), offset + limit)
    if wanted < len(rows):
        first = np.argpartition(keys, wanted - 1)[:wanted] if wanted else rows[:0]
        chosen = first[np.argsort(keys[first])]
    else:
        chosen = np.argsort(keys)
    papers = [inc.papers[i] for i in rows[chosen[offset:]].tolist()]
    found: dict[str, tuple[str | None, str | None]] = {}
    if papers:
        query = (
            f"SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) WHERE {{ "
            f"VALUES ?paper {{ {_values(papers)} }} OPTIONAL {{ ?paper {STD.title} ?t }} "
            f"OPTIONAL {{ ?paper {STD.issued} ?d }} }} GROUP BY ?paper"
        )
        for paper, title, date in store.select_values(query):
            found[paper or ""] = (title, date)
    return {
        "total": len(rows),
        "papers": [
            {"paper": p, "title": title, "date": date}
            for p in papers
            for title, date in [found.get(p, (None, None))]
        ],
    }


def shared_items(
    store: GraphStore,
    relation: str,
    item: str,
    other: str,
    top: int,
    labels: Sequence[str] = (STD.label,),
) -> dict[str, Any] | None:
    """The items of `other` on `item`'s papers (not `item` itself), each with how many of
    those papers it is on, most first, then by label (unlabelled first), then IRI; `top`
    of them. An item's label is the least value of the first of `labels` (properties in
    N-Triples form) it has, as chained SPARQL OPTIONALs binding one variable give."""
    loaded = cache.kept(store)
    if loaded is None or relation not in RELATIONS or other not in RELATIONS:
        return None
    inc = loaded.full
    span = _span(inc, other)
    rows = _papers_of(inc, relation, item)
    if span is None or not len(rows) or top <= 0:
        return {"items": []}
    lo, hi = span
    sub = inc.matrix[rows]
    columns = sub.indices[(sub.indices >= lo) & (sub.indices < hi)]
    counts = np.bincount(columns - lo, minlength=hi - lo)
    own = _column(inc, other, item)
    if own is not None:
        counts[own - lo] = 0
    present = np.flatnonzero(counts)
    if not len(present):
        return {"items": []}
    by_count = present[np.argsort(-counts[present], kind="stable")]
    cutoff = counts[by_count[min(top, len(by_count)) - 1]]
    candidates = [int(c) for c in by_count if counts[c] >= cutoff]
    iris = [inc.items[lo + c] for c in candidates]
    named = _labels(store, iris, labels)
    ranked = sorted(
        zip(iris, candidates, strict=True),
        key=lambda pair: (
            -int(counts[pair[1]]),
            pair[0] in named,
            named.get(pair[0], ""),
            pair[0],
        ),
    )
    return {
        "items": [
            {"item": iri, "label": named.get(iri), "n": int(counts[c])} for iri, c in ranked[:top]
        ]
    }


def _labels(store: GraphStore, iris: Sequence[str], properties: Sequence[str]) -> dict[str, str]:
    """Each IRI's least value of the first of `properties` it has."""
    best: dict[str, tuple[int, str]] = {}
    # One pattern per property (a VALUES of properties makes Oxigraph scan every triple).
    union = " UNION ".join(
        f"{{ ?x {p} ?l BIND({rank} AS ?r) }}" for rank, p in enumerate(properties)
    )
    for start in range(0, len(iris), _BATCH):
        query = (
            f"SELECT ?x ?r ?l WHERE {{ VALUES ?x {{ {_values(iris[start : start + _BATCH])} }} "
            f"{union} }}"
        )
        for x, r, label in store.select_values(query):
            if x is None or r is None or label is None:
                continue
            rank = int(r)
            known = best.get(x)
            if known is None or (rank, label) < known:
                best[x] = (rank, label)
    return {x: label for x, (_, label) in best.items()}


def counted_items(store: GraphStore, relation: str, items: str, top: int) -> dict[str, Any] | None:
    """The items a query gives (`items`: a SELECT of ?item and its ?label, kg's own), each with
    how many papers reach it through `relation`'s path (0 for none), most first, then by
    label (unlabelled first), then IRI; `top` of them."""
    loaded = cache.kept(store)
    if loaded is None or relation not in RELATIONS:
        return None
    inc = loaded.full
    t = inc.transposed
    rows: list[tuple[str, str | None, int]] = []
    for item, label in store.select_values(items):
        if item is None:
            continue
        column = _column(inc, relation, item)
        n = 0 if column is None else int(t.indptr[column + 1] - t.indptr[column])
        rows.append((item, label, n))
    rows.sort(key=lambda r: (-r[2], r[1] is not None, r[1] or "", r[0]))
    return {"items": [{"item": i, "label": label, "n": n} for i, label, n in rows[:top]]}
