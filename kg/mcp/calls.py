"""What each MCP tool asks of the library, run where the store is: a pool worker, under its
time, memory and network limits (kg.serve.pool runs `run_call` there).

Each call takes a `KnowledgeGraph` and plain arguments and returns plain JSON data: the
objects `kg … --json` prints (`kg search --json`, `kg similar --json`, …), or, for SPARQL, the
SPARQL 1.1 JSON results' bindings, cut to the row and byte caps with a note saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kg.library import KnowledgeGraph

if TYPE_CHECKING:
    from pathlib import Path

    from kg.rdf.store import GraphStore

#: What a call returns: JSON data.
Data = dict[str, Any]


class WorkerGraph(KnowledgeGraph):
    """The library over a store this process already holds open (a pool worker's snapshot);
    closing it leaves the store to its owner."""

    def __init__(self, store: GraphStore, path: Path | None, base_iri: str) -> None:
        super().__init__(path, memory=path is None, base_iri=base_iri)
        self._store = store

    def close(self) -> None:
        self._search = None


def _cut_note(shown: int, unit: str, cap: str) -> str:
    return (
        f"the result was cut after {shown:,} {unit} ({cap}); narrow the query (a LIMIT, "
        "more specific patterns) or page through it with LIMIT and OFFSET"
    )


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
        bindings: list[dict[str, dict[str, str]]] = []
        size = 0
        note = None
        for row in result.rows:
            if len(bindings) == max_rows:
                note = _cut_note(len(bindings), "rows", f"at most {max_rows:,} rows a call")
                break
            binding = {
                v: t.to_json()
                for v, t in zip(result.variables, row, strict=True)
                if t is not None
            }
            size += len(json.dumps(binding, ensure_ascii=False))
            if size > max_bytes:
                note = _cut_note(len(bindings), "rows", f"at most {max_bytes:,} bytes a call")
                break
            bindings.append(binding)
        return {
            "form": "SELECT",
            "head": {"vars": list(result.variables)},
            "results": {"bindings": bindings},
            "rows": len(bindings),
            "truncated": note is not None,
            **({"note": note} if note else {}),
        }
    lines = result.ntriples.splitlines(keepends=True)
    kept: list[str] = []
    size = 0
    note = None
    for line in lines:
        if len(kept) == max_rows:
            note = _cut_note(len(kept), "triples", f"at most {max_rows:,} triples a call")
            break
        size += len(line.encode("utf-8"))
        if size > max_bytes:
            note = _cut_note(len(kept), "triples", f"at most {max_bytes:,} bytes a call")
            break
        kept.append(line)
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
