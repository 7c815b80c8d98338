"""Shared by the server tests: stores with the seeds plus awkward records, in-process apps,
and real `kg serve` processes on 127.0.0.1."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

with warnings.catch_warnings():  # Starlette 1.0 nudges towards httpx2; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx2")
    from starlette.testclient import TestClient

__all__ = ["TestClient"]  # re-exported for the tests, with the warning silenced once

from kg.rdf.store import GraphStore
from kg.serve.app import ServerConfig, create_app
from kg.serve.pool import Source
from tests.query_data import build

BASE = "https://w3id.org/kg/id/"
KG_BIN = str(Path(sys.executable).with_name("kg"))
#: An aggregate over a four-way cross product: on the seeds (about 400 quads) it would run
#: for hours, and pyoxigraph cannot interrupt it.
SLOW_PATTERN = "?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l"
SLOW_QUERY = f"SELECT (COUNT(*) AS ?n) WHERE {{ {SLOW_PATTERN} }}"
#: The same cross product over the named graphs (an update has no union default graph),
#: matching nothing, so that an update over it holds no solutions while it runs.
SLOW_NOTHING = (
    "GRAPH ?w { ?a ?b ?c } GRAPH ?x { ?d ?e ?f } GRAPH ?y { ?g ?h ?i } GRAPH ?z { ?j ?k ?l } "
    'FILTER(CONCAT(STR(?c), STR(?f), STR(?i), STR(?l)) = "none")'
)
HOSTILE_TITLE = "<script>alert('kg')</script> & \"Zoë\" <b>bold</b>"
HOSTILE_SLUG = "hostile-title-test"
NON_ASCII_AUTHOR = "Zoë Ábel"
#: How `kg serve` exits after Ctrl-C: a clean shutdown, then the shell's 128 + SIGINT.
STOPPED = 128 + signal.SIGINT


def awkward_record(seed: dict[str, Any]) -> dict[str, Any]:
    """A seed record turned into another paper with markup in its title and names, and a
    non-ASCII author, for the HTML pages and IRI decoding."""
    record = copy.deepcopy(seed)
    record["url"] = f"/paper/{HOSTILE_SLUG}"
    record["title"] = HOSTILE_TITLE
    record["arxiv_id"] = "2101.00001"
    record["url_abs"] = "https://arxiv.org/abs/2101.00001"
    record["url_pdf"] = "https://arxiv.org/pdf/2101.00001.pdf"
    record["authors"] = [NON_ASCII_AUTHOR, "Ann <i>Italic</i>"]
    for link in record.get("code_links") or []:
        link["paper_slug"] = HOSTILE_SLUG
    return record


def write_records(directory: Path, records: list[dict[str, Any]]) -> Path:
    path = directory / "records.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def memory_store(paths: list[Path]) -> GraphStore:
    return build(GraphStore.memory(), [str(p) for p in paths])


@contextmanager
def client_for(store: GraphStore, **options: Any) -> Iterator[TestClient]:
    """An in-process client for an app serving a copy of `store` (real worker processes)."""
    options.setdefault("workers", 2)
    options.setdefault("timeout", 20.0)
    options.setdefault("refresh", 0.0)
    config = ServerConfig(base_iri=BASE, **options)
    app = create_app(Source.of(store), config)
    before = set(children(os.getpid()))
    with TestClient(app, base_url="http://kg.test") as client:
        yield client
    # A closed server leaves no query worker behind, busy or not (a runaway query's worker,
    # once leaked, kept a core busy for the rest of the test run).
    left = set(children(os.getpid())) - before
    assert not left, f"query workers outlived the server: {sorted(left)}"


def wait_until(condition: Callable[[], bool], limit: float = 30.0) -> None:
    """Poll until `condition` holds; fail after `limit` seconds (a hang guard, not a timing)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never became true")
        time.sleep(0.05)


def process_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
        except (FileNotFoundError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


class ServeProcess:
    """A real `kg … serve --port 0` process; its URL is read from the line it prints."""

    def __init__(
        self,
        global_args: list[str],
        serve_args: list[str],
        *,
        env: Any = None,
        kg: str = KG_BIN,
        cwd: Path | None = None,
    ):
        # No start-up warm-up unless a test asks for one (--warm): the workers' counts in
        # /health stay those of the test's own requests (tests/test_pages_home.py warms).
        warm = [] if any(a.startswith("--warm") for a in serve_args) else ["--warm", "0"]
        self.args = [kg, *global_args, "serve", "--port", "0", "--quiet", *warm, *serve_args]
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        self.stderr_lines: list[str] = []
        #: One client for the server's life: a new one per request costs ~26 ms of CPU.
        self.client = httpx.Client(timeout=60)
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.stderr_lines.append(line)
            found = re.search(r"kg serve: (http://\S+?)/\s", line)
            if found:
                return found.group(1)
        self.proc.kill()
        raise AssertionError(f"kg serve did not start: {''.join(self.stderr_lines)}")

    @property
    def sparql(self) -> str:
        return f"{self.url}/sparql"

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.client.get(f"{self.url}{path}", **kwargs)

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, as a user would; returns the exit code and what was left on stderr."""
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, rest = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, rest = self.proc.communicate()
        return self.proc.returncode, "".join(self.stderr_lines) + rest
