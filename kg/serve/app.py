"""The web application behind `kg serve`.

* `/sparql`: the SPARQL 1.1 Protocol (query by GET, form POST or `application/sparql-query`
  POST; `default-graph-uri` / `named-graph-uri`; content negotiation; a service
  description when there is no query). Read-only: updates get 403.
* `/update`: SPARQL 1.1 Update, only with `allow_update` and the bearer token.
* `/queries`, `/queries/NAME?param=…`: the named queries of `queries/*.rq`, bound safely.
* `/paper/<slug>`, `/method/…`, `/graph/record/…`: Linked Data for kg's instance IRIs.
* `/search?q=…&type=…&page=…&limit=…`: full-text search, a page of hits with the total and
  the counts per class (JSON; a page for browsers), read from
  the index beside the store (kg.search); SPARQL's kg search blocks are expanded to VALUES
  in the worker that runs the query, under its limits (`KgServer._uses_search`).
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
import hmac
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

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
    ForbiddenError,
    KgError,
    MemoryLimitError,
    ModelNotTrainedError,
    NotFoundError,
    Param,
    ParameterError,
    QuerySyntaxError,
    QueryTimeoutError,
    ResultTooLargeError,
    UnknownNameError,
    UsageError,
)
from kg.export.rdfio import graph_text
from kg.query.named import NamedQuery, bind, load_queries, prepare_local, with_values
from kg.rdf.engine import convert, parse_to_ntriples
from kg.rdf.formats import W3C_FORMATS, rdf_format
from kg.rdf.results import SelectResult, Term
from kg.rdf.sparql_scan import Shape, refuse_outbound, scan
from kg.rdf.terms import is_absolute_iri
from kg.rdf.vocab import PREFIXES
from kg.resources import static_dir
from kg.serve import conneg, similar
from kg.serve.mcp import LazyMcp
from kg.serve.pages import not_found
from kg.serve.pages import search as search_page
from kg.serve.pages.respond import html_response
from kg.serve.pages.site import Pages
from kg.serve.pool import CLIENT, QueryJob, QueryPool, Source
from kg.serve.render import JsonResponse

if TYPE_CHECKING:
    from kg.search import StoreSearch

STATIC_DIR = static_dir()
_FORMAT_PARAM = "format"
_SD = "http://www.w3.org/ns/sparql-service-description#"
_IRI_FORBIDDEN = frozenset('<>"{}|^`\\ \t\r\n')

_STATUS: tuple[tuple[type[KgError], int], ...] = (
    (QuerySyntaxError, 400),
    (ParameterError, 400),
    (UsageError, 400),
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (ResultTooLargeError, 422),
    (QueryTimeoutError, 503),
    (ModelNotTrainedError, 503),
    (MemoryLimitError, 507),
)


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


def status_for(exc: KgError) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return PlainTextResponse(message.rstrip() + "\n", status_code=status, headers=headers)


def _negotiated(body: str | bytes, media_type: str) -> Response:
    return Response(body, media_type=conneg.content_type(media_type), headers={"Vary": "Accept"})


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Params:
    """Request parameters with repeats kept (the protocol repeats default-graph-uri)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.values: dict[str, list[str]] = {}
        for key, value in pairs:
            self.values.setdefault(key, []).append(value)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def all(self, key: str) -> list[str]:
        return self.values.get(key, [])

    def one(self, key: str) -> str | None:
        values = self.all(key)
        if len(values) > 1:
            raise UsageError(f"give the {key!r} parameter once, not {len(values)} times")
        return values[0] if values else None


async def _none() -> None:
    return None


async def read_body(request: Request, limit: int, timeout: float | None = None) -> bytes:
    """The request body, refused with 413 as soon as it passes `limit` bytes, and with 408
    when it has not all arrived within `timeout` seconds (a client trickling it)."""
    if timeout is not None:
        try:
            async with asyncio.timeout(timeout):
                return await read_body(request, limit)
        except TimeoutError:
            raise HTTPException(
                408,
                f"the request body did not arrive within {timeout:g} s; send it at once",
                headers={"Connection": "close"},
            ) from None
    too_large = HTTPException(
        413,
        f"the request body is larger than this server's limit of {limit:,} bytes; "
        "send a shorter query (or ask the operator to raise --max-body-kb)",
    )
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _decode(body: bytes, what: str) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"the {what} is not UTF-8 text") from None


