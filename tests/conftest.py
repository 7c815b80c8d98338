"""Shared fixtures: the real seeds and raw slices, stores built from them, a CLI runner."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The suite starts some 300 Python processes (kg commands, server and query workers). Where
# the environment sets PYTHONDONTWRITEBYTECODE (container images often do, this project's
# machines too), each one compiled kg's sources again: 7 % of the CPU of the process-heavy
# files. Bytecode caching is Python's default; the suite turns it back on, first thing, for
# itself and every process it starts (the files go to __pycache__/, which git ignores).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# A shell without job control starts a background command (`bash script &`) with Ctrl-C
# ignored, and every process the suite starts inherits that: `kg serve` then never sees the
# SIGINT its tests send and exits 0, not 130. The suite gives Ctrl-C its default meaning back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pytest
import typer.main
import typer.testing
from typer.testing import CliRunner

from kg.cli import app
from kg.ingest.identity import Iris
from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore

# Typer builds the command tree from the functions' signatures on every `CliRunner.invoke`
# (31-37 ms), and the suite invokes the CLI in process many times over: the tree of one
# app is built once. A typer that no longer looks it up there leaves this without effect.
if hasattr(typer.testing, "_get_command"):
    typer.testing._get_command = functools.cache(typer.main.get_command)


ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SEEDS_DIR = SHARED / "seeds" if (SHARED / "seeds").is_dir() else ROOT / "examples" / "records"
RAW_DIR = SHARED / "data" / "raw"
BASE = "https://w3id.org/kg/id/"
KG = "https://w3id.org/kg/ontology#"
PREFIXES = f"PREFIX kg: <{KG}>\nPREFIX dcterms: <http://purl.org/dc/terms/>\n"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the machine has cores. The suite is bound by CPU, but
    each worker also waits (for a server to start, a process to exit, a timeout): a third
    worker on two cores fills those waits."""
    return (os.cpu_count() or 1) + 1


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run the long variants")


#: The files that keep a worker busiest (wall seconds in the last measured run, most first;
#: docs/performance.md, "Test suite"). xdist hands files out in collection order
#: (`--dist loadfile --no-loadscope-reorder`), so these start first and the run does not end
#: on one worker with a long file left. The README store's first user comes first, so that
#: its build (about 40 CPU-s) starts at once and no later file waits idle for it (a worker
#: waited 30 s when it started at 220 s); then those that build their own stores.
LONGEST_FIRST = (
    "tests/test_queries.py",
    "tests/test_engines.py",
    "tests/reliability/test_kill.py",
    "tests/test_pull.py",
    "tests/test_pages_home.py",
    "tests/reliability/test_outbound.py",
    "tests/reliability/test_concurrency.py",
    "tests/reliability/test_fuzz.py",
    "tests/reliability/test_soak.py",
    "tests/reliability/test_whole_batches.py",
    "tests/test_fidelity.py",
    "tests/test_similarity.py",
    "tests/test_export.py",
    "tests/test_merge.py",
    "tests/test_dump_identity.py",
    "tests/test_library.py",
    "tests/test_mcp.py",
    "tests/test_mcp_budget.py",
    "tests/test_leaderboard_pages.py",
    "tests/test_dumps.py",
    "tests/test_search.py",
    "tests/test_pages_crawl.py",
    "tests/reliability/test_limits.py",
    "tests/test_server_browser.py",
    "tests/test_feeds.py",
    "tests/test_wheel.py",
    "tests/reliability/test_mcp_protocol.py",
    "tests/reliability/test_hostile_values.py",
    "tests/reliability/test_hostile_layout.py",
)


#: With KG_TEST_CPU=PATH, each test's CPU seconds (this process and the children it waited
#: for: kg commands, servers, engines) and wall seconds go to PATH.<worker>, a line each, so
#: the suite's cost per file can be read on a loaded machine (docs/performance.md, "Test
#: suite"). A module's fixtures count in the test that set them up or tore them down.
_CPU_LOG = os.environ.get("KG_TEST_CPU")


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not _CPU_LOG:
        yield
        return
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{_CPU_LOG}.{worker}", "a", encoding="utf-8") as log:
        log.write(f"{item.nodeid}\t{_cpu_seconds() - cpu:.3f}\t{time.perf_counter() - wall:.3f}\n")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long variant: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def seed_paths() -> list[Path]:
    paths = sorted(SEEDS_DIR.glob("*.json"))
    assert len(paths) == 2, f"expected the two seed records in {SEEDS_DIR}"
    return paths


@pytest.fixture(scope="session")
def seed_records(seed_paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in seed_paths]


@pytest.fixture
def iris() -> Iris:
    return Iris(BASE)


@pytest.fixture
def memory_store() -> Iterator[GraphStore]:
    store = GraphStore.memory()
    yield store


@pytest.fixture
def seed_store(seed_paths: list[Path]) -> GraphStore:
    """A fresh in-memory store holding the two seed records."""
    store = GraphStore.memory()
    report = ingest(store, [str(p) for p in seed_paths], base_iri=BASE)
    assert report.added == 2 and report.rejected == 0
    return store


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this run sees (the session's own one without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    *argv: str,
    then: tuple[tuple[str, ...], ...] = (),
) -> Path:
    """Run `kg --store DIR/name/store ARGV` (and each command of `then` after it) once per
    test run, whatever the xdist workers.

    The first worker to take the lock builds; the others wait and reuse the store. Tests
    only read it (open it read-only, or copy it first).
    """
    root = _shared_dir(tmp_path_factory) / name
    root.mkdir(parents=True, exist_ok=True)
    store, done = root / "store", root / "built"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            for command in (argv, *then):
                proc = subprocess.run(
                    [sys.executable, "-m", "kg", "--store", str(store), *command],
                    cwd=ROOT, capture_output=True, text=True, check=False,
                )
                assert proc.returncode == 0, proc.stderr[-2000:]
            done.write_text(proc.stdout, encoding="utf-8")
    return store


@pytest.fixture(scope="session")
def readme_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's store: `kg ingest examples/` (both seeds, the methods dump and the 2020
    evaluation tables), built once per run and shared. Read it only: open with
    `GraphStore.open(path, read_only=True)` or `kg --store PATH <read command>`.

    Its suggestion model is trained ahead and kept beside it (`kg suggest --train`), so that
    no test's request trains it: the MCP tool, asked while another test's process was
    training it, was refused ("it is being trained")."""
    return build_once(
        tmp_path_factory, "readme-store", "ingest", "-q", str(ROOT / "examples"),
        then=(("suggest", "--train"),),
    )  # fmt: skip


@pytest.fixture
def disk_store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def cli() -> CliRunner:
    return CliRunner()


def run(cli: CliRunner, *args: str, input: str | None = None) -> Any:
    """Invoke the real Typer app in process."""
    return cli.invoke(app, list(args), input=input)


def select(store: GraphStore, query: str) -> list[dict[str, object]]:
    from kg.rdf.results import SelectResult

    result = store.query(PREFIXES + query)
    assert isinstance(result, SelectResult)
    return result.dicts()
