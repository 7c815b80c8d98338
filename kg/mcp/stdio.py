"""`kg mcp`'s stdio transport: the SDK's, with every line answered.

The SDK's stdio reader drops a line it cannot read, and the client waits for an answer that
never comes. Here each line is read first (kg.mcp.frames): a line that is not JSON gets a
parse error (`id` null), one that holds a lone surrogate or is not a JSON-RPC message gets
an error for its `id`; the others go to the SDK unchanged. Standard input is taken from
fd 0 as the SDK takes it, fd 0 then pointing at the null device, so that no worker process
can read the protocol stream.
"""

from __future__ import annotations

import io
import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, cast

from kg.mcp.frames import refusal

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

class _CheckedLines:
    """The lines of standard input the SDK can read; the others are answered by `refuse`."""

    def __init__(self, source: Any, refuse: Callable[[tuple[Any, int, str]], Any]) -> None:
        self._source = source
        self._refuse = refuse

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            problem = refusal(line)
            if problem is None:
                yield line
            else:
                await self._refuse(problem)


def _claim_stdin() -> io.TextIOWrapper:
    """Standard input on a private descriptor, fd 0 pointing at the null device."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return io.TextIOWrapper(os.fdopen(private, "rb"), encoding="utf-8", errors="replace")


def run_stdio(server: MCPServer) -> None:
    """Serve `server` over stdin and stdout until the client hangs up."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    async def main() -> None:
        source = anyio.wrap_file(_claim_stdin())
        outbox: list[Any] = []

        async def refuse(problem: tuple[Any, int, str]) -> None:
            ident, code, message = problem
            error = ErrorData(code=code, message=message)
            reply = JSONRPCError(jsonrpc="2.0", id=ident, error=error)
            await outbox[0].send(SessionMessage(reply))

        lines = _CheckedLines(source, refuse)
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            outbox.append(write_stream)
            low = server._lowlevel_server  # what MCPServer.run_stdio_async runs
            await low.run(read_stream, write_stream, low.create_initialization_options())

    anyio.run(main)
