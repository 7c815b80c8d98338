"""NetworkX graphs drawn from the store: bipartite paper–item graphs and their projections.

Kinds (the `KIND` of `kg project` and `kg communities`):

* bipartite: `paper-method`, `paper-repository`, `paper-task`, `paper-author`,
  `paper-dataset`: papers on one side (`bipartite=0`), items on the other (`bipartite=1`);
* one-mode over papers: `paper-paper`, weighted by the items two papers share (`--by`);
* one-mode over items: `author-author` (co-authorship), `method-method` (co-occurrence),
  `repository-repository` (co-use), `task-task`, `dataset-dataset`, weighted by the
  papers the two items share.

Every node is keyed by its IRI and carries `iri`, `type` (Paper, Method, …) and `label`.
Every projected edge carries `weight`; paper–paper edges over several relations also carry
one count per relation. Projections are sparse matrix products (A·Aᵀ or Aᵀ·A), not
`networkx.bipartite.weighted_projected_graph`: the same graph, orders of magnitude faster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp

from kg.errors import UsageError
from kg.graph.incidence import Incidence, labels, load_incidence
from kg.graph.relations import (
    PAPER_LINKS_BY,
    RELATIONS,
    graph_format,
    projection_kind,
    relation_names,
)
from kg.rdf.store import GraphStore

#: A projection larger than this many candidate pairs is refused before it is computed.
MAX_PAIRS = 50_000_000


def _item_type(inc: Incidence, column: int) -> str:
    return RELATIONS[inc.relation_of(column)].item_type


def _add_paper_nodes(
    graph: nx.Graph, inc: Incidence, rows: Sequence[int], names: Mapping[str, str]
) -> None:
    for r in rows:
        iri = inc.papers[r]
        graph.add_node(iri, iri=iri, type="Paper", label=names.get(iri, iri))


def _add_item_nodes(
    graph: nx.Graph, inc: Incidence, columns: Sequence[int], names: Mapping[str, str]
) -> None:
    for c in columns:
        iri = inc.items[c]
        graph.add_node(iri, iri=iri, type=_item_type(inc, c), label=names.get(iri, iri))


def bipartite_graph(inc: Incidence, names: Mapping[str, str] | None = None) -> nx.Graph:
    """Papers and items, an edge per link. Papers have `bipartite=0`, items `bipartite=1`."""
    names = names or {}
    graph = nx.Graph()
    rows = np.flatnonzero(inc.paper_items > 0)
    columns = np.flatnonzero(inc.item_papers > 0)
    _add_paper_nodes(graph, inc, rows.tolist(), names)
    for node in graph:
        graph.nodes[node]["bipartite"] = 0
    _add_item_nodes(graph, inc, columns.tolist(), names)
    for c in columns.tolist():
        graph.nodes[inc.items[c]]["bipartite"] = 1
    coo = inc.matrix.tocoo()
    papers, items = inc.papers, inc.items
    graph.add_edges_from(
        (papers[r], items[c]) for r, c in zip(coo.row.tolist(), coo.col.tolist(), strict=True)
    )
    return graph


def _without_common(inc: Incidence, max_share: float | None) -> Incidence:
    """The incidence without items linked to more than `max_share` of the papers."""
    if max_share is None:
        return inc
    if not 0 < max_share <= 1:
        raise UsageError(
            "{parameter} is a fraction of the papers, above 0 and at most 1",
            parameter="max_share",
        )
    limit = max_share * max(1, int((inc.paper_items > 0).sum()))
    keep = np.flatnonzero(inc.item_papers <= limit)
    return Incidence(
        inc.papers,
        [inc.items[i] for i in keep.tolist()],
        inc.item_relation[keep],
        inc.relations,
        inc.matrix[:, keep].tocsr(),
    )


def _check_size(pairs: float, what: str) -> None:
    if pairs > MAX_PAIRS:
        raise UsageError(
            f"the {what} projection would weigh up to {int(pairs):,} pairs, more than "
            f"{MAX_PAIRS:,}; leave out ubiquitous items with {{parameter}} (e.g. 0.01), "
            "compare by fewer relations, or rank similar papers instead (which needs no "
            "projection)",
            parameter="max_share",
        )


def paper_graph(
    inc: Incidence,
    names: Mapping[str, str] | None = None,
    *,
    min_weight: int = 1,
    max_share: float | None = None,
) -> nx.Graph:
    """Papers, linked by the number of items they share (`weight`, at least `min_weight`).

    With several relations, each edge also counts the shared items per relation.
    """
    names = names or {}
    inc = _without_common(inc, max_share)
    df = inc.item_papers.astype(np.float64)
    _check_size(float((df * (df - 1) / 2).sum()), "paper-paper")
    a = inc.matrix
    per_relation: dict[str, sp.csr_matrix] = {}
    total: sp.csr_matrix | None = None
    for r_index, relation in enumerate(inc.relations):
        cols = np.flatnonzero(inc.item_relation == r_index)
        part = a[:, cols]
        product = sp.triu(part @ part.T, k=1).tocsr()
        per_relation[relation] = product
        total = product if total is None else (total + product).tocsr()
    graph = nx.Graph()
    _add_paper_nodes(graph, inc, np.flatnonzero(inc.paper_items > 0).tolist(), names)
    if total is None:
        return graph
    coo = total.tocoo()
    keep = coo.data >= min_weight
    rows, cols, weights = coo.row[keep], coo.col[keep], coo.data[keep]
    order = np.lexsort((cols, rows))
    rows, cols, weights = rows[order], cols[order], weights[order]
    papers = inc.papers
    graph.add_edges_from(
        (papers[r], papers[c], {"weight": int(w)})
        for r, c, w in zip(rows.tolist(), cols.tolist(), weights.tolist(), strict=True)
    )
    if len(per_relation) > 1 and len(rows):  # scipy gives one value for empty indexes
        for relation, product in per_relation.items():
            values = np.asarray(product[rows, cols]).ravel()
            for r, c, v in zip(rows.tolist(), cols.tolist(), values.tolist(), strict=True):
                graph.edges[papers[r], papers[c]][relation] = int(v)
    return graph


def item_graph(
    inc: Incidence,
    names: Mapping[str, str] | None = None,
    *,
    min_weight: int = 1,
    max_share: float | None = None,
) -> nx.Graph:
    """Items, linked by the number of papers they share (`weight`, at least `min_weight`)."""
    names = names or {}
    inc = _without_common(inc, max_share)
    n = inc.paper_items.astype(np.float64)
    _check_size(float((n * (n - 1) / 2).sum()), "item-item")
    a = inc.matrix
    product = sp.triu(a.T @ a, k=1).tocoo()
    graph = nx.Graph()
    _add_item_nodes(graph, inc, np.flatnonzero(inc.item_papers > 0).tolist(), names)
    keep = product.data >= min_weight
    rows, cols, weights = product.row[keep], product.col[keep], product.data[keep]
    order = np.lexsort((cols, rows))
    items = inc.items
    graph.add_edges_from(
        (items[r], items[c], {"weight": int(w)})
        for r, c, w in zip(
            rows[order].tolist(), cols[order].tolist(), weights[order].tolist(), strict=True
        )
    )
    return graph


def project(
    store: GraphStore,
    kind: str,
    *,
    by: str | Sequence[str] = PAPER_LINKS_BY,
    min_weight: int = 1,
    max_share: float | None = None,
    incidence: Incidence | None = None,
) -> nx.Graph:
    """The graph of `kind` drawn from the store, with labels on every node."""
    spec = projection_kind(kind)
    if min_weight < 1:
        raise UsageError("{parameter} must be at least 1", parameter="min_weight")
    relations = relation_names(by) if spec.relation is None else (spec.relation,)
    inc = incidence if incidence is not None else load_incidence(store, relations)
    if incidence is not None:
        inc = inc.only(relations)
    if spec.mode == "bipartite":
        graph = bipartite_graph(inc)
    elif spec.mode == "papers":
        graph = paper_graph(inc, min_weight=min_weight, max_share=max_share)
    else:
        graph = item_graph(inc, min_weight=min_weight, max_share=max_share)
    names = labels(store, graph.nodes)
    for node, data in graph.nodes(data=True):
        data["label"] = names[node]
    graph.graph["kind"] = spec.name
    graph.graph["relations"] = " ".join(relations)
    return graph


# --- files --------------------------------------------------------------------------------

def write_graph(graph: nx.Graph, path: Path) -> str:
    """Write GraphML, GEXF or node-link JSON, by the file's extension. Returns the format."""
    fmt = graph_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "graphml":
        nx.write_graphml(graph, path)
    elif fmt == "gexf":
        nx.write_gexf(graph, path)
    else:
        data: dict[str, Any] = nx.node_link_data(graph, edges="edges")
        with path.open("w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, sort_keys=True)
            handle.write("\n")
    return fmt
