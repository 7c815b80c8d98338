"""`kg mcp`: the Model Context Protocol over stdio, for desktop AI assistants (docs/mcp.md)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import typer

from kg.cli.app import command, state


@command("mcp", rich_help_panel="Serve")
def mcp_command(
    workers: Annotated[
        int, typer.Option(min=1, help="Query worker processes (~70 MB each).")
    ] = 2,
    timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds a tool call may run before it is stopped.")
    ] = 30.0,
    max_rows: Annotated[
        int, typer.Option(min=1, help="Most rows (or triples) a SPARQL answer returns.")
    ] = 1000,
    max_result_kb: Annotated[
        float, typer.Option(min=1, help="Most kilobytes of rows a SPARQL answer returns.")
    ] = 1000.0,
    allow_service: Annotated[
        list[str] | None,
        typer.Option(help="Allow SERVICE and LOAD calls to this host ('*' for any); repeatable."),
    ] = None,
    max_memory_mb: Annotated[
        int | None,
        typer.Option(
            min=128,
            help="Memory limit of each worker process, in MB (default: half the machine's "
            "memory shared among the workers).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the graph to an AI assistant over the Model Context Protocol (stdio).

    Tools: search, sparql, run_named_query, paper, leaderboard, similar_papers, shared;
    resources: the ontology, the named queries, the VoID description, a SPARQL guide;
    prompts: survey a task, compare two papers, answer a question with SPARQL. Every call
    runs in a worker process with kg serve's limits (time, memory, result size, no updates,
    no SERVICE to other hosts). Standard output carries only the protocol.
    """
    from kg.mcp.server import Limits, build
    from kg.mcp.stdio import run_stdio
    from kg.serve.mcp import PoolBackend
    from kg.serve.pool import QueryPool, Source

    source = Source.of(state.graph().store)  # a missing store fails here, before any protocol
    state.close()
    allowed = frozenset(h.lower() for h in allow_service or ())
    running: dict[str, QueryPool] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        # Started inside the stdio session: the SDK has pointed fd 1 at stderr by then, so
        # the workers' own output can never reach the protocol stream.
        pool = QueryPool(
            source,
            workers=workers,
            timeout=timeout,
            max_memory_mb=max_memory_mb,
            guard_network="*" not in allowed,
            allow_hosts=tuple(sorted(allowed - {"*"})),
        )
        await pool.start()
        running["pool"] = pool
        try:
            yield
        finally:
            await pool.close()

    limits = Limits(
        max_rows=max_rows,
        max_bytes=int(max_result_kb * 1000),
        allow_service=allowed,
        command="kg mcp",
    )
    server = build(PoolBackend(lambda: running["pool"], state.base_iri), limits, lifespan=lifespan)
    run_stdio(server)
