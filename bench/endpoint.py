"""Endpoint hardening (issue 31): what the guards cost, and what a second client sees.

    python bench/endpoint.py [--rounds 20] [--out bench/out/endpoint.json]

On the seed store, with real `kg serve` processes on loopback:

1. Fair shares: a client on 127.0.0.3 sends ASKs, first with the server idle, then while a
   client on 127.0.0.2 floods it with slow queries from 8 threads (2 workers; the flooder
   holds at most 1). Median ASK time in each case, and the ratio flood/idle.
2. Connection supervision: SERVICE calls to a loopback listener through a server started
   with `--allow-service 127.0.0.1` (each connect checked by the server process) and one
   with `--allow-service '*'` (no filter), side by side in turns; medians and the ratio.
3. Slowloris: /health from another address, idle and beside 300 half-open connections,
   with a descriptor limit of 256; the descriptors the server process holds then.

The machine is shared: compare ratios, not absolute times (the load is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
ASK = "ASK { ?s ?p ?o }"


def _seeds() -> Path:
    shared = ROOT.parent.parent / "shared" / "seeds"
    for candidate in (Path("/work/shared/seeds"), shared, ROOT / "examples" / "records"):
        if candidate.is_dir():
            return candidate
    raise SystemExit("no seed records found")


def serve(store: Path, log: Path, *args: str, fds: int | None = None) -> tuple[Any, str]:
    def limit() -> None:
        if fds:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fds, fds))

    with log.open("w") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kg", "--store", str(store), "serve", "--port", "0",
             "--quiet", "--refresh", "0", *args],
            stdout=subprocess.DEVNULL, stderr=handle, preexec_fn=limit,
        )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.search(r"kg serve: (http://\S+?)/\s", log.read_text())
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            raise SystemExit(log.read_text())
        time.sleep(0.05)
    raise SystemExit("kg serve did not start")


def stop(proc: Any) -> None:
    proc.send_signal(2)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


def client(url: str, address: str) -> httpx.Client:
    return httpx.Client(
        base_url=url, transport=httpx.HTTPTransport(local_address=address), timeout=60
    )


def timed(fn: Any, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def fair_shares(store: Path, work: Path, rounds: int) -> dict[str, Any]:
    proc, url = serve(store, work / "fair.log", "--workers", "2", "--timeout", "4")
    try:
        with client(url, "127.0.0.3") as other:

            def ask() -> None:
                r = other.post("/sparql", data={"query": ASK})
                assert r.status_code == 200, r.text

            idle = timed(ask, rounds)
            stop_flood = threading.Event()

            def flood() -> None:
                with client(url, "127.0.0.2") as greedy:
                    while not stop_flood.is_set():
                        greedy.post("/sparql", data={"query": SLOW})

            threads = [threading.Thread(target=flood, daemon=True) for _ in range(8)]
            for t in threads:
                t.start()
            time.sleep(1.0)
            try:
                flooded = timed(ask, rounds)
            finally:
                stop_flood.set()
                for t in threads:
                    t.join(30)
    finally:
        stop(proc)
    return {
        "ask_idle_ms": round(statistics.median(idle) * 1000, 1),
        "ask_beside_flood_ms": round(statistics.median(flooded) * 1000, 1),
        "ratio": round(statistics.median(flooded) / statistics.median(idle), 2),
        "asks_answered_200": 2 * rounds,
    }


class Listener:
    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        body = b'{"head":{"vars":["x"]},"results":{"bindings":[]}}'
        self.reply = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        )
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(self.reply)


def supervision(store: Path, work: Path, rounds: int) -> dict[str, Any]:
    listener = Listener()
    query = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{listener.port}/s> {{ ?x ?p ?o }} }}"
    servers = {
        "checked": serve(store, work / "checked.log", "--workers", "1",
                         "--allow-service", "127.0.0.1"),
        "unfiltered": serve(store, work / "open.log", "--workers", "1", "--allow-service", "*"),
    }  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in servers}
    try:
        for _ in range(rounds):
            for name, (_, url) in servers.items():
                start = time.perf_counter()
                r = httpx.post(f"{url}/sparql", data={"query": query}, timeout=60)
                times[name].append(time.perf_counter() - start)
                assert r.status_code == 200, r.text
    finally:
        for proc, _ in servers.values():
            stop(proc)
    checked, unfiltered = (statistics.median(times[k]) for k in ("checked", "unfiltered"))
    return {
        "service_checked_ms": round(checked * 1000, 1),
        "service_unfiltered_ms": round(unfiltered * 1000, 1),
        "ratio": round(checked / unfiltered, 2),
    }


def slowloris(store: Path, work: Path, rounds: int) -> dict[str, Any]:
    proc, url = serve(store, work / "slow.log", "--workers", "1", "--header-timeout", "10",
                      fds=256)  # fmt: skip
    port = int(url.rsplit(":", 1)[1])
    socks: list[socket.socket] = []
    try:
        with client(url, "127.0.0.3") as other:
            idle = timed(lambda: other.get("/health").raise_for_status(), rounds)
            for _ in range(300):
                s = socket.socket()
                s.bind(("127.0.0.2", 0))
                try:
                    s.connect(("127.0.0.1", port))
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                except OSError:
                    s.close()
                    continue
                socks.append(s)
            time.sleep(2.0)  # the server has accepted (and closed) what is over its caps
            held = len(os.listdir(f"/proc/{proc.pid}/fd"))
            beside = timed(lambda: other.get("/health").raise_for_status(), rounds)
    finally:
        for s in socks:
            s.close()
        stop(proc)
    return {
        "health_idle_ms": round(statistics.median(idle) * 1000, 1),
        "health_beside_300_half_open_ms": round(statistics.median(beside) * 1000, 1),
        "ratio": round(statistics.median(beside) / statistics.median(idle), 2),
        "server_fds_with_300_half_open": held,
        "fd_limit": 256,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "endpoint.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-endpoint-") as tmp:
        work = Path(tmp)
        store = work / "store"
        subprocess.run(
            [sys.executable, "-m", "kg", "--store", str(store), "ingest", "-q", str(_seeds())],
            check=True,
        )
        figures = {
            "load": os.getloadavg()[0],
            "fair_shares": fair_shares(store, work, args.rounds),
            "supervision": supervision(store, work, args.rounds),
            "slowloris": slowloris(store, work, args.rounds),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
