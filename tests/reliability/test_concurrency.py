"""Concurrent use of one store by several `kg` processes.

The rule (docs/reliability.md): one writer at a time. A second process that wants to write
(`kg ingest`, `kg serve --allow-update`) fails at once with exit 1 and "the store at … is
busy"; it never waits and never corrupts. Readers (`kg sparql`, `kg query`, `kg export`,
`kg serve`) open a read-only snapshot beside the writer, taken when they open: they see
each record whole or not at all, and a later open sees more.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.reliability.helpers import (
    BASE,
    EPOCH,
    RECORD_GRAPHS,
    STOPPED,
    Server,
    assert_clean_failure,
    graph_sizes,
    holds_store,
    kg_env,
    record_figures,
    run_kg,
    start_kg,
    wait_until,
    write_jsonl,
)

pytestmark = pytest.mark.reliability
SIZES = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
#: The second file: 20 batches of 10, the overlap a writer offers its readers (it was 40
#: batches of 10, 1,000 records in batches of 25, and 2,000 in batches of 50, at more CPU;
#: the readers run as long as the writer does, so their CPU shrinks with it).
RECORDS = 200
BATCH = 10


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A first file (already in the store before each test) and a second one to ingest
    while other processes use the store, with each graph's size in a clean run."""
    directory = tmp_path_factory.mktemp("concurrency")
    generated = list(records(300 + RECORDS, seed=31))  # distinct papers in the two files
    first = write_jsonl(directory / "first.jsonl", generated[:300])
    second = write_jsonl(directory / "second.jsonl", generated[300:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        clean = GraphStore.memory()
        ingest(clean, [str(first), str(second)], base_iri=BASE)
        sizes = graph_sizes(clean)
        digest = clean.canonical_digest()
    return {"first": first, "second": second, "sizes": sizes, "digest": digest}


def fresh_store(tmp_path: Path, inputs: dict[str, Any]) -> Path:
    store = tmp_path / "store"
    result = run_kg("--store", str(store), "ingest", str(inputs["first"]), "-q")
    assert result.returncode == 0, result.stderr
    return store


def start_second_ingest(store: Path, inputs: dict[str, Any]) -> Any:
    """`kg ingest` of the second file in small batches (many writes to overlap with)."""
    return start_kg(
        "--store", str(store), "ingest", str(inputs["second"]), "--batch-size", str(BATCH), "--json"
    )


def whole(sizes: dict[str, int], expected: dict[str, int]) -> int:
    """Checks that every record graph a reader saw is whole; returns how many it saw."""
    records = [g for g in sizes if g.startswith(RECORD_GRAPHS)]
    for graph in records:
        assert sizes[graph] == expected[graph], f"a reader saw half of {graph}"
    return len(records)


def finish(proc: Any, store: Path, inputs: dict[str, Any]) -> None:
    """The writer ends well and the store holds exactly what a clean run holds."""
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr.decode()[-3000:]
    assert json.loads(stdout)["added"] == RECORDS
    with GraphStore.open(store, read_only=True) as opened:
        assert graph_sizes(opened) == inputs["sizes"]
        assert opened.canonical_digest() == inputs["digest"]


def test_a_second_writer_fails_fast_with_a_clear_message(
    tmp_path: Path, inputs: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    store = fresh_store(tmp_path, inputs)
    writer = start_second_ingest(store, inputs)
    wait_until(lambda: holds_store(writer.pid, store) or writer.poll() is not None, 300, "a lock")
    refusals, waits = 0, []
    while writer.poll() is None and refusals < 3:
        started = time.monotonic()
        second = run_kg("--store", str(store), "ingest", str(inputs["first"]), timeout=120)
        waits.append(time.monotonic() - started)
        if writer.poll() is not None:
            break  # the first writer finished meanwhile: the second may legitimately run
        assert_clean_failure(second, "is busy", "another kg process is writing")
        refusals += 1
        server = start_kg(
            "--store", str(store), "serve", "--port", "0", "--warm", "0", "--allow-update",
            "--update-token", "t",
        )  # fmt: skip
        try:
            out, err = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # Still running: it got the store, which is only right if the ingest ended first.
            server.kill()
            server.communicate()
            assert writer.poll() is not None, "a writing server started beside a writer"
            break
        assert_clean_failure(
            subprocess.CompletedProcess(server.args, server.returncode, out.decode(), err.decode()),
            "is busy",
        )
    assert refusals >= 1, "the first ingest ended before a second writer could try"
    finish(writer, store, inputs)
    again = run_kg("--store", str(store), "ingest", str(inputs["second"]), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == RECORDS
    record_figures(
        request.config,
        "concurrency_writers",
        {"second_writers_refused": refusals, "slowest_refusal_s": round(max(waits), 2)},
    )


def test_queries_beside_an_ingest_see_whole_records(
    tmp_path: Path, inputs: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    store = fresh_store(tmp_path, inputs)
    writer = start_second_ingest(store, inputs)
    seen: list[int] = []
    while writer.poll() is None:
        result = run_kg("--store", str(store), "sparql", SIZES, "--format", "csv", timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        seen.append(whole({r["g"]: int(r["n"]) for r in rows}, inputs["sizes"]))
    assert len(seen) >= 2, "the ingest ended before a query could run beside it"
    assert seen == sorted(seen), "a later snapshot saw fewer records"
    assert seen[0] >= 300
    finish(writer, store, inputs)
    record_figures(request.config, "concurrency_queries", {"queries_beside_ingest": len(seen)})


def test_serve_beside_an_ingest(
    tmp_path: Path, inputs: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    store = fresh_store(tmp_path, inputs)
    server = Server.start(store, tmp_path / "serve.log", "--refresh", "0.5", "--workers", "2")
    try:
        writer = start_second_ingest(store, inputs)  # a read-only server holds no lock
        seen: list[int] = []
        failures: list[str] = []

        def hammer() -> None:
            while writer.poll() is None:
                response = server.query(SIZES)
                if response.status_code != 200:
                    failures.append(f"{response.status_code}: {response.text[:300]}")
                    continue
                rows = response.json()["results"]["bindings"]
                sizes = {r["g"]["value"]: int(r["n"]["value"]) for r in rows}
                seen.append(whole(sizes, inputs["sizes"]))

        clients = [threading.Thread(target=hammer) for _ in range(2)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(timeout=900)
        assert not failures, failures[:3]
        assert len(seen) >= 2
        finish(writer, store, inputs)

        def caught_up() -> bool:
            response = server.query(SIZES)
            assert response.status_code == 200, response.text
            return len(response.json()["results"]["bindings"]) == len(inputs["sizes"])

        wait_until(caught_up, 120, "the server to see the finished ingest")
        assert server.proc.poll() is None
        health = server.query("ASK { ?s ?p ?o }")
        assert health.status_code == 200 and health.json()["boolean"] is True
    finally:
        code = server.stop()
    assert code == STOPPED, server.log.read_text()[-3000:]
    assert "Traceback" not in server.log.read_text()
    record_figures(request.config, "concurrency_serve", {"queries_served_beside_ingest": len(seen)})


def test_an_updating_server_holds_the_store_and_ingest_is_refused(
    tmp_path: Path, inputs: dict[str, Any]
) -> None:
    store = fresh_store(tmp_path, inputs)
    server = Server.start(store, tmp_path / "serve.log", "--allow-update", "--update-token", "t")
    try:
        refused = run_kg("--store", str(store), "ingest", str(inputs["second"]), timeout=120)
        assert_clean_failure(refused, "is busy")
        response = server.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert response.status_code == 200
    finally:
        assert server.stop() == STOPPED
    with GraphStore.open(store, read_only=True) as opened:  # untouched by the refused ingest
        assert whole(graph_sizes(opened), inputs["sizes"]) == 300


SNAPSHOT_SCRIPT = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # the unpinned failure balloons
from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
path, more = Path(sys.argv[1]), sys.argv[2]
count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
reader = GraphStore.open(path, read_only=True)
pinned = reader._pin is not None
with GraphStore.open(path) as writer:  # beside it, a writer adds data and compacts
    ingest(writer, [more], base_iri="https://w3id.org/kg/id/", batch_size=50)
    writer.optimize()
seen = int(reader.query(count).rows[0][0].value)
reader.close()
after = GraphStore.open(path, read_only=True)
now = int(after.query(count).rows[0][0].value)
after.close()
print(json.dumps({"pinned": pinned, "seen": seen, "now": now,
                  "pins_left": len(list((path / ".kg-readers").iterdir()))}))
"""


def test_a_snapshot_outlives_the_writers_compaction(tmp_path: Path, inputs: dict[str, Any]) -> None:
    """A reader's snapshot keeps answering, with what it saw, while a writer beside it
    ingests and compacts the files away (before pinning: "No such file or directory", and
    an aggregate that grew to 23 GB)."""
    store = tmp_path / "store"
    first = run_kg("--store", str(store), "ingest", str(inputs["first"]), "--batch-size", "20")
    assert first.returncode == 0, first.stderr
    with GraphStore.open(store, read_only=True) as opened:
        before = sum(graph_sizes(opened).values())
    stale = store / ".kg-readers" / "999999999-0"  # a pin whose process died
    stale.mkdir(parents=True)
    (stale / "CURRENT").write_text("x")
    result = subprocess.run(
        [sys.executable, "-c", SNAPSHOT_SCRIPT, str(store), str(inputs["second"])],
        capture_output=True,
        text=True,
        timeout=900,
        env=kg_env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout)
    assert seen == {"pinned": True, "seen": before, "now": seen["now"], "pins_left": 0}
    assert seen["now"] > before
