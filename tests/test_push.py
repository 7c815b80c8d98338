"""`kg push` (kg.export.push) against a small Graph Store Protocol server on 127.0.0.1 that
keeps what it is sent, fails when told to and checks a bearer token: chunking, retries,
resuming and errors. tests/test_engines.py pushes the example store into the real
`oxigraph` server and Virtuoso."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from typer.testing import CliRunner

from kg.errors import EndpointError, UsageError
from kg.export.push import PushAuth, push
from kg.rdf.store import GraphStore
from tests.conftest import run
from tests.query_data import build, write_mini


class GraphStoreStub(ThreadingHTTPServer):
    """Graphs by name as sets of N-Triples lines; PUT replaces, POST adds."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.graphs: dict[str, set[bytes]] = {}
        self.requests: list[tuple[str, str, int]] = []  # method, graph, body bytes
        self.fail_next = 0  # answer this many requests with 503
        self.close_next = 0  # drop this many connections without an answer
        self.token: str | None = None
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/store"


class _Handler(BaseHTTPRequestHandler):
    server: GraphStoreStub

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, status: int, text: str = "") -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(404, "no such graph")

    def _write(self, method: str) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
        graph = query["graph"][0] if "graph" in query else ""
        stub = self.server
        with stub.lock:
            stub.requests.append((method, graph, len(body)))
            if stub.close_next:
                stub.close_next -= 1
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if stub.fail_next:
                stub.fail_next -= 1
                self._answer(503, "busy, try later")
                return
            if stub.token is not None and self.headers.get("Authorization") != f"Bearer {stub.token}":
                self._answer(401, "a bearer token is required")
                return
            if self.headers.get("Content-Type") != "application/n-triples":
                self._answer(415, "N-Triples only")
                return
            lines = {line for line in body.splitlines() if line.strip()}
            if method == "PUT":
                stub.graphs[graph] = lines
            else:
                stub.graphs.setdefault(graph, set()).update(lines)
        self._answer(201 if method == "PUT" else 204)

    def do_PUT(self) -> None:
        self._write("PUT")

    def do_POST(self) -> None:
        self._write("POST")


@pytest.fixture
def stub() -> Iterator[GraphStoreStub]:
    server = GraphStoreStub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made records in a store on disk (closed, so the CLI can open it)."""
    directory = tmp_path_factory.mktemp("push")
    location = directory / "store"
    with GraphStore.open(location) as store:
        build(store, [str(write_mini(directory))])
    return location


def store_graphs(location: Path) -> dict[str, set[bytes]]:
    """Each named graph's N-Triples lines, read from the store apart from kg.export.push."""
    import io

    with GraphStore.open(location, read_only=True) as store:
        graphs: dict[str, set[bytes]] = {}
        for graph in store.named_graphs():
            buffer = io.BytesIO()
            store.graph_ntriples(graph, buffer)
            graphs[graph] = {line for line in buffer.getvalue().splitlines() if line.strip()}
        return graphs


def test_push_sends_every_graph_in_line_aligned_chunks(
    mini: Path, stub: GraphStoreStub, tmp_path: Path
) -> None:
    expected = store_graphs(mini)
    with GraphStore.open(mini, read_only=True) as store:
        report = push(store, stub.url, state_path=tmp_path / "s", chunk_bytes=1024)
    assert stub.graphs == expected
    assert report.graphs == len(expected) and report.skipped == 0
    assert report.triples == sum(len(v) for v in expected.values())
    methods = [m for m, _, _ in stub.requests]
    assert methods.count("PUT") == len(expected)  # one PUT opens each graph
    assert methods.count("POST") > 0  # the bigger graphs went on in more chunks
    assert max(size for _, _, size in stub.requests) <= 1024  # no line is longer here


def test_push_retries_failed_requests(mini: Path, stub: GraphStoreStub, tmp_path: Path) -> None:
    stub.fail_next = 2
    stub.close_next = 1
    with GraphStore.open(mini, read_only=True) as store:
        report = push(store, stub.url, state_path=tmp_path / "s", retries=3)
    assert report.retries == 3
    assert stub.graphs == store_graphs(mini)


