"""kg fetch against a loopback server that plays the Hugging Face Hub.

The server answers `/resolve/main/NAME` as the Hub does: a redirect to its storage, with the
file's size and SHA-256 in `X-Linked-Size` and `X-Linked-Etag`; the storage serves Range
requests. Faults are switched on per file: a 429 with Retry-After, a connection dropped
mid-file, a wrong checksum, a slow file (to kill `kg fetch` in the middle of it), a 403.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.cli import app
from kg.errors import FetchError
from kg.ingest.ingestor import ingest
from kg.ingest.manifest import read_manifest
from kg.library.archive import fetch_archive
from kg.rdf.store import GraphStore
from kg.sources import archive
from kg.sources.download import Downloader
from kg.testing.dumps import FILES_2025, write_archive
from tests.conftest import BASE

PAPERS = "jul-29-papers-with-abstracts.json.gz"
METHODS = "jul-28-methods.json.gz"


@dataclass
class Hub:
    """The server's files and faults, and the requests it saw."""

    folder: Path
    port: int = 0
    bad_sha: set[str] = field(default_factory=set)
    too_many: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (times, after)
    drop_after: dict[str, int] = field(default_factory=dict)  # name -> bytes, once
    slow: set[str] = field(default_factory=set)
    forbidden: set[str] = field(default_factory=set)
    seen: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, Range

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/datasets/pwc-archive/files/resolve/main/"

    def gets(self, name: str) -> list[str | None]:
        """The Range headers of the GETs of `name`'s bytes."""
        return [r for m, p, r in self.seen if m == "GET" and p == f"/cdn/{name}"]


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.answer(body=False)

        def do_GET(self) -> None:
            self.answer(body=True)

        def answer(self, body: bool) -> None:
            hub.seen.append((self.command, self.path, self.headers.get("Range")))
            name = self.path.rsplit("/", 1)[-1]
            path = hub.folder / name
            if name in hub.forbidden:
                return self.empty(403)
            known = self.path.startswith(("/cdn/", "/datasets/pwc-archive/files/resolve/main/"))
            if not (known and path.is_file()):
                return self.empty(404)
            times, after = hub.too_many.get(name, (0, "0"))
            if times:
                hub.too_many[name] = (times - 1, after)
                return self.empty(429, {"Retry-After": after})
            data = path.read_bytes()
            if self.path.startswith("/datasets/"):  # the Hub: a redirect with the LFS headers
                sha = hashlib.sha256(data).hexdigest()
                if name in hub.bad_sha:
                    sha = hashlib.sha256(b"other bytes").hexdigest()
                return self.empty(302, {
                    "Location": f"/cdn/{name}",
                    "X-Linked-Etag": f'"{sha}"',
                    "X-Linked-Size": str(len(data)),
                    "ETag": '"0123456789abcdef0123456789abcdef01234567"',  # a git blob's
                })
            start = 0
            wanted = self.headers.get("Range")
            if wanted and wanted.startswith("bytes=") and wanted.endswith("-"):
                start = int(wanted[6:-1])
            self.send_response(206 if start else 200)
            self.send_header("Content-Length", str(len(data) - start))
            self.send_header("Accept-Ranges", "bytes")
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if not body:
                return None
            rest = data[start:]
            if name in hub.drop_after:  # part of the body, then the connection is gone
                self.wfile.write(rest[: hub.drop_after.pop(name)])
                self.wfile.flush()
                self.close_connection = True
                return None
            step = 4096 if name in hub.slow else len(rest) or 1
            for i in range(0, len(rest), step):
                self.wfile.write(rest[i : i + step])
                if name in hub.slow:
                    time.sleep(0.01)  # the server's pace: ~400 kB/s
            return None

        def empty(self, code: int, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mirror")
    write_archive(folder, scale=0.002, seed=5, names="2025")
    return folder


@pytest.fixture
def hub(mirror: Path) -> Iterator[Hub]:
    state = Hub(mirror)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".incomplete"))


