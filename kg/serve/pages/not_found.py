"""No dead ends: what a path that names nothing here becomes.

A thing's path (`/task/…`, `/dataset/…`, `/paper/…`, `/leaderboard/<task>/<dataset>`, a
feed's `…/sota.atom`) holding a name rather than the thing's key is read by the one
resolver (kg.query.resolve, in a worker: `lookup`): a name in any case or spelling it
accepts, a paper's arXiv id (`/paper/arxiv/1911.04252v2`), leads to the thing's own path by
redirect. A miss gets the resolver's nearest names as links ("did you mean"): a page for a
browser (templates/404.html), JSON for a client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from kg.errors import AmbiguousNameError, KgError, UnknownNameError
from kg.query.resolve import KINDS
from kg.serve import conneg
from kg.serve.linked_data import local_href
from kg.serve.pages.respond import html_response
from kg.serve.render import JsonResponse, render

#: What a client that asks for nothing in particular gets (JSON), before a page.
_OFFERS = (conneg.Offer("application/json"), conneg.Offer("text/plain"), conneg.HTML_OFFER)
#: Tails of a thing's path that name one of its forms (kept across a redirect).
_TAILS = ("/sota.atom", "/chart.svg", "/history.json")
#: How many "did you mean" links a page shows.
SHOWN = 8


def wants_html(request: Request) -> bool:
    """Whether the client prefers a page to JSON or text (a browser does)."""
    return conneg.negotiate(request.headers.get("accept"), _OFFERS) == conneg.HTML


@dataclass
class Nearest:
    """Where a missed path leads: `redirect` (a path here), or `candidates` to offer, each
    {href, label, note, iri}; `text` is the name as the reader typed it."""

    redirect: str | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""


def _split(raw_path: str) -> tuple[str, str, str]:
    """(kind, the rest decoded, tail) of a path: `/task/Image%20Classification/sota.atom`
    -> ('task', 'Image Classification', '/sota.atom')."""
    path = raw_path.split("?", 1)[0]
    tail = next((t for t in _TAILS if path.endswith(t)), "")
    path = path.removesuffix(tail) if tail else path
    kind, _, rest = path.lstrip("/").partition("/")
    return kind, unquote(rest).strip().strip("/"), tail


async def _lookup(pool: Any, kind: str, text: str, base: str) -> Mapping[str, Any]:
    if not text:
        return {"candidates": []}
    try:
        found: Mapping[str, Any] = await pool.graph(
            "lookup", kind=kind, text=text, base_iri=base
        )
    except KgError:
        return {"candidates": []}
    return found


def _link(thing: Mapping[str, Any], base: str, tail: str = "") -> dict[str, Any]:
    href = local_href(str(thing["iri"]), base)
    return {
        "href": (href + tail) if href else None,
        "label": thing.get("label") or thing.get("key") or thing["iri"],
        "note": thing.get("key"),
        "iri": thing["iri"],
    }


def _same(href: str, raw_path: str) -> bool:
    return unquote(href) == unquote(raw_path.split("?", 1)[0])


async def nearest(pool: Any, base: str, raw_path: str) -> Nearest:
    """Where a path that named nothing leads (see the module's doc)."""
    kind, text, tail = _split(raw_path)
    if kind == "leaderboard":
        return await _nearest_board(pool, base, raw_path, text, tail)
    if kind not in KINDS:
        return Nearest(text=text)
    if kind == "paper" and text.lower().startswith("arxiv/"):
        text = text[len("arxiv/") :]
    found = await _lookup(pool, kind, text, base)
    if "thing" in found:
        link = _link(found["thing"], base, tail)
        if link["href"] and not _same(link["href"], raw_path):
            return Nearest(redirect=link["href"], text=text)
        return Nearest(text=text)
    return Nearest(
        candidates=[_link(t, base, tail) for t in found.get("candidates", [])][:SHOWN], text=text
    )


async def _nearest_board(pool: Any, base: str, raw_path: str, text: str, tail: str) -> Nearest:
    """A leaderboard's path: its task and its dataset each read by the resolver."""
    task_text, _, dataset_text = text.partition("/")
    if dataset_text.endswith("/result") or "/result/" in dataset_text:
        return Nearest(text=text)
    task, dataset = await asyncio.gather(
        _lookup(pool, "task", task_text, base), _lookup(pool, "dataset", dataset_text, base)
    )
    tasks: Sequence[Mapping[str, Any]] = (
        [task["thing"]] if "thing" in task else list(task.get("candidates", []))
    )
    datasets: Sequence[Mapping[str, Any]] = (
        [dataset["thing"]] if "thing" in dataset else list(dataset.get("candidates", []))
    )
    shown = f"{task_text} on {dataset_text}"
    if "thing" in task and "thing" in dataset:
        key = f"{base}leaderboard/{task['thing']['key']}/{dataset['thing']['key']}"
        board = local_href(key, base)
        if board and not _same(board + tail, raw_path):
            return Nearest(redirect=board + tail, text=shown)
        # both are known, but the graph holds no results on this pair: their own pages
        return Nearest(
            candidates=[_link(task["thing"], base), _link(dataset["thing"], base)], text=shown
        )
    out = []
    for t in tasks[:3]:
        for d in datasets[:4]:
            board = local_href(f"{base}leaderboard/{t['key']}/{d['key']}", base)
            if board:
                out.append(
                    {
                        "href": board,
                        "label": f"{t.get('label') or t['key']} on {d.get('label') or d['key']}",
                        "note": f"{t['key']} / {d['key']}",
                        "iri": f"{base}leaderboard/{t['key']}/{d['key']}",
                    }
                )
    if not out:  # one side is known: offer its page
        out = [_link(t, base) for t in tasks[:1]] + [_link(d, base) for d in datasets[:1]]
    return Nearest(candidates=out[:SHOWN], text=shown)


def page(message: str, found: Nearest, sources: Sequence[Mapping[str, Any]] = ()) -> str:
    """The 404 page: the message, the nearest names as links, a search box."""
    return render(
        "404.html",
        title="not found",
        message=message,
        candidates=[c for c in found.candidates if c.get("href")],
        search_text=found.text.replace("/", " "),
        sources=list(sources),
    )


async def answer(
    request: Request,
    message: str,
    exc: Exception | None,
    pool: Any,
    base: str,
    store_sources: Callable[[], Awaitable[list[dict[str, Any]]]],
) -> Response:
    """A GET of a path that names nothing: a redirect to what the resolver reads it as, or a
    404 with the nearest names: a page for browsers, JSON for clients when there are names
    to offer (as a miss of a query's parameter), else text. `pool` is None before the
    server's pool is up; `store_sources`: the footer's."""
    raw = (request.scope.get("raw_path") or request.url.path.encode()).decode("latin-1")
    found = Nearest()
    if pool is not None:
        found = await nearest(pool, base, raw)
    if found.redirect is not None:
        query = request.url.query
        return RedirectResponse(found.redirect + (f"?{query}" if query else ""), status_code=302)
    named = isinstance(exc, UnknownNameError | AmbiguousNameError)
    if named and not found.candidates:
        assert isinstance(exc, UnknownNameError | AmbiguousNameError)
        found.candidates = [
            {"href": local_href(c, base), "label": c.removeprefix(base), "iri": c}
            for c in exc.candidates
        ]
    if wants_html(request):
        sources = await store_sources() if pool is not None else []
        return html_response(page(message, found, sources), status=404)
    if named or found.candidates:
        assert exc is None or isinstance(exc, KgError)
        body = {
            "error": message,
            "parameter": exc.parameter.name if named and exc and exc.parameter else None,
            "candidates": [str(c["iri"]) for c in found.candidates],
        }
        return JsonResponse(body, status_code=404, headers={"Vary": "Accept"})
    return PlainTextResponse(message.rstrip() + "\n", status_code=404, headers={"Vary": "Accept"})
