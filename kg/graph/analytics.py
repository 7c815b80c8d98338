"""Graph analytics on the projections: components, Louvain communities, PageRank.

The functions take any NetworkX graph and pass `backend=` through to NetworkX's dispatcher,
so a user with a dispatch backend installed (graphblas-algorithms: `backend="graphblas"`,
nx-cugraph: `backend="cugraph"`) runs the same analytics there (docs/similarity.md).
Communities are named by the methods or tasks most characteristic of their papers: the
ones whose share among the community's papers most exceeds their share among all papers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from kg.errors import UsageError
from kg.graph.incidence import Incidence


def _dispatch(backend: str | None) -> dict[str, Any]:
    return {} if backend is None else {"backend": backend}


def _run(name: str, backend: str | None, call: Any) -> Any:
    try:
        return call()
    except ImportError as exc:
        raise UsageError(
            f"NetworkX backend {backend!r} is not installed ({exc}); install it "
            "(pip install graphblas-algorithms, or nx-cugraph-cu12 for GPUs) or drop "
            "{parameter}",
            parameter="backend",
        ) from None
    except NotImplementedError as exc:
        raise UsageError(
            f"backend {backend!r} has no {name} ({exc}); drop {{parameter}} and let NetworkX "
            f"dispatch instead: NETWORKX_BACKEND_PRIORITY={backend} NETWORKX_FALLBACK_TO_NX=1 "
            "runs what the backend has there and the rest in NetworkX",
            parameter="backend",
        ) from None


def _ordered(groups: Iterable[Iterable[Any]]) -> list[list[Any]]:
    """Groups as sorted lists, largest first, ties by their first member: deterministic."""
    out = [sorted(g) for g in groups]
    out.sort(key=lambda g: (-len(g), g[0] if g else ""))
    return out


def components(graph: nx.Graph, *, backend: str | None = None) -> list[list[Any]]:
    """Connected components, largest first."""
    return _ordered(
        _run(
            "connected_components",
            backend,
            lambda: list(nx.connected_components(graph, **_dispatch(backend))),
        )
    )


def communities(
    graph: nx.Graph,
    *,
    seed: int = 0,
    resolution: float = 1.0,
    weight: str = "weight",
    backend: str | None = None,
) -> list[list[Any]]:
    """Louvain communities (networkx), largest first; the same seed gives the same split."""
    if graph.number_of_nodes() == 0:
        return []
    found = _run(
        "louvain_communities",
        backend,
        lambda: nx.community.louvain_communities(
            graph, weight=weight, resolution=resolution, seed=seed, **_dispatch(backend)
        ),
    )
    return _ordered(found)


def pagerank(
    graph: nx.Graph, *, alpha: float = 0.85, weight: str = "weight", backend: str | None = None
) -> dict[Any, float]:
    """PageRank of every node (weighted when edges carry `weight`)."""
    if graph.number_of_nodes() == 0:
        return {}
    result: dict[Any, float] = _run(
        "pagerank",
        backend,
        lambda: nx.pagerank(graph, alpha=alpha, weight=weight, **_dispatch(backend)),
    )
    return result


# --- naming communities -------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """An item that characterises a community."""

    iri: str
    relation: str
    inside: int  # papers of the community that have it
    overall: int  # papers that have it
    lift: float  # (inside / community papers) / (overall / all papers)


@dataclass
class Community:
    rank: int
    members: list[Any]
    papers: int  # papers behind the members (themselves, or the papers of the items)
    terms: list[Term] = field(default_factory=list)
    central: list[Any] = field(default_factory=list)  # members by PageRank, highest first


def member_papers(graph: nx.Graph, members: Iterable[Any], inc: Incidence) -> np.ndarray:
    """Rows of `inc` behind community members: paper nodes themselves; for item nodes, the
    papers that have them."""
    rows: set[int] = set()
    postings = inc.transposed
    for node in members:
        if graph.nodes[node].get("type") == "Paper":
            row = inc.row(node)
            if row is not None:
                rows.add(row)
            continue
        column = inc.column(node)
        if column is not None:
            start, end = postings.indptr[column], postings.indptr[column + 1]
            rows.update(postings.indices[start:end].tolist())
    return np.array(sorted(rows), dtype=np.int64)


def characteristic(
    inc: Incidence, rows: np.ndarray, *, top: int = 3, min_share: float = 0.1
) -> list[Term]:
    """The items with the highest lift among `rows`' papers.

    An item counts only if at least max(2, `min_share` of the papers) have it (capped at
    the community's size), so that one paper's rare item cannot name a community.
    """
    if len(rows) == 0:
        return []
    n_all = max(1, int((inc.paper_items > 0).sum()))
    inside = np.asarray(inc.matrix[rows].sum(axis=0)).ravel()
    support = min(len(rows), max(2, math.ceil(min_share * len(rows))))
    candidates = np.flatnonzero(inside >= support)
    if len(candidates) == 0:
        return []
    overall = inc.item_papers[candidates].astype(np.float64)
    lift = (inside[candidates] / len(rows)) / (overall / n_all)
    order = sorted(
        range(len(candidates)),
        key=lambda i: (
            -round(float(lift[i]), 9),
            -int(inside[candidates[i]]),
            inc.items[int(candidates[i])],
        ),
    )[:top]
    return [
        Term(
            inc.items[int(candidates[i])],
            inc.relation_of(int(candidates[i])),
            int(inside[candidates[i]]),
            int(overall[i]),
            round(float(lift[i]), 4),
        )
        for i in order
    ]


def describe(
    graph: nx.Graph,
    groups: list[list[Any]],
    naming: Incidence,
    members_of: Incidence,
    *,
    top: int = 10,
    terms: int = 3,
    central: int = 5,
    ranks: Mapping[Any, float] | None = None,
) -> list[Community]:
    """The `top` largest communities with their characteristic terms and central members.

    `naming` holds the relations that name communities (methods, tasks); `members_of` maps
    item members to their papers (the incidence the graph was projected from).
    """
    out: list[Community] = []
    for rank, members in enumerate(groups[:top], start=1):
        rows = member_papers(graph, members, members_of)
        papers = len(rows)
        if naming is not members_of:
            rows = np.array(
                sorted(
                    r
                    for r in (naming.row(members_of.papers[i]) for i in rows.tolist())
                    if r is not None
                ),
                dtype=np.int64,
            )
        by_rank = sorted(members, key=lambda m: (-(ranks or {}).get(m, 0.0), str(m)))
        out.append(
            Community(
                rank,
                members,
                papers,
                characteristic(naming, rows, top=terms),
                by_rank[:central],
            )
        )
    return out
