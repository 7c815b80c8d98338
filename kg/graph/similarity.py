"""Explained paper similarity: which papers are closest to this one, and why.

Papers are compared by the items they share (methods, repositories, tasks, authors,
datasets; see kg.graph.incidence). Six metrics, all over the same shared items:

* ``idf`` (the default): each item weighs idf², idf = log(1 + (N - n + 0.5) / (n + 0.5)) for
  an item on n of N papers (the always-positive BM25 form), so rarer items weigh more. With
  D the weight of the shared items and a paper's mass the weight of all its items, the score
  of paper p for query paper q is D / (mass(q)^3/4 · mass(p)^1/4): the weighted geometric
  mean of the share of q's weight that p has (weight 3/4) and the share of p's weight that
  q has (weight 1/4). Sharing Adam, Dropout or Softmax, which most papers use, adds almost
  nothing; sharing a rare method, an author or a repository adds a lot; and a paper with
  many items of its own is penalised only mildly (its mass to the power 1/4).
* ``idf-cosine``: the same weights, D / sqrt(mass(q) · mass(p)) (the cosine of the idf
  vectors): the default until blind judgements showed it ranks below ``idf``
  (docs/similarity.md), because it penalises papers with more items as much as it rewards
  what they share.
* ``jaccard``: shared / union.
* ``overlap``: shared / the smaller paper's item count.
* ``cosine``: shared / sqrt(|A| · |B|).
* ``adamic-adar``: the sum over shared items of 1 / log(papers with the item).

Each result carries the shared items that explain it, ranked by their weight in the score.

Ranking is exact without scoring every paper (kg.graph.similarity_index).

Store access and the library's entry points live here (`similar`, `shared`, papers by
name); the metrics are kg.graph.scoring, the index kg.graph.similarity_index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kg.errors import UsageError
from kg.graph.incidence import Incidence, labels, load_incidence
from kg.graph.relations import (
    ALL,
    DEFAULT_BY,
    DEFAULT_METRIC,
    RELATIONS,
    fallback_label,
    relation_names,
)
from kg.graph.scoring import METRICS, bm25_idf, metric_named
from kg.graph.similarity_index import SCORE_DECIMALS, Match, SharedItem, SimilarityIndex
from kg.query.resolve import resolve
from kg.rdf.store import GraphStore

__all__ = [
    "METRICS",
    "Match",
    "SharedItem",
    "SharedRelation",
    "SharedResult",
    "SimilarResult",
    "SimilarityIndex",
    "bm25_idf",
    "metric_named",
    "resolve_paper",
    "shared",
    "similar",
    "with_labels",
]


# --- papers by name -----------------------------------------------------------------------


def resolve_paper(store: GraphStore, ref: str, base_iri: str) -> str:
    """The IRI of the paper `ref` names: a PwC slug or URL, an arXiv id (with or without
    version or `arXiv:`) or URL, a title in any case, or an IRI (kg.query.resolve).

    Raises UnknownNameError (a NotFoundError) with the nearest papers when nothing matches.
    """
    return resolve(store, "paper", ref, base_iri, parameter="paper").iri


# --- the library entry points -------------------------------------------------------------


@dataclass
class SimilarResult:
    paper: str
    label: str | None
    by: tuple[str, ...]
    metric: str
    item_count: int
    matches: list[Match]

    def __repr__(self) -> str:
        title = self.label or fallback_label(self.paper)
        lines = [
            f"SimilarResult({title!r} <{self.paper}>: {self.item_count} items "
            f"({', '.join(self.by)}), metric {self.metric}, {len(self.matches)} matches)"
        ]
        for rank, m in enumerate(self.matches, start=1):
            shared = ", ".join(s.label or fallback_label(s.iri) for s in m.shared[:3])
            more = ", …" if len(m.shared) > 3 else ""
            title = m.label or fallback_label(m.paper)
            lines.append(f"  {rank:>2}. {m.score:.4f}  {title}  ({shared}{more})")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "title": self.label or fallback_label(self.paper),
            "by": list(self.by),
            "metric": self.metric,
            "items": self.item_count,
            "results": [m.as_dict() for m in self.matches],
        }


def with_labels(store: GraphStore | None, matches: Sequence[Match]) -> list[Match]:
    """The matches with paper titles and item labels filled in from the store."""
    names = labels(store, [m.paper for m in matches] + [s.iri for m in matches for s in m.shared])
    return [
        Match(
            m.paper,
            m.score,
            tuple(
                SharedItem(s.iri, s.relation, s.papers, s.weight, names[s.iri]) for s in m.shared
            ),
            names[m.paper],
        )
        for m in matches
    ]


def similar(
    store: GraphStore,
    paper: str,
    *,
    base_iri: str,
    by: str | Sequence[str] = DEFAULT_BY,
    metric: str = DEFAULT_METRIC,
    top: int = 10,
    incidence: Incidence | None = None,
    index: SimilarityIndex | None = None,
) -> SimilarResult:
    """The `top` papers most similar to `paper`, explained.

    Reads the relations from the store unless given an `incidence`, or an `index` of `by`
    and `metric` (`kg.graph.cache.similarity_index` keeps one beside the store).
    """
    chosen = metric_named(metric)
    relations = relation_names(by)
    if top < 1:
        raise UsageError("{parameter} must be at least 1", parameter="top")
    iri = resolve_paper(store, paper, base_iri)
    if index is None:
        inc_ = incidence if incidence is not None else load_incidence(store, relations)
        index = SimilarityIndex(inc_, chosen)
    inc = index.incidence
    row = inc.row(iri)
    matches = [] if row is None else index.top(row, top)
    item_count = 0 if row is None else int(inc.paper_items[row])
    title = labels(store, [iri])[iri]
    return SimilarResult(
        iri, title, relations, chosen.name, item_count, with_labels(store, matches)
    )


# --- what two papers share ----------------------------------------------------------------


@dataclass
class SharedRelation:
    relation: str
    count_a: int
    count_b: int
    items: list[SharedItem]

    @property
    def jaccard(self) -> float:
        union = self.count_a + self.count_b - len(self.items)
        return round(len(self.items) / union, SCORE_DECIMALS) if union else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "a": self.count_a,
            "b": self.count_b,
            "shared": len(self.items),
            "jaccard": self.jaccard,
            "items": [i.as_dict() for i in self.items],
        }


@dataclass
class SharedResult:
    a: str
    b: str
    label_a: str
    label_b: str
    relations: list[SharedRelation]

    def __repr__(self) -> str:
        lines = [f"SharedResult({self.label_a!r} <{self.a}> and {self.label_b!r} <{self.b}>)"]
        for r in self.relations:
            items = ", ".join(i.label or fallback_label(i.iri) for i in r.items[:5])
            more = ", …" if len(r.items) > 5 else ""
            lines.append(
                f"  {r.relation}: {len(r.items)} shared of {r.count_a} and {r.count_b}"
                + (f" ({items}{more})" if items else "")
            )
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": {"paper": self.a, "title": self.label_a},
            "b": {"paper": self.b, "title": self.label_b},
            "relations": [r.as_dict() for r in self.relations],
        }


def _count(store: GraphStore, paper: str, path: str) -> int:
    rows = list(
        store.select_values(
            f"SELECT (COUNT(DISTINCT ?i) AS ?n) WHERE {{ <{paper}> {path} ?i . FILTER(isIRI(?i)) }}"
        )
    )
    return int(rows[0][0] or 0) if rows else 0


def shared(
    store: GraphStore, a: str, b: str, *, base_iri: str, by: str | Sequence[str] = ALL
) -> SharedResult:
    """Everything two papers share, per relation, rarest items first.

    Reads only what concerns the two papers, so it is fast on any store size.
    """
    first, second = resolve_paper(store, a, base_iri), resolve_paper(store, b, base_iri)
    out: list[SharedRelation] = []
    for name in relation_names(by):
        path = RELATIONS[name].path
        query = (
            "SELECT ?i (COUNT(DISTINCT ?other) AS ?n) WHERE { "
            f"{{ SELECT DISTINCT ?i WHERE {{ <{first}> {path} ?i . <{second}> {path} ?i . "
            "FILTER(isIRI(?i)) } } "
            f"?other {path} ?i }} GROUP BY ?i"
        )
        found = [(i, int(n or 0)) for i, n in store.select_values(query) if i is not None]
        found.sort(key=lambda item: (item[1], item[0]))
        items = [SharedItem(i, name, n, 1.0) for i, n in found]
        out.append(
            SharedRelation(name, _count(store, first, path), _count(store, second, path), items)
        )
    names = labels(store, [first, second, *(i.iri for r in out for i in r.items)])
    for rel in out:
        rel.items = [
            SharedItem(i.iri, i.relation, i.papers, i.weight, names[i.iri]) for i in rel.items
        ]
    return SharedResult(first, second, names[first], names[second], out)
