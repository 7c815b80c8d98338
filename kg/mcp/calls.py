"""What each MCP tool asks of the library, run where the store is: a pool worker, under its
time, memory and network limits (kg.serve.pool runs `run_call` there).

Each call takes a `KnowledgeGraph` and plain arguments and returns plain JSON data: the
objects `kg … --json` prints (`kg search --json`, `kg similar --json`, …), or, for SPARQL, the
SPARQL 1.1 JSON results' bindings, cut to the row and byte caps with a note saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from kg.library import KnowledgeGraph

if TYPE_CHECKING:
    from pathlib import Path

    from kg.rdf.store import GraphStore

#: What a call returns: JSON data.
Data = dict[str, Any]
T = TypeVar("T")


class WorkerGraph(KnowledgeGraph):
    """The library over a store this process already holds open (a pool worker's snapshot);
    closing it leaves the store to its owner."""

    def __init__(self, store: GraphStore, path: Path | None, base_iri: str) -> None:
        super().__init__(path, memory=path is None, base_iri=base_iri)
        self._store = store

    def close(self) -> None:
        self._search = None


def _capped(
    items: Iterable[T], size: Callable[[T], int], max_items: int, max_bytes: int, unit: str
) -> tuple[list[T], str | None]:
    """The first items within both caps, and a note saying why the rest was cut (None when
    nothing was)."""
    kept: list[T] = []
    total = 0
    for item in items:
        cap = f"at most {max_items:,} {unit} a call" if len(kept) == max_items else None
        total += size(item)
        if cap is None and total > max_bytes:
            cap = f"at most {max_bytes:,} bytes a call"
        if cap is not None:
            return kept, (
                f"the result was cut after {len(kept):,} {unit} ({cap}); narrow the query (a "
                "LIMIT, more specific patterns) or page through it with LIMIT and OFFSET"
            )
        kept.append(item)
    return kept, None


def sparql(graph: KnowledgeGraph, text: str, max_rows: int, max_bytes: int) -> Data:
    """A query's answer, at most `max_rows` rows and about `max_bytes` of JSON: a SELECT's
    `head`/`results` as SPARQL 1.1 JSON results (what `kg sparql --format json` prints), an
    ASK's `boolean`, a CONSTRUCT's or DESCRIBE's `ntriples`. `truncated` and `note` say
    whether and why it was cut."""
    from kg.rdf.results import AskResult, SelectStream

    result = graph.stream(text, limit=max_rows + 1)
    if isinstance(result, AskResult):
        return {"form": "ASK", "boolean": result.value, "truncated": False}
    if isinstance(result, SelectStream):
        names = result.variables
        rows = (
            {v: t.to_json() for v, t in zip(names, row, strict=True) if t is not None}
            for row in result.rows
        )
        bindings, note = _capped(
            rows, lambda b: len(json.dumps(b, ensure_ascii=False)), max_rows, max_bytes, "rows"
        )
        return {
            "form": "SELECT",
            "head": {"vars": list(names)},
            "results": {"bindings": bindings},
            "rows": len(bindings),
            "truncated": note is not None,
            **({"note": note} if note else {}),
        }
    lines = result.ntriples.splitlines(keepends=True)
    kept, note = _capped(lines, lambda t: len(t.encode("utf-8")), max_rows, max_bytes, "triples")
    return {
        "form": "CONSTRUCT",
        "ntriples": "".join(kept),
        "triples": len(kept),
        "truncated": note is not None,
        **({"note": note} if note else {}),
    }


def named_query(
    graph: KnowledgeGraph,
    name: str,
    params: Mapping[str, str | int | float | bool],
    max_rows: int,
    max_bytes: int,
) -> Data:
    """A named query (queries/*.rq) with its parameters bound as `kg query` binds them
    (names of things resolved to IRIs), answered as `sparql` answers."""
    text = graph.prepare(name, **params)
    return {"query": name, **sparql(graph, text, max_rows, max_bytes)}


def search(graph: KnowledgeGraph, text: str, type: str | None, top: int, page: int) -> Data:
    """A page of full-text hits, as `kg search --json` prints it."""
    return graph.search(text, type=type, top=top, page=page).as_dict()


def similar(graph: KnowledgeGraph, paper: str, by: str, metric: str, top: int) -> Data:
    """The papers closest to `paper`, as `kg similar --json` prints them."""
    return graph.similar(paper, by=by, metric=metric, top=top).as_dict()


def shared(graph: KnowledgeGraph, a: str, b: str, by: str) -> Data:
    """What two papers share, as `kg shared --json` prints it."""
    return graph.shared(a, b, by=by).as_dict()


def suggest(graph: KnowledgeGraph, paper: str, kind: str | None, top: int) -> Data:
    """The links a paper most likely lacks, with reasons, as `kg suggest --json` prints them."""
    return graph.suggest(paper, kind=kind, top=top, train=False).as_dict()


def leaderboard(graph: KnowledgeGraph, task: str, dataset: str, metric: str | None) -> Data:
    """A leaderboard, ranked, as `kg leaderboard --format json` prints it."""
    board = graph.leaderboard(task, dataset, metric=metric)
    data = board.as_json()
    data["sections"] = [s.as_json() for s in board.sections]
    return data


def resolve(graph: KnowledgeGraph, kind: str, name: str) -> Data:
    """The one thing of `kind` that `name` names: its IRI, key and label."""
    thing = graph.resolve(kind, name)
    return {"iri": thing.iri, "key": thing.key, "label": thing.label}


def void(graph: KnowledgeGraph) -> Data:
    """The store's VoID description in Turtle (`kg void`'s counts)."""
    from kg.export.void import describe

    return {"turtle": describe(graph.store, graph.base_iri).serialize("turtle").decode("utf-8")}


CALLS: dict[str, Callable[..., Data]] = {
    "sparql": sparql,
    "named_query": named_query,
    "search": search,
    "similar": similar,
    "shared": shared,
    "suggest": suggest,
    "leaderboard": leaderboard,
    "resolve": resolve,
    "void": void,
}


def run_call(graph: KnowledgeGraph, name: str, kwargs: Mapping[str, Any]) -> Data:
    """Run the call `name` (one of CALLS) on `graph`."""
    from kg.errors import KgError

    call = CALLS.get(name)
    if call is None:
        raise KgError(f"unknown MCP call {name!r}")
    return call(graph, **kwargs)
