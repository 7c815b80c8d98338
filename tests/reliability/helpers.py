"""Shared by the reliability tests: real `kg` processes, generated inputs, store checks."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.testing.records import records

BASE = "https://w3id.org/kg/id/"
RECORD_GRAPHS = f"{BASE}graph/record/"
#: Every run of kg in these tests stamps the same ingest time, so runs compare byte for byte.
EPOCH = "1764460800"
KG_CMD = [sys.executable, "-m", "kg"]
#: `kg serve` stopped by Ctrl-C exits as a process interrupted by SIGINT does.
STOPPED = 128 + signal.SIGINT


def kg_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    env.update(SOURCE_DATE_EPOCH=EPOCH, NO_COLOR="1", TERM="dumb", COLUMNS="200", **extra)
    return env


def run_kg(*args: str, timeout: float = 600, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run the real CLI to the end (a hang fails the test through `timeout`)."""
    return subprocess.run(
        [*KG_CMD, *args], capture_output=True, text=True, timeout=timeout, env=kg_env(), **kwargs
    )


def start_kg(*args: str, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> Any:
    return subprocess.Popen([*KG_CMD, *args], stdout=stdout, stderr=stderr, env=kg_env())


def assert_clean_failure(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """A refusal as kg promises it: exit 1 or 2, one `error:` line, no traceback."""
    assert result.returncode in (1, 2), (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-4000:]
    assert "error:" in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr[-2000:]


def write_jsonl(path: Path, items: Iterable[Any]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    return path


def synth_file(path: Path, n: int, seed: int = 8) -> Path:
    """`n` generated paper records (kg.testing.records) as JSON Lines."""
    return write_jsonl(path, records(n, seed=seed))


def select(store: GraphStore, sparql: str) -> list[tuple[str | None, ...]]:
    result = store.query(sparql)
    assert isinstance(result, SelectResult)
    return [tuple(None if t is None else t.value for t in row) for row in result.rows]


def graph_sizes(store: GraphStore) -> dict[str, int]:
    """Quads per named graph, counted inside Oxigraph (no term is decoded: fast)."""
    rows = select(store, "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g")
    return {g: int(n) for g, n in rows if g is not None and n is not None}


def graph_quads(store: GraphStore, graph: str) -> set[str]:
    return set(store.quads_nquads(graph))


# A small process that starts kg and reports its peak RSS: measured from pytest directly, the
# child's peak would include pytest's own pages (the child is forked from it).
_MEASURE = """
import json, os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024], out)
"""


def run_measured(args: list[str], report: Path, timeout: float) -> tuple[int, str, str, float]:
    """Run kg to the end: (exit code, stdout, stderr, peak RSS in MB of kg, or of the
    largest process it waited for: wait4 counts reaped descendants, so a `kg sparql`
    query child is included)."""
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(report), *KG_CMD, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=kg_env(),
    )
    code, peak = json.loads(report.read_text())
    return code, result.stdout, result.stderr, peak


def wait_until(condition: Callable[[], bool], limit: float, what: str) -> None:
    """Poll `condition`; a hang guard, not a timing assertion."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:g} s for {what}")
        time.sleep(0.02)


def rss_mb(pid: int) -> float:
    """Current resident memory of a process and its children (the query workers)."""
    total = 0.0
    for p in [pid, *descendants(pid)]:
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as f:
                found = re.search(r"VmRSS:\s+(\d+) kB", f.read())
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += int(found.group(1)) / 1024 if found else 0.0
    return total


def descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as f:
                    parents[int(entry)] = int(f.read().rsplit(") ", 1)[1].split()[1])
            except (FileNotFoundError, IndexError, ProcessLookupError):
                continue
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        todo += kids
    return found


@dataclass
class Server:
    """A real `kg serve` on 127.0.0.1 with a free port; stderr goes to a file (never blocks)."""

    proc: subprocess.Popen[Any]
    url: str
    log: Path
    #: One client for the server's life: a new one per request costs ~26 ms of CPU.
    client: httpx.Client = field(default_factory=httpx.Client, repr=False)

    @classmethod
    def start(cls, store: Path, log: Path, *serve_args: str) -> Server:
        handle = log.open("w")
        # No start-up warm-up unless a test asks for one, as tests/serve_support.py: it
        # trained the suggestion model and made the site feed beside what the test measures.
        warm = [] if any(a.startswith("--warm") for a in serve_args) else ["--warm", "0"]
        proc = start_kg(
            "--store", str(store), "serve", "--port", "0", "--quiet", *warm, *serve_args,
            stdout=subprocess.DEVNULL, stderr=handle,
        )  # fmt: skip
        handle.close()
        url: list[str] = []

        def ready() -> bool:
            found = re.search(r"kg serve: (http://\S+?)/\s", log.read_text())
            if found:
                url.append(found.group(1))
            elif proc.poll() is not None:
                raise AssertionError(f"kg serve exited: {log.read_text()[-2000:]}")
            return bool(found)

        wait_until(ready, 120, "kg serve to listen")
        return cls(proc, url[0], log)

    def query(self, sparql: str, timeout: float = 120) -> httpx.Response:
        return self.client.post(
            f"{self.url}/sparql",
            data={"query": sparql},
            headers={"Accept": "application/sparql-results+json"},
            timeout=timeout,
        )

    def stop(self) -> int:
        """Ctrl-C, as a user would; the exit code."""
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("kg serve ignored Ctrl-C for 60 s") from None


def record_figures(config: Any, name: str, figures: dict[str, Any]) -> None:
    """Keep a run's figures for docs/reliability.md (in pytest's cache) and print them."""
    config.cache.set(f"kg-reliability/{name}", figures)
    print(f"\n{name}: {json.dumps(figures)}")


def holds_store(pid: int, store: Path) -> bool:
    """Whether the process has the store open for writing (it holds the store's LOCK file)."""
    lock = str((store / "LOCK").resolve())
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == lock:
                return True
        except FileNotFoundError:
            continue
    return False
