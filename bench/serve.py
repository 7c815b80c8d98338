"""Endpoint load benchmark (issue 7): `kg serve` under 8 concurrent clients vs Oxigraph's server.

    python bench/serve.py [--records 5000] [--seconds 60] [--clients 8] [--workers 2]
                          [--store PATH]

1. Generate N seed-format records (kg.testing.records) and ingest them with kg into an on-disk store
   (or reuse --store PATH), then copy the store for the Oxigraph server.
2. Build a fixed, seeded mix of named-query calls whose parameters are sampled from the
   store (papers, authors, tasks, venues, repositories, title words): the interactive
   queries a user clicks through. Each call is also bound into SPARQL text exactly as
   `kg query --endpoint` binds it (a VALUES block).
3. Start both servers on 127.0.0.1 (free ports) and drive each for --seconds in all, in
   turns of --round seconds (rotating the order, so that load from elsewhere on a shared
   machine falls on every target alike), with --clients concurrent clients (one asyncio
   process, httpx), each sending the next call as soon as its previous answer arrived:
   * oxigraph   — `oxigraph serve-read-only --union-default-graph` on the copy, the bound
                  SPARQL POSTed to /query (the baseline);
   * kg-queries — `kg serve`, GET /queries/NAME?param=… (binding done by the server);
   * kg-sparql  — `kg serve`, the same bound SPARQL POSTed to /sparql.
   Every answer must be HTTP 200 and parse as SPARQL JSON; anything else counts as an error
   (the script exits 1 if there is any). Both servers stop when the script ends.
4. Measure the pool's own cost: the same cheap query run in process and through a worker
   process (send, run, serialise, receive), sequentially.
5. Print requests/s, p50/p99 latency, errors and the kg/oxigraph ratios, and write them to
   bench/out/serve.json.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

BASE = "https://w3id.org/kg/id/"
KG_NS = "https://w3id.org/kg/ontology#"
BIN = Path(sys.executable).parent
WORDS = ("attention", "graph", "learning", "neural", "transformer", "robust", "sparse", "policy")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the store and the mix ----------------------------------------------------------------


def build_store(n: int, directory: Path) -> Path:
    from kg.testing.records import records

    data = directory / "records.jsonl"
    with data.open("w", encoding="utf-8") as f:
        for record in records(n, seed=7):
            f.write(json.dumps(record) + "\n")
    store = directory / "kg-store"
    start = time.perf_counter()
    subprocess.run([str(BIN / "kg"), "--store", str(store), "ingest", str(data), "-q"], check=True)
    print(f"ingested {n:,} records in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return store


def _sample(store: Any, cls: str, limit: int = 400) -> list[str]:
    from kg.rdf.results import SelectResult

    result = store.query(f"SELECT DISTINCT ?x WHERE {{ ?x a <{KG_NS}{cls}> }} LIMIT {limit}")
    assert isinstance(result, SelectResult)
    return [row[0].value for row in result.rows if row[0] is not None]


@dataclass(frozen=True)
class Call:
    name: str
    params: dict[str, str]
    sparql: str  # the same call bound as `kg query --endpoint` binds it


def build_mix(store_path: Path, size: int, seed: int) -> list[Call]:
    """A fixed sequence of interactive named-query calls with parameters from the store."""
    from kg.query.named import bind, load_queries, with_values
    from kg.rdf.store import GraphStore

    with GraphStore.open(store_path, read_only=True) as store:
        pools = {
            "paper": _sample(store, "Paper"),
            "author": _sample(store, "Author"),
            "task": _sample(store, "Task"),
            "venue": _sample(store, "Venue"),
            "repository": _sample(store, "Repository"),
        }
    rng = random.Random(seed)
    queries = load_queries()
    plan: list[tuple[str, dict[str, list[str]]]] = [
        ("paper-card", {"paper": pools["paper"]}),
        ("papers-by-author", {"author": pools["author"]}),
        ("coauthors", {"author": pools["author"]}),
        ("shared-methods", {"paper": pools["paper"]}),
        ("papers-by-title", {"text": list(WORDS)}),
        ("task-methods", {"task": pools["task"]}),
        ("papers-per-venue-year", {"venue": pools["venue"]}),
        ("repository-code", {"repository": pools["repository"]}),
        ("provenance", {"entity": pools["paper"]}),
    ]
    plan = [(name, choices) for name, choices in plan if name in queries]
    calls = []
    for _ in range(size):
        name, choices = rng.choice(plan)
        params = {k: rng.choice(v) for k, v in choices.items() if v}
        sparql = with_values(queries[name].sparql, bind(queries[name], params, BASE))
        calls.append(Call(name, params, sparql))
    return calls


# --- servers --------------------------------------------------------------------------------


class Server:
    def __init__(self, args: list[str], url: str, ready: str) -> None:
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.url = url
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}{ready}", timeout=5).status_code < 500:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit(f"{args[0]} did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_kg(store: Path, workers: int) -> Server:
    port = free_port()
    args = [str(BIN / "kg"), "--store", str(store), "serve", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--workers", str(workers), "--quiet", "--refresh", "0"]
    return Server(args, f"http://127.0.0.1:{port}", "/health")


def start_oxigraph(store: Path) -> Server:
    port = free_port()
    args = [str(BIN / "oxigraph"), "serve-read-only", "--location", str(store)]
    args += ["--bind", f"127.0.0.1:{port}", "--union-default-graph", "--timeout-s", "30"]
    return Server(args, f"http://127.0.0.1:{port}", "/query?query=ASK%7B%7D")


# --- load -----------------------------------------------------------------------------------


@dataclass
class Load:
    target: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    per_query: dict[str, list[float]] = field(default_factory=dict)
    next_call: int = 0

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies)

        def pct(q: float) -> float:
            return lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")

        return {
            "target": self.target,
            "requests": len(lat),
            "seconds": round(self.seconds, 2),
            "rps": round(len(lat) / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(pct(0.50), 2),
            "p99_ms": round(pct(0.99), 2),
            "errors": len(self.errors),
            "first_errors": self.errors[:5],
            "median_ms_by_query": {
                name: round(statistics.median(v) * 1000, 2)
                for name, v in sorted(self.per_query.items())
            },
        }


def answered(response: httpx.Response) -> bool:
    """A complete SPARQL answer: JSON results, or N-Triples ending in a whole line."""
    media_type = response.headers.get("content-type", "").split(";")[0]
    if media_type == "application/sparql-results+json":
        data = response.json()
        return "results" in data or "boolean" in data
    return media_type == "application/n-triples" and response.content.endswith(b"\n")


async def drive(load: Load, url: str, calls: list[Call], clients: int, seconds: float) -> None:
    """Drive one server for `seconds`, continuing `load`'s walk through `calls`."""
    from kg.query.remote import ACCEPT  # what `kg query --endpoint` sends: JSON, or N-Triples

    target = load.target
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits, headers={"Accept": ACCEPT}) as client:

        async def one(call: Call) -> httpx.Response:
            if target == "kg-queries":
                return await client.get(f"{url}/queries/{call.name}", params=call.params)
            path = "/query" if target == "oxigraph" else "/sparql"
            return await client.post(f"{url}{path}", data={"query": call.sparql})

        if not load.latencies:  # warm up connections and caches once
            for call in calls[: clients * 2]:
                await one(call)
        stop_at = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < stop_at:
                call = calls[load.next_call % len(calls)]
                load.next_call += 1
                start = time.perf_counter()
                try:
                    response = await one(call)
                    ok = response.status_code == 200 and answered(response)
                    problem = f"{call.name}: HTTP {response.status_code} {response.text[:120]}"
                except (httpx.HTTPError, ValueError) as exc:
                    ok, problem = False, f"{call.name}: {type(exc).__name__} {exc}"
                elapsed = time.perf_counter() - start
                if ok:
                    load.latencies.append(elapsed)
                    load.per_query.setdefault(call.name, []).append(elapsed)
                else:
                    load.errors.append(problem)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        load.seconds += time.perf_counter() - began


