"""A record costs only itself: kg's own queries (search upkeep, merge, identity) never hit
the limits meant for user queries, so one record with huge (but allowed) values lands with
its neighbours, and the search index is kept fresh to the last batch (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG
from kg.testing.records import records
from tests.reliability.helpers import BASE, run_kg, select, write_jsonl


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
    iris = {hit["iri"] for hit in json.loads(found.stdout)}
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
