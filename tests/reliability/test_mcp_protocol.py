"""Every malformed MCP request gets a JSON-RPC answer, over stdio (`kg mcp`) and HTTP
(`/mcp` of `kg serve`), and no traceback: an unknown prompt, a prompt without its argument,
a lone surrogate escape in a tool call, a line that is not JSON (an error with `id` null),
and tool arguments the tool does not take or of another type (`top: true` is no 1).

`/mcp` is stateless: `GET /mcp` answers 405 and opens no event stream, its body follows
`--max-body-kb`, and connections left idle from many loopback addresses at the connection
cap are closed to make room, so a new client is still answered.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from kg.rdf.store import GraphStore
from tests.query_data import build
from tests.serve_support import KG_BIN, SLOW_QUERY, STOPPED, ServeProcess

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
#: (id, the frame as sent, what the error's message names); id None: a parse error.
BAD: list[tuple[Any, str, str]] = [
    (2, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
                    "params": {"name": "no_such_prompt", "arguments": {}}}), "no_such_prompt"),
    (3, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "prompts/get",
                    "params": {"name": "survey_task", "arguments": {}}}), "'task'"),
    (4, json.dumps({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
                    "params": {"name": "survey_task", "arguments": {"task": "x", "tsk": "y"}}}),
     "'tsk'"),
    (5, '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "search", '
        '"arguments": {"query": "a\\ud800b"}}}', "lone surrogate"),
    (None, "this line is not JSON", "Parse error"),
    (6, json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "x"}),
     "Invalid"),
]
#: Tool calls whose arguments are refused with a tool error (isError) naming the argument.
REFUSED: list[tuple[int, dict[str, Any], str]] = [
    (10, {"query": "attention", "top": True}, "'top' must be an integer, not true"),
    (11, {"query": "attention", "top": "5"}, "'top' must be an integer"),
    (12, {"query": "attention", "limit": 5}, "no argument 'limit'"),
]
GOOD = {"jsonrpc": "2.0", "id": 20, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "attention", "top": 2}}}


def _call(ident: int, arguments: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": "search", "arguments": arguments}})


def _check(replies: dict[Any, dict[str, Any]]) -> None:
    for ident, _, named in BAD:
        assert ident in replies, f"no answer for {ident}: {replies}"
        error = replies[ident]["error"]
        assert named in error["message"], error
        assert error["code"] in (-32700, -32600, -32602), error
    for ident, _, named in REFUSED:
        result = replies[ident]["result"]
        assert result["isError"] is True and named in result["content"][0]["text"], result
    assert replies[20]["result"]["structuredContent"]["hits"], replies[20]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> Path:
    path = tmp_path_factory.mktemp("mcp-protocol") / "store"
    with GraphStore.open(path) as opened:
        build(opened, [str(p) for p in seed_paths])
    return path


def test_every_bad_stdio_line_is_answered(store: Path) -> None:
    frames = [json.dumps(INIT), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    frames += [frame for _, frame, _ in BAD]
    frames += [_call(ident, args) for ident, args, _ in REFUSED]
    frames.append(json.dumps(GOOD))
    proc = subprocess.Popen(
        [KG_BIN, "--store", str(store), "mcp", "--workers", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    hang_guard = threading.Timer(300, proc.kill)
    hang_guard.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("\n".join(frames) + "\n")
        proc.stdin.flush()
        # every request is answered: one line each (the notification gets none)
        replies = [json.loads(proc.stdout.readline()) for _ in range(len(frames) - 1)]
        proc.stdin.close()  # the client hangs up: the server ends cleanly
        stderr = proc.stderr.read() if proc.stderr else ""
        assert proc.wait(timeout=60) == 0, stderr
    finally:
        hang_guard.cancel()
        if proc.poll() is None:
            proc.kill()
    _check({r["id"]: r for r in replies if r["id"] != 1})
    assert "Traceback" not in stderr and "Error" not in stderr, stderr


def test_the_sdk_client_gets_errors_not_internal_errors(store: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(command=KG_BIN, args=["--store", str(store), "mcp",
                                                          "--workers", "1"])

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params, read_timeout_seconds=120) as client:
            for name, arguments in (("nope", {}), ("survey_task", {})):
                try:
                    await client.get_prompt(name, arguments)
                except MCPError as exc:
                    out[name] = exc
            out["top"] = await client.call_tool("search", {"query": "attention", "top": True})
            out["fine"] = await client.get_prompt("survey_task", {"task": "machine translation"})
        return out

    out = anyio.run(main)
    assert out["nope"].code == -32602 and "'nope'" in out["nope"].message
    assert out["survey_task"].code == -32602 and "'task'" in out["survey_task"].message
    assert out["top"].is_error and "'top'" in out["top"].content[0].text
    assert "machine translation" in json.dumps(out["fine"].model_dump())


# --- over HTTP --------------------------------------------------------------------------------

MAX_CONNECTIONS = 12


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(["--store", str(store)], [
        "--workers", "1", "--max-body-kb", "64", "--max-connections", str(MAX_CONNECTIONS),
        "--max-connections-per-client", "4"])
    try:
        yield proc
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": "2025-06-18"}


def test_every_bad_http_body_is_answered(server: ServeProcess) -> None:
    url = f"{server.url}/mcp"
    replies = {}
    for ident, frame, _ in BAD:
        response = server.client.post(url, content=frame.encode("utf-8"), headers=HEADERS)
        assert response.status_code in (200, 400), response.text
        replies[ident] = response.json()
        assert replies[ident]["id"] == ident
    for ident, args, _ in REFUSED:
        replies[ident] = server.client.post(url, content=_call(ident, args), headers=HEADERS).json()
    replies[20] = server.client.post(url, json=GOOD, headers=HEADERS).json()
    _check(replies)


def test_get_mcp_opens_no_stream_and_the_body_follows_max_body_kb(server: ServeProcess) -> None:
    url = f"{server.url}/mcp"
    get = server.client.get(url, headers={"accept": "text/event-stream"}, timeout=10)
    assert get.status_code == 405 and get.headers["allow"] == "POST", get.text
    query = "attention " * 7000  # 70,000 bytes: past 64 kB
    big = server.client.post(url, content=_call(30, {"query": query}), headers=HEADERS)
    assert big.status_code == 413 and "--max-body-kb" in big.text, big.text
    within = _call(31, {"query": "attention " * 5000})  # 50,000 bytes
    assert server.client.post(url, content=within, headers=HEADERS).status_code == 200


def _idle_get(address: str, port: int) -> socket.socket:
    """A connection from `address` that asks GET /mcp, reads the answer's head and stays
    open (kept alive, or an event stream)."""
    sock = socket.socket()
    sock.settimeout(10)
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "closed before answering"
        head += chunk
    return sock


def test_idle_mcp_connections_at_the_cap_do_not_lock_out_a_new_client(
    server: ServeProcess,
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    idle = [_idle_get(f"127.0.0.{2 + i // 4}", port) for i in range(MAX_CONNECTIONS)]
    try:
        with httpx.Client(timeout=15, transport=httpx.HTTPTransport(
                local_address="127.0.0.50")) as fresh:
            answer = fresh.post(f"{server.url}/mcp", json=INIT, headers=HEADERS)
        assert answer.status_code == 200 and answer.json()["result"]["serverInfo"], answer.text
    finally:
        for sock in idle:
            sock.close()


def test_a_call_waiting_for_a_busy_worker_says_the_server_is_busy(store: Path) -> None:
    """One worker held by a query that runs to the 2 s limit: a call behind it waits within
    its own 2 s, and if no worker came free in that time its error says the server is busy
    (and nothing was started), not that the call overran."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=KG_BIN, args=[
        "--store", str(store), "mcp", "--workers", "1", "--timeout", "2"])

    async def main() -> list[Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            results: list[Any] = [None, None]

            async def call(i: int, query: str) -> None:
                results[i] = await client.call_tool("sparql", {"query": query})

            async with anyio.create_task_group() as group:
                group.start_soon(call, 0, SLOW_QUERY)
                await anyio.sleep(0.3)  # the slow one holds the worker first
                group.start_soon(call, 1, "ASK { ?s ?p ?o }")
            return results

    slow, fast = anyio.run(main)
    assert slow.is_error and "2 s" in slow.content[0].text, slow.content[0].text
    if fast.is_error:  # no worker came free within the call's own limit
        text = fast.content[0].text
        assert "the server is busy" in text and "2 s this request may take" in text, text
        assert "kg mcp --workers" in text, text
    else:
        assert fast.structured_content["boolean"] is True