# --- the pool's own cost --------------------------------------------------------------------


def pool_overhead(store: Path, n: int) -> dict[str, float]:
    """A cheap query in process vs through a worker process (µs per query, sequential)."""
    from kg.rdf.store import GraphStore
    from kg.serve.pool import QueryJob, QueryPool, Source

    query = (
        f"SELECT ?t WHERE {{ ?p a <{KG_NS}Paper> ; <http://purl.org/dc/terms/title> ?t }} LIMIT 1"
    )
    job = QueryJob(query)
    with GraphStore.open(store, read_only=True) as gs:
        for _ in range(50):
            gs.query_into(
                query, io.BytesIO(), results_type=job.results_type, graph_type=job.graph_type
            )
        start = time.perf_counter()
        for _ in range(n):
            gs.query_into(
                query, io.BytesIO(), results_type=job.results_type, graph_type=job.graph_type
            )
        direct = (time.perf_counter() - start) / n

    async def pooled() -> float:
        pool = QueryPool(Source(path=store), workers=1, refresh=0)
        await pool.start()
        try:
            for _ in range(50):
                await pool.serialize(job)
            start = time.perf_counter()
            for _ in range(n):
                await pool.serialize(job)
            return (time.perf_counter() - start) / n
        finally:
            await pool.close()

    through_pool = asyncio.run(pooled())
    return {
        "in_process_us": round(direct * 1e6, 1),
        "through_worker_us": round(through_pool * 1e6, 1),
        "overhead_us": round((through_pool - direct) * 1e6, 1),
    }


