"""Other SPARQL engines as real processes on 127.0.0.1, for tests/test_engines.py and
tests/test_push.py: Virtuoso and Jena through .ci/engines.sh (the same commands as the
recipes in docs/scale-out.md), the `oxigraph` server and `kg serve`.

An engine that is not installed makes its tests skip with the reason; .ci/run installs them
(`.ci/engines.sh install`) and says loudly when it could not.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import httpx

from tests.conftest import ROOT
from tests.test_remote import free_port

ENGINES_SH = ROOT / ".ci" / "engines.sh"
OXIGRAPH = shutil.which("oxigraph") or str(Path(sys.executable).with_name("oxigraph"))
ASK = "ASK { ?s ?p ?o }"


def virtuoso_missing() -> str | None:
    """Why Virtuoso cannot run here, or None."""
    missing = [c for c in ("virtuoso-t", "isql-vt") if shutil.which(c) is None]
    if missing:
        return (
            f"Virtuoso is not installed ({', '.join(missing)} not found): "
            "run `.ci/engines.sh install` (Debian's virtuoso-opensource)"
        )
    return None


def jena_missing() -> str | None:
    """Why Jena cannot run here, or None."""
    if not Path("/usr/share/java/jena-tdb2.jar").is_file():
        return (
            "Jena is not installed (/usr/share/java/jena-tdb2.jar not found): "
            "run `.ci/engines.sh install` (Debian's libapache-jena-java)"
        )
    java = shutil.which("java")
    if java is None:
        return "Jena needs Java, and `java` is not on PATH"
    modules = subprocess.run([java, "--list-modules"], capture_output=True, text=True).stdout
    if "jdk.compiler@" not in modules:
        return "the Jena server runs as a Java source file and needs a JDK (jdk.compiler)"
    return None


def engines_sh(*args: str | Path, timeout: float = 1800) -> str:
    """Run `.ci/engines.sh ARGS…`; its output, or an AssertionError with it."""
    done = subprocess.run(
        ["bash", str(ENGINES_SH), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"engines.sh {' '.join(map(str, args))} failed:\n{output}"
    return output


def wait_for_sparql(url: str, process: subprocess.Popen[bytes], log: Path, limit: float) -> None:
    """Until `url` answers an ASK with 200, or the process dies, or `limit` seconds pass."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}):\n{_tail(log)}")
        try:
            answer = httpx.post(url, data={"query": ASK}, timeout=5)
            if answer.status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise AssertionError(f"{url} did not answer within {limit:g} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-3000:]
    except OSError:
        return ""


class Engine:
    """A server process in its own process group, stopped with SIGTERM (then SIGKILL)."""

    def __init__(self, name: str, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
        self.name = name
        self.url = url
        self.process = process
        self.log = log

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    out: IO[bytes] = log.open("ab")
    try:
        return subprocess.Popen(
            args,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        out.close()


class Virtuoso(Engine):
    """Virtuoso on a fresh database in `directory`: SQL and HTTP on free loopback ports."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        sql, http = free_port(), free_port()
        engines_sh("virtuoso-init", directory, sql, http)
        log = directory / "server.log"
        process = _spawn(["bash", str(ENGINES_SH), "virtuoso-serve", str(directory)], log)
        super().__init__("virtuoso", f"http://127.0.0.1:{http}/sparql", process, log)
        try:
            wait_for_sparql(self.url, process, log, limit=180)
        except BaseException:
            self.stop()
            raise
        self.graph_store = f"http://127.0.0.1:{http}/sparql-graph-crud-auth"

    def load(self, *files: Path) -> str:
        return engines_sh("virtuoso-load", self.directory, *files)

    def sql(self, statement: str) -> str:
        return engines_sh("virtuoso-sql", self.directory, statement)


class Jena(Engine):
    """Jena TDB2 bulk-loaded from `files` into `directory`, then served over SPARQL."""

    def __init__(self, directory: Path, *files: Path) -> None:
        self.load_output = engines_sh("jena-load", directory / "tdb2", *files)
        port = free_port()
        log = directory / "server.log"
        process = _spawn(
            ["bash", str(ENGINES_SH), "jena-serve", str(directory / "tdb2"), str(port)], log
        )
        super().__init__("jena", f"http://127.0.0.1:{port}/sparql", process, log)
        try:
            wait_for_sparql(self.url, process, log, limit=120)
        except BaseException:
            self.stop()
            raise


class OxigraphServer(Engine):
    """The `oxigraph` server (PyPI) on `location`: read-only (its default graph holds the
    merge, as kg lays a store out), or writable (for `kg push`), with its Graph Store
    Protocol at /store."""

    def __init__(self, location: Path, *, writable: bool = False) -> None:
        port = free_port()
        log = location.parent / f"{location.name}-server.log"
        mode = ["serve"] if writable else ["serve-read-only"]
        process = _spawn(
            [OXIGRAPH, *mode, "--location", str(location), "--bind", f"127.0.0.1:{port}"], log
        )
        super().__init__("oxigraph", f"http://127.0.0.1:{port}/query", process, log)
        self.graph_store = f"http://127.0.0.1:{port}/store"
        try:
            wait_for_sparql(self.url, process, log, limit=60)
        except BaseException:
            self.stop()
            raise


def oxigraph_load(location: Path, file: Path) -> None:
    """`oxigraph load`: the Oxigraph server's own bulk loader."""
    done = subprocess.run(
        [OXIGRAPH, "load", "--location", str(location), "--file", str(file)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
