"""Named queries and `kg sparql` against real SPARQL endpoints over HTTP on 127.0.0.1.

The endpoint is the Oxigraph server from PyPI's `oxigraph` package, serving stores that kg
built (kg's writer closed first). The failure cases use real sockets too: a closed port, a
server that accepts and never answers, and a web server that answers with an HTML page.
"""

from __future__ import annotations

import http.server
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from typer.testing import CliRunner

from kg.errors import EndpointError, QueryTimeoutError, UsageError
from kg.query.named import bind, find_query, load_query, run_local, run_remote
from kg.query.remote import Endpoint
from kg.rdf.results import AskResult, GraphResult, SelectResult, Term
from kg.rdf.store import GraphStore
from kg.search.sparql import uses_search
from tests.conftest import run
from tests.query_data import BASE, build, build_dumps, write_mini
from tests.test_queries import CASES, HOSTILE, QUERY_FILES, expected, normalise

OXIGRAPH = shutil.which("oxigraph") or str(Path(sys.executable).with_name("oxigraph"))
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """An `oxigraph serve-read-only` process on a free local port, over a store kg built: its
    real default graph is the merge (issue 13), so no `--union-default-graph`, which would
    count each triple once per graph stating it."""

    def __init__(self, location: Path, *extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/query"
        self.process = subprocess.Popen(
            [
                OXIGRAPH,
                "serve-read-only",
                "--location",
                str(location),
                "--bind",
                f"127.0.0.1:{self.port}",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"oxigraph exited: {self.process.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("oxigraph did not start within 30 s")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def disk_store(directory: Path, paths: list[str], *, dumps: bool = False) -> Path:
    location = directory / "store"
    with GraphStore.open(location) as store:  # closed before the server opens it
        (build_dumps if dumps else build)(store, paths)
    return location


@pytest.fixture(scope="module")
def endpoints(
    tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]
) -> Iterator[dict[str, Server]]:
    mini_dir = tmp_path_factory.mktemp("remote-mini")
    stores = {
        "mini": disk_store(mini_dir, [str(write_mini(mini_dir))]),
        "dumps": disk_store(
            tmp_path_factory.mktemp("remote-dumps"), [str(write_mini(mini_dir))], dumps=True
        ),
        "seeds": disk_store(tmp_path_factory.mktemp("remote-seeds"), [str(p) for p in seed_paths]),
    }
    servers: dict[str, Server] = {}
    try:
        for name, location in stores.items():
            servers[name] = Server(location)
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="module")
def seed_location(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> Path:
    return disk_store(tmp_path_factory.mktemp("cli-seeds"), [str(p) for p in seed_paths])


def _count(url: str) -> int:
    result = Endpoint(url).query(COUNT)
    assert isinstance(result, SelectResult)
    return int(result.rows[0][0].value)  # type: ignore[union-attr]


# --- the named queries, remotely -----------------------------------------------------------


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_query_file_answers_exactly_on_a_remote_endpoint(
    path: Path, endpoints: dict[str, Server]
) -> None:
    """Every real query file gives the same exact rows from the Oxigraph server as locally
    (but those that search: only kg evaluates a kg search block)."""
    query = load_query(path)
    if uses_search(query.sparql):
        pytest.skip("a kg search query: Oxigraph's server would call the SERVICE itself")
    for case in CASES[query.name]:
        bindings = bind(query, case.params, BASE)
        remote = run_remote(endpoints[case.graph].url, query, bindings, timeout=30)
        assert normalise(remote) == expected(case), f"{query.name} {case.params}"


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_change_nothing_remotely(endpoints: dict[str, Server], value: str) -> None:
    url = endpoints["mini"].url
    before = _count(url)
    for name, param in (("official-code-by-framework", "framework"), ("shared-methods", "paper")):
        query = find_query(name)
        result = run_remote(url, query, bind(query, {param: value}, BASE))
        assert normalise(result) == []
    assert _count(url) == before


# --- the client ----------------------------------------------------------------------------


def test_every_result_kind_comes_back(endpoints: dict[str, Server]) -> None:
    endpoint = Endpoint(endpoints["seeds"].url)
    ask = endpoint.query("ASK { ?s a <https://w3id.org/kg/ontology#Paper> }")
    assert ask == AskResult(True)
    graph = endpoint.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    assert isinstance(graph, GraphResult)
    select = endpoint.query("SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o }")
    assert isinstance(select, SelectResult) and len(graph) == len(select.rows) > 300


def test_remote_results_equal_local_ones_term_for_term(
    endpoints: dict[str, Server], seed_paths: list[Path]
) -> None:
    seed_store = build(GraphStore.memory(), [str(p) for p in seed_paths])
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o"
    remote = Endpoint(endpoints["seeds"].url).query(query)
    local = seed_store.query("SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o")
    assert isinstance(remote, SelectResult) and isinstance(local, SelectResult)
    assert [[t.n3() for t in r] for r in remote.rows] == [  # type: ignore[union-attr]
        [t.n3() for t in r]
        for r in local.rows  # type: ignore[union-attr]
    ]


def test_cli_query_and_sparql_take_an_endpoint(
    endpoints: dict[str, Server], seed_location: Path, cli: CliRunner
) -> None:
    url = endpoints["seeds"].url
    args = ["query", "papers-by-author", "-p", "author=Goro Kobayashi", "-f", "csv"]
    remote = run(cli, *args, "--endpoint", url)
    local = run(cli, "--store", str(seed_location), *args)
    assert remote.exit_code == 0, remote.output
    assert remote.output == local.output and "2020-04-21,1" in remote.output
    card = ["query", "paper-card", "-p", "paper=self-attention-attribution-interpreting"]
    turtle = run(cli, *card, "--endpoint", url, "--format", "turtle")
    assert turtle.exit_code == 0 and "kg:hasRepository" in turtle.output
    limited = run(
        cli, "query", "task-methods", "-p", "task=attribute", "--endpoint", url, "--limit", "2"
    )
    assert "2 rows" in limited.output
    sparql = run(cli, "sparql", COUNT, "--endpoint", url, "--format", "json")
    assert sparql.exit_code == 0 and '"n"' in sparql.output


# --- failures ------------------------------------------------------------------------------


def test_unreachable_endpoint(cli: CliRunner) -> None:
    url = f"http://127.0.0.1:{free_port()}/query"  # nothing listens there
    with pytest.raises(EndpointError, match=r"cannot reach .*Check the URL"):
        Endpoint(url).query(COUNT)
    result = run(cli, "sparql", COUNT, "--endpoint", url)
    assert result.exit_code == 1
    assert "cannot reach" in result.output and "Traceback" not in result.output


def test_http_errors_carry_the_servers_message(endpoints: dict[str, Server]) -> None:
    url = endpoints["seeds"].url
    with pytest.raises(EndpointError, match=r"answered HTTP 400 Bad Request: error at 1:\d+"):
        Endpoint(url).query("SELECT WHERE {")
    wrong_path = url.replace("/query", "/nothing")
    with pytest.raises(EndpointError, match="HTTP 404 Not Found: POST /nothing is not supported"):
        Endpoint(wrong_path).query(COUNT)


def test_a_server_timeout_mid_body_is_an_error_not_a_short_result(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    """Oxigraph sends 200 before it runs out of time, then ends the body with its error."""
    server = Server(disk_store(tmp_path, [str(p) for p in seed_paths]), "--timeout-s", "1")
    try:
        slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
        with pytest.raises(EndpointError, match="cancelled"):
            Endpoint(server.url, timeout=30).query(slow)
    finally:
        server.stop()


@pytest.fixture
def html_site() -> Iterator[str]:
    """A real web server that answers every request with an HTML page."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = b"<html><body><h1>Welcome</h1></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_web_page_is_not_a_sparql_result(html_site: str) -> None:
    with pytest.raises(EndpointError, match="answered with text/html, not SPARQL results"):
        Endpoint(html_site).query(COUNT)


def test_a_silent_server_times_out() -> None:
    """A server that accepts the connection and never answers trips the client's timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/query"
        started = time.monotonic()
        with pytest.raises(QueryTimeoutError, match=r"did not answer within 0\.5 s"):
            Endpoint(url, timeout=0.5).query(COUNT)
        assert time.monotonic() - started < 10


@pytest.mark.parametrize("url", ["localhost:7878/query", "ftp://example.org/sparql", "http://"])
def test_bad_endpoint_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UsageError, match="not an endpoint URL"):
        Endpoint(url)


def test_local_and_remote_bind_the_same_way(
    endpoints: dict[str, Server], seed_store: GraphStore
) -> None:
    """A parameter pyoxigraph substitutes locally and one sent as VALUES agree."""
    query = find_query("shared-methods")
    bindings = bind(
        query, {"paper": "attention-module-is-not-only-a-weight", "min_shared": "5"}, BASE
    )
    local = normalise(run_local(seed_store, query, bindings))
    remote = normalise(run_remote(endpoints["seeds"].url, query, bindings))
    assert local == remote and len(local) == 1


class Canned(http.server.BaseHTTPRequestHandler):
    """Answers every POST with `answer` (content type, body, status); records each Accept."""

    answer: ClassVar[tuple[str, bytes, int]] = ("text/plain", b"", 200)
    accepts: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Canned.accepts.append(self.headers.get("Accept", ""))
        media_type, body, status = Canned.answer
        self.send_response(status)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def canned() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Canned)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Canned.accepts = []
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql"
    server.shutdown()
    server.server_close()


NT = b'<http://x/s> <http://x/p> "o"@en .\n'


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("SELECT * { ?s ?p ?o }", "application/sparql-results+json"),
        ("# CONSTRUCT\nPREFIX c: <http://x/construct#> ASK { ?s ?p 'CONSTRUCT' }", "application/sparql-results+json"),
        ("PREFIX x: <http://x/> CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "application/n-triples"),
        ("describe <http://x/s>", "application/n-triples"),
    ],
)
def test_accept_follows_the_query_form(canned: str, query: str, first: str) -> None:
    Canned.answer = ("application/n-triples", NT, 200)
    if first.startswith("application/sparql"):
        Canned.answer = ("application/sparql-results+json", b'{"head":{},"boolean":true}', 200)
    Endpoint(canned).query(query)
    assert Canned.accepts[-1].split(",")[0] == first