# --- main -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=60.0, help="per target")
    parser.add_argument("--round", type=float, default=10.0, help="seconds per turn")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=4, help="kg serve --workers")
    parser.add_argument("--store", type=Path, help="reuse this kg store (built if missing)")
    parser.add_argument("--mix", type=int, default=2000, help="calls in the fixed sequence")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--overhead-n", type=int, default=2000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kg-bench-serve-") as tmp:
        work = Path(tmp)
        store = args.store
        if store is None or not (store / "CURRENT").exists():
            store = build_store(args.records, work if store is None else store.parent)
        copy = work / "oxigraph-store"
        shutil.copytree(store, copy, ignore=shutil.ignore_patterns("LOCK"))
        calls = build_mix(store, args.mix, args.seed)
        print(
            f"{len(calls):,} calls over {len({c.name for c in calls})} named queries",
            file=sys.stderr,
        )

        # Both servers run throughout; the targets take turns in short rounds (rotating
        # the order), so that load from elsewhere on the machine falls on all of them.
        targets = ("oxigraph", "kg-queries", "kg-sparql")
        runs = {t: Load(t) for t in targets}
        rounds = max(1, round(args.seconds / args.round))
        oxigraph = start_oxigraph(copy)
        kg = start_kg(store, args.workers)
        try:
            urls = {"oxigraph": oxigraph.url, "kg-queries": kg.url, "kg-sparql": kg.url}
            for r in range(rounds):
                for target in targets[r % 3 :] + targets[: r % 3]:
                    asyncio.run(drive(runs[target], urls[target], calls, args.clients, args.round))
            health = httpx.get(f"{kg.url}/health", timeout=10).json()
        finally:
            kg.stop()
            oxigraph.stop()
        loads = {t: runs[t].summary() for t in targets}
        overhead = pool_overhead(store, args.overhead_n)

    base = loads["oxigraph"]
    report = {
        "records": args.records if args.store is None else None,
        "clients": args.clients,
        "kg_workers": args.workers,
        "cpus": os.cpu_count(),
        "seconds_per_target": args.seconds,
        "loads": loads,
        "ratios_vs_oxigraph": {
            t: {
                "rps": round(loads[t]["rps"] / base["rps"], 3) if base["rps"] else None,
                "p50": round(loads[t]["p50_ms"] / base["p50_ms"], 3),
                "p99": round(loads[t]["p99_ms"] / base["p99_ms"], 3),
            }
            for t in ("kg-queries", "kg-sparql")
        },
        "kg_health": health,
        "pool_overhead": overhead,
    }
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "serve.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")

    print(f"\n{'target':<12} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for name, s in loads.items():
        print(
            f"{name:<12} {s['rps']:>8.1f} {s['p50_ms']:>8.2f} {s['p99_ms']:>8.2f} {s['errors']:>7}"
        )
    for name, r in report["ratios_vs_oxigraph"].items():
        print(f"{name} / oxigraph: {r['rps']:.2f}x req/s, p50 {r['p50']:.2f}x, p99 {r['p99']:.2f}x")
    print(
        f"pool overhead per query: {overhead['overhead_us']:.0f} µs "
        f"({overhead['in_process_us']:.0f} µs in process, {overhead['through_worker_us']:.0f} µs "
        "through a worker)"
    )
    errors = sum(s["errors"] for s in loads.values())
    for name, s in loads.items():
        for problem in s["first_errors"]:
            print(f"  {name} error: {problem}", file=sys.stderr)
    if errors:
        raise SystemExit(f"{errors} request(s) failed")


if __name__ == "__main__":
    main()