def test_catalogue_names_are_the_generators_and_the_clis() -> None:
    from kg.cli import fetch  # its defaults are spelt out so that `kg --help` loads no httpx

    assert {f.kind: (f.name, f.snapshot) for f in archive.FILES} == FILES_2025
    assert (fetch.ARCHIVE_DEFAULT, fetch.BASE_URL_DEFAULT) == (archive.NAME,
                                                              archive.DEFAULT_BASE_URL)


def test_fetch_follows_the_redirect_checks_the_hub_sha256_and_skips_what_it_has(
    hub: Hub, mirror: Path, tmp_path: Path
) -> None:
    into = tmp_path / "data"
    result = CliRunner().invoke(app, ["fetch", "--base-url", hub.url, "--into", str(into)])
    assert result.exit_code == 0, result.output
    for name, snapshot in FILES_2025.values():
        assert (into / name).read_bytes() == (mirror / name).read_bytes()
        manifest = read_manifest(into / name)
        assert manifest is not None and manifest.sha256_from_host
        assert manifest.sha256 == hashlib.sha256((mirror / name).read_bytes()).hexdigest()
        assert (manifest.snapshot, manifest.licence) == (snapshot, archive.LICENCE)
        assert manifest.url == hub.url + name
        assert hub.gets(name) == [None]  # one whole GET, after the redirect
    assert _leftovers(into) == []
    hub.seen.clear()
    again = CliRunner().invoke(app, ["fetch", "--base-url", hub.url, "--into", str(into)])
    assert again.exit_code == 0 and again.output.count("present") == 5
    assert [m for m, _, _ in hub.seen if m == "GET"] == []


def test_a_dropped_connection_resumes_with_range(hub: Hub, mirror: Path, tmp_path: Path) -> None:
    hub.drop_after[PAPERS] = 50_000
    waits: list[float] = []
    with Downloader(hub.url, sleep=waits.append) as downloader:
        fetched = downloader.fetch(PAPERS, tmp_path)
    assert fetched.status == "fetched" and fetched.verified_by_host
    assert (tmp_path / PAPERS).read_bytes() == (mirror / PAPERS).read_bytes()
    assert hub.gets(PAPERS) == [None, "bytes=50000-"]
    assert len(waits) == 1 and _leftovers(tmp_path) == []


def test_429_waits_as_retry_after_says_and_gives_up_past_the_limit(
    hub: Hub, tmp_path: Path
) -> None:
    hub.too_many[METHODS] = (2, "7")
    waits: list[float] = []
    with Downloader(hub.url, sleep=waits.append) as downloader:
        downloader.fetch(METHODS, tmp_path)
        assert waits == [7.0, 7.0]
        hub.too_many[METHODS] = (1, "3600")
        (tmp_path / METHODS).unlink()
        with pytest.raises(FetchError, match=r"rate limited .*\(429\); it asks to wait 3600 s"):
            downloader.fetch(METHODS, tmp_path)
    assert not (tmp_path / METHODS).exists()


def test_a_wrong_checksum_is_refused_and_nothing_is_left(hub: Hub, tmp_path: Path) -> None:
    hub.bad_sha.add(METHODS)
    report = fetch_archive(into=tmp_path, base_url=hub.url, only=["methods", "datasets"])
    assert [e.kind for e in report.failures] == ["checksum"]
    assert "does not match" in str(report.failures[0])
    assert [f.name for f in report.files] == ["jul-28-datasets.json.gz"]  # the other one lands
    assert not (tmp_path / METHODS).exists() and _leftovers(tmp_path) == []