def test_push_gives_up_with_the_servers_words(
    mini: Path, stub: GraphStoreStub, tmp_path: Path
) -> None:
    stub.fail_next = 10
    with (
        GraphStore.open(mini, read_only=True) as store,
        pytest.raises(EndpointError, match=r"HTTP 503 .*busy, try later"),
    ):
        push(store, stub.url, state_path=tmp_path / "s", retries=1)


def test_push_resumes_and_resends_what_changed(
    mini: Path, stub: GraphStoreStub, tmp_path: Path
) -> None:
    state = tmp_path / "push.state"
    with GraphStore.open(mini, read_only=True) as store:
        push(store, stub.url, state_path=state)
        lines = state.read_text().splitlines()
        assert lines[0].endswith(stub.url) and len(lines) == 1 + len(store_graphs(mini))
        changed = lines[1].split("\t")[0]
        # as if that graph changed since, and the push was cut off after half the graphs
        kept = [lines[0], f"{changed}\tsha-of-an-older-version", *lines[2 : len(lines) // 2]]
        state.write_text("\n".join(kept) + "\n" + lines[len(lines) // 2][:10])
        stub.requests.clear()
        report = push(store, stub.url, state_path=state)
    assert report.skipped == len(kept) - 2
    assert report.graphs == len(lines) - 1 - report.skipped
    assert changed in {g for _, g, _ in stub.requests}
    assert stub.graphs == store_graphs(mini)


def test_push_state_belongs_to_one_endpoint(
    mini: Path, stub: GraphStoreStub, tmp_path: Path
) -> None:
    state = tmp_path / "push.state"
    with GraphStore.open(mini, read_only=True) as store:
        push(store, stub.url, state_path=state)
        with pytest.raises(UsageError, match="records a push to"):
            push(store, stub.url + "2", state_path=state)
        report = push(store, stub.url + "2", state_path=state, restart=True)
    assert report.skipped == 0


def test_auth_takes_one_kind() -> None:
    with pytest.raises(UsageError, match="not both"):
        PushAuth(user="u", password="p", token="t")
    with pytest.raises(UsageError, match="go together"):
        PushAuth(password="p")


def test_cli_push_with_a_token(mini: Path, stub: GraphStoreStub, tmp_path: Path) -> None:
    stub.token = "s3cret"
    cli = CliRunner()
    state = str(tmp_path / "state")
    refused = run(cli, "--store", str(mini), "push", "--endpoint", stub.url, "--state", state)
    assert refused.exit_code == 1
    assert "HTTP 401" in refused.output and "--token" in refused.output
    pushed = run(
        cli, "--store", str(mini), "push", "-e", stub.url, "--token", "s3cret", "--state", state
    )
    assert pushed.exit_code == 0, pushed.output
    assert "pushed" in pushed.output and stub.graphs == store_graphs(mini)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--endpoint", "localhost:7878/store"], "not a Graph Store Protocol URL"),
        (["--endpoint", "http://127.0.0.1:9/store", "--user", "u"], "go together"),
        (["--endpoint", "http://127.0.0.1:9/store", "--token", "t", "--user", "u",
          "--password", "p"], "not both"),
    ],
)
def test_cli_push_usage_errors(mini: Path, args: list[str], message: str) -> None:
    result = run(CliRunner(), "--store", str(mini), "push", *args)
    assert result.exit_code == 2 and message in result.output


def test_push_to_nothing_listening(mini: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with (
        GraphStore.open(mini, read_only=True) as store,
        pytest.raises(EndpointError, match=r"is unreachable .*check the URL"),
    ):
        push(store, f"http://127.0.0.1:{port}/store", state_path=tmp_path / "s", retries=5)


def test_cli_push_to_a_closed_port_fails_at_once(mini: Path) -> None:
    """A refused connection is no reason to retry: the command fails at once
    (retries would take 0.5 + 1 + 2 + 4 + 8 s), says the endpoint is unreachable and does
    not promise a resume of a push that never started."""
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    result = run(CliRunner(), "--store", str(mini), "push", "--endpoint",
                 f"http://127.0.0.1:{port}/sparql")
    assert time.monotonic() - started < 5.0  # no backoff: the retries alone take 15.5 s
    assert result.exit_code == 1 and "is unreachable" in result.stderr
    assert "resume" not in result.stderr
