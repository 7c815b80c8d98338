"""kg's MCP face on the query pool: `/mcp` inside `kg serve` (Streamable HTTP), and the
backend `kg mcp` uses over stdio.

Every tool call runs in a `QueryPool` worker, the same processes and limits as `/sparql`: a
time limit per call, the worker's memory limit, no network unless --allow-service, results
capped. The tools' calls are the library's methods (kg.mcp.calls, in the worker); a paper's
card is what its page gathers (kg.serve.pages.paper), shaped as plain JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from kg.mcp.frames import refusal
from kg.serve.linked_data import Description, Labeller
from kg.serve.pages import paper as story
from kg.serve.pages.rows import DC
from kg.serve.similar import GRAPH_TIMEOUT

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from kg.mcp.server import Limits
    from kg.serve.pool import QueryPool

#: Calls that may build the similarity index first (the first one on a store reads every link).
_GRAPH_CALLS = frozenset({"similar_page", "shared_page"})
_TOPICS = {
    "Tasks": "tasks",
    "Methods introduced": "methods_introduced",
    "Methods used": "methods_used",
    "Datasets introduced": "datasets_introduced",
}


class PoolBackend:
    """kg.mcp's `Backend` over a query pool (`running()` gives the pool once it is up)."""

    def __init__(self, running: Callable[[], QueryPool], base_iri: str) -> None:
        self.running = running
        self.base_iri = base_iri

    async def call(self, name: str, /, **kwargs: Any) -> dict[str, Any]:
        timeout = GRAPH_TIMEOUT if name in _GRAPH_CALLS else None
        data: dict[str, Any] = await self.running().call(
            name, timeout, base_iri=self.base_iri, **kwargs
        )
        return data

    async def paper(self, paper: str) -> dict[str, Any]:
        thing = await self.call("thing", kind="paper", name=paper)
        found = await story.paper_story(self.running(), thing["iri"], self.base_iri)
        return paper_card(thing, found, self.base_iri)


def _plain(value: Any) -> Any:
    """A page context's values as plain JSON: a link as {iri, label}, a literal as its text."""
    if isinstance(value, dict):
        if "iri" in value and "href" in value:
            return {"iri": value["iri"], "label": value.get("label")}
        if set(value) <= {"text", "note"} and "text" in value:
            return value["text"]
        return {k: _plain(v) for k, v in value.items() if k not in ("href", "short")}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _rows(result: Any) -> list[dict[str, Any]]:
    return [] if result is None else list(result.term_rows())


def paper_card(thing: dict[str, Any], found: story.PaperStory, base: str) -> dict[str, Any]:
    """A paper's card from its page's story: bibliographic data, authors, topics, code,
    results with ranks, similar papers and sources."""
    iri = thing["iri"]
    view = Labeller(Description(iri), base)
    context = story.paper_context(view, found)
    facts: dict[str, list[Any]] = {}
    for name, value in context["biblio"]["facts"]:
        facts.setdefault(name, []).append(_plain(value))
    titles = sorted(
        {r["o"].value for r in _rows(found.rows.get("biblio")) if r["p"].value == DC + "title"}
    )
    topics = {_TOPICS[t["title"]]: _plain(t["items"]) for t in context["topics"]}
    results = []
    for r in context["results"]:
        rank = r.get("rank")
        results.append(
            {
                **_plain({k: v for k, v in r.items() if k != "rank"}),
                "rank": rank[0] if rank else None,
                "entries": rank[1] if rank else None,
            }
        )
    code = context["code"]
    similar = context["similar"]
    return {
        "paper": iri,
        "key": thing["key"],
        "title": thing.get("label") or (titles[0] if titles else None),
        "titles": titles,
        "facts": facts,
        "abstract": context["biblio"]["abstract"],
        "links": _plain(context["biblio"]["links"]),
        "authors": _plain(context["authors"]),
        **{name: topics.get(name, []) for name in _TOPICS.values()},
        "code": None if code is None else {
            "count": code["count"],
            "repositories": _plain(code["repositories"]),
        },
        "results": results,
        "similar": {
            "error": similar["error"],
            "by": similar.get("by"),
            "metric": similar.get("metric"),
            "papers": _plain(similar["results"]),
        },
        "sources": _plain(context["sources"]),
    }


def http_app(
    running: Callable[[], QueryPool],
    base_iri: str,
    limits: Limits,
    *,
    max_body_bytes: int,
    public_host: str | None = None,
) -> tuple[MCPServer, Any]:
    """The MCP server whose tools run in `running()`'s workers, and its Streamable HTTP
    ASGI application at `/mcp` (stateless, JSON answers). Requests naming another Host than
    loopback (or `public_host`) are refused, against DNS rebinding. The session manager
    must run while it serves (`server.session_manager.run()`)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from kg.mcp.server import build

    server = build(PoolBackend(running, base_iri), limits)
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if public_host:
        hosts += [public_host, f"{public_host}:*"]
        origins += [f"https://{public_host}", f"http://{public_host}"]
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=max_body_bytes,  # LazyMcp reads it first, at the same limit
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        ),
    )
    return server, app


class LazyMcp:
    """`/mcp`, loaded on its first request: the SDK takes seconds to import, which a server
    (or a test) that never sees an MCP client should not pay. Its session manager runs in a
    task of the application's lifespan (`lifespan`), started when first wanted."""

    def __init__(
        self,
        make: Callable[[], tuple[MCPServer, Any]],
        read_body: Callable[[Request], Awaitable[bytes]],
    ) -> None:
        self._make = make
        self._read_body = read_body  # at --max-body-kb, within the body time limit
        self._app: Any = None
        self._failure: str | None = None
        self._wanted = asyncio.Event()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        task = asyncio.create_task(self._serve())
        try:
            yield
        finally:
            self._stop.set()
            self._wanted.set()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task

    async def _serve(self) -> None:
        await self._wanted.wait()
        if self._stop.is_set():
            return
        try:
            server, app = await asyncio.to_thread(self._make)
            async with server.session_manager.run():
                self._app = app
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # reported to each MCP request, and in the server's log
            print(f"kg serve: /mcp is not available: {exc}", file=sys.stderr)
            self._failure = f"MCP is not available on this server: {exc}"
        finally:
            self._app = None
            self._ready.set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.responses import JSONResponse, PlainTextResponse

        if scope["method"] != "POST":
            # Stateless: no session to resume or end, no message the server starts, so no
            # event stream to hold open (an idle one would hold a connection for ever).
            await PlainTextResponse(
                "kg's /mcp is stateless and answers each POST in its reply: it opens no event "
                "stream and keeps no session (POST JSON-RPC requests)\n",
                status_code=405,
                headers={"Allow": "POST"},
            )(scope, receive, send)
            return
        body = await self._read_body(Request(scope, receive))  # 413 past --max-body-kb
        problem = refusal(body.decode("utf-8", errors="replace"))
        if problem is not None:  # a frame the SDK would drop or answer without its id
            ident, code, message = problem
            reply = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
            await JSONResponse(reply, status_code=400)(scope, receive, send)
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        receive = replay
        self._wanted.set()
        await self._ready.wait()
        if self._app is None:
            from starlette.responses import PlainTextResponse

            message = self._failure or "the server is shutting down"
            await PlainTextResponse(message + "\n", status_code=503)(scope, receive, send)
            return
        await self._app(scope, receive, send)
