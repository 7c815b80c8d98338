"""Atom feeds of new bests: `/feeds/sota.atom`, `/task/{slug}/sota.atom`, `/dataset/{slug}/…`.

The feed itself (which results, in which order, paged) is kg.query.feeds; this module runs
its two queries in the worker pool, keeps the feed while the store stays the same, and
writes a page of it with the `sota.atom` template (autoescaped; `xml` drops what XML 1.0
forbids). Pages are RFC 5005 paged feeds: `?page=N` (0, the newest, is the feed's own
URL) with `first`, `last`, `previous` and `next` links. Each entry links to its
leaderboard page (at the metric's section), its paper, and carries the sources' licence
and attribution as `rights` (the line a chart carries, kg.serve.pages.leaderboard.sources_line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kg.errors import NotFoundError, ParameterError
from kg.query.feeds import Feed, NewBest, Scope, feed, feed_queries
from kg.query.leaderboard import RESULTS, SOURCE, json_number
from kg.query.named import sparql_term
from kg.rdf.results import SelectResult, Term
from kg.rdf.vocab import KG_NS
from kg.serve import conneg
from kg.serve.linked_data import iri_for_path, local_href
from kg.serve.pages.leaderboard import sources_line
from kg.serve.pages.respond import NOSNIFF, StoreVersionCache
from kg.serve.pages.rows import page_number, text_of
from kg.serve.pool import QueryPool
from kg.serve.render import query_string, render

MEDIA_TYPE = "application/atom+xml; charset=utf-8"
SUFFIX = "/sota.atom"
CACHED_FEEDS = 32
_CLASSES = {"task": "Task", "dataset": "Dataset"}
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
#: The stylesheet a browser shows a feed with (static/feed.css: CSS, as browsers no longer
#: all run XSLT).
STYLESHEET = "/static/feed.css"


def feed_href(iri: str, base: str) -> str | None:
    """The path of a task's or a dataset's feed."""
    href = local_href(iri, base)
    return href + SUFFIX if href else None


def media_type(accept: str | None) -> str:
    """The feed's Content-Type: Atom for feed readers (and clients that ask for nothing in
    particular); XML for a browser, which shows Atom as plain text but XML with the feed's
    stylesheet.

    >>> media_type("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
    'application/xml; charset=utf-8'
    >>> media_type(None) == media_type("application/atom+xml") == MEDIA_TYPE
    True
    """
    offers = (
        conneg.Offer("application/atom+xml"),
        conneg.Offer("application/xml"),
        conneg.HTML_OFFER,
    )
    chosen = conneg.negotiate(accept, offers)
    if chosen in (None, "application/atom+xml"):
        return MEDIA_TYPE
    return "application/xml; charset=utf-8"


def label_query(iri: str, scope: Scope) -> str:
    """The task's or dataset's label (one row if it is one, none if not)."""
    term = sparql_term(Term("uri", iri))
    return (
        f"SELECT ?label WHERE {{ {term} a <{KG_NS}{_CLASSES[scope]}> . "
        f"OPTIONAL {{ {term} <{RDFS_LABEL}> ?label }} }} ORDER BY ?label LIMIT 1"
    )


def _timestamp(date: str | None) -> str:
    return f"{date or '1970-01-01'}T00:00:00Z"


def _plain_number(value: Decimal) -> str:
    """A best value in words: as JSON writes it, or its decimal text beyond float range."""
    number = json_number(value)
    return str(value) if number is None else str(number)


def _entry(e: NewBest, site: str, base: str) -> dict[str, Any]:
    entry = e.entry
    model = entry.model or "(no model name)"
    board_href = local_href(e.board, base)
    paper_href = local_href(entry.paper, base) if entry.paper else entry.paper_url
    beat = (
        f", beating the best so far ({_plain_number(e.previous)})"
        if e.previous is not None
        else " (the first dated result on this metric)"
    )
    paper = f" Paper: {entry.title}." if entry.title else ""
    how = f"{e.direction} is better"  # a metric of unknown direction has no new best
    return {
        "id": e.id,
        "title": f"{model}: {entry.value} {e.metric} on {e.label}",
        "updated": _timestamp(e.date),
        "href": f"{site}{board_href}#metric-{e.section}" if board_href else e.board,
        "paper_href": (site + paper_href if paper_href.startswith("/") else paper_href)
        if paper_href
        else None,
        "paper_title": entry.title or entry.paper or entry.paper_url,
        "paper": entry.paper or entry.paper_url,
        "board": e.board,
        "metric": e.metric,
        "model": model,
        "value": entry.value,
        "previous": json_number(e.previous) if e.previous is not None else None,
        "summary": f"A new best on {e.label}, {e.metric} ({how}): {model} with "
        f"{entry.value} on {e.date}{beat}.{paper}",
        "rights": sources_line(e.sources) or "",
    }


def feed_context(
    found: Feed, number: int, site: str, base: str, title: str, path: str, page: str | None
) -> dict[str, Any]:
    """What `sota.atom` writes: page `number` of the feed, its links absolute on `site`."""
    entries = found.page(number)

    def at(n: int) -> str:
        return site + path + query_string({"page": n or None})

    links = [("self", at(number)), ("first", at(0)), ("last", at(found.pages - 1))]
    if number > 0:
        links.append(("previous", at(number - 1)))
    if number + 1 < found.pages:
        links.append(("next", at(number + 1)))
    if page:
        links.append(("alternate", site + page))
    licences = dict.fromkeys(s.licence for s in found.sources if s.licence)
    links += [("license", licence) for licence in licences]
    return {
        "stylesheet": STYLESHEET,
        "feed": {
            "id": f"{found.about or base + 'feeds/sota'}{'/sota.atom' if found.about else ''}",
            "title": title,
            "subtitle": "Each result that set a new best on its leaderboard and metric, newest "
            f"first ({len(found.entries)} in all; page {number + 1} of {found.pages})",
            "updated": _timestamp(found.updated),
            "rights": sources_line(found.sources) or "kg",
            "links": links,
        },
        "entries": [_entry(e, site, base) for e in entries],
    }


async def fetch(
    pool: QueryPool, base: str, scope: Scope, about: str | None, timeout: float | None = None
) -> Feed:
    """The feed, its two queries run in the worker pool at once (`timeout`: seconds
    instead of the pool's)."""
    bindings: dict[str, Term] = {scope: Term("uri", about)} if about is not None else {}
    texts = feed_queries(bindings)
    results, source = await asyncio.gather(
        pool.result(texts[RESULTS], timeout=timeout), pool.result(texts[SOURCE], timeout=timeout)
    )
    assert isinstance(results, SelectResult) and isinstance(source, SelectResult)
    return feed(scope, about, base, results, source)


class Feeds:
    """The feeds made at each store version, kept while it stays the same; one making of a
    feed at a time (a request that comes while the start-up warm-up makes the site's feed
    waits for it rather than making it again)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cache: StoreVersionCache[Feed] = StoreVersionCache(CACHED_FEEDS)
        self._making: dict[tuple[int, str, str], asyncio.Task[Feed]] = {}

    async def get(
        self,
        pool: QueryPool,
        scope: Scope = "all",
        about: str | None = None,
        timeout: float | None = None,
    ) -> Feed:
        """The feed of `scope` (`about` names the task or dataset), made once a version
        (`timeout`: its queries' seconds, for the warm-up; a request keeps the pool's)."""
        key = (pool.generation, scope, about or "")
        found = self.cache.get(key)
        if found is not None:
            return found
        task = self._making.get(key)
        if task is None:
            task = asyncio.create_task(fetch(pool, self.base, scope, about, timeout))
            self._making[key] = task
            task.add_done_callback(lambda _: self._making.pop(key, None))
        found = await asyncio.shield(task)
        self.cache.put(key, found)
        return found


def routes(
    running: Callable[[], QueryPool], base: str, public_base: str | None, feeds: Feeds
) -> list[Route]:
    """The feeds' routes, over the server's running pool, its base IRI and its feeds; before
    the entity routes, which would take `/task/…/sota.atom` for an entity."""

    async def answer(request: Request, scope: Scope, about: str | None, title: str) -> Response:
        unknown = [k for k in request.query_params if k != "page"]
        if unknown:
            raise ParameterError(f"unknown parameter {unknown[0]!r}; a feed takes page")
        pages = request.query_params.getlist("page")
        if len(pages) > 1:
            raise ParameterError("parameter 'page' is given more than once")
        number = page_number(pages[0] if pages else None)
        found = await feeds.get(running(), scope, about)
        site = (public_base or str(request.base_url)).rstrip("/")
        page = local_href(about, base) if about else "/"
        path = request.url.path
        context = feed_context(found, number, site, base, title, path, page)
        return Response(
            render("sota.atom", context),
            media_type=media_type(request.headers.get("accept")),
            headers={**NOSNIFF, "Vary": "Accept"},
        )

    async def everything(request: Request) -> Response:
        return await answer(request, "all", None, "kg: new bests on every leaderboard")

    async def one(request: Request) -> Response:
        raw = (request.scope.get("raw_path") or request.url.path.encode()).decode("latin-1")
        iri = iri_for_path(raw.removesuffix(SUFFIX), base)
        scope: Scope = "task" if raw.startswith("/task/") else "dataset"
        if iri is None:
            raise NotFoundError(f"{request.url.path} names no {scope} kg could hold")
        term = Term("uri", iri)
        try:
            sparql_term(term)
        except ParameterError:
            raise NotFoundError(f"{iri} is no IRI kg could hold") from None
        known = (await running().result(label_query(iri, scope))).term_rows()
        if not known:
            raise NotFoundError(f"the graph holds no {scope} {iri}: no feed")
        name = text_of(known[0], "label") or iri.removeprefix(f"{base}{scope}/")
        return await answer(request, scope, iri, f"kg: new bests on {name}")

    return [
        Route("/feeds/sota.atom", everything, methods=["GET"]),
        Route("/task/{key:path}/sota.atom", one, methods=["GET"]),
        Route("/dataset/{key:path}/sota.atom", one, methods=["GET"]),
    ]