def test_each_failure_is_one_line(hub: Hub, tmp_path: Path) -> None:
    hub.forbidden.add(METHODS)
    runner = CliRunner()
    gone = runner.invoke(app, ["fetch", "--base-url", hub.url.replace("main", "gone"),
                               "--into", str(tmp_path), "--only", "datasets"])
    refused = runner.invoke(app, ["fetch", "--base-url", hub.url, "--into", str(tmp_path),
                                  "--only", "methods"])
    tls = runner.invoke(app, ["fetch", "--base-url", hub.url.replace("http:", "https:"),
                              "--into", str(tmp_path), "--only", "methods"])
    for result, says in ((gone, "(404): check --base-url"), (refused, "refuses"),
                         (tls, "TLS failed with 127.0.0.1")):
        assert result.exit_code == 1
        lines = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and says in lines[0], result.output
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_is_one_line_and_nothing_lands_under_the_final_name(
    hub: Hub, tmp_path: Path
) -> None:
    (tmp_path / (METHODS + ".incomplete")).symlink_to("/dev/full")  # each write: ENOSPC
    result = CliRunner().invoke(app, ["fetch", "--base-url", hub.url, "--into", str(tmp_path),
                                      "--only", "methods"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "disk full writing" in lines[0], result.output
    assert "run kg fetch again to resume" in result.output
    assert not (tmp_path / METHODS).exists()


def test_kill_9_mid_download_leaves_a_resumable_partial(
    hub: Hub, mirror: Path, tmp_path: Path
) -> None:
    hub.slow.add(PAPERS)
    partial = tmp_path / (PAPERS + ".incomplete")
    command = [sys.executable, "-m", "kg", "fetch", "--base-url", hub.url,
               "--into", str(tmp_path), "--only", "papers", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (partial.exists() and partial.stat().st_size > 100_000):
        assert process.poll() is None and time.monotonic() < deadline, "fetch ended too soon"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = partial.stat().st_size
    assert not (tmp_path / PAPERS).exists() and 0 < kept < (mirror / PAPERS).stat().st_size
    hub.slow.clear()
    hub.seen.clear()
    result = CliRunner().invoke(app, ["fetch", "--base-url", hub.url, "--into", str(tmp_path),
                                      "--only", "papers"])
    assert result.exit_code == 0, result.output
    assert "resumed" in result.output
    assert hub.gets(PAPERS) == [f"bytes={kept}-"]
    assert (tmp_path / PAPERS).read_bytes() == (mirror / PAPERS).read_bytes()
    assert _leftovers(tmp_path) == []


def _digest_outside_provenance(store: GraphStore) -> str:
    """A digest of every quad except those of the dump nodes' graphs (which say when and
    from where each file was read)."""
    lines = sorted(q for q in store.quads_nquads() if "/graph/pwc-dump/" not in q.rsplit("<", 1)[-1])
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def test_fetch_then_ingest_gives_the_graph_of_the_files_on_disk(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    write_archive(mirror, scale=0.0005, seed=5, names="2025")
    report = fetch_archive(into=tmp_path / "data", base_url=str(mirror))
    assert not report.failures
    store = tmp_path / "store"
    fetched, direct = GraphStore.open(store), GraphStore.memory()
    ingest(fetched, [str(tmp_path / "data")], base_iri=BASE)
    ingest(direct, [str(mirror)], base_iri=BASE)
    assert _digest_outside_provenance(fetched) == _digest_outside_provenance(direct)
    rows = list(fetched.select_values(
        "PREFIX kg: <https://w3id.org/kg/ontology#> SELECT ?url WHERE { ?d a kg:Dump ; "
        "kg:sourceUrl ?url }"
    ))
    fetched.close()
    assert sorted(r[0] or "" for r in rows) == sorted(
        (mirror / name).as_uri() for name, _ in FILES_2025.values()
    )
    # datasets-introduced answers from the fetched datasets dump: each dataset whose item
    # names a paper, with that paper (plain Python over the file)
    with gzip.open(mirror / FILES_2025["datasets"][0], "rt") as handle:
        items = json.load(handle)
    introduced = {
        (BASE + "dataset/" + d["url"].rsplit("/", 1)[1],
         BASE + "paper/" + d["paper"]["url"].rsplit("/", 1)[1])
        for d in items if d.get("paper")
    }
    result = CliRunner().invoke(app, ["--store", str(store), "--base-iri", BASE, "query",
                                      "datasets-introduced", "--format", "csv"])
    assert result.exit_code == 0, result.output
    answered = {tuple(line.split(",")[0:3:2]) for line in result.output.splitlines()[1:]}
    assert answered == introduced and len(introduced) > 1
