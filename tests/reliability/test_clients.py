"""Slow and greedy clients cannot stall `kg serve` (issue 31).

A real server runs with a descriptor limit of 256 and two workers. From 127.0.0.2, 300
connections send half a request and stop (slowloris) and a body trickles in; from
127.0.0.2 again, a flood of slow queries. Through all of it `/health` answers, another
client (127.0.0.3) gets its ASK answered with 200, and the half-open connections are cut
off by the header timeout. Loopback only; every loop is bounded.
"""

from __future__ import annotations

import re
import resource
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SEEDS_DIR
from tests.reliability.helpers import KG_CMD, STOPPED, kg_env, run_kg, wait_until

pytestmark = pytest.mark.reliability
FD_LIMIT = 256
HALF_OPEN = 300
#: Every seed triple against every other, four times over: runs until the time limit.
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
ASK = "ASK { ?s ?p ?o }"


class Served:
    def __init__(self, store: Path, log: Path, *args: str) -> None:
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))

        with log.open("w") as handle:
            self.proc = subprocess.Popen(
                [*KG_CMD, "--store", str(store), "serve", "--port", "0", "--quiet", "--warm", "0", *args],
                stdout=subprocess.DEVNULL, stderr=handle, env=kg_env(), preexec_fn=limit,
            )  # fmt: skip
        self.log = log
        found: list[str] = []

        def ready() -> bool:
            match = re.search(r"kg serve: http://(\S+?):(\d+)/\s", log.read_text())
            if match:
                found.append(match.group(2))
            elif self.proc.poll() is not None:
                raise AssertionError(log.read_text()[-2000:])
            return bool(match)

        wait_until(ready, 120, "kg serve to listen")
        self.port = int(found[0])
        self.url = f"http://127.0.0.1:{self.port}"

    def client(self, address: str) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=address)
        return httpx.Client(base_url=self.url, transport=transport, timeout=60)

    def stop(self) -> int:
        self.proc.send_signal(2)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("clients")
    done = run_kg("--store", str(work / "store"), "ingest", str(SEEDS_DIR))
    assert done.returncode == 0, done.stderr
    server = Served(
        work / "store", work / "serve.log",
        "--workers", "2", "--timeout", "4", "--header-timeout", "2", "--body-timeout", "2",
        "--refresh", "0",
    )  # fmt: skip
    try:
        yield server
    finally:
        assert server.stop() == STOPPED
        assert "Traceback" not in server.log.read_text()


def _half_open(port: int, n: int, addresses: int = 1) -> list[socket.socket]:
    out = []
    for i in range(n):
        sock = socket.socket()
        sock.bind((f"127.0.0.{2 if addresses == 1 else 20 + i % addresses}", 0))
        sock.settimeout(5)
        try:
            sock.connect(("127.0.0.1", port))
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        except OSError:
            sock.close()
            continue
        out.append(sock)
    return out


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0.05)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_half_open_connections_leave_health_answering(served: Served) -> None:
    """300 half-open requests from one address, with 256 descriptors: /health answers
    another client, and the header timeout closes every one of them."""
    socks = _half_open(served.port, HALF_OPEN)
    try:
        with served.client("127.0.0.3") as other:
            health = other.get("/health", timeout=10)
            assert health.status_code == 200, health.text
            assert health.json()["status"] == "ok"
        wait_until(lambda: all(_closed_by_server(s) for s in socks), 30, "half-open closes")
    finally:
        for sock in socks:
            sock.close()


def test_half_open_connections_from_many_addresses_leave_health_answering(
    served: Served,
) -> None:
    """300 half-open requests from 10 addresses (each under its own cap, together over the
    total one): the longest-waiting is closed to make room, so /health still answers."""
    socks = _half_open(served.port, HALF_OPEN, addresses=10)
    try:
        with served.client("127.0.0.3") as other:
            for _ in range(3):
                health = other.get("/health", timeout=10)
                assert health.status_code == 200, health.text
    finally:
        for sock in socks:
            sock.close()


def test_a_trickled_body_is_cut_off(served: Served) -> None:
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    with sock:
        sock.sendall(
            b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
            b"Content-Length: 200\r\n\r\nASK"
        )
        reply = b""
        deadline = time.monotonic() + 30  # a hang guard: 1 byte a second for 30 s at most
        while time.monotonic() < deadline:
            try:
                sock.sendall(b" ")
            except OSError:
                break
            try:
                sock.settimeout(1)
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]


def test_one_client_flooding_leaves_another_answered(served: Served) -> None:
    """8 threads of slow queries from 127.0.0.2 hold at most their share (1 of 2 workers);
    an ASK from 127.0.0.3 gets 200 each time, never 503."""
    stop = threading.Event()
    flood_status: list[int] = []

    def flood() -> None:
        with served.client("127.0.0.2") as greedy:
            while not stop.is_set():
                flood_status.append(greedy.post("/sparql", data={"query": SLOW}).status_code)

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    answers: list[Any] = []
    try:
        time.sleep(1.0)  # the flood has filled its share and its queue
        with served.client("127.0.0.3") as other:
            for _ in range(5):
                r = other.post(
                    "/sparql", data={"query": ASK},
                    headers={"Accept": "application/sparql-results+json"},
                )  # fmt: skip
                answers.append((r.status_code, r.text[:200]))
            health = other.get("/health", timeout=10)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert [a[0] for a in answers] == [200] * 5, answers
    assert health.status_code == 200
    assert flood_status and set(flood_status) <= {503}, sorted(set(flood_status))
