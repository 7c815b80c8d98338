"""What a server's worker processes ask of the library for pages and HTTP, as plain JSON
data that crosses a process boundary.

Each function takes a `KnowledgeGraph` (in a worker: the library over the worker's own
snapshot) and plain arguments. Most are a `KnowledgeGraph` method's answer as JSON (what
`kg … --json` prints); the others are what a page needs beyond those: its lists from the
matrix kept beside the store, what a path or a named query's values name, and the warm-up.
The one table of worker operations (kg.mcp.calls.CALLS) names them beside the MCP tools'
answers, which are built on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kg.graph.relations import ALL, DEFAULT_BY, DEFAULT_METRIC
from kg.library.knowledge_graph import KnowledgeGraph

#: What an operation returns: JSON data.
Data = dict[str, Any]
#: How many a ranked answer holds when the caller does not say.
DEFAULT_TOP = 10


def similar(
    graph: KnowledgeGraph, paper: str, by: str = DEFAULT_BY, metric: str = DEFAULT_METRIC,
    top: int = DEFAULT_TOP,
) -> Data:
    """The papers closest to `paper` (`kg similar --json`)."""
    return graph.similar(paper, by=by, metric=metric, top=top).as_dict()


def shared(graph: KnowledgeGraph, a: str, b: str, by: str = ALL) -> Data:
    """What two papers share (`kg shared --json`)."""
    return graph.shared(a, b, by=by).as_dict()


def suggest(
    graph: KnowledgeGraph, paper: str, kind: str | None = None, top: int = DEFAULT_TOP
) -> Data:
    """The links `paper` most likely lacks (`kg suggest --json`); a request trains no large
    store's model (`train=False`: it needs the model trained ahead)."""
    return graph.suggest(paper, kind=kind, top=top, train=False).as_dict()


def search_hits(
    graph: KnowledgeGraph, text: str, type: str | None = None, top: int = DEFAULT_TOP,
    page: int = 1,
) -> Data:
    """One page of full-text hits with the totals (`kg search --json`)."""
    return graph.search(text, type=type, top=top, page=page).as_dict()


def search_ready(graph: KnowledgeGraph) -> Data:
    """Open the search index (a stale or missing one is rebuilt from the store first), so
    that the searches and SPARQL search blocks after it only search."""
    graph.search("kg", top=1)
    return {"search": True}


def item_papers(graph: KnowledgeGraph, **kwargs: Any) -> Data | None:
    """An item's papers, a page of them (kg.graph.lists.item_papers), or None."""
    from kg.graph import lists

    return lists.item_papers(graph.store, **kwargs)


def shared_items(graph: KnowledgeGraph, **kwargs: Any) -> Data | None:
    """The items two things share (kg.graph.lists.shared_items), or None."""
    from kg.graph import lists

    return lists.shared_items(graph.store, **kwargs)


def counted_items(graph: KnowledgeGraph, **kwargs: Any) -> Data | None:
    """Items with their papers counted (kg.graph.lists.counted_items), or None."""
    from kg.graph import lists

    return lists.counted_items(graph.store, **kwargs)


def warm(graph: KnowledgeGraph) -> dict[str, bool]:
    """Load or make what a first paper or list page would (a server's warm-up): the
    similarity index, the suggestion model (when trained ahead or small enough) and the
    lists' order."""
    from kg.errors import KgError
    from kg.graph import cache, lists

    store = graph.store
    cache.similarity_index(store, "all", "idf")
    try:
        cache.suggest_model(store, on_request=True)
        suggest_ready = True
    except KgError:  # not trained ahead and too large to train here: pages say so
        suggest_ready = False
    return {"suggest": suggest_ready, "order": lists.prepare(store)}


def lookup(graph: KnowledgeGraph, kind: str, text: str) -> dict[str, object]:
    """What a page's path names: the thing, or the near ones (kg.query.resolve.lookup)."""
    from kg.query.resolve import lookup as look_up

    return look_up(graph.store, kind=kind, text=text, base_iri=graph.base_iri)


def resolve(
    graph: KnowledgeGraph, kinds: Mapping[str, str], values: Mapping[str, str]
) -> dict[str, object]:
    """A named query's names, slugs and ids turned into IRIs (kg.query.resolve)."""
    from kg.query.resolve import resolved_reply

    return resolved_reply(graph.store, kinds=kinds, values=values, base_iri=graph.base_iri)
