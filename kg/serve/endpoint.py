"""The SPARQL 1.1 Protocol of `kg serve`: `/sparql` and `/update`, their service
description, and the request decoding they share with the other routes (`Params`, the form
and body readers, `status_for`).

* `/sparql`: a query by GET, form POST or `application/sparql-query` POST;
  `default-graph-uri` / `named-graph-uri`; content negotiation; a service description when
  there is no query. Read-only: updates get 403.
* `/update`: SPARQL 1.1 Update, only with `allow_update` and the bearer token.

Every query runs in a `QueryPool` worker (kg.serve.pool), off the event loop, under the time
and size limits; the answer is sent only once complete, so a failure is always an error
status. A query's kg search blocks (kg.search.sparql) are expanded to VALUES in the worker
that runs it, under its limits (`Endpoint.uses_search`).
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Callable, Mapping
from typing import Protocol
from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from kg.errors import (
    ForbiddenError,
    KgError,
    MemoryLimitError,
    ModelNotTrainedError,
    NotFoundError,
    ParameterError,
    QuerySyntaxError,
    QueryTimeoutError,
    ResultTooLargeError,
    UsageError,
)
from kg.export.rdfio import graph_text
from kg.rdf.engine import convert, parse_to_ntriples
from kg.rdf.formats import W3C_FORMATS, rdf_format
from kg.rdf.results import Term
from kg.rdf.sparql_scan import Shape, refuse_outbound, scan
from kg.rdf.terms import is_absolute_iri
from kg.rdf.vocab import PREFIXES
from kg.serve import conneg
from kg.serve.pool import QueryJob, QueryPool

#: The parameter that names a format, beside Accept (`?format=json`).
FORMAT_PARAM = "format"

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


def status_for(exc: KgError) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return PlainTextResponse(message.rstrip() + "\n", status_code=status, headers=headers)


def _negotiated(body: str | bytes, media_type: str) -> Response:
    return Response(body, media_type=conneg.content_type(media_type), headers={"Vary": "Accept"})


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


class Settings(Protocol):
    """What the endpoint reads of the server's configuration (kg.serve.app.ServerConfig)."""

    @property
    def allow_update(self) -> bool: ...
    @property
    def update_token(self) -> str | None: ...
    @property
    def allow_service(self) -> frozenset[str]: ...
    @property
    def max_body_bytes(self) -> int: ...
    @property
    def body_timeout(self) -> float: ...


class Endpoint:
    """`/sparql` and `/update` over the server's running pool (`running()` raises until it
    is up)."""

    def __init__(self, config: Settings, running: Callable[[], QueryPool]) -> None:
        self.config = config
        self.running = running
        #: The pool generation whose search index a worker has made current (search_ready).
        self._search_generation: int | None = None

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
        formats = params.all(FORMAT_PARAM)
        accept = request.headers.get("accept")
        return (
            conneg.choose(formats, accept, conneg.RESULT_OFFERS),
            conneg.choose(formats, accept, conneg.GRAPH_OFFERS),
        )

    # -- search ------------------------------------------------------------------------------
    async def search_ready(self) -> None:
        """Have a worker make the search index current (a stale or missing one is rebuilt
        from the worker's snapshot, under the graph calls' time limit), once a store
        version: the searches after it only search."""
        from kg.serve.similar import GRAPH_TIMEOUT

        pool = self.running()
        generation = pool.generation
        if self._search_generation != generation:
            await pool.call("search_ready", GRAPH_TIMEOUT)
            self._search_generation = generation

    async def uses_search(self, sparql: str) -> bool:
        """Whether the query holds a kg search block; if so, the index is made current first
        (`search_ready`) and the worker that runs the query expands the blocks, under the
        query's time and memory limits. Queries without one never open it."""
        from kg.search.sparql import uses_search

        if "SERVICE" not in sparql.upper() and "\\" not in sparql:
            return False
        if not await asyncio.to_thread(uses_search, sparql):
            return False
        await self.search_ready()
        return True

    async def run_query(
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
        expand = await self.uses_search(sparql)
        shape = scan(sparql)
        if shape.is_update:
            raise self._read_only()
        self._check_targets(shape)
        results_type, graph_type = self._types(request, params)
        wanted = graph_type if shape.is_graph_query else results_type
        if shape.form is not None and wanted is None:
            offers = conneg.GRAPH_OFFERS if shape.is_graph_query else conneg.RESULT_OFFERS
            return error_response(
                406,
                f"a {shape.form} result cannot be sent as {request.headers.get('accept')}; "
                f"this endpoint offers {conneg.offered(offers)}",
            )
        # The protocol's dataset replaces the union default graph (FROM and FROM NAMED in
        # the query do too: GraphStore.query sees to that).
        union = default_graphs is None and named_graphs is None
        answer = await self.running().serialize(
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
                return error_response(
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
        return await self.run_query(
            request,
            params,
            sparql,
            default_graphs=_graph_iris(defaults, "default-graph-uri") if dataset else None,
            named_graphs=_graph_iris(nameds, "named-graph-uri") if dataset else None,
        )

    def service_description(self, request: Request, params: Params) -> Response:
        accept = request.headers.get("accept")
        media_type = conneg.choose(params.all(FORMAT_PARAM), accept, conneg.PAGE_OFFERS)
        if media_type == conneg.HTML:
            return RedirectResponse("/query", status_code=303)
        if media_type is None:
            return error_response(
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
            return error_response(
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
        await self.running().update(text)
        return Response(status_code=204)