def test_sparql_xml_results_are_read(canned: str) -> None:
    xml = b"""<?xml version="1.0"?>
<sparql xmlns="http://www.w3.org/2005/sparql-results#">
  <head><variable name="s"/><variable name="label"/><variable name="n"/><variable name="b"/></head>
  <results>
    <result>
      <binding name="s"><uri>http://x/s</uri></binding>
      <binding name="label"><literal xml:lang="en">Zo&#235;</literal></binding>
      <binding name="n"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">3</literal></binding>
    </result>
    <result><binding name="b"><bnode>b0</bnode></binding></result>
  </results>
</sparql>"""
    Canned.answer = ("application/sparql-results+xml; charset=utf-8", xml, 200)
    result = Endpoint(canned).query("SELECT * { ?s ?p ?o }")
    assert isinstance(result, SelectResult) and result.variables == ["s", "label", "n", "b"]
    assert result.rows == [
        (
            Term("uri", "http://x/s"),
            Term("literal", "Zoë", lang="en"),
            Term("literal", "3", "http://www.w3.org/2001/XMLSchema#integer"),
            None,
        ),
        (None, None, None, Term("bnode", "b0")),
    ]
    ask = b'<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>'
    Canned.answer = ("application/sparql-results+xml", ask, 200)
    assert Endpoint(canned).query("ASK { ?s ?p ?o }") == AskResult(True)
    Canned.answer = ("application/sparql-results+xml", b"<sparql><head>", 200)
    with pytest.raises(EndpointError, match="SPARQL XML that does not parse"):
        Endpoint(canned).query("SELECT * { ?s ?p ?o }")


