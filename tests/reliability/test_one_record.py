"""A record costs only itself: kg's own queries (search upkeep, merge, identity) never hit
the limits meant for user queries, so one record with huge (but allowed) values lands with
its neighbours, and the search index is kept fresh to the last batch (issue 30)."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG
from kg.testing.records import records
from tests.reliability.helpers import BASE, KG_CMD, kg_env, run_kg, select, write_jsonl


def _ingest_and_check(tmp_path: Path, items: list[dict[str, object]]) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", items)
    store = tmp_path / "store"
    done = run_kg("--store", str(store), "ingest", "--batch-size", "10", str(src))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(items)} added" in done.stdout + done.stderr
    with GraphStore.open(store, read_only=True) as opened:
        papers = {p for (p,) in select(opened, f"SELECT ?p WHERE {{ ?p a {KG.Paper} }}")}
    assert papers == {BASE + "paper/" + str(r["url"]).rsplit("/", 1)[1] for r in items}
    # the index is current (no rebuild on the next read) and holds the last batch's paper
    last = items[-1]
    found = run_kg("--store", str(store), "search", f'"{last["title"]}"', "--type", "paper",
                   "--top", "100", "--json")  # fmt: skip
    assert found.returncode == 0, found.stderr[-2000:]
    assert "search index" not in found.stderr, found.stderr
    answer = json.loads(found.stdout)
    hits = answer["hits"] if isinstance(answer, dict) else answer  # pages of hits, or a list
    iris = {hit["iri"] for hit in hits}
    assert BASE + "paper/" + str(last["url"]).rsplit("/", 1)[1] in iris


@pytest.mark.parametrize(
    "authors",
    [
        ["A" * 999_999],
        ["B" * 600_000, "C" * 600_000],
        [f"{i:04d}" + "D" * 596 for i in range(2_000)],
    ],
    ids=["one-999999-char-author", "two-600000-char-authors", "2000-authors-of-600-chars"],
)
def test_a_record_with_huge_allowed_values_lands_with_all_its_neighbours(
    tmp_path: Path, authors: list[str]
) -> None:
    items = list(records(101 if len(authors) == 1 else 31, seed=8))
    items[len(items) // 2]["authors"] = authors  # line 51 of 101
    _ingest_and_check(tmp_path, items)


# --- the smaller cases: each bad input costs itself at most --------------------------------


def _paper_slugs(store: GraphStore) -> set[str]:
    rows = select(store, f"SELECT ?p WHERE {{ ?p a {KG.Paper} }}")
    return {str(p).removeprefix(BASE + "paper/") for (p,) in rows}


def _jsonl(items: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(i) + "\n" for i in items).encode()


def _ingest_stdin(tmp_path: Path, data: bytes) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    store = tmp_path / "store"
    result = subprocess.run(
        [*KG_CMD, "--store", str(store), "ingest", "-"],
        input=data, capture_output=True, timeout=300, env=kg_env(),
    )  # fmt: skip
    done = subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )
    with GraphStore.open(store, read_only=True) as opened:
        return done, _paper_slugs(opened)


def test_a_missing_file_costs_only_itself(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", records(5, seed=3))
    store = tmp_path / "store"
    result = run_kg("--store", str(store), "ingest", str(tmp_path / "missing.jsonl"), str(good))
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"{tmp_path / 'missing.jsonl'}: no such file or directory" in result.stderr
    with GraphStore.open(store, read_only=True) as opened:
        assert _paper_slugs(opened) == {f"synthetic-paper-{i}" for i in range(5)}


def test_gzip_on_stdin_is_read(tmp_path: Path) -> None:
    items = list(records(5, seed=3))
    result, slugs = _ingest_stdin(tmp_path, gzip.compress(_jsonl(items)))
    assert result.returncode == 0, result.stderr[-2000:]
    assert slugs == {f"synthetic-paper-{i}" for i in range(5)}


@pytest.mark.parametrize(
    "first, rejected",
    [("[oops", 1), ('["not a record"]', 1), ("[]", 0), ('[{"url": "/paper/x", "title": "X"},', 1)],
)
def test_a_first_line_starting_with_a_bracket_on_stdin_costs_at_most_that_line(
    tmp_path: Path, first: str, rejected: int
) -> None:
    items = list(records(5, seed=3))
    result, slugs = _ingest_stdin(tmp_path, first.encode() + b"\n" + _jsonl(items))
    assert result.returncode == (1 if rejected else 0), result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("rejected")]
    assert len(lines) == rejected, lines
    assert {f"synthetic-paper-{i}" for i in range(5)} <= slugs
    assert slugs <= {f"synthetic-paper-{i}" for i in range(5)} | {"x"}


def test_a_conflicting_duplicate_code_link_is_reported_as_what_it_is(tmp_path: Path) -> None:
    link = {"repo_url": "https://github.com/a/b", "framework": "pytorch"}
    record = {"url": "/paper/cl", "title": "CL",
              "code_links": [link, {**link, "framework": "tf"}, dict(link)]}  # fmt: skip
    report = ingest(GraphStore.memory(), [str(write_jsonl(tmp_path / "r.jsonl", [record]))],
                    base_iri=BASE)  # fmt: skip
    assert not report.unknown_keys and report.added == 1
    (entry,) = report.not_mapped  # the conflict, once; the identical third link says nothing
    assert entry.startswith("code_links[1] (a second link to https://github.com/a/b whose "
                            "framework differs from code_links[0]'s"), entry  # fmt: skip


@pytest.mark.parametrize(
    "url", ["/paper/q?x=1", "/paper/h#f", "https://paperswithcode.com/paper/q?x=1"]
)
def test_a_paper_url_with_a_query_or_fragment_is_refused_not_cut(tmp_path: Path, url: str) -> None:
    store = GraphStore.memory()
    path = write_jsonl(tmp_path / "r.jsonl", [{"url": url, "title": "Q"}])
    report = ingest(store, [str(path)], base_iri=BASE)
    assert report.rejected == 1 and report.added == 0
    assert report.errors[0].field == "url" and "query or a fragment" in str(report.errors[0])
    assert _paper_slugs(store) == set()
