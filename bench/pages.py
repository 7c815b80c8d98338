"""Entity pages and /similar on a served store (issues 18, 26): p50/p95/max per kind of page.

    python bench/pages.py --store kg-store [--sample 40] [--workers 4] [--write-doc]

Runs the real app (kg.serve.app, its worker pool) in process and asks, for --sample random
entities of each kind, the HTML page a browser gets, twice (the second is timed: warm
worker caches, as for a reader clicking around; every worker has made one similarity
lookup before the first). Side by side, the same entities' plain Turtle description (the
page before issue 18) is timed the same way; the ratio says what the story sections cost.
/similar/{paper} is timed warm for the sampled papers too. Issue 26's page kinds
(collection, area, repository, the dump and record sources, search and a named query in a
browser) are timed the same way; `--kinds` picks some (the kinds an older checkout has, to
run it side by side with this one).

Leaderboards (issue 28): for --leaderboards random kg:Leaderboard IRIs, plus ImageNet image
classification and the leaderboard with the most results, the page is timed on its first
request (its three queries in the workers, then the render: cold), then the page, its
chart.svg and its history.json are each asked once more and then --repeat times, timed
(warm: the server keeps the last 64 leaderboards rendered until the store changes).
`--only-leaderboards` skips the entity pages.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from starlette.testclient import TestClient  # noqa: E402

from kg.rdf.store import GraphStore  # noqa: E402
from kg.serve.app import ServerConfig, create_app  # noqa: E402
from kg.serve.pool import Source  # noqa: E402

BASE = "https://w3id.org/kg/id/"
KINDS = {
    "paper": "Paper",
    "method": "Method",
    "task": "Task",
    "dataset": "Dataset",
    "author": "Author",
    "collection": "Collection",
    "area": "Area",
    "repository": "Repository",
    "dump": "Dump",
    "record": "Record",
}
#: Pages that are no entity's: timed as they are (no Turtle side).
FIXED = {
    "search": ["/search?q=attention", "/search?q=image+classification", "/search?q=adam"],
    "query": [
        "/queries/tasks-in-area?area=audio",
        "/queries/leaderboard?task=image-classification&dataset=imagenet&metric=Top%201%20Accuracy",
    ],
}


def sample(store: GraphStore, kind: str, n: int, rng: random.Random) -> list[str]:
    rows = store.select_values(
        f"SELECT DISTINCT ?x WHERE {{ ?x a <https://w3id.org/kg/ontology#{KINDS[kind]}> }}"
    )
    iris = sorted(x for (x,) in rows if x and x.startswith(BASE))
    return rng.sample(iris, min(n, len(iris)))


def timed(client: TestClient, path: str, headers: dict[str, str]) -> float:
    client.get(path, headers=headers)
    start = time.perf_counter()
    response = client.get(path, headers=headers)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, (path, response.status_code, response.text[:200])
    return elapsed


def stats(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"{statistics.median(ms):.0f} ms | {p95:.0f} ms | {ms[-1]:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join([*KINDS, *FIXED]))
    parser.add_argument("--leaderboards", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only-leaderboards", action="store_true")
    args = parser.parse_args()
    if args.only_leaderboards:
        leaderboards(args)
        return
    rng = random.Random(args.seed)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    with GraphStore.open(args.store, read_only=True) as store:
        chosen = {kind: sample(store, kind, args.sample, rng) for kind in kinds if kind in KINDS}
    app = create_app(Source(path=args.store), ServerConfig(base_iri=BASE, workers=args.workers))
    html = {"Accept": "text/html"}
    turtle = {"Accept": "text/turtle"}
    lines = [
        "| page | n | HTML p50 | p95 | max | Turtle p50 | p95 | max | HTML/Turtle (p50) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    every: list[float] = []
    with TestClient(app) as client:
        # Each worker pays once for its first similarity lookup (importing numpy and scipy,
        # about 0.5 s): ask for one in every worker at once before timing anything.
        first = "/similar/" + chosen["paper"][0][len(BASE) :]
        with ThreadPoolExecutor(args.workers) as threads:
            list(threads.map(lambda _: client.get(first), range(2 * args.workers)))
        similar: list[float] = []
        for kind, iris in chosen.items():
            pages, plain = [], []
            for iri in iris:
                path = "/" + iri[len(BASE) :]
                pages.append(timed(client, path, html))
                plain.append(timed(client, path, turtle))
                if kind == "paper":
                    similar.append(timed(client, "/similar/" + iri[len(BASE) :], {}))
            if not pages:
                continue
            every.extend(pages)
            ratio = statistics.median(pages) / statistics.median(plain)
            lines.append(
                f"| {kind} | {len(iris)} | {stats(pages).replace(' | ', ' | ')} | "
                f"{stats(plain)} | {ratio:.1f}× |"
            )
        browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
        for kind, paths in FIXED.items():
            if kind not in kinds:
                continue
            pages = [timed(client, path, browser) for path in paths for _ in range(3)]
            every.extend(pages)
            lines.append(f"| {kind} | {len(pages)} | {stats(pages)} | – | – | – | – |")
        lines.append("")
        lines.append(f"All HTML pages: p50 | p95 | max = {stats(every)}.")
        lines.append(f"/similar/{{paper}}, warm ({len(similar)} papers): {stats(similar)}.")
    load = os.getloadavg()[0]
    lines.append(f"Load average (1 min) at the end: {load:.1f} on {os.cpu_count()} cores.")
    print("\n".join(lines))


def largest_leaderboard(store: GraphStore) -> str:
    rows = store.select_values(
        "SELECT ?b (COUNT(?r) AS ?n) WHERE { ?r <https://w3id.org/kg/ontology#inLeaderboard> ?b }"
        " GROUP BY ?b ORDER BY DESC(?n) ?b LIMIT 1"
    )
    return str(next(iter(rows))[0])


def leaderboards(args: argparse.Namespace) -> None:
    """p50/p95/max of the leaderboard page, chart.svg and history.json, warm."""
    rng = random.Random(args.seed)
    with GraphStore.open(args.store, read_only=True) as store:
        rows = store.select_values(
            "SELECT ?b WHERE { ?b a <https://w3id.org/kg/ontology#Leaderboard> }"
        )
        boards = sorted(str(b) for (b,) in rows if b)
        chosen = rng.sample(boards, min(args.leaderboards, len(boards)))
        largest = largest_leaderboard(store)
    imagenet = f"{BASE}leaderboard/image-classification/imagenet"
    named = {"imagenet": imagenet, "largest": largest}
    app = create_app(Source(path=args.store), ServerConfig(base_iri=BASE, workers=args.workers))
    html = {"Accept": "text/html"}
    forms = {"page": ("", html), "chart.svg": ("/chart.svg", {}), "history.json": ("/history.json", {})}
    lines = [
        f"Largest leaderboard: {largest[len(BASE):]}.",
        "",
        "| leaderboards | form | n | p50 | p95 | max |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    with TestClient(app) as client:
        for label, iris in (*((k, [v]) for k, v in named.items()), (f"{len(chosen)} random", chosen)):
            first: list[float] = []  # the first request: the three queries, then the render
            for iri in iris:
                start = time.perf_counter()
                response = client.get("/" + iri[len(BASE) :], headers=html)
                first.append(time.perf_counter() - start)
                assert response.status_code == 200, (iri, response.status_code)
            lines.append(f"| {label} | page, first request | {len(first)} | {stats(first)} |")
            for form, (tail, headers) in forms.items():
                times: list[float] = []
                for iri in iris:
                    path = "/" + iri[len(BASE) :] + tail
                    for _ in range(args.repeat):
                        times.append(timed(client, path, headers))
                lines.append(f"| {label} | {form} | {len(times)} | {stats(times)} |")
    load = os.getloadavg()[0]
    lines.append("")
    lines.append(f"Load average (1 min) at the end: {load:.1f} on {os.cpu_count()} cores.")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
