"""Endpoint soak: 8 clients for 30 s against a real `kg serve` on 127.0.0.1, mixing good
queries, syntax errors, runaway queries that must time out, oversized requests and updates
without (or with a wrong) token. Every request gets the right status and body; a good
query's latency is measured (its p99 against the unloaded time is judged by bench/soak.py,
not here: a timing bound fails on a busy machine); the server's memory (with its workers)
does not grow; it stays healthy and stops on Ctrl-C.

The good query whose latency is judged is a named query (shared-methods: ~80 ms unloaded on
this store, the kind of query the endpoint is for); random paper lookups (~1 ms) make up
the rest of the good traffic, and are checked for the right answer too.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from kg.testing.records import records
from tests.reliability.helpers import (
    STOPPED,
    Server,
    record_figures,
    rss_mb,
    run_kg,
    write_jsonl,
)

pytestmark = pytest.mark.reliability
PAPERS = 2000
TIMEOUT_S = 2.0
MAX_BODY_KB = 64
TOKEN = "soak-test-token"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
GOOD = """PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?title (COUNT(DISTINCT ?author) AS ?authors) WHERE {
  <https://w3id.org/kg/id/paper/synthetic-paper-%d> dcterms:title ?title ; dcterms:creator ?author
} GROUP BY ?title"""
UPDATE = "INSERT DATA { <urn:soak:s> <urn:soak:p> <urn:soak:o> }"
SHARED = {"paper": "synthetic-paper-5", "min_shared": "3"}
JSON = {"Accept": "application/sparql-results+json"}
#: What each client sends, by weight. A runaway query burns a core until it is stopped, so
#: one starts at most every RUNAWAY_GAP_S seconds (else, on two cores, the soak would measure
#: a machine with no CPU left rather than the server).
KINDS = {"good": 10, "lookup": 50, "syntax": 12, "oversized": 8, "update": 10, "runaway": 10}
RUNAWAY_GAP_S = 10.0


@dataclass
class Tally:
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    good_latencies: list[float] = field(default_factory=list)
    runaway_latencies: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def expected_answer(paper: dict[str, Any]) -> tuple[str, int]:
    return paper["title"], len({a.strip() for a in paper["authors"]})


def lookup(client: httpx.Client, url: str, papers: list[Any], rng: random.Random) -> Any:
    """A random paper's title and number of authors; the problem, or None."""
    i = rng.randrange(len(papers))
    response = client.post(f"{url}/sparql", data={"query": GOOD % i}, headers=JSON)
    if response.status_code != 200:
        return f"lookup: {response.status_code} {response.text[:200]}"
    rows = response.json()["results"]["bindings"]
    got = [(r["title"]["value"], int(r["authors"]["value"])) for r in rows]
    if got != [expected_answer(papers[i])]:
        return f"lookup of paper {i}: wrong answer {got}"
    return None


def shared_methods(client: httpx.Client, url: str) -> httpx.Response:
    return client.get(f"{url}/queries/shared-methods", params=SHARED, headers=JSON)


def send(
    kind: str, client: httpx.Client, url: str, papers: list[Any], rng: random.Random, good: str
) -> Any:
    """One request of `kind`; returns (status, problem or None)."""
    if kind == "lookup":
        problem = lookup(client, url, papers, rng)
        return (200 if problem is None else -1), problem
    if kind == "good":
        response = shared_methods(client, url)
        ok = response.status_code == 200 and response.text == good
        return (
            response.status_code,
            None if ok else f"good: {response.status_code} {response.text[:200]}",
        )
    if kind == "syntax":
        response = client.post(f"{url}/sparql", data={"query": "SELECT ?x WHERE { ?x "})
        ok = response.status_code == 400 and "does not parse" in response.text
    elif kind == "oversized":
        padding = "#" + "x" * (MAX_BODY_KB * 1024 + rng.randrange(1, 50_000))
        response = client.post(f"{url}/sparql", data={"query": "ASK {}\n" + padding})
        ok = response.status_code == 413 and "larger than" in response.text
    elif kind == "update":
        headers = {"Content-Type": "application/sparql-update"}
        if rng.random() < 0.5:
            headers["Authorization"] = "Bearer not-the-token"
        response = client.post(f"{url}/update", content=UPDATE, headers=headers)
        ok = response.status_code == 401 and "token" in response.text
    else:
        response = client.post(f"{url}/sparql", data={"query": RUNAWAY})
        ok = response.status_code == 503 and "time limit" in response.text
    return (
        response.status_code,
        None if ok else f"{kind}: {response.status_code} {response.text[:200]}",
    )


