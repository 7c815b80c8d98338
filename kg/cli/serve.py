"""`kg serve`: the SPARQL endpoint, query page, named-query API and Linked Data pages."""

from __future__ import annotations

import ipaddress
import secrets
import socket
from pathlib import Path
from typing import Annotated

import typer

from kg.cli.app import command, err, state
from kg.errors import KgError, UsageError


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a busy port is one clear error."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(f"cannot resolve --host {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror}; pick another --port "
            "(or --port 0 for any free one)"
        ) from None
    sock.listen(2048)
    return sock


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@command(rich_help_panel="Serve")
def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on; loopback unless you say otherwise.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 7878,
    workers: Annotated[
        int,
        typer.Option(min=1, help="Query worker processes: queries run in parallel (~70 MB each)."),
    ] = 4,
    timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds a query may run before it is stopped.")
    ] = 30.0,
    max_result_mb: Annotated[
        float, typer.Option(min=0.001, help="Largest result sent, in MB; bigger ones fail.")
    ] = 64.0,
    max_body_kb: Annotated[
        float, typer.Option(min=0.1, help="Largest request body accepted, in KB.")
    ] = 1024.0,
    allow_update: Annotated[
        bool, typer.Option(help="Accept SPARQL updates at /update (needs the bearer token).")
    ] = False,
    update_token: Annotated[
        str | None,
        typer.Option(
            envvar="KG_UPDATE_TOKEN",
            help="Bearer token for /update (default: a random one, printed at start).",
            show_default=False,
        ),
    ] = None,
    cors: Annotated[
        list[str] | None,
        typer.Option(help="Allow browser pages from this origin ('*' for any); repeatable."),
    ] = None,
    allow_service: Annotated[
        list[str] | None,
        typer.Option(
            help="Allow SERVICE and LOAD calls to this host ('*' for any); repeatable.",
        ),
    ] = None,
    refresh: Annotated[
        float,
        typer.Option(min=0, help="Seconds between checks for new ingests (0: only on SIGHUP)."),
    ] = 5.0,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            envvar="KG_QUERIES_DIR",
            help="The directory of named *.rq queries (default: kg's queries/).",
            show_default=False,
        ),
    ] = None,
    public_base: Annotated[
        str | None,
        typer.Option(
            "--public-base",
            help="The public URL this server is reached at (e.g. https://kg.example.org/): "
            "the query page links kg's IRIs to entity pages under it instead of this host.",
            show_default=False,
        ),
    ] = None,
    header_timeout: Annotated[
        float,
        typer.Option(min=0.1, help="Seconds a client may take to send a request's headers."),
    ] = 10.0,
    body_timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds a client may take to send a request body.")
    ] = 30.0,
    max_connections: Annotated[
        int,
        typer.Option(
            min=8, help="Open connections in all (kept below the process's descriptor limit)."
        ),
    ] = 1000,
    max_connections_per_client: Annotated[
        int, typer.Option(min=1, help="Open connections from one client address.")
    ] = 32,
    client_workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Workers one client address may hold at once (default: half of --workers).",
            show_default=False,
        ),
    ] = None,
    client_queue: Annotated[
        int,
        typer.Option(
            min=0, help="Queries of one client that wait for its share; more get 503 at once."
        ),
    ] = 32,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No access log.")] = False,
    warm: Annotated[
        float,
        typer.Option(
            min=0,
            help="Seconds spent at start-up, before accepting requests, preparing what first "
            "pages need (similarity index, site feed, front page); the rest goes on in the "
            "background (0: none).",
        ),
    ] = 60.0,
    max_memory_mb: Annotated[
        int | None,
        typer.Option(
            min=128,
            help="Memory limit of each worker process, in MB; a query over it gets 507 "
            "(default: half the machine's memory shared among the workers).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the graph over HTTP: SPARQL 1.1 Protocol at /sparql, a front page at /, a query
    page at /query, named queries at /queries, and Linked Data pages for entity IRIs
    (/paper/<slug> …).

    Read-only unless --allow-update. Each query runs in a worker process with its own
    snapshot of the store; new ingests become visible within --refresh seconds (or at
    once on SIGHUP). Ctrl-C stops the server.
    """
    import uvicorn

    from kg.serve.app import ServerConfig, create_app
    from kg.serve.guard import ACCEPT_BATCH, ConnectionLimits, guarded_protocol
    from kg.serve.pool import Source

    # Open first, for writing when updates are allowed: a busy store fails here, before a
    # token is printed or the server starts (a read-only open checks the store exists).
    source = Source.of(state.graph(write=allow_update).store)
    state.close()
    token = update_token
    if allow_update and not token:
        token = secrets.token_urlsafe(24)
        err.print(f"update token (send as 'Authorization: Bearer …'): {token}", highlight=False)
    config = ServerConfig(
        base_iri=state.base_iri,
        timeout=timeout,
        workers=workers,
        max_result_bytes=int(max_result_mb * 1_048_576),
        max_body_bytes=int(max_body_kb * 1024),
        allow_update=allow_update,
        update_token=token,
        cors_origins=tuple(cors or ()),
        allow_service=frozenset(h.lower() for h in allow_service or ()),
        refresh=refresh,
        queries_dir=queries,
        public_base=public_base,
        max_memory_mb=max_memory_mb,
        body_timeout=body_timeout,
        client_workers=client_workers,
        client_queue=client_queue,
        warm=warm,
    )
    app = create_app(source, config)
    protocol, _ = guarded_protocol(
        ConnectionLimits(
            header_timeout=header_timeout,
            max_connections=max_connections,
            max_per_client=max_connections_per_client,
        )
    )
    sock = _bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    uv = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="info",
            access_log=not quiet,
            lifespan="on",
            timeout_graceful_shutdown=5,
            server_header=False,
            http=protocol,
            timeout_keep_alive=5,
            backlog=ACCEPT_BATCH,
        )
    )
    failure: list[KgError] = []

    def failed(exc: KgError) -> None:
        failure.append(exc)
        uv.should_exit = True

    def ready(_: object) -> None:
        where = "in memory" if source.path is None else str(source.path)
        err.print(
            f"kg serve: http://{shown_host}:{bound_port}/  (SPARQL at /sparql; store {where}; "
            f"{workers} worker(s), timeout {timeout:g} s"
            f"{'; updates at /update' if allow_update else '; read-only'})",
            highlight=False,
        )
        if not _is_loopback(bound_host):
            err.print(
                f"[yellow]warning:[/] listening on {bound_host}, reachable from other machines",
                highlight=False,
            )

    app.state.server.on_ready = ready
    app.state.server.on_failed_start = failed
    try:
        uv.run(sockets=[sock])
    finally:
        sock.close()
    if failure:
        raise failure[0]
