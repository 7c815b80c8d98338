"""The site's pages as one set of request handlers and routes: the front page, the tasks,
the query editor, the named queries' list and pages, leaderboards, feeds and every entity's
page. Each handler gathers its page's sources once (in the worker pool, all at once), keeps
what a store version made in one cache (`StoreVersionCache`), and answers through the one
`html_response` (kg.serve.pages.respond). The SPARQL protocol, /search's JSON and MCP are
the server's (kg.serve.app): it gives the pages its base IRI, and then its pool once it
is up (`pool`) and its named queries whenever it reads them (`load_queries`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kg.errors import KgError
from kg.query.named import NamedQuery, with_values
from kg.rdf.results import Term
from kg.serve import linked_data
from kg.serve.pages import entity, feeds, home, leaderboard, not_found, provenance, query
from kg.serve.pages.respond import StoreVersionCache, html_response
from kg.serve.pool import QueryPool
from kg.serve.render import JsonResponse, render


class Pages:
    """The page handlers over the server's pool, base IRI and named queries."""

    def __init__(self, base: str, public_base: str | None = None) -> None:
        self.base = base
        self.public_base = public_base
        #: The server's worker pool while it runs (kg.serve.app sets it).
        self.pool: QueryPool | None = None
        self.queries: Mapping[str, NamedQuery] = {}
        #: Pages rendered at one store version, by (store generation, what, which): a named
        #: query over the whole store (tasks-in-area: 215 ms of CPU at archive scale 0.1),
        #: the front page and the tasks are made once a store version, as leaderboards are.
        self.cache: StoreVersionCache[str] = StoreVersionCache()
        #: The feeds of new bests made at this store version (kg.serve.pages.feeds).
        self.feeds = feeds.Feeds(base)
        #: The query editor (static/index.html with the named queries as examples).
        self.editor_html = ""

    def running(self) -> QueryPool:
        if self.pool is None:
            raise KgError("the server is not started")
        return self.pool

    def load_queries(self, queries: Mapping[str, NamedQuery]) -> None:
        """The named queries (re)read: their list, pages and the editor's examples."""
        self.queries = queries
        self.editor_html = query.editor(queries, self.base, self.public_base)

    async def store_sources(self, timeout: float | None = None) -> list[dict[str, Any]]:
        """The footer's sources for a page drawn from the whole store."""
        return await provenance.store_sources(self.running(), self.base, timeout)

    async def _kept(self, what: str, which: str, make: Callable[[], Awaitable[str]]) -> str:
        key = (self.running().generation, what, which)
        body = self.cache.get(key)
        if body is None:
            body = await make()
            self.cache.put(key, body)
        return body

    # -- the front page and the tasks ------------------------------------------------------
    async def home_page(self, timeout: float | None = None) -> str:
        """The front page, made once a store version (kg.serve.pages.home; `timeout`: its
        queries' seconds instead of the pool's, for the warm-up)."""
        pool = self.running()

        async def site_feed() -> Any:
            try:
                return await self.feeds.get(pool)
            except KgError:
                return None  # the page shows the rest; /feeds/sota.atom says what failed

        async def make() -> str:
            return render("home.html", await home.context(pool, self.base, site_feed(), timeout))

        return await self._kept("", "home", make)

    async def home(self, request: Request) -> Response:
        if "query" in request.query_params:  # an older link to the query page at /
            return RedirectResponse("/query?" + request.url.query, status_code=301)
        return html_response(await self.home_page(), vary=False)

    async def tasks(self, request: Request) -> Response:
        """Every task, by area (kg.serve.pages.home.tasks_context), made once a version."""

        async def make() -> str:
            return render("tasks.html", await home.tasks_context(self.running(), self.base))

        return html_response(await self._kept("", "tasks", make), vary=False)

    # -- the query editor and the named queries --------------------------------------------
    async def editor(self, request: Request) -> Response:
        """The query editor (YASGUI, vendored: it runs scripts, so no page CSP here)."""
        return html_response(self.editor_html, vary=False, csp=None)

    async def query_list(self, request: Request) -> Response:
        named = self.queries
        if not_found.wants_html(request):
            body = render(
                "queries.html",
                title="named queries",
                queries=query.listed(named),
                sources=await self.store_sources(),
            )
            return html_response(body)
        items = [
            {**q.as_json(), "url": f"/queries/{q.name}", "sparql": q.sparql}
            for q in named.values()
        ]
        return JsonResponse(items, headers={"Vary": "Accept"})

    async def named_query_page(
        self,
        named: NamedQuery,
        values: Mapping[str, str],
        bindings: Mapping[str, Term],
        uses_search: Callable[[str], Awaitable[bool]],
    ) -> Response:
        """A named query opened in a browser: its answer as a table, with a link to download
        it in each format the endpoint serves (the same URL with ?format=). The page is kept
        until the store changes (a new snapshot moves the pool's generation on);
        `uses_search` says whether its text holds a kg search block (expanded in a worker)."""
        text = with_values(named.sparql, bindings)

        async def make() -> str:
            expand = await uses_search(text)
            answer, footer = await _both(
                self.running().result(text, search_bindings=dict(bindings) if expand else None),
                self.store_sources(),
            )
            context = query.context(
                named, values, query.shape_form(named.sparql), answer, self.base,
                f"/queries/{named.name}",
            )
            context["sources"] = footer
            return render("query.html", context)

        which = json.dumps([text, sorted(values.items())])
        return html_response(await self._kept(named.name, which, make))

    # -- entities ----------------------------------------------------------------------------
    async def entity(self, request: Request) -> Response:
        return await entity.answer(request, self.running(), self.base, keep=self._kept)

    def routes(self) -> list[Route]:
        """The pages' routes: the fixed pages, then leaderboards and feeds, then the
        entities (which would take `/task/…/sota.atom` and `/leaderboard/…` for their own)."""
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/query", self.editor, methods=["GET"]),
            Route("/tasks", self.tasks, methods=["GET"]),
            Route("/queries", self.query_list, methods=["GET"]),
            # the page, chart.svg and history.json of /leaderboard/{task}/{dataset}
            *leaderboard.routes(self.running, self.base, self.entity),
            # Atom feeds of new bests
            *feeds.routes(self.running, self.base, self.public_base, self.feeds),
            *(
                Route(f"/{kind}/{{rest:path}}", self.entity, methods=["GET"])
                for kind in linked_data.KINDS
            ),
        ]


async def _both(first: Awaitable[Any], second: Awaitable[Any]) -> tuple[Any, Any]:
    import asyncio

    a, b = await asyncio.gather(first, second)
    return a, b
