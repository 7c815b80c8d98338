"""The web application behind `kg serve`.

* `/sparql` and `/update`: the SPARQL 1.1 Protocol (kg.serve.endpoint).
* `/queries`, `/queries/NAME?param=…`: the named queries of `queries/*.rq`, bound safely.
* `/paper/<slug>`, `/method/…`, `/graph/record/…`: Linked Data for kg's instance IRIs.
* `/search?q=…&type=…&page=…&limit=…`: full-text search, a page of hits with the total and
  the counts per class (JSON; a page for browsers), searched in a worker under its limits
  (the index beside the store, kg.search); SPARQL's kg search blocks are expanded to VALUES
  in the worker that runs the query (`Endpoint.uses_search`).
* `/`: the front page (kg.serve.pages.home): areas, tasks, the most-used benchmarks, the newest
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
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
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
from kg.query.named import NamedQuery, bind, load_queries, prepare_local, with_values
from kg.resources import static_dir
from kg.serve import conneg, similar
from kg.serve.endpoint import FORMAT_PARAM as _FORMAT_PARAM
from kg.serve.endpoint import Endpoint, Params, read_body, status_for
from kg.serve.endpoint import error_response as _error
from kg.serve.mcp import LazyMcp
from kg.serve.pages import not_found
from kg.serve.pages import search as search_page
from kg.serve.pages.respond import html_response
from kg.serve.pages.site import Pages
from kg.serve.pool import CLIENT, QueryPool, Source
from kg.serve.render import JsonResponse

STATIC_DIR = static_dir()

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
        #: Set by a runner (the CLI): called once the pool is up, or with the startup error.
        self.on_ready: Callable[[KgServer], None] | None = None
        self.on_failed_start: Callable[[KgError], None] | None = None
        #: /sparql and /update (kg.serve.endpoint), over this server's pool.
        self.endpoint = Endpoint(config, lambda: self.running)
        self.mcp = LazyMcp(
            self._mcp_app,
            lambda request: read_body(request, config.max_body_bytes, config.body_timeout),
        )
        #: The site's pages (kg.serve.pages): the front page, entities, leaderboards, feeds,
        #: the named queries' pages, and what they made at this store version.
        self.pages = Pages(config.base_iri, config.public_base)
        #: The warm-up's task while it runs (kg serve's /health says so).
        self.warming: asyncio.Task[None] | None = None

    # -- life cycle ----------------------------------------------------------------------------
    def load_queries(self) -> None:
        try:
            self.queries = load_queries(self.config.queries_dir)
        except NotFoundError:
            self.queries = {}
        self.pages.load_queries(self.queries)

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
        self.pool = self.pages.pool = pool
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
            self.pool = self.pages.pool = None
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
                self.pages.feeds.get(pool, timeout=GRAPH_TIMEOUT),
                return_exceptions=True,
            )
            await asyncio.gather(
                *(pool.graph("warm", GRAPH_TIMEOUT) for _ in range(pool.size)),
                return_exceptions=True,
            )
            await self.pages.home_page(GRAPH_TIMEOUT)
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
            return html_response(search_page.render(context, await self.pages.store_sources()))
        return JsonResponse({**data, "links": context["links"]}, headers={"Vary": "Accept"})

    # -- named queries -------------------------------------------------------------------------
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
            return await self.pages.named_query_page(named, values, bindings, self._uses_search)
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


async def _not_found(request: Request, message: str, exc: Exception | None = None) -> Response:
    server: KgServer = request.app.state.server
    return await not_found.answer(
        request, message, exc, server.pool, server.config.base_iri, server.pages.store_sources
    )


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
        Route("/sparql", server.endpoint.sparql, methods=["GET", "POST"]),
        Route("/update", server.endpoint.update, methods=["POST"]),
        Route("/search", server.search, methods=["GET"]),
        Route("/queries/{name}", server.named_query, methods=["GET"]),
        Route("/queries/{name}/sparql", server.named_query_text, methods=["GET"]),
        Route("/health", server.health, methods=["GET"]),
        Route("/mcp", server.mcp, methods=["GET", "POST", "DELETE"]),
        *similar.routes(lambda: server.running, config.base_iri),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        # The site's pages (kg.serve.pages): the front page, the query editor, the tasks, the
        # named queries' list, leaderboards, feeds, then every entity's page.
        *server.pages.routes(),
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
