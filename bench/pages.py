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

Side by side with an older revision (issue 26: the pages against the main before them):
`--baseline REV` checks REV out with `git worktree add` into a temporary directory and runs
two real `kg serve` processes on loopback, this checkout's and REV's (PYTHONPATH,
KG_QUERIES_DIR and KG_ONTOLOGY_DIR pointing at each tree), each with --workers workers.
Every sampled page is asked of both, warm (one untimed request first), the two servers taking
turns to go first; the CPU time of each server and its workers (from /proc, which the
machine's load does not inflate as it does wall time) is summed over a kind's warm requests; `--baseline-kinds` are the page kinds REV has. REV serves
`--baseline-store` (default: --store); with `--baseline-ingest INPUT` a missing baseline store
is built first by REV's own `kg ingest` of INPUT, for a revision that misreads a newer store:

    python bench/pages.py --store STORE --baseline 1f98724 \
        --baseline-store STORE-base --baseline-ingest DUMPS --sample 25 --workers 2
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from kg.rdf.store import GraphStore  # noqa: E402
from kg.serve.app import ServerConfig, create_app  # noqa: E402
from kg.serve.pool import Source  # noqa: E402

BASE = "https://w3id.org/kg/id/"
#: Seconds the in-process server may spend warming up before the first timed page.
WARM_UP_S = 3600.0
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
    "leaderboard": "Leaderboard",
}
#: Pages that are no entity's: timed as they are (no Turtle side).
FIXED = {
    "search": ["/search?q=attention", "/search?q=image+classification", "/search?q=adam"],
    "query": [
        "/queries/tasks-in-area?area=audio",
        "/queries/leaderboard?task=image-classification&dataset=imagenet&metric=Top%201%20Accuracy",
    ],
}


def fixed_pages(store: GraphStore) -> dict[str, list[str]]:
    """FIXED, its named queries' values swapped for the store's own when it lacks them (a
    generated archive has no ImageNet, nor maybe an audio area): its largest leaderboard's
    task, dataset and metric, and the area with the most tasks."""
    ont = "https://w3id.org/kg/ontology#"
    imagenet = f"SELECT ?r WHERE {{ ?r <{ont}onTask> <{BASE}task/image-classification> }} LIMIT 1"
    if next(iter(store.select_values(imagenet)), None) is not None:
        return FIXED
    board = next(iter(store.select_values(
        f"SELECT ?t ?d ?m (COUNT(?r) AS ?n) WHERE {{ ?r <{ont}onTask> ?t ; <{ont}onDataset> ?d ; "
        f"<{ont}metricName> ?m }} GROUP BY ?t ?d ?m ORDER BY DESC(?n) ?t ?d ?m LIMIT 1"
    )), None)
    area = next(iter(store.select_values(
        f"SELECT ?a (COUNT(?t) AS ?n) WHERE {{ ?t <{ont}area> ?a }} GROUP BY ?a "
        "ORDER BY DESC(?n) ?a LIMIT 1"
    )), None)
    paths = []
    if area is not None:
        paths.append("/queries/tasks-in-area?" + urlencode({"area": str(area[0])}))
    if board is not None:
        task, dataset, metric = (str(v) for v in board[:3])
        paths.append("/queries/leaderboard?" + urlencode(
            {"task": task, "dataset": dataset, "metric": metric}))
    return {**FIXED, "query": paths}


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
    parser.add_argument("--baseline", help="git revision to run side by side (kg serve)")
    parser.add_argument("--baseline-store", type=Path, help="the store REV serves")
    parser.add_argument("--baseline-ingest", type=Path, help="build a missing baseline store")
    parser.add_argument("--baseline-kinds", default="paper,method,task,dataset,author,search")
    args = parser.parse_args()
    if args.only_leaderboards:
        leaderboards(args)
        return
    rng = random.Random(args.seed)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    with GraphStore.open(args.store, read_only=True) as store:
        chosen = {kind: sample(store, kind, args.sample, rng) for kind in kinds if kind in KINDS}
        fixed = fixed_pages(store)
    if args.baseline:
        side_by_side(args, kinds, chosen, fixed)
        return
    # warmed as `kg serve` is by default (its --warm): each worker loads the similarity
    # index, the suggestion model and the lists' order before the first request; waited for
    # to the end here, so that no timed page shares the machine with it
    config = ServerConfig(base_iri=BASE, workers=args.workers, warm=WARM_UP_S)
    app = create_app(Source(path=args.store), config)
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
        if chosen.get("paper"):
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
        for kind, paths in fixed.items():
            if kind not in kinds:
                continue
            pages = [timed(client, path, browser) for path in paths for _ in range(3)]
            every.extend(pages)
            lines.append(f"| {kind} | {len(pages)} | {stats(pages)} | – | – | – | – |")
        lines.append("")
        lines.append(f"All HTML pages: p50 | p95 | max = {stats(every)}.")
        if similar:
            lines.append(f"/similar/{{paper}}, warm ({len(similar)} papers): {stats(similar)}.")
    load = os.getloadavg()[0]
    lines.append(f"Load average (1 min) at the end: {load:.1f} on {os.cpu_count()} cores.")
    print("\n".join(lines))


@contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """REV checked out (detached) in a temporary directory, removed afterwards."""
    where = Path(tempfile.mkdtemp(prefix="kg-pages-baseline-")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev],
        check=True, capture_output=True,
    )
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
            check=False, capture_output=True,
        )
        shutil.rmtree(where.parent, ignore_errors=True)


def tree_env(tree: Path) -> dict[str, str]:
    """The environment that makes `python -m kg` run the code, queries and ontology of tree."""
    return {
        **os.environ,
        "PYTHONPATH": str(tree),
        "KG_QUERIES_DIR": str(tree / "queries"),
        "KG_ONTOLOGY_DIR": str(tree / "ontology"),
    }


def kg_command(tree: Path, *args: str, log: Path | None = None) -> subprocess.Popen[bytes]:
    check = subprocess.run(
        [sys.executable, "-c", "import kg; print(kg.__file__)"],
        env=tree_env(tree), cwd=tree, check=True, capture_output=True, text=True,
    )
    assert check.stdout.strip().startswith(str(tree)), ("kg imported from elsewhere", check.stdout)
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (the child's)
    return subprocess.Popen(
        [sys.executable, "-m", "kg", *args], env=tree_env(tree), cwd=tree, stdout=out, stderr=out
    )


@contextmanager
def served(tree: Path, store: Path, workers: int) -> Iterator[tuple[str, int]]:
    """`kg serve` of tree's code on store, on a free loopback port: its base URL and pid."""
    log = Path(tempfile.mkstemp(prefix="kg-pages-serve-", suffix=".log")[1])
    proc = kg_command(
        tree, "--store", str(store.resolve()), "serve", "--port", "0", "--quiet",
        "--workers", str(workers), log=log,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            found = re.search(r"kg serve: (http://\S+?)/\s", log.read_text(errors="replace"))
            if found:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"kg serve of {tree} did not start:\n{log.read_text()}")
            time.sleep(0.2)
        yield found.group(1), proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.unlink(missing_ok=True)


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and all its descendants (the server and its
    query workers), from /proc: a figure the machine's load does not inflate."""
    total, todo, tick = 0.0, [pid], os.sysconf("SC_CLK_TCK")
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, IndexError, ValueError):
            continue
    return total


def timed_http(client: httpx.Client, url: str, headers: dict[str, str]) -> tuple[int, float]:
    """The status and the time of a warm request (one untimed request before it)."""
    client.get(url, headers=headers)
    start = time.perf_counter()
    response = client.get(url, headers=headers)
    response.read()
    return response.status_code, time.perf_counter() - start