def _form(body: bytes) -> list[tuple[str, str]]:
    text = _decode(body, "form body")
    try:
        return parse_qsl(text, keep_blank_values=True, errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise UsageError("the form body is not valid application/x-www-form-urlencoded") from None


def _graph_iris(values: list[str], param: str) -> list[str]:
    for value in values:
        if not is_absolute_iri(value) or _IRI_FORBIDDEN & set(value):
            raise UsageError(f"{param} {value[:80]!r} is not an absolute IRI")
    return values


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
        self._store_search: StoreSearch | None = None
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
        if self._store_search is not None:
            self._store_search.refresh()
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

    # -- helpers -------------------------------------------------------------------------------
    def _check_targets(self, shape: Shape) -> None:
        from kg.search.sparql import SERVICE_IRI

        refuse_outbound(shape, self.config.allow_service, frozenset({SERVICE_IRI}))

    def _read_only(self) -> ForbiddenError:
        if self.config.allow_update:
            return ForbiddenError(
                "SPARQL updates are not accepted at /sparql; POST them to /update with the "
                "bearer token"
            )
        return ForbiddenError(
            "this endpoint is read-only: SPARQL updates are refused (start kg serve with "
            "--allow-update to accept them at /update)"
        )

    @staticmethod
    def _types(request: Request, params: Params) -> tuple[str | None, str | None]:
        """The results and graph media types the client takes (None: none acceptable)."""
        formats = params.all(_FORMAT_PARAM)
        accept = request.headers.get("accept")
        return (
            conneg.choose(formats, accept, conneg.RESULT_OFFERS),
            conneg.choose(formats, accept, conneg.GRAPH_OFFERS),
        )

    # -- search --------------------------------------------------------------------------------
    def _search(self) -> StoreSearch:
        """The search over the served store, opened on first use (a stale or missing index is
        rebuilt from a snapshot of its own); refreshed every --refresh seconds."""
        if self._store_search is None:
            from kg.search import StoreSearch

            if self.source.on_disk:
                self._store_search = StoreSearch(self.source.open, self.source.path)
            else:
                self._store_search = StoreSearch(self.source.open(), None)
        self._store_search.refresh(every=self.config.refresh)
        return self._store_search

    async def _uses_search(self, sparql: str) -> bool:
        """Whether the query holds a kg search block; if so, the index is made current here
        (a stale one is rebuilt from a snapshot) and a worker expands the blocks, under the
        query's time and memory limits (issue 31). Queries without one never open it."""
        from kg.search.sparql import uses_search

        if "SERVICE" not in sparql.upper() and "\\" not in sparql:
            return False
        if not await asyncio.to_thread(uses_search, sparql):
            return False
        await asyncio.to_thread(self._search)
        return True

    async def search(self, request: Request) -> Response:
        from kg.search import details_query, with_details

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
        results = await asyncio.to_thread(
            lambda: self._search().find(text, type_, page=page, limit=limit)
        )
        hits = results.hits
        papers = [h.iri for h in hits if h.type == "paper"]
        rows = await self.running.result(details_query(papers)) if papers else None
        described = (
            with_details(hits, rows) if isinstance(rows, SelectResult)
            else [h.as_json() for h in hits]
        )
        context = search_page.context(text, type_, results, described, self.config.base_iri)
        accept = request.headers.get("accept", "")
        wants_html = params.one(_FORMAT_PARAM) == "html" or (
            params.one(_FORMAT_PARAM) is None and "text/html" in accept
        )
        if wants_html:
            return html_response(search_page.render(context, await self.pages.store_sources()))
        return JsonResponse(
            {**results.as_json(text, type_, described), "links": context["links"]},
            headers={"Vary": "Accept"},
        )

    async def _run_query(
        self,
        request: Request,
        params: Params,
        sparql: str,
        *,
        substitutions: Mapping[str, Term] | None = None,
        default_graphs: list[str] | None = None,
        named_graphs: list[str] | None = None,
        bindings: Mapping[str, Term] | None = None,
    ) -> Response:
        expand = await self._uses_search(sparql)
        shape = scan(sparql)
        if shape.is_update:
            raise self._read_only()
        self._check_targets(shape)
        results_type, graph_type = self._types(request, params)
        wanted = graph_type if shape.is_graph_query else results_type
        if shape.form is not None and wanted is None:
            offers = conneg.GRAPH_OFFERS if shape.is_graph_query else conneg.RESULT_OFFERS
            return _error(
                406,
                f"a {shape.form} result cannot be sent as {request.headers.get('accept')}; "
                f"this endpoint offers {conneg.offered(offers)}",
            )
        # The protocol's dataset replaces the union default graph (FROM and FROM NAMED in
        # the query do too: GraphStore.query sees to that).
        union = default_graphs is None and named_graphs is None
        answer = await self.running.serialize(
            QueryJob(
                sparql,
                results_type=results_type or conneg.JSON,
                graph_type=graph_type or conneg.TURTLE,
                substitutions=substitutions,
                union=union,
                default_graphs=default_graphs,
                named_graphs=named_graphs,
                prefixes=PREFIXES,
                expand_search=expand,
                search_bindings=bindings if expand else None,
            )
        )
        return _negotiated(answer.body, answer.media_type)

    # -- /sparql -------------------------------------------------------------------------------
    async def sparql(self, request: Request) -> Response:
        if request.method in ("GET", "HEAD"):  # Starlette answers HEAD with GET's headers
            params = Params(list(request.query_params.multi_items()))
            if "query" not in params and "update" not in params:
                return self.service_description(request, params)
        else:
            media_type = _media_type(request)
            body = await read_body(
                request, self.config.max_body_bytes, self.config.body_timeout
            )
            url_pairs = list(request.query_params.multi_items())
            if media_type == "application/x-www-form-urlencoded":
                params = Params(url_pairs + _form(body))
            elif media_type == "application/sparql-query":
                if any(k in ("query", "update") for k, _ in url_pairs):
                    raise UsageError("with application/sparql-query the query is the body alone")
                params = Params([*url_pairs, ("query", _decode(body, "query"))])
            elif media_type == "application/sparql-update":
                raise self._read_only()
            else:
                return _error(
                    415,
                    f"POST a query as application/x-www-form-urlencoded (query=…) or as "
                    f"application/sparql-query, not {media_type or 'without a Content-Type'}",
                )
        if "update" in params:
            raise self._read_only()
        sparql = params.one("query")
        if sparql is None or not sparql.strip():
            raise UsageError("the query parameter is empty; give a SPARQL query")
        defaults, nameds = params.all("default-graph-uri"), params.all("named-graph-uri")
        dataset = bool(defaults or nameds)
        return await self._run_query(
            request,
            params,
            sparql,
            default_graphs=_graph_iris(defaults, "default-graph-uri") if dataset else None,
            named_graphs=_graph_iris(nameds, "named-graph-uri") if dataset else None,
        )

    def service_description(self, request: Request, params: Params) -> Response:
        accept = request.headers.get("accept")
        media_type = conneg.choose(params.all(_FORMAT_PARAM), accept, conneg.PAGE_OFFERS)
        if media_type == conneg.HTML:
            return RedirectResponse("/query", status_code=303)
        if media_type is None:
            return _error(
                406, f"the service description is offered as {conneg.offered(conneg.GRAPH_OFFERS)}"
            )
        endpoint = str(request.url.replace(query="", fragment=""))
        languages = ["sd:SPARQL11Query"] + (
            ["sd:SPARQL11Update"] if self.config.allow_update else []
        )
        features = ["sd:UnionDefaultGraph"]
        if self.config.allow_service:
            features.append("sd:BasicFederatedQuery")
        turtle = f"""
@prefix sd: <{_SD}> .
@prefix dcterms: <http://purl.org/dc/terms/> .
<{endpoint}> a sd:Service ;
  dcterms:title "kg SPARQL endpoint" ;
  sd:endpoint <{endpoint}> ;
  sd:supportedLanguage {", ".join(languages)} ;
  sd:feature {", ".join(features)} ;
  sd:resultFormat {", ".join(f"<{f.w3c}>" for f in conneg.SERVED_FORMATS)} ;
  sd:defaultEntailmentRegime <http://www.w3.org/ns/entailment/Simple> ;
  sd:defaultDataset [ a sd:Dataset ; sd:defaultGraph [ a sd:Graph ] ] .
"""
        ntriples = parse_to_ntriples(turtle.encode(), "turtle")
        fmt = rdf_format(media_type).name
        if fmt in ("turtle", "rdfxml"):
            body: str | bytes = convert(ntriples, fmt, {**PREFIXES, "sd": _SD, "fmt": W3C_FORMATS})
        else:
            body = graph_text(ntriples, fmt)
        return Response(
            body, media_type=conneg.content_type(media_type), headers={"Vary": "Accept"}
        )

    # -- /update -------------------------------------------------------------------------------
    def _authorise(self, request: Request) -> None:
        token = self.config.update_token or ""
        given = request.headers.get("authorization", "")
        scheme, _, credential = given.partition(" ")
        if (
            not token
            or scheme.lower() != "bearer"
            or not hmac.compare_digest(credential.strip().encode(), token.encode())
        ):
            raise HTTPException(
                401,
                "updates need the server's token: send the header 'Authorization: Bearer TOKEN'",
                headers={"WWW-Authenticate": 'Bearer realm="kg"'},
            )

    async def update(self, request: Request) -> Response:
        if not self.config.allow_update:
            raise self._read_only()
        self._authorise(request)
        media_type = _media_type(request)
        body = await read_body(request, self.config.max_body_bytes, self.config.body_timeout)
        if media_type == "application/sparql-update":
            params = Params(
                [*request.query_params.multi_items(), ("update", _decode(body, "update"))]
            )
        elif media_type == "application/x-www-form-urlencoded":
            params = Params(_form(body))
        else:
            return _error(
                415,
                "POST an update as application/sparql-update or as a form (update=…), not "
                f"{media_type or 'without a Content-Type'}",
            )
        if "using-graph-uri" in params or "using-named-graph-uri" in params:
            raise UsageError("using-graph-uri is not supported here; write USING in the update")
        text = params.one("update")
        if text is None or not text.strip():
            raise UsageError("the update parameter is empty; give a SPARQL update")
        shape = scan(text)
        if shape.form is not None:
            raise UsageError(f"this is a {shape.form} query, not an update: send it to /sparql")
        self._check_targets(shape)
        await self.running.update(text)
        return Response(status_code=204)

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
        Route("/sparql", server.sparql, methods=["GET", "POST"]),
        Route("/update", server.update, methods=["POST"]),
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