def soak(
    server: Server, papers: list[Any], seconds: float, clients: int, seed: int, good: str
) -> Tally:
    tally = Tally()
    runaway_lock = threading.Lock()
    next_runaway = [time.monotonic()]
    stop_at = time.monotonic() + seconds

    def runaway_turn() -> bool:
        with runaway_lock:
            if time.monotonic() < next_runaway[0]:
                return False
            next_runaway[0] = time.monotonic() + RUNAWAY_GAP_S
            return True

    def client_loop(number: int) -> None:
        rng = random.Random(seed * 100 + number)
        kinds, weights = zip(*KINDS.items(), strict=True)
        # each client from its own loopback address, as separate users are: the server
        # gives one address at most a share of its workers (issue 31)
        transport = httpx.HTTPTransport(local_address=f"127.0.0.{10 + number}")
        with httpx.Client(timeout=60, transport=transport) as client:
            while time.monotonic() < stop_at:
                kind = rng.choices(kinds, weights)[0]
                if kind == "runaway" and not runaway_turn():
                    kind = "lookup"
                started = time.monotonic()
                try:
                    status, problem = send(kind, client, server.url, papers, rng, good)
                except httpx.HTTPError as exc:
                    status, problem = -1, f"{kind}: {type(exc).__name__}: {exc}"
                elapsed = time.monotonic() - started
                with tally.lock:
                    tally.statuses[(kind, status)] += 1
                    if problem:
                        tally.problems.append(problem)
                    if kind == "good" and not problem:
                        tally.good_latencies.append(elapsed)
                    if kind == "runaway":
                        tally.runaway_latencies.append(elapsed)
                time.sleep(rng.uniform(0.1, 0.4))  # a client's think time

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 120)
    assert not any(t.is_alive() for t in threads), "a client hung"
    return tally


def unloaded(server: Server, papers: list[Any], n: int = 30) -> tuple[str, list[float]]:
    """The good query's answer and its latencies with no other traffic (after a warm-up,
    which also checks a few lookups)."""
    rng = random.Random(1)
    times = []
    with httpx.Client(timeout=60) as client:
        for _ in range(20):
            assert lookup(client, server.url, papers, rng) is None
        first = shared_methods(client, server.url)
        assert first.status_code == 200 and len(first.json()["results"]["bindings"]) > 10
        for _ in range(n):
            started = time.monotonic()
            response = shared_methods(client, server.url)
            times.append(time.monotonic() - started)
            assert response.text == first.text
    return first.text, times


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def run_soak(tmp_path: Path, seconds: float) -> dict[str, Any]:
    """Soak a real server; assert every status, answer and the memory level; return the
    figures (the latency ratio among them: bench/soak.py judges it, tests do not)."""
    papers = list(records(PAPERS, seed=21))
    source = write_jsonl(tmp_path / "papers.jsonl", papers)
    store = tmp_path / "store"
    built = run_kg("--store", str(store), "ingest", str(source), "-q")
    assert built.returncode == 0, built.stderr
    server = Server.start(
        store, tmp_path / "serve.log", "--workers", "4", "--timeout", str(TIMEOUT_S),
        "--max-body-kb", str(MAX_BODY_KB), "--allow-update", "--update-token", TOKEN,
        "--refresh", "0",
    )  # fmt: skip
    memory: list[float] = []
    sampling = threading.Event()

    def sample_memory() -> None:
        while not sampling.wait(1.0):
            memory.append(rss_mb(server.proc.pid))

    sampler = threading.Thread(target=sample_memory)
    try:
        good, quiet = unloaded(server, papers)
        sampler.start()
        tally = soak(server, papers, seconds, clients=8, seed=5, good=good)
        sampling.set()
        sampler.join()
        quiet += unloaded(server, papers)[1]  # before and after: the machine's own load
        health = httpx.get(f"{server.url}/health", timeout=60)
        assert health.status_code == 200, health.text
        untouched = server.query("ASK { <urn:soak:s> ?p ?o }")
        assert untouched.json()["boolean"] is False, "an update without the token got through"
    finally:
        sampling.set()
        code = server.stop()
    log = server.log.read_text()
    assert code == STOPPED and "Traceback" not in log, log[-3000:]

    assert not tally.problems, tally.problems[:5]
    served = sum(tally.statuses.values())
    kinds = Counter(kind for kind, _ in tally.statuses.elements())
    assert all(kinds[k] > 0 for k in KINDS), kinds
    assert max(tally.runaway_latencies) < TIMEOUT_S + 15  # stopped, not left running
    base, loaded = statistics.median(quiet), p99(tally.good_latencies)
    # A worker running a runaway query grows (to ~0.9 GB) until it is killed: judge the level
    # between those spikes (the median), early against late.
    third = max(len(memory) // 3, 1)
    early, late = statistics.median(memory[:third]), statistics.median(memory[-third:])
    assert late <= early * 1.2 + 50, f"memory grew from {early:.0f} MB to {late:.0f} MB"
    return {
        "seconds": seconds,
        "clients": 8,
        "requests_served": served,
        "by_kind_and_status": {f"{k} {s}": n for (k, s), n in sorted(tally.statuses.items())},
        "wrong_answers_or_statuses": len(tally.problems),
        "good_unloaded_median_ms": round(base * 1000, 1),
        "good_loaded_p50_ms": round(statistics.median(tally.good_latencies) * 1000, 1),
        "good_loaded_p99_ms": round(loaded * 1000, 1),
        "p99_over_unloaded": round(loaded / base, 2),
        "runaway_latency_max_s": round(max(tally.runaway_latencies), 2),
        "server_rss_mb_median_first_third": round(early),
        "server_rss_mb_median_last_third": round(late),
        "server_rss_mb_max": round(max(memory)),
        "health": health.json(),
    }


def test_endpoint_soak(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    record_figures(request.config, "soak", run_soak(tmp_path, 20))


@pytest.mark.slow
def test_endpoint_soak_long(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    record_figures(request.config, "soak_long", run_soak(tmp_path, 600))
