"""No query text makes `kg serve` contact a host that --allow-service did not name.

A loopback listener stands in for an internal service. Every attempt of the corpus
(tests/reliability/ssrf_corpus.py: escapes, comments, BASE, prefixes, variables, SILENT,
sub-queries, LOAD, updates; the bypass from issue 15 first) is sent by GET, by form POST
and as application/sparql-query to a read-only server, and the updates to an updating
server's /update with its token. The listener must see no connection at all, no answer may
carry its body, and every answer must read the same whether the port is open or closed
(no port scanning through error texts). A control server started with --allow-service
127.0.0.1 does reach the listener, so the listener would have seen a call.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import SEEDS_DIR
from tests.reliability.helpers import STOPPED, Server, record_figures, run_kg
from tests.reliability.ssrf_corpus import queries, updates

pytestmark = pytest.mark.reliability
TOKEN = "outbound-test-token"
MARKER = "INTERNAL-SERVICE-SECRET-7f3a"


class Listener:
    """A loopback HTTP service that counts connections and answers with a secret body."""

    def __init__(self, address: str = "127.0.0.1") -> None:
        self.address = address
        self.sockets = [socket.create_server((address, 0))]
        self.port = self.sockets[0].getsockname()[1]
        try:  # the same port on ::1, for spellings that resolve to IPv6 loopback
            if address != "127.0.0.1":
                raise OSError
            six = socket.socket(socket.AF_INET6)
            six.bind(("::1", self.port))
            six.listen()
            self.sockets.append(six)
        except OSError:
            pass
        self.connections = 0
        self.closed = False
        body = (
            '{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"'
            + MARKER
            + '"}}]}}'
        ).encode()
        self.reply = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        for sock in self.sockets:
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        while not self.closed:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self) -> None:
        self.closed = True
        for sock in self.sockets:
            sock.close()


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outbound") / "store"
    result = run_kg("--store", str(path), "ingest", str(SEEDS_DIR))
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture()
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def _sends(client: httpx.Client, url: str, sparql: str) -> list[httpx.Response]:
    accept = {"Accept": "application/sparql-results+json, text/turtle;q=0.9"}
    return [
        client.get(f"{url}/sparql", params={"query": sparql}, headers=accept),
        client.post(f"{url}/sparql", data={"query": sparql}, headers=accept),
        client.post(
            f"{url}/sparql",
            content=sparql.encode("utf-8"),
            headers={**accept, "Content-Type": "application/sparql-query"},
        ),
    ]


def _update(client: httpx.Client, url: str, sparql: str) -> list[httpx.Response]:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    return [
        client.post(
            f"{url}/update",
            content=sparql.encode("utf-8"),
            headers={**auth, "Content-Type": "application/sparql-update"},
        ),
        client.post(f"{url}/update", data={"update": sparql}, headers=auth),
        client.post(f"{url}/sparql", data={"update": sparql}),
        client.post(f"{url}/sparql", data={"query": sparql}),
    ]


def _answers(
    url: str, port: int, updating: bool, host: str = "127.0.0.1"
) -> list[tuple[str, int, str]]:
    """(attempt, status, body with the port written as PORT) for the whole corpus."""
    out = []
    attempts = updates(port, host) if updating else queries(port, host)
    with httpx.Client(timeout=60) as client:  # one client: a new one a request costs 26 ms
        for sparql in attempts:
            sent = _update if updating else _sends
            for response in sent(client, url, sparql):
                text = response.text.replace(str(port), "PORT")
                out.append((sparql.replace(str(port), "PORT"), response.status_code, text))
    return out


def _replies(answers: list[tuple[str, int, str]]) -> list[tuple[int, str]]:
    return [(status, text) for _, status, text in answers]


def _first_difference(
    answers: list[tuple[str, int, str]], closed: list[tuple[str, int, str]]
) -> tuple[tuple[str, int, str], tuple[str, int, str]] | None:
    return next(((a, b) for a, b in zip(answers, closed, strict=True) if a[1:] != b[1:]), None)


def test_no_query_text_reaches_a_host_not_allowed(
    tmp_path: Path, store: Path, listener: Listener, request: pytest.FixtureRequest
) -> None:
    server = Server.start(store, tmp_path / "serve.log", "--workers", "2")
    try:
        answers = _answers(server.url, listener.port, updating=False)
        closed = _answers(server.url, closed_port(), updating=False)
        health = httpx.get(f"{server.url}/health", timeout=30).json()
    finally:
        code = server.stop()
    assert code == STOPPED
    assert listener.connections == 0, f"{listener.connections} connection(s) reached the listener"
    leaked = [a for a in answers if MARKER in a[2]]
    assert not leaked, leaked[:3]
    # every SERVICE is refused (403); FROM <url> and DESCRIBE <url> fetch nothing and answer
    calls = [a for a in answers if "SERVICE" in a[0].upper() or "\\u" in a[0]]
    assert {status for _, status, _ in calls} <= {400, 403}, sorted({s for _, s, _ in calls})
    assert sum(status == 403 for _, status, _ in calls) >= 3 * 60
    # an open port and a closed one read the same: no scanning through the error texts
    assert _replies(answers) == _replies(closed), _first_difference(answers, closed)
    assert health["replaced"] == 0
    record_figures(
        request.config,
        "outbound_queries",
        {
            "attempts": len(queries(listener.port)),
            "requests": len(answers),
            "status_counts": {
                str(s): sum(1 for a in answers if a[1] == s)
                for s in sorted({a[1] for a in answers})
            },
            "listener_connections": listener.connections,
        },
    )


def test_no_update_text_reaches_a_host_not_allowed(
    tmp_path: Path, store: Path, listener: Listener, request: pytest.FixtureRequest
) -> None:
    server = Server.start(
        store, tmp_path / "serve.log", "--workers", "1", "--allow-update", "--update-token", TOKEN
    )
    try:
        answers = _answers(server.url, listener.port, updating=True)
        closed = _answers(server.url, closed_port(), updating=True)
        graphs = server.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:x:g> { ?s ?p ?o } }")
    finally:
        code = server.stop()
    assert code == STOPPED
    assert listener.connections == 0, f"{listener.connections} connection(s) reached the listener"
    assert not [a for a in answers if MARKER in a[2]]
    assert _replies(answers) == _replies(closed), _first_difference(answers, closed)
    # at /update (with the token) every attempt is refused, none lands
    at_update = [status for i, (_, status, _) in enumerate(answers) if i % 4 in (0, 1)]
    assert set(at_update) <= {400, 403}, sorted(set(at_update))
    assert graphs.json()["results"]["bindings"][0]["n"]["value"] == "0"
    record_figures(
        request.config,
        "outbound_updates",
        {
            "attempts": len(updates(listener.port)),
            "requests": len(answers),
            "listener_connections": listener.connections,
        },
    )


def test_the_corpus_is_big_enough_and_the_listener_would_notice(
    tmp_path: Path, store: Path, listener: Listener
) -> None:
    assert len(queries(listener.port)) + len(updates(listener.port)) >= 100
    server = Server.start(
        store, tmp_path / "serve.log", "--workers", "1", "--allow-service", "127.0.0.1"
    )
    try:
        reached = server.query(queries(listener.port)[1])
    finally:
        server.stop()
    assert listener.connections >= 1
    assert reached.status_code == 200 and MARKER in reached.text


def test_an_allow_list_holds_at_the_connection_whatever_the_text(
    tmp_path: Path, store: Path, listener: Listener, request: pytest.FixtureRequest
) -> None:
    """Issue 31: with --allow-service 127.0.0.1, hosts not listed (127.0.0.2 and 127.0.0.3,
    listening) see no connection from any spelling of the corpus, the two `\\u` forms of
    the issue first; the allowed host is still reached. The server decides each connect
    the engine makes (kg.serve.sandbox.Supervisor), not by reading the text."""
    others = [Listener("127.0.0.2"), Listener("127.0.0.3")]
    server = Server.start(
        store, tmp_path / "serve.log", "--workers", "2", "--allow-service", "127.0.0.1"
    )
    try:
        answers = [a for o in others for a in _answers(server.url, o.port, False, o.address)]
        updates_tried = len(updates(others[0].port, "127.0.0.2"))
        allowed = server.query(queries(listener.port)[0])
        health = httpx.get(f"{server.url}/health", timeout=30).json()
    finally:
        code = server.stop()
        for other in others:
            other.close()
    assert code == STOPPED
    reached = {o.address: o.connections for o in others}
    assert not any(reached.values()), f"hosts not allowed were reached: {reached}"
    leaked = [a for a in answers if MARKER in a[2]]
    assert not leaked, leaked[:3]
    assert {status for _, status, _ in answers} <= {200, 400, 403}
    calls = [a for a in answers if "SERVICE" in a[0].upper() or "\\u" in a[0]]
    assert {status for _, status, _ in calls} <= {400, 403}, sorted({s for _, s, _ in calls})
    # the two forms get the refusal of the connection itself
    for form in queries(others[0].port, "127.0.0.2")[:3]:
        assert any(a[0] == form.replace(str(others[0].port), "PORT") and a[1] == 403
                   for a in answers)
    assert "refused a connection to 127.0.0.2" in (tmp_path / "serve.log").read_text()
    assert allowed.status_code == 200 and MARKER in allowed.text
    assert listener.connections >= 1
    assert health["replaced"] == 0
    record_figures(
        request.config,
        "outbound_allow_list",
        {
            "requests": len(answers),
            "update_attempts_not_sent": updates_tried,
            "status_counts": {
                str(s): sum(1 for a in answers if a[1] == s)
                for s in sorted({a[1] for a in answers})
            },
            "connections_to_hosts_not_allowed": sum(reached.values()),
        },
    )


def test_the_allow_list_reads_addresses_as_the_kernel_gives_them() -> None:
    """The supervisor's verdict on the raw sockaddr a connect names (IPv4, IPv6, mapped)."""
    from kg.serve.sandbox import AllowList, parse_sockaddr

    allow = AllowList(["127.0.0.1", "[::1]", "*"])
    assert allow.allows("127.0.0.1", 8080) and allow.allows("::ffff:127.0.0.1", 1)
    assert allow.allows("::1", 80)
    assert not allow.allows("127.0.0.2", 8080) and not allow.allows("::ffff:127.0.0.2", 80)
    assert not allow.allows("not an address", 80)
    four = socket.AF_INET.to_bytes(2, "little") + (8080).to_bytes(2, "big")
    four += socket.inet_aton("127.0.0.2") + bytes(8)
    assert parse_sockaddr(four) == (socket.AF_INET, "127.0.0.2", 8080)
    six = socket.AF_INET6.to_bytes(2, "little") + (443).to_bytes(2, "big") + bytes(4)
    six += socket.inet_pton(socket.AF_INET6, "::ffff:127.0.0.2") + bytes(4)
    assert parse_sockaddr(six) == (socket.AF_INET6, "::ffff:127.0.0.2", 443)
    assert parse_sockaddr(b"\x01") == (-1, "", 0)
