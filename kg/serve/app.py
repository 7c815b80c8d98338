"""The web application behind `kg serve`.

* `/sparql` and `/update`: the SPARQL 1.1 Protocol (kg.serve.endpoint).
* `/queries`, `/queries/NAME?param=…`: the named queries of `queries/*.rq`, bound safely.
* `/paper/<slug>`, `/method/…`, `/graph/record/…`: Linked Data for kg's instance IRIs.
* `/search?q=…&type=…&page=…&limit=…`: full-text search, a page of hits with the total and
  the counts per class (JSON; a page for browsers), searched in a worker under its limits
  (the index beside the store, kg.search); SPARQL's kg search blocks are expanded to VALUES
  in the worker that runs the query (`Endpoint.uses_search`).
* `/`: the front page (kg.serve.home): areas, tasks, the most-used benchmarks, the newest
  new bests, a search box and what the graph holds.
* `/query`: a YASGUI query page (vendored under kg/serve/static, so it works offline).
* A path that names nothing here, but whose name the resolver (kg.query.resolve) reads as
  one thing (`/paper/arxiv/1911.04252`, `/task/Image%20Classification`), is redirected to
  that thing's page; a miss is a 404 with the nearest names ("did you mean"): a page for
  browsers, JSON for clients (`not_found`).

At start-up (`ServerConfig.warm`) the workers load or make what a first paper page needs
(the similarity index, the suggestion model, the lists' order) and the server makes the
site feed and the front page, so that a first request is as fast as a later one.

Every query runs in a `QueryPool` worker process, off the event loop, under the time and
size limits; the answer is sent only once complete, so a failure is always an error status.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kg.errors import (
    AmbiguousNameError,
    KgError,
    NotFoundError,
    Param,
    ParameterError,
    UnknownNameError,
    UsageError,
)
from kg.export.rdfio import graph_text
from kg.query.named import NamedQuery, bind, load_queries, prepare_local, with_values
from kg.rdf.formats import rdf_format
from kg.rdf.results import AskResult, GraphResult, SelectResult, Term
from kg.rdf.sparql_scan import scan
from kg.rdf.vocab import QUERY_PREFIXES
from kg.resources import static_dir
from kg.serve import (
    conneg,
    feeds,
    home,
    leaderboards,
    linked_data,
    not_found,
    pages,
    query_page,
    search_page,
    similar,
    story,
)
from kg.serve.endpoint import FORMAT_PARAM as _FORMAT_PARAM
from kg.serve.endpoint import Endpoint, Params, read_body, status_for
from kg.serve.endpoint import error_response as _error
from kg.serve.mcp import LazyMcp
from kg.serve.pool import CLIENT, QueryPool, Source
from kg.serve.render import JsonResponse, query_string, render

STATIC_DIR = static_dir()
#: Linked Data pages run no script and load nothing (the icon is an empty data: URL).
_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

@dataclass(frozen=True)
class ServerConfig:
    """How `kg serve` runs. Sizes are in bytes, times in seconds."""

    base_iri: str
    timeout: float = 30.0
    workers: int = 4
    max_result_bytes: int = 64 * 1_048_576
    max_body_bytes: int = 1_048_576
    allow_update: bool = False
    update_token: str | None = None
    cors_origins: tuple[str, ...] = ()
    allow_service: frozenset[str] = field(default_factory=frozenset)
    refresh: float = 5.0
    queries_dir: Path | None = None
    #: Where this server is published (https://…/); entity links on the query page use it.
    public_base: str | None = None
    max_memory_mb: int | None = None  # per worker; None: kg.rdf.limits.default_memory_mb
    #: Seconds a client may take to send a request body (headers: kg.serve.guard).
    body_timeout: float = 30.0
    #: Workers one client address may hold at once (None: half of them, at least one), and
    #: how many more of its queries may wait for one; past that, 503 at once.
    client_workers: int | None = None
    client_queue: int = 32
    #: Seconds the server may spend at start-up, before it accepts requests, preparing what
    #: first requests would otherwise make (`KgServer.warm_up`); 0: no warm-up. What is
    #: not ready by then goes on while the server answers.
    warm: float = 0.0

    @property
    def guard_network(self) -> bool:
        """Whether workers run under a kernel network filter (kg.serve.sandbox): none at
        all, or (with --allow-service hosts) connects the server checks one by one."""
        return "*" not in self.allow_service


def shape_form(sparql: str) -> str | None:
    """SELECT, ASK, CONSTRUCT or DESCRIBE: what the page offers to download it as."""
    try:
        return scan(sparql).form
    except KgError:
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


async def _none() -> None:
    return None


class KgServer:
    """The request handlers, sharing one pool and the loaded named queries."""

    def __init__(self, source: Source, config: ServerConfig) -> None:
        self.source = source
        self.config = config
        self.pool: QueryPool | None = None
        self.queries: dict[str, NamedQuery] = {}
        self.index_html = ""
        #: Set by a runner (the CLI): called once the pool is up, or with the startup error.
        self.on_ready: Callable[[KgServer], None] | None = None
        self.on_failed_start: Callable[[KgError], None] | None = None
        #: /sparql and /update (kg.serve.endpoint), over this server's pool.
        self.endpoint = Endpoint(config, lambda: self.running)
        self.mcp = LazyMcp(
            self._mcp_app,
            lambda request: read_body(request, config.max_body_bytes, config.body_timeout),
        )
        #: Named query pages rendered, by (store generation, query, values): a query over the
        #: whole store (tasks-in-area: 215 ms of CPU at archive scale 0.1) is run once a
        #: store version, as leaderboards are.
        self.query_pages: leaderboards.BoardCache[str] = leaderboards.BoardCache()
        #: The feeds of new bests made at this store version (kg.serve.feeds).
        self.feeds = feeds.Feeds(config.base_iri)
        #: The warm-up's task while it runs (kg serve's /health says so).
        self.warming: asyncio.Task[None] | None = None

    # -- life cycle ----------------------------------------------------------------------------
    def load_queries(self) -> None:
        try:
            self.queries = load_queries(self.config.queries_dir)
        except NotFoundError:
            self.queries = {}
        self.index_html = self._render_index()

    def reload(self) -> None:
        """SIGHUP: reopen store snapshots and reread the named queries."""
        if self.pool is not None:
            self.pool.refresh()
        with contextlib.suppress(KgError):
            self.load_queries()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        pool = QueryPool(
            self.source,
            workers=self.config.workers,
            timeout=self.config.timeout,
            max_result_bytes=self.config.max_result_bytes,
            allow_update=self.config.allow_update,
            refresh=self.config.refresh,
            max_memory_mb=self.config.max_memory_mb,
            guard_network=self.config.guard_network,
            allow_hosts=tuple(sorted(self.config.allow_service)),
            client_workers=self.config.client_workers,
            client_queue=self.config.client_queue,
        )
        try:
            self.load_queries()
            await pool.start()
        except KgError as exc:
            if self.on_failed_start is None:
                raise
            self.on_failed_start(exc)  # the runner stops the server and reports it once
            yield
            return
        self.pool = pool
        rewarm: asyncio.Task[None] | None = None
        if self.config.warm > 0:
            self.warming = asyncio.create_task(self.warm_up())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.warming), self.config.warm)
            if self.source.on_disk and self.config.refresh > 0:
                rewarm = asyncio.create_task(self._rewarm(pool))
        if self.on_ready is not None:
            self.on_ready(self)
        loop = asyncio.get_running_loop()
        hangup = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGHUP, self.reload)
            hangup = True
        try:
            async with self.mcp.lifespan():
                yield
        finally:
            if hangup:
                loop.remove_signal_handler(signal.SIGHUP)
            for task in (rewarm, self.warming):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, KgError):
                        await task
            self.pool = None
            await pool.close()

    async def _rewarm(self, pool: QueryPool) -> None:
        """Warm up again whenever the pool moves to a new version of the store (an ingest,
        seen within --refresh seconds), so that its first requests are fast too."""
        seen = pool.generation
        while True:
            await asyncio.sleep(self.config.refresh)
            if pool.generation != seen and self.warming is None:
                seen = pool.generation
                self.warming = asyncio.create_task(self.warm_up())

    async def warm_up(self) -> None:
        """Make what first requests would: one worker loads or builds the similarity index,
        the suggestion model and the lists' order beside the store (kg.graph.cache) while
        others make the site feed; then every worker loads them, and the front page is made.
        A failure leaves it to the first request that needs it (which reports it)."""
        from kg.serve.similar import GRAPH_TIMEOUT

        pool = self.running
        try:
            await asyncio.gather(
                pool.graph("warm", GRAPH_TIMEOUT),
                self.feeds.get(pool, timeout=GRAPH_TIMEOUT),
                return_exceptions=True,
            )
            await asyncio.gather(
                *(pool.graph("warm", GRAPH_TIMEOUT) for _ in range(pool.size)),
                return_exceptions=True,
            )
            await self._home_page(GRAPH_TIMEOUT)
        except KgError:
            pass
        finally:
            self.warming = None

    def _mcp_app(self) -> tuple[Any, Any]:
        """The MCP server at /mcp (kg.serve.mcp), its tools run in this server's pool under
        its limits: the same SERVICE hosts, the body size, the result size."""
        from kg.mcp.server import Limits
        from kg.serve.mcp import http_app

        config = self.config
        public = urlsplit(config.public_base).hostname if config.public_base else None
        limits = Limits(
            max_bytes=min(Limits.max_bytes, config.max_result_bytes),
            max_query_chars=config.max_body_bytes,
            allow_service=config.allow_service,
            command="kg serve",
        )
        return http_app(
            lambda: self.running,
            config.base_iri,
            limits,
            max_body_bytes=config.max_body_bytes,
            public_host=public,
        )

    @property
    def running(self) -> QueryPool:
        if self.pool is None:
            raise KgError("the server is not started")
        return self.pool

    # -- search --------------------------------------------------------------------------------
    # -- search --------------------------------------------------------------------------------
    async def _uses_search(self, sparql: str) -> bool:
        """Endpoint.uses_search (kept for the named-query handlers)."""
        return await self.endpoint.uses_search(sparql)

    async def _run_query(
        self, request: Request, params: Params, sparql: str, **kw: Any
    ) -> Response:
        """Endpoint.run_query (kept for the named-query handlers)."""
        return await self.endpoint.run_query(request, params, sparql, **kw)

    async def search(self, request: Request) -> Response:
        """/search: a page of full-text hits, searched in a worker under its limits (the
        library's search, kg.library.operations.search_hits), as JSON or as a page."""
        from kg.library import SearchHit, SearchPage

        params = Params(list(request.query_params.multi_items()))
        text = params.one("q")
        if text is None or not text.strip():
            raise ParameterError("give the search text as ?q=… (words, \"a phrase\", prefix*)")
        type_ = params.one("type") or None
        raw_limit = params.one("limit") or "10"
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 1000:
            raise ParameterError(f"limit {raw_limit[:20]!r} is not a number from 1 to 1000")
        raw_page = params.one("page") or "1"
        if not raw_page.isdigit() or not 1 <= int(raw_page) <= 10_000:
            raise ParameterError(f"page {raw_page[:20]!r} is not a number from 1 to 10000")
        limit, page = int(raw_limit), int(raw_page)
        await self.endpoint.search_ready()
        data = await self.running.call(
            "search_hits", text=text, type=type_, top=limit, page=page
        )
        hits = data["hits"]
        found = SearchPage(
            query=text, type=type_, page=data["page"], limit=data["limit"],
            total=data["total"], counts=data["counts"],
            hits=tuple(SearchHit.from_json(h) for h in hits),
        )
        context = search_page.context(text, type_, found, hits, self.config.base_iri)
        accept = request.headers.get("accept", "")
        wants_html = params.one(_FORMAT_PARAM) == "html" or (
            params.one(_FORMAT_PARAM) is None and "text/html" in accept
        )
        if wants_html:
            return Response(
                search_page.render(context, await self._store_sources()),
                media_type="text/html; charset=utf-8",
                headers={"Vary": "Accept", "Content-Security-Policy": _PAGE_CSP,
                         "X-Content-Type-Options": "nosniff"},
            )
        return JsonResponse({**data, "links": context["links"]}, headers={"Vary": "Accept"})

    # -- named queries -------------------------------------------------------------------------
    async def query_list(self, request: Request) -> Response:
        items = [
            {**q.as_json(), "url": f"/queries/{q.name}", "sparql": q.sparql}
            for q in self.queries.values()
        ]
        if _wants_html(request):
            listed = [
                {
                    "name": q.name,
                    "summary": q.summary,
                    "href": f"/queries/{q.name}"
                    + query_string({p.name: p.example for p in q.params if p.example}),
                    "params": [{"name": p.name, "kind": p.describe()} for p in q.params],
                }
                for q in self.queries.values()
            ]
            body = render(
                "queries.html",
                title="named queries",
                queries=listed,
                sources=await self._store_sources(),
            )
            return _page(body, vary=True)
        return JsonResponse(items, headers={"Vary": "Accept"})

    def _named_values(self, request: Request) -> tuple[NamedQuery, Params, dict[str, str]]:
        name = request.path_params["name"]
        named = self.queries.get(name)
        if named is None:
            raise NotFoundError(f"no query named {name!r}; GET /queries lists them")
        params = Params(list(request.query_params.multi_items()))
        values: dict[str, str] = {}
        for key, given in params.values.items():
            if key == _FORMAT_PARAM and named.param(key) is None:
                continue
            if len(given) > 1:
                raise ParameterError(f"parameter {key!r} is given {len(given)} times")
            values[key] = given[0]
        return named, params, values

    async def _resolved(self, named: NamedQuery, values: dict[str, str]) -> dict[str, str]:
        """The values with every name, slug or id of a thing turned into its IRI, looked up
        in a worker by the resolver every face uses (kg.query.resolve)."""
        kinds = {k: p.cls for k in values if (p := named.param(k)) is not None and p.cls}
        if not kinds:
            return values
        bind(named, values, self.config.base_iri)  # every value's form is checked first
        from kg.query.resolve import raise_reply

        reply = await self.running.graph(
            "resolve",
            kinds=kinds,
            values={k: values[k] for k in kinds},
            base_iri=self.config.base_iri,
        )
        return {**values, **raise_reply(reply)}

    async def named_query_text(self, request: Request) -> Response:
        """The named query with its parameters bound as a VALUES block (the page's forms
        show and run it; the values are checked by the same `bind` as /queries/NAME)."""
        named, _, values = self._named_values(request)
        values = await self._resolved(named, values)
        bindings = bind(named, values, self.config.base_iri)
        text = with_values(named.sparql, bindings).strip() + "\n"
        return PlainTextResponse(text, media_type="application/sparql-query")

    async def named_query(self, request: Request) -> Response:
        named, params, values = self._named_values(request)
        values = await self._resolved(named, values)
        bindings = bind(named, values, self.config.base_iri)
        if named.param(_FORMAT_PARAM) is None and conneg.choose(
            params.all(_FORMAT_PARAM), request.headers.get("accept"), conneg.NAMED_QUERY_OFFERS
        ) == conneg.HTML:
            return await self._named_query_page(named, values, bindings)
        prepared = prepare_local(named.sparql, bindings)
        if named.param(_FORMAT_PARAM) is not None:
            params.values.pop(_FORMAT_PARAM, None)
        return await self._run_query(
            request,
            params,
            prepared.sparql,
            substitutions=prepared.substitutions or None,
            bindings=bindings,
        )

    async def _store_sources(self) -> list[dict[str, Any]]:
        """The footer's sources for a page drawn from the whole store."""
        rows = await self.running.result(story.store_sources_query())
        base = self.config.base_iri
        view = linked_data.Labeller(linked_data.Description(base), base)
        return story.sources(view, story.rows_of(rows))

    async def _named_query_page(
        self, named: NamedQuery, values: Mapping[str, str], bindings: Mapping[str, Term]
    ) -> Response:
        """A named query opened in a browser: its answer as a table, with a link to download
        it in each format the endpoint serves (the same URL with ?format=). The page is kept
        until the store changes (a new snapshot moves the pool's generation on)."""
        text = with_values(named.sparql, bindings)
        key = (self.running.generation, named.name, json.dumps([text, sorted(values.items())]))
        body = self.query_pages.get(key)
        if body is None:
            form = shape_form(named.sparql)
            expand = await self._uses_search(text)
            answer = await self.running.result(
                text, search_bindings=dict(bindings) if expand else None
            )
            context = query_page.context(
                named, values, form, answer, self.config.base_iri, f"/queries/{named.name}"
            )
            context["sources"] = await self._store_sources()
            body = render("query.html", context)
            self.query_pages.put(key, body)
        return Response(
            body,
            media_type="text/html; charset=utf-8",
            headers={
                "Vary": "Accept",
                "Content-Security-Policy": _PAGE_CSP,
                "X-Content-Type-Options": "nosniff",
            },
        )

    # -- Linked Data ---------------------------------------------------------------------------
    async def entity(self, request: Request) -> Response:
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        iri = linked_data.iri_for_path(raw_path.decode("latin-1"), self.config.base_iri)
        if iri is None:
            raise NotFoundError(f"{request.url.path} names nothing here")
        params = Params(list(request.query_params.multi_items()))
        accept = request.headers.get("accept")
        media_type = conneg.choose(params.all(_FORMAT_PARAM), accept, conneg.PAGE_OFFERS)
        if media_type is None:
            return _error(406, f"an entity is offered as {conneg.offered(conneg.PAGE_OFFERS)}")
        pool = self.running
        html = media_type == conneg.HTML
        cap = linked_data.INCOMING_HTML_LIMIT if html else linked_data.INCOMING_RDF_LIMIT
        # Whether it names a graph, and (as it most often does not) its description and a
        # paper's story, all in the workers at once: one round trip less for an entity.
        graph, outgoing, incoming, early = await asyncio.gather(
            pool.result(linked_data.is_graph_query(iri)),
            pool.result(linked_data.outgoing_query(iri)),
            pool.result(linked_data.incoming_query(iri, labels=html, limit=cap + 1)),
            story.early_story(pool, iri, self.config.base_iri) if html else _none(),
        )
        is_graph = isinstance(graph, AskResult) and graph.value
        if is_graph and not html:
            contents = await pool.result(linked_data.graph_contents_query(iri))
            assert isinstance(contents, GraphResult)
            ntriples = "".join(sorted(contents.ntriples.splitlines(keepends=True)))
        else:
            if is_graph:
                outgoing = await pool.result(linked_data.graph_rows_query(iri))
                incoming = SelectResult(["s", "p"], [])
            assert isinstance(outgoing, SelectResult) and isinstance(incoming, SelectResult)
            desc = linked_data.describe(iri, outgoing, incoming, cap + 1)
            if desc.empty:
                raise NotFoundError(f"the graph holds nothing about {iri}")
            if html:
                page = await pages.entity_page(
                    pool,
                    desc,
                    self.config.base_iri,
                    is_graph=is_graph,
                    number=story.page_number(params.one("page")),
                    early=None if is_graph else early,
                )
                return Response(
                    page,
                    media_type="text/html; charset=utf-8",
                    headers={
                        "Vary": "Accept",
                        "Content-Security-Policy": _PAGE_CSP,
                        "X-Content-Type-Options": "nosniff",
                    },
                )
            ntriples = desc.ntriples()
        body = graph_text(ntriples, rdf_format(media_type).name)
        return Response(
            body, media_type=conneg.content_type(media_type), headers={"Vary": "Accept"}
        )

    # -- the page ------------------------------------------------------------------------------
    def _render_index(self) -> str:
        template = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
        examples = []
        for q in self.queries.values():
            try:
                bound = bind(q, {p.name: p.example for p in q.params}, self.config.base_iri)
                text = with_values(q.sparql, bound)
            except KgError:
                text = q.sparql
            examples.append(
                {
                    **q.as_json(),
                    "form": shape_form(q.sparql),
                    "query": text.strip() + "\n",
                }
            )
        data = json.dumps(
            {
                "examples": examples,
                "prefixes": QUERY_PREFIXES,
                "base": self.config.base_iri,
                "publicBase": self.config.public_base,
            },
            ensure_ascii=True,
        )
        # Inside <script type="application/json"> only "</" could end the block early.
        data = data.replace("</", "<\\/").replace("<!--", "<\\!--")
        return template.replace("{{EXAMPLES_JSON}}", data)

    async def _home_page(self, timeout: float | None = None) -> str:
        """The front page, made once a store version (kg.serve.home; `timeout`: its
        queries' seconds instead of the pool's, for the warm-up)."""
        pool = self.running
        key = (pool.generation, "", "home")
        body = self.query_pages.get(key)
        if body is None:

            async def site_feed() -> Any:
                try:
                    return await self.feeds.get(pool)
                except KgError:
                    return None  # the page shows the rest; /feeds/sota.atom says what failed

            found = await home.context(pool, self.config.base_iri, site_feed(), timeout)
            body = render("home.html", found)
            self.query_pages.put(key, body)
        return body

    async def tasks(self, request: Request) -> Response:
        """Every task, by area (kg.serve.home.tasks_context), made once a store version."""
        pool = self.running
        key = (pool.generation, "", "tasks")
        body = self.query_pages.get(key)
        if body is None:
            body = render("tasks.html", await home.tasks_context(pool, self.config.base_iri))
            self.query_pages.put(key, body)
        return _page(body)

    async def home(self, request: Request) -> Response:
        if "query" in request.query_params:  # an older link to the query page at /
            return RedirectResponse("/query?" + request.url.query, status_code=301)
        return _page(await self._home_page())

    async def index(self, request: Request) -> Response:
        return Response(
            self.index_html,
            media_type="text/html; charset=utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    async def health(self, request: Request) -> Response:
        """The pool's state, from the server process alone: it needs no worker, so it
        answers while every worker is busy (issue 31)."""
        stats = self.running.stats
        return JsonResponse(
            {
                "status": "ok",
                "worker": stats.worker_pids[0] if stats.worker_pids else None,
                "idle": self.running.idle,
                "workers": self.running.size,
                "workers_running": len(stats.worker_pids),
                "generation": self.running.generation,
                "completed": stats.completed,
                "timeouts": stats.timeouts,
                "replaced": stats.replaced,
                "warming": self.warming is not None,
            }
        )


def as_query_parameter(parameter: Param) -> str:
    """How the server spells the setting an error is about: a request's query parameter
    (`top`, `dataset`), or the operator's `kg serve --workers`."""
    if parameter.role == "setting":
        return "kg serve --" + parameter.name.replace("_", "-")
    return parameter.name


def _page(body: str, *, status: int = 200, vary: bool = False) -> Response:
    """A page of the site (a template's HTML): no script, nothing loaded from elsewhere."""
    headers = {"Content-Security-Policy": _PAGE_CSP, "X-Content-Type-Options": "nosniff"}
    if vary:
        headers["Vary"] = "Accept"
    return Response(
        body, status_code=status, media_type="text/html; charset=utf-8", headers=headers
    )


def _wants_html(request: Request) -> bool:
    return not_found.wants_html(request)


async def _not_found(request: Request, message: str, exc: Exception | None = None) -> Response:
    """A GET of a path that names nothing: a redirect to what the resolver reads it as, or a
    404 with the nearest names (kg.serve.not_found): a page for browsers, JSON for clients
    when there are names to offer (as a miss of a query's parameter), else text."""
    server: KgServer = request.app.state.server
    raw = (request.scope.get("raw_path") or request.url.path.encode()).decode("latin-1")
    found = not_found.Nearest()
    if server.pool is not None:
        found = await not_found.nearest(server.pool, server.config.base_iri, raw)
    if found.redirect is not None:
        query = request.url.query
        return RedirectResponse(found.redirect + (f"?{query}" if query else ""), status_code=302)
    named = isinstance(exc, UnknownNameError | AmbiguousNameError)
    if named and not found.candidates:
        assert isinstance(exc, UnknownNameError | AmbiguousNameError)
        base = server.config.base_iri
        found.candidates = [
            {"href": linked_data.local_href(c, base), "label": c.removeprefix(base), "iri": c}
            for c in exc.candidates
        ]
    if _wants_html(request):
        sources = await server._store_sources() if server.pool is not None else []
        return _page(not_found.page(message, found, sources), status=404, vary=True)
    if named or found.candidates:
        assert exc is None or isinstance(exc, KgError)
        body = {
            "error": message,
            "parameter": exc.parameter.name if named and exc and exc.parameter else None,
            "candidates": [str(c["iri"]) for c in found.candidates],
        }
        return JsonResponse(body, status_code=404, headers={"Vary": "Accept"})
    return _error(404, message, {"Vary": "Accept"})


async def _kg_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, KgError)
    message = _one_line(exc.worded(as_query_parameter))
    if isinstance(exc, NotFoundError) and request.method in ("GET", "HEAD"):
        return await _not_found(request, message, exc)
    if isinstance(exc, UnknownNameError | AmbiguousNameError):  # a name that names no one thing
        body = {
            "error": message,
            "parameter": exc.parameter.name if exc.parameter else None,
            "candidates": list(exc.candidates),
        }
        return JsonResponse(body, status_code=status_for(exc))
    # a parse error says what and where itself (kg.rdf.query_text.syntax_message)
    return _error(status_for(exc), message)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404 and request.method in ("GET", "HEAD"):
        return await _not_found(request, f"{request.url.path} names nothing here")
    return _error(exc.status_code, str(exc.detail), exc.headers)


class ClientMiddleware:
    """Names the client (its address) for the pool's fair shares (kg.serve.pool.CLIENT)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        client = scope.get("client")
        token = CLIENT.set(client[0] if client else None)
        try:
            await self.app(scope, receive, send)
        finally:
            CLIENT.reset(token)


def create_app(source: Source, config: ServerConfig) -> Starlette:
    """The ASGI application serving `source` (use it with uvicorn, or in tests)."""
    if config.allow_update and not config.update_token:
        raise UsageError(
            "{parameter} needs a bearer token (an update token, or KG_UPDATE_TOKEN)",
            parameter=Param("allow_update", "setting"),
        )
    server = KgServer(source, config)
    routes = [
        Route("/", server.home, methods=["GET"]),
        Route("/query", server.index, methods=["GET"]),
        Route("/tasks", server.tasks, methods=["GET"]),
        Route("/sparql", server.endpoint.sparql, methods=["GET", "POST"]),
        Route("/update", server.endpoint.update, methods=["POST"]),
        Route("/queries", server.query_list, methods=["GET"]),
        Route("/search", server.search, methods=["GET"]),
        Route("/queries/{name}", server.named_query, methods=["GET"]),
        Route("/queries/{name}/sparql", server.named_query_text, methods=["GET"]),
        Route("/health", server.health, methods=["GET"]),
        Route("/mcp", server.mcp, methods=["GET", "POST", "DELETE"]),
        *similar.routes(lambda: server.running, config.base_iri),
        # Leaderboards (kg/serve/leaderboards.py): the page, chart.svg and history.json of
        # /leaderboard/{task}/{dataset}; before the entity routes, which answer its RDF forms.
        *leaderboards.routes(lambda: server.running, config.base_iri, server.entity),
        # Atom feeds of new bests (kg/serve/feeds.py): before the entity routes too.
        *feeds.routes(lambda: server.running, config.base_iri, config.public_base, server.feeds),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        *(
            Route(f"/{kind}/{{rest:path}}", server.entity, methods=["GET"])
            for kind in linked_data.KINDS
        ),
    ]
    middleware = []
    if config.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(config.cors_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["Accept", "Content-Type", "Authorization"],
                max_age=600,
            )
        )
    middleware.insert(0, Middleware(ClientMiddleware))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={KgError: _kg_error, HTTPException: _http_error},
        lifespan=server.lifespan,
    )
    app.state.server = server
    return app
