"""What a SPARQL answer costs through MCP, beside the same answer from /sparql.

One `kg serve` on the store (1 worker); the same SELECT is asked RUNS times over each path,
interleaved so that both see the same machine load, and the medians are compared:

- `/sparql`: a GET of the SPARQL 1.1 Protocol (JSON results), one httpx client;
- `/mcp`: a `tools/call` of the `sparql` tool through the SDK's client (one session),
  whose answer is the same bindings plus the cap fields;
- `kg mcp` (stdio): the same tool call in one stdio session of its own.

    python bench/mcp_calls.py --store kg-store --runs 30
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx

QUERIES = {
    "one row": "SELECT ?title WHERE { ?p kg:arxivId '2004.10102' ; dcterms:title ?title }",
    "100 rows, sorted": (
        "SELECT ?paper ?title WHERE { ?paper a kg:Paper ; dcterms:title ?title } "
        "ORDER BY ?paper LIMIT 100"
    ),
}
KG = str(Path(sys.executable).with_name("kg"))


def _serve(store: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [KG, "--store", store, "serve", "--port", "0", "--quiet", "--workers", "1"],
        stderr=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(r"kg serve: (http://\S+?)/\s", line)
        if found:
            return proc, found.group(1)
    raise SystemExit("kg serve did not start")


async def _measure(url: str, store: str, runs: int, query: str) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    times: dict[str, list[float]] = {"/sparql": [], "/mcp": [], "kg mcp (stdio)": []}
    stdio = StdioServerParameters(command=KG, args=["--store", store, "mcp", "--workers", "1"])
    async with (
        httpx.AsyncClient(timeout=60) as http,
        Client(f"{url}/mcp", read_timeout_seconds=60) as over_http,
        Client(stdio, read_timeout_seconds=60) as over_stdio,
    ):
        calls: dict[str, Callable[[], Awaitable[object]]] = {
            "/sparql": lambda: http.get(
                f"{url}/sparql", params={"query": query},
                headers={"Accept": "application/sparql-results+json"},
            ),
            "/mcp": lambda: over_http.call_tool("sparql", {"query": query}),
            "kg mcp (stdio)": lambda: over_stdio.call_tool("sparql", {"query": query}),
        }
        for call in calls.values():  # warm: workers, the SDK's first request
            await call()
        for _ in range(runs):
            for name, call in calls.items():
                start = time.perf_counter()
                await call()
                times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="kg-store")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    proc, url = _serve(args.store)
    try:
        print(f"{'query':<18} {'path':<16} {'median ms':>10} {'× /sparql':>10}")
        for label, query in QUERIES.items():
            times = anyio.run(_measure, url, args.store, args.runs, query)
            base = statistics.median(times["/sparql"])
            for name, values in times.items():
                median = statistics.median(values)
                print(f"{label:<18} {name:<16} {median * 1000:>10.1f} {median / base:>10.2f}")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
