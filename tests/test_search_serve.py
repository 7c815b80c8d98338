"""kg search through a real `kg serve` process on 127.0.0.1: /search, the SPARQL block at
/sparql and in the named queries, and what a new ingest beside the server brings."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve_support import (
    HOSTILE_TITLE,
    KG_BIN,
    STOPPED,
    ServeProcess,
    awkward_record,
    wait_until,
)

SEED = "https://w3id.org/kg/id/paper/attention-module-is-not-only-a-weight"
SEED_TITLE = "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms"
BLOCK = (
    "PREFIX kgs: <https://w3id.org/kg/search#>\n"
    "PREFIX kg: <https://w3id.org/kg/ontology#>\n"
    "SELECT ?paper ?score ?method WHERE {\n"
    "  SERVICE <https://w3id.org/kg/search> {\n"
    '    [] kgs:query "attention" ; kgs:type "paper" ; kgs:hit ?paper ; kgs:score ?score .\n'
    "  }\n"
    "  ?paper kg:usesMethod ?method .\n"
    "  ?method <http://www.w3.org/2000/01/rdf-schema#label> \"Adam\" .\n"
    "} ORDER BY DESC(?score)"
)


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path], seed_records: list[dict]
) -> Iterator[tuple[ServeProcess, Path]]:
    work = tmp_path_factory.mktemp("search-serve")
    store = work / "store"
    done = subprocess.run(
        [KG_BIN, "--store", str(store), "ingest", "-q", *map(str, seed_paths)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    proc = ServeProcess(["--store", str(store)], ["--workers", "2", "--refresh", "0.2"])
    try:
        yield proc, store
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


def test_search_answers_json(served: tuple[ServeProcess, Path]) -> None:
    proc, _ = served
    r = proc.get("/search", params={"q": "attention is not only a weight", "limit": "5"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["query"] == "attention is not only a weight" and body["limit"] == 5
    first = body["hits"][0]
    assert first["iri"] == SEED and first["label"] == SEED_TITLE and first["type"] == "paper"
    assert first["year"] == 2020 and first["has_code"] is True and first["tasks"]
    assert all(first["snippet"][a:b] for a, b in first["marks"])
    typed = proc.get("/search", params={"q": "goro kobayashi", "type": "author"}).json()
    assert [h["type"] for h in typed["hits"]] == ["author"]
    assert typed["hits"][0]["label"] == "Goro Kobayashi"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "?q="),
        ({"q": "  "}, "?q="),
        ({"q": "x", "type": "person"}, "not a class"),
        ({"q": "x", "limit": "0"}, "limit"),
        ({"q": "x", "limit": "many"}, "limit"),
        ({"q": "!!"}, "no words"),
    ],
)
def test_bad_search_parameters_are_400(
    served: tuple[ServeProcess, Path], params: dict[str, str], message: str
) -> None:
    r = served[0].get("/search", params=params)
    assert r.status_code == 400 and message in r.text, r.text


def test_search_page_for_browsers_is_escaped(served: tuple[ServeProcess, Path]) -> None:
    r = served[0].get("/search", params={"q": "attention<i>"}, headers={"Accept": "text/html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "attention<i>" not in r.text and "attention&lt;i&gt;" in r.text
    assert "<mark>" in r.text
    assert 'href="/paper/attention-module-is-not-only-a-weight"' in r.text
    assert r.headers["content-security-policy"].startswith("default-src 'none'")


def test_the_block_runs_at_sparql(served: tuple[ServeProcess, Path]) -> None:
    proc, _ = served
    r = httpx.post(proc.sparql, data={"query": BLOCK}, timeout=60,
                   headers={"Accept": "application/sparql-results+json"})
    assert r.status_code == 200, r.text
    rows = r.json()["results"]["bindings"]
    papers = [row["paper"]["value"] for row in rows]
    assert SEED in papers
    scores = [float(row["score"]["value"]) for row in rows]
    assert scores == sorted(scores, reverse=True)
    # the same through GET and the named queries
    g = proc.get("/sparql", params={"query": BLOCK}, headers={"Accept": "application/json"})
    assert g.status_code == 200 and g.json()["results"]["bindings"] == rows
    named = proc.get("/queries/search-papers", params={"text": "vector norms", "limit": "3"},
                     headers={"Accept": "application/json"})
    assert named.status_code == 200, named.text
    assert named.json()["results"]["bindings"][0]["paper"]["value"] == SEED
    titled = proc.get("/queries/papers-by-title", params={"text": "only a weight"},
                      headers={"Accept": "application/json"})
    assert [b["paper"]["value"] for b in titled.json()["results"]["bindings"]] == [SEED]


def test_a_bad_block_is_400_and_other_services_stay_refused(
    served: tuple[ServeProcess, Path],
) -> None:
    proc = served[0]
    bad = BLOCK.replace('kgs:type "paper"', 'kgs:type "person"')
    r = proc.get("/sparql", params={"query": bad})
    assert r.status_code == 400 and "kgs:type" in r.text
    other = "SELECT * { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"
    assert proc.get("/sparql", params={"query": other}).status_code == 403


def test_an_ingest_beside_the_server_is_searchable(
    served: tuple[ServeProcess, Path], seed_records: list[dict], tmp_path: Path
) -> None:
    proc, store = served
    record = awkward_record(seed_records[0])
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    done = subprocess.run([KG_BIN, "--store", str(store), "ingest", "-q", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    def found() -> bool:
        hits = proc.get("/search", params={"q": "alert kg zoë bold"}).json()["hits"]
        return bool(hits) and hits[0]["label"] == HOSTILE_TITLE

    wait_until(found)


def test_a_search_block_bomb_is_refused_and_the_server_stays_small(
    served: tuple[ServeProcess, Path],
) -> None:
    """Issue 31: 1,500 UNION'ed search blocks are refused (400) before any search runs, in
    a worker (the main process stays small); a query with a few still answers."""
    from tests.test_search import _union_of_blocks

    proc = served[0]
    before = _rss_mb(proc.proc.pid)
    r = httpx.post(proc.sparql, data={"query": _union_of_blocks(1500)}, timeout=120)
    assert r.status_code == 400 and "1,500 kg search blocks" in r.text, r.text[:300]
    assert _rss_mb(proc.proc.pid) < before + 50
    ok = httpx.post(proc.sparql, data={"query": _union_of_blocks(2, limit=3)}, timeout=60,
                    headers={"Accept": "application/sparql-results+json"})
    assert ok.status_code == 200, ok.text
    assert proc.get("/health").json()["replaced"] == 0


def test_the_server_process_opens_no_search_index(served: tuple[ServeProcess, Path]) -> None:
    """/search runs in a worker, under its limits: the server process never loads the
    index's engine (tantivy), while the workers that searched did."""
    proc = served[0]
    r = proc.get("/search", params={"q": "attention", "limit": "2"})
    assert r.status_code == 200 and r.json()["hits"], r.text
    assert "tantivy" not in Path(f"/proc/{proc.proc.pid}/maps").read_text()
    workers = proc.get("/health").json()
    searched = [
        pid for pid in _children(proc.proc.pid)
        if "tantivy" in Path(f"/proc/{pid}/maps").read_text()
    ]
    assert searched and workers["workers_running"] == 2


def _children(pid: int) -> list[int]:
    """The process ids of `pid`'s children (its query workers)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue
        if f"PPid:\t{pid}" in lines:
            found.append(int(status.parent.name))
    return found


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        line = next(x for x in f if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024
