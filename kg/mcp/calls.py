"""The one table of worker operations (`CALLS`): what pages, HTTP, MCP and `/search` ask
of the library, run where the store is: a pool worker, under its time, memory and network
limits (kg.serve.worker runs `run_call` there; kg.serve.pool's `call` sends one).

Each call takes a `KnowledgeGraph` and plain arguments and returns plain JSON data. The
pages' and HTTP's calls are the library's answers whole (kg.library.operations: `similar`,
`suggest`, `search_hits`, the pages' lists, …). The MCP tools' calls answer in pages cut to
an answer's budget (kg.mcp.budget), built on the same library calls: the objects `kg …
--json` prints (`kg search --json`, `kg similar --json`, …), or, for SPARQL, the SPARQL 1.1
JSON results' bindings, cut to the row and byte caps with a note saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kg.library import KnowledgeGraph, operations
from kg.mcp.budget import ANSWER_BYTES, DEFAULT_TOP, MAX_TOP, fit, paged, size

#: What a call returns: JSON data.
Data = dict[str, Any]
T = TypeVar("T")
#: The shared items of a similar paper, the reasons of each sort of a suggestion and the
#: repositories of a paper on a leaderboard an answer shows, at most (counts say how many).
SHARED_ITEMS = 5
REASONS = 3
CODE_REPOSITORIES = 3
#: What a leaderboard's answer keeps for its papers' code.
CODE_BYTES = 2_500


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


def _window(top: int, offset: int) -> tuple[int, int, int]:
    """How to ask a library list paged by (limit, page) for items [offset, offset + top):
    (limit, page, where the page starts in what comes back)."""
    if offset % top == 0:
        return top, offset // top + 1, 0
    return offset + top, 1, offset


def search(
    graph: KnowledgeGraph, text: str, type: str | None, top: int = DEFAULT_TOP,
    offset: int = 0,
) -> Data:
    """A page of full-text hits (`kg search --json`'s hits), with the total, the counts per
    class and the next page's offset."""
    limit, number, skip = _window(top, offset)
    found = operations.search_hits(graph, text, type=type, top=limit, page=number)
    hits = found["hits"][skip : skip + top]
    data: Data = {"query": text, "type": type, "counts": found["counts"]}
    pages = [paged(data, "hits", hits, top, offset, total=found["total"])]
    if not found["total"]:  # nothing: the names that look most like the query
        data["did_you_mean"] = [
            {"iri": t.iri, "kind": t.kind, "label": t.label} for t in graph.near(text)
        ]
    return fit(data, pages)


def similar_page(
    graph: KnowledgeGraph, paper: str, by: str, metric: str, top: int = DEFAULT_TOP,
    offset: int = 0,
) -> Data:
    """The papers closest to `paper` (`kg similar --json`), ranks offset+1 .. offset+top,
    each with its first shared items (`shared_count` says how many it shares)."""
    found = operations.similar(graph, paper, by=by, metric=metric, top=offset + top)
    results = found.pop("results")
    data: Data = {**found, "results": []}
    for r in results[offset:]:
        r["shared"] = r["shared"][:SHARED_ITEMS]
        data["results"].append(r)
    # the index ranks only as far as asked: more may follow when it gave all it was asked
    more = len(results) == offset + top
    pages = [paged(data, "results", data["results"], top, offset, total=None, more=more)]
    return fit(data, pages)


def shared_page(graph: KnowledgeGraph, a: str, b: str, by: str, top: int = DEFAULT_TOP,
                offset: int = 0) -> Data:
    """What two papers share (`kg shared --json`): per relation, shared items
    offset+1 .. offset+top, rarest first, with their total and next_offset."""
    data = operations.shared(graph, a, b, by=by)
    pages = [
        paged(r, "items", r["items"], top, offset) for r in data["relations"]
    ]
    return fit(data, pages)


def suggest_page(
    graph: KnowledgeGraph, paper: str, kind: str | None, top: int = DEFAULT_TOP,
    offset: int = 0,
) -> Data:
    """The links a paper most likely lacks (`kg suggest --json`), offset+1 .. offset+top,
    each with its first reasons of each sort."""
    data = operations.suggest(graph, paper, kind=kind, top=offset + top)
    data.pop("settings", None)
    suggestions = data.pop("suggestions")
    for s in suggestions:
        s["because"] = {k: v[:REASONS] for k, v in s["because"].items()}
    # the model ranks only as far as asked: more may follow when it gave all it was asked
    more = len(suggestions) == offset + top
    pages = [paged(data, "suggestions", suggestions[offset:], top, offset, total=None,
                   more=more)]
    return fit(data, pages)


def leaderboard(
    graph: KnowledgeGraph, task: str, dataset: str, metric: str | None,
    top: int = DEFAULT_TOP, offset: int = 0, history: str = "new-bests",
) -> Data:
    """A leaderboard (`kg leaderboard --format json`, paged): per metric, entries
    offset+1 .. offset+top in rank order with the total and next_offset; the best result
    over time (`history`: the new bests, every dated result, or none); and the first
    repositories of the papers on the page."""
    board = graph.leaderboard(task, dataset, metric=metric)
    data: Data = {
        "leaderboard": board.iri,
        "label": board.label,
        "task": board.task,
        "dataset": board.dataset,
        "sources": [s.as_json() for s in board.sources],
        "metrics": [{"metric": s.metric, "entries": len(s.entries)} for s in board.sections],
        "sections": [],
    }
    pages = []
    for s in board.sections:
        section: Data = {"metric": s.metric, "direction": s.direction,
                         "ranked_by": s.ranked_by}
        entries = [_lean(e.as_json(), "number", "percent") for e in s.entries]
        pages.append(paged(section, "entries", entries, top, offset))
        points = [p for p in s.history if history == "all" or p.new_best]
        if history != "none":
            drop = ("best",) if history != "all" else ()  # a new best is its own best
            series = [_lean(p.as_json(), *drop) for p in points]
            pages.append(paged(section, "history", series, MAX_TOP, 0, prefix="history_"))
        data["sections"].append(section)
    data["code"] = {}
    fit(data, pages, ANSWER_BYTES - CODE_BYTES)
    # the code of the papers on the page, in rank order, while it fits
    used = size(data)
    for paper in dict.fromkeys(e.get("paper") for sec in data["sections"] for e in sec["entries"]):
        codes = board.code.get(paper or "")
        if not codes:
            continue
        first = {"repositories": len(codes),
                 "first": [_lean(c.as_json(), "repository") for c in codes[:CODE_REPOSITORIES]]}
        used += size({paper: first})
        if used > ANSWER_BYTES:
            data["code_note"] = "the code of the papers further down was left out; ask for " \
                                "a smaller top, or see each paper with the paper tool"
            break
        data["code"][paper] = first
    return data


def _lean(item: dict[str, Any], *drop: str) -> dict[str, Any]:
    """An entry, point or repository without its empty fields (null, [], {}, false) and the
    fields `drop` names (what another field says already)."""
    return {k: v for k, v in item.items() if v not in (None, [], {}, False) and k not in drop}


def thing(graph: KnowledgeGraph, kind: str, name: str) -> Data:
    """The one thing of `kind` that `name` names: its IRI, key and label."""
    thing = graph.resolve(kind, name)
    return {"iri": thing.iri, "key": thing.key, "label": thing.label}


def void(graph: KnowledgeGraph) -> Data:
    """The store's VoID description in Turtle (`kg void`'s counts)."""
    from kg.export.void import describe

    return {"turtle": describe(graph.store, graph.base_iri).serialize("turtle").decode("utf-8")}


#: Every operation a worker runs on the library, by name: the MCP tools' answers, then the
#: pages', HTTP's and /search's (kg.library.operations).
CALLS: dict[str, Callable[..., Any]] = {
    "sparql": sparql,
    "named_query": named_query,
    "search": search,
    "similar_page": similar_page,
    "shared_page": shared_page,
    "suggest_page": suggest_page,
    "leaderboard": leaderboard,
    "thing": thing,
    "void": void,
    "similar": operations.similar,
    "shared": operations.shared,
    "suggest": operations.suggest,
    "search_hits": operations.search_hits,
    "search_ready": operations.search_ready,
    "item_papers": operations.item_papers,
    "shared_items": operations.shared_items,
    "counted_items": operations.counted_items,
    "warm": operations.warm,
    "lookup": operations.lookup,
    "resolve": operations.resolve,
}


def run_call(graph: KnowledgeGraph, name: str, kwargs: Mapping[str, Any]) -> Any:
    """Run the call `name` (one of CALLS) on `graph`."""
    from kg.errors import KgError

    call = CALLS.get(name)
    if call is None:
        raise KgError(f"unknown worker operation {name!r}")
    return call(graph, **kwargs)


#: The lists of a paper's card (kg.serve.mcp.paper_card), by their path in it.
CARD_LISTS = (
    ("authors",), ("tasks",), ("methods_introduced",), ("methods_used",),
    ("datasets_introduced",), ("code", "repositories"), ("results",), ("similar", "papers"),
    ("sources",),
)


def trim_card(card: Data, top: int, budget: int = ANSWER_BYTES) -> Data:
    """A paper's card with each list cut to its first `top` items (`counts`: each list's
    length in all), then its longest lists cut further while the card is over `budget`."""
    counts: Data = {}
    pages = []
    for path in CARD_LISTS:
        holder = card
        for key in path[:-1]:
            holder = holder.get(key) or {}
        items = holder.get(path[-1])
        if not isinstance(items, list):
            continue
        found = paged({}, "items", items, top, 0)  # its paging fields are counts' number
        holder[path[-1]] = found.items
        counts[".".join(path)] = len(items)
        pages.append(found)
    card["counts"] = counts
    fit(card, pages, budget)
    return card