def side_by_side(
    args: argparse.Namespace,
    kinds: list[str],
    chosen: dict[str, list[str]],
    fixed: dict[str, list[str]],
) -> None:
    """Each sampled page of this checkout's `kg serve` and of --baseline's, taking turns;
    `fixed`: the pages that are no entity's, with the store's own values (`fixed_pages`)."""
    old_kinds = {k.strip() for k in args.baseline_kinds.split(",") if k.strip()}
    html = {"Accept": "text/html"}
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    pages: dict[str, list[tuple[str, dict[str, str]]]] = {
        kind: [("/" + iri[len(BASE) :], html) for iri in iris] for kind, iris in chosen.items()
    }
    for kind, paths in fixed.items():
        if kind in kinds:
            pages[kind] = [(path, browser) for path in paths for _ in range(3)]
    with worktree(args.baseline) as tree:
        old_store: Path = args.baseline_store or args.store
        if args.baseline_ingest and not old_store.exists():
            start = time.perf_counter()
            ingest = kg_command(
                tree, "--store", str(old_store.resolve()), "ingest", "-q",
                str(args.baseline_ingest.resolve()),
            )
            if ingest.wait() != 0:
                raise SystemExit(f"{args.baseline}'s kg ingest failed")
            print(f"built {old_store} with {args.baseline}'s ingest in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
        with (
            served(ROOT, args.store, args.workers) as (new_url, new_pid),
            served(tree, old_store, args.workers) as (old_url, old_pid),
            httpx.Client(timeout=120) as client,
        ):
            sides = {"new": new_url, "old": old_url}
            pids = {"new": new_pid, "old": old_pid}
            # Each worker's first similarity lookup imports numpy and scipy: pay it first.
            if chosen.get("paper"):
                first = "/similar/" + chosen["paper"][0][len(BASE) :]
                with ThreadPoolExecutor(2 * args.workers) as threads:
                    urls = [url + first for url in sides.values() for _ in range(2 * args.workers)]
                    list(threads.map(client.get, urls))
            times: dict[str, dict[str, list[float]]] = {}
            cpu: dict[str, dict[str, float]] = {}
            missing: dict[str, int] = {}
            turn = 0
            for kind, requests in pages.items():
                own = times.setdefault(kind, {"new": [], "old": []})
                asked = [s for s in ("new", "old") if s == "new" or kind in old_kinds]
                for path, headers in requests:  # the untimed first request of every page
                    for side in asked:
                        client.get(sides[side] + path, headers=headers)
                before = {side: tree_cpu(pids[side]) for side in asked}
                for path, headers in requests:
                    order = ["new", "old"] if turn % 2 == 0 else ["old", "new"]
                    turn += 1
                    for side in order:
                        if side not in asked:
                            continue
                        status, seconds = timed_http(client, sides[side] + path, headers)
                        if status != 200:  # not in that store (a generated one: no ImageNet)
                            where = f"{kind} on {args.baseline if side == 'old' else 'now'}"
                            missing[where] = missing.get(where, 0) + 1
                            continue
                        own[side].append(seconds)
                # Each timed page was asked twice in this loop (timed_http warms it again).
                cpu[kind] = {
                    side: (tree_cpu(pids[side]) - before[side]) / max(1, 2 * len(own[side]))
                    for side in asked
                }
                print(f"{kind}: {len(own['new'])} pages", file=sys.stderr, flush=True)
    lines = [
        f"| page | n | {args.baseline} p50 | p95 | now p50 | p95 | max | now/{args.baseline} p50 "
        f"| p95 | CPU a page, {args.baseline} | now |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def p50_p95(values: list[float]) -> tuple[float, float, float]:
        ms = sorted(v * 1000 for v in values)
        return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], ms[-1]

    every: list[float] = []
    for kind, by_side in times.items():
        if not by_side["new"]:
            continue
        every.extend(by_side["new"])
        n50, n95, nmax = p50_p95(by_side["new"])
        n = f"{len(by_side['new'])}"
        if by_side["old"]:
            o50, o95, _ = p50_p95(by_side["old"])
            if len(by_side["old"]) != len(by_side["new"]):
                n += f" ({len(by_side['old'])} old)"
            lines.append(
                f"| {kind} | {n} | {o50:.0f} ms | {o95:.0f} ms | {n50:.0f} ms | **{n95:.0f} ms** | "
                f"{nmax:.0f} ms | {n50 / o50:.1f}× | {n95 / o95:.1f}× | "
                f"{1000 * cpu[kind]['old']:.0f} ms | {1000 * cpu[kind]['new']:.0f} ms |"
            )
        else:
            lines.append(
                f"| {kind} | {n} | – | – | {n50:.0f} ms | **{n95:.0f} ms** | {nmax:.0f} ms | – | – "
                f"| – | {1000 * cpu[kind]['new']:.0f} ms |"
            )
    lines.append("")
    lines.append(f"All pages now: p50 | p95 | max = {stats(every)}.")
    if missing:
        lines.append(f"Not 200 (left out): {missing}.")
    load = os.getloadavg()
    lines.append(
        f"Load average (1, 5 min) at the end: {load[0]:.1f}, {load[1]:.1f} on {os.cpu_count()} cores."
    )
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
    # a generated archive has no ImageNet
    named = {"imagenet": imagenet, "largest": largest} if imagenet in boards else {"largest": largest}
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
