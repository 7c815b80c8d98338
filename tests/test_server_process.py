"""A real `kg serve` process on 127.0.0.1, used by real clients: SPARQLWrapper, rdflib's
SPARQLStore, curl, `kg query --endpoint` / `kg sparql --endpoint`, and another `kg serve`
federating to it. Also what only a process shows: snapshots and refresh after an ingest,
SIGHUP, Ctrl-C, startup errors, and a timed-out worker really being killed."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, RDFXML, TURTLE, XML, SPARQLWrapper
from typer.testing import CliRunner

from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.conftest import run
from tests.query_data import build
from tests.serve_support import (
    KG_BIN,
    SLOW_QUERY,
    STOPPED,
    ServeProcess,
    children,
    process_alive,
    wait_until,
    write_records,
)

KG = "https://w3id.org/kg/ontology#"
BASE = "https://w3id.org/kg/id/"
PAPERS = f"SELECT ?p ?t WHERE {{ ?p a <{KG}Paper> ; <http://purl.org/dc/terms/title> ?t }}"
COUNT_PAPERS = f"SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ ?p a <{KG}Paper> }}"
CURL = shutil.which("curl")


def disk_store(path: Path, paths: list[Path]) -> Path:
    with GraphStore.open(path) as store:
        build(store, [str(p) for p in paths])
    return path


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> Path:
    return disk_store(tmp_path_factory.mktemp("serve-seeds") / "store", seed_paths)


@pytest.fixture(scope="module")
def server(store_path: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(["--store", str(store_path)], ["--workers", "2", "--timeout", "3"])
    try:
        yield proc
    finally:
        code, log = proc.stop()
        assert code == STOPPED, log
        assert "Traceback" not in log, log


def paper_count(url: str) -> int:
    response = httpx.post(url, data={"query": COUNT_PAPERS}, timeout=30)
    assert response.status_code == 200, response.text
    return int(response.json()["results"]["bindings"][0]["n"]["value"])


# --- real clients -----------------------------------------------------------------------------


def test_sparqlwrapper_select_ask_construct(server: ServeProcess) -> None:
    client = SPARQLWrapper(server.sparql)
    client.setQuery(PAPERS)
    client.setReturnFormat(JSON)
    data: Any = client.query().convert()
    titles = sorted(b["t"]["value"] for b in data["results"]["bindings"])
    assert titles == [
        "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms",
        "Self-Attention Attribution: Interpreting Information Interactions Inside Transformer",
    ]
    client.setReturnFormat(XML)
    xml = client.query().convert()
    assert len(xml.getElementsByTagName("result")) == 2  # type: ignore[union-attr]
    client.setQuery(f"ASK {{ ?p a <{KG}Paper> }}")
    client.setReturnFormat(JSON)
    assert client.query().convert()["boolean"] is True  # type: ignore[index]
    client.setQuery(f"CONSTRUCT {{ ?p a <{KG}Paper> }} WHERE {{ ?p a <{KG}Paper> }}")
    client.setReturnFormat(RDFXML)
    graph = client.query().convert()
    assert isinstance(graph, rdflib.Graph) and len(graph) == 2
    client.setReturnFormat(TURTLE)
    turtle = client.query().convert()
    assert len(rdflib.Graph().parse(data=turtle, format="turtle")) == 2
    client.setMethod("POST")
    client.setReturnFormat(JSON)
    client.setQuery("SELECT * WHERE { ?s ?p }")
    with pytest.raises(Exception, match="parse"):
        client.query()


def test_rdflib_sparqlstore(server: ServeProcess) -> None:
    graph = rdflib.Graph(store=SPARQLStore(server.sparql))
    papers = {s for s, _, _ in graph.triples((None, rdflib.RDF.type, rdflib.URIRef(f"{KG}Paper")))}
    assert papers == {
        rdflib.URIRef(f"{BASE}paper/attention-module-is-not-only-a-weight"),
        rdflib.URIRef(f"{BASE}paper/self-attention-attribution-interpreting"),
    }
    result = list(graph.query(PAPERS))
    assert len(result) == 2


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
def test_curl(server: ServeProcess) -> None:
    def curl(*args: str) -> tuple[str, str, str]:
        out = subprocess.run(
            [str(CURL), "-sS", "-w", "\n%{http_code} %{content_type}", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        body, _, status = out.rpartition("\n")
        code, _, ctype = status.partition(" ")
        return body, code, ctype

    body, code, ctype = curl(
        "-H", "Accept: text/csv", "--data-urlencode", f"query={PAPERS}", server.sparql
    )
    assert code == "200" and ctype == "text/csv; charset=utf-8"
    assert body.splitlines()[0].strip() == "p,t" and len(body.strip().splitlines()) == 3
    body, code, ctype = curl(
        "-H", "Content-Type: application/sparql-query", "--data-binary", PAPERS, server.sparql
    )
    assert code == "200" and len(json.loads(body)["results"]["bindings"]) == 2
    body, code, ctype = curl("-G", "--data-urlencode", "query=SELECT ?x WHERE {", server.sparql)
    assert code == "400" and "does not parse" in body
    body, code, ctype = curl(f"{server.url}/paper/self-attention-attribution-interpreting")
    assert code == "200" and ctype == "text/turtle; charset=utf-8"
    assert "Self-Attention Attribution" in body
    body, code, ctype = curl("-H", "Accept: text/html", f"{server.url}/author/goro-kobayashi")
    assert code == "200" and "<h1>Goro Kobayashi</h1>" in body
    body, code, ctype = curl("--data-urlencode", "update=DROP ALL", f"{server.url}/update")
    assert code == "403"


def test_kg_query_and_sparql_against_the_server(
    server: ServeProcess, store_path: Path, cli: CliRunner
) -> None:
    args = ["query", "papers-by-author", "--param", "author=Goro Kobayashi", "--format", "json"]
    local = run(cli, "--store", str(store_path), *args)
    remote = run(cli, *args, "--endpoint", server.sparql)
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert len(json.loads(local.stdout)["results"]["bindings"]) == 1
    construct = f"CONSTRUCT {{ ?p a <{KG}Paper> }} WHERE {{ ?p a <{KG}Paper> }}"
    out = run(cli, "sparql", construct, "--endpoint", server.sparql, "--format", "ntriples")
    assert out.exit_code == 0 and len(out.stdout.strip().splitlines()) == 2
    refused = run(cli, "sparql", "DROP ALL", "--endpoint", server.sparql)
    assert refused.exit_code == 1 and "403" in refused.output and "read-only" in refused.output


# --- limits, really enforced ------------------------------------------------------------------


def test_timeout_kills_the_worker_and_the_client_sees_an_error(
    server: ServeProcess, cli: CliRunner
) -> None:
    pid = server.proc.pid
    workers_before = set(children(pid))
    assert len(workers_before) == 2
    response = httpx.post(server.sparql, data={"query": SLOW_QUERY}, timeout=30)
    assert response.status_code == 503 and "time limit of 3 s" in response.text
    # The worker that ran it is gone, and a fresh one took its place.
    wait_until(lambda: len(workers_before - set(children(pid))) == 1)
    wait_until(lambda: len(children(pid)) == 2)
    killed = (workers_before - set(children(pid))).pop()
    assert not process_alive(killed)
    out = run(cli, "sparql", SLOW_QUERY, "--endpoint", server.sparql)
    assert out.exit_code == 1 and "time limit" in out.output and "503" in out.output
    assert paper_count(server.sparql) == 2


# --- freshness --------------------------------------------------------------------------------


def _new_records(directory: Path, n: int) -> Path:
    return write_records(directory, list(records(n, seed=7)))


def test_new_ingests_appear_after_refresh(tmp_path: Path, seed_paths: list[Path]) -> None:
    path = disk_store(tmp_path / "store", seed_paths)
    proc = ServeProcess(["--store", str(path)], ["--workers", "2", "--refresh", "0.5"])
    try:
        assert paper_count(proc.sparql) == 2
        # The server holds only read-only snapshots, so kg can write beside it.
        ingest = subprocess.run(
            [KG_BIN, "--store", str(path), "ingest", str(_new_records(tmp_path, 30)), "-q"],
            capture_output=True,
            text=True,
        )
        assert ingest.returncode == 0, ingest.stderr
        wait_until(lambda: paper_count(proc.sparql) == 32)
        assert all(paper_count(proc.sparql) == 32 for _ in range(4))  # every worker
    finally:
        code, log = proc.stop()
    assert code == STOPPED, log


def test_snapshots_hold_until_sighup(tmp_path: Path, seed_paths: list[Path]) -> None:
    path = disk_store(tmp_path / "store", seed_paths)
    proc = ServeProcess(["--store", str(path)], ["--workers", "1", "--refresh", "0"])
    try:
        assert paper_count(proc.sparql) == 2
        ingest = subprocess.run(
            [KG_BIN, "--store", str(path), "ingest", str(_new_records(tmp_path, 5)), "-q"],
            capture_output=True,
            text=True,
        )
        assert ingest.returncode == 0, ingest.stderr
        assert paper_count(proc.sparql) == 2  # a snapshot: no automatic refresh
        proc.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: paper_count(proc.sparql) == 7)
    finally:
        code, log = proc.stop()
    assert code == STOPPED, log


# --- federation -------------------------------------------------------------------------------


def test_service_only_where_allowed(server: ServeProcess, tmp_path: Path) -> None:
    federated = (
        f"SELECT ?t WHERE {{ SERVICE <{server.sparql}> {{ ?p a <{KG}Paper> ; "
        "<http://purl.org/dc/terms/title> ?t } }"
    )
    assert httpx.post(server.sparql, data={"query": federated}).status_code == 403
    other = ServeProcess(["--memory"], ["--workers", "1", "--allow-service", "127.0.0.1"])
    try:
        response = httpx.post(other.sparql, data={"query": federated}, timeout=30)
        assert response.status_code == 200, response.text
        assert len(response.json()["results"]["bindings"]) == 2
        elsewhere = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
        assert httpx.post(other.sparql, data={"query": elsewhere}).status_code == 403
    finally:
        code, log = other.stop()
    assert code == STOPPED, log


# --- the memory store and updates -------------------------------------------------------------


def test_memory_store_with_updates() -> None:
    proc = ServeProcess(["--memory"], ["--workers", "2", "--allow-update"])
    try:
        token_line = next(line for line in proc.stderr_lines if "update token" in line)
        token = token_line.rsplit(" ", 1)[1].strip()
        assert paper_count(proc.sparql) == 0
        update = f"INSERT DATA {{ GRAPH <{BASE}graph/x> {{ <{BASE}paper/x> a <{KG}Paper> }} }}"
        denied = httpx.post(f"{proc.url}/update", data={"update": update})
        assert denied.status_code == 401
        done = httpx.post(
            f"{proc.url}/update",
            content=update,
            headers={
                "Content-Type": "application/sparql-update",
                "Authorization": f"Bearer {token}",
            },
        )
        assert done.status_code == 204
        assert all(paper_count(proc.sparql) == 1 for _ in range(4))
        page = proc.get("/paper/x")
        assert page.status_code == 200 and f"<{BASE}paper/x>" in page.text
    finally:
        code, log = proc.stop()
    assert code == STOPPED, log


# --- starting and stopping --------------------------------------------------------------------


def test_ctrl_c_stops_the_server_and_its_workers(store_path: Path) -> None:
    proc = ServeProcess(["--store", str(store_path)], ["--workers", "2"])
    workers = children(proc.proc.pid)
    assert len(workers) == 2
    code, log = proc.stop()
    assert code == STOPPED and "Traceback" not in log
    assert not any(process_alive(w) for w in workers)


def test_startup_errors_are_one_line(tmp_path: Path, server: ServeProcess) -> None:
    missing = subprocess.run(
        [KG_BIN, "--store", str(tmp_path / "nope"), "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1
    assert "no kg store at" in missing.stderr and "Traceback" not in missing.stderr
    port = server.url.rsplit(":", 1)[1]
    busy = subprocess.run(
        [KG_BIN, "--memory", "serve", "--port", port],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert busy.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in busy.stderr and "Traceback" not in busy.stderr


def test_health_reports_the_pool(server: ServeProcess) -> None:
    health = server.get("/health").json()
    assert health["status"] == "ok" and health["workers"] == 2
    assert health["worker"] in children(server.proc.pid)


def test_help_lists_the_options(cli: CliRunner) -> None:
    out = run(cli, "serve", "--help")
    assert out.exit_code == 0
    for option in ("--host", "--port", "--timeout", "--allow-update", "--cors", "--allow-service"):
        assert option in out.stdout


def test_disk_store_with_updates(tmp_path: Path, seed_paths: list[Path]) -> None:
    path = disk_store(tmp_path / "store", seed_paths)
    proc = ServeProcess(
        ["--store", str(path)],
        ["--workers", "2", "--allow-update", "--refresh", "0"],
        env={"KG_UPDATE_TOKEN": "disk-token"},
    )
    try:
        update = f"INSERT DATA {{ GRAPH <{BASE}graph/y> {{ <{BASE}paper/y> a <{KG}Paper> }} }}"
        done = httpx.post(
            f"{proc.url}/update",
            data={"update": update},
            headers={"Authorization": "Bearer disk-token"},
        )
        assert done.status_code == 204, done.text
        assert all(paper_count(proc.sparql) == 3 for _ in range(4))  # every worker sees it
        # The server's writer holds the store, so another writer is told so, in one line.
        busy = subprocess.run(
            [KG_BIN, "--store", str(path), "ingest", str(_new_records(tmp_path, 2)), "-q"],
            capture_output=True,
            text=True,
        )
        assert busy.returncode == 1 and "busy" in busy.stderr and "Traceback" not in busy.stderr
    finally:
        code, log = proc.stop()
    assert code == STOPPED, log
    with GraphStore.open(path, read_only=True) as store:
        assert store.has_graph(f"{BASE}graph/y")  # durable after the server stopped