def test_graph_answers_in_any_rdf_format(canned: str) -> None:
    construct = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    jsonld = b'[{"@id": "http://x/s", "http://x/p": [{"@value": "o", "@language": "en"}]}]'
    for media_type, body in [
        ("application/ld+json", jsonld),
        ("text/turtle", b'<http://x/s> <http://x/p> "o"@en .'),
        ("application/n-quads", NT),
    ]:
        Canned.answer = (media_type, body, 200)
        result = Endpoint(canned).query(construct)
        assert isinstance(result, GraphResult) and result.ntriples == NT.decode(), media_type


def test_a_construct_answered_as_bindings_is_a_graph(canned: str) -> None:
    """Virtuoso answers a CONSTRUCT with s/p/o bindings when a results format comes first."""
    bindings = (
        b'{"head": {"vars": ["s", "p", "o"]}, "results": {"bindings": [{"s": {"type": "uri", '
        b'"value": "http://x/s"}, "p": {"type": "uri", "value": "http://x/p"}, "o": {"type": '
        b'"literal", "value": "o", "xml:lang": "en"}}]}}'
    )
    Canned.answer = ("application/sparql-results+json", bindings, 200)
    result = Endpoint(canned).query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    assert isinstance(result, GraphResult) and result.ntriples == NT.decode()
    other = bindings.replace(b'"vars": ["s", "p", "o"]', b'"vars": ["a", "p", "o"]')
    Canned.answer = ("application/sparql-results+json", other, 200)
    with pytest.raises(EndpointError, match="a table of a, p, o, not a graph"):
        Endpoint(canned).query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")


def test_an_echoed_query_is_dropped_from_the_error(canned: str) -> None:
    echo = b"Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error\n\nSPARQL query:\n"
    Canned.answer = ("text/plain", echo + b"SELECT " * 200, 400)
    with pytest.raises(EndpointError) as caught:
        Endpoint(canned).query("SELECT * { ?s ?p ?o }")
    message = str(caught.value)
    assert message.endswith("Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error")
