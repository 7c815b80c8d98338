"""The persisted incidence matrix and indexes (kg.graph.cache): the same answers as reading
the store, in a fresh process too, and stale as soon as a record is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.graph import cache
from kg.graph.incidence import load_incidence
from kg.graph.similarity import METRICS, SimilarityIndex, similar
from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.conftest import BASE


def _write(path: Path, start: int, n: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i, record in enumerate(records(start + n, seed=7)):
            if i >= start:
                handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with GraphStore.open(path) as store:
        report = ingest(store, [str(_write(tmp_path / "a.jsonl", 0, 300))], base_iri=BASE)
        assert report.added == 300
    return path


def _papers(store: GraphStore) -> list[str]:
    return load_incidence(store, "all").papers


@pytest.mark.parametrize("by", ["all", "methods", "tasks,methods", "authors", "repositories"])
def test_a_cut_of_the_cached_matrix_is_the_matrix_read_from_the_store(
    store_path: Path, by: str
) -> None:
    with GraphStore.open(store_path, read_only=True) as store:
        for _ in range(2):  # built, then loaded from disk in a fresh state
            got = cache.incidence(store, by)
            want = load_incidence(store, by)
            assert got.papers == want.papers and got.items == want.items
            assert got.relations == want.relations
            assert (got.item_relation == want.item_relation).all()
            assert (got.matrix != want.matrix).nnz == 0
            cache._MEMORY.clear()


@pytest.mark.parametrize("metric", list(METRICS))
def test_persisted_indexes_rank_as_fresh_ones(store_path: Path, metric: str) -> None:
    with GraphStore.open(store_path, read_only=True) as store:
        papers = _papers(store)[::37]
        cache.similarity_index(store, "all", metric)  # written to disk
        cache._MEMORY.clear()
        restored = cache.similarity_index(store, "all", metric)  # read back
        fresh = SimilarityIndex(load_incidence(store, "all"), METRICS[metric])
        assert restored is not fresh
        assert (restored.df == fresh.df).all() and (restored.mass == fresh.mass).all()
        for paper in papers:
            assert restored.top(paper, 10) == fresh.top(paper, 10)
        a, b = papers[0], restored.top(papers[0], 1)[0].paper
        assert restored.shared(a, b) == fresh.shared(a, b)
        files = os.listdir(store_path / cache.CACHE_DIR / str(cache.content_key(store)))
        assert cache._index_name(restored.incidence.relations, metric) in files
        assert "incidence.npz" in files


def test_an_index_persisted_by_an_earlier_version_is_not_read(store_path: Path) -> None:
    """The default ranking changed (issue 24): its file name carries the metric's version,
    and arrays whose weights are not the metric's own are refused and rebuilt."""
    assert METRICS["idf"].version == 2
    assert cache._index_name(("methods",), "idf") == "index-methods-idf-v2.npz"
    assert cache._index_name(("methods",), "jaccard") == "index-methods-jaccard.npz"
    with GraphStore.open(store_path, read_only=True) as store:
        inc = load_incidence(store, "all")
        fresh = SimilarityIndex(inc, METRICS["idf"])
        state = fresh.state()
        with pytest.raises(ValueError, match="does not match this version"):
            SimilarityIndex.restore(inc, METRICS["jaccard"], state)
        # The file an earlier kg wrote for the cosine under the name "idf" is not read, and
        # goes when the new one is written; other metrics' files stay.
        directory = store_path / cache.CACHE_DIR / str(cache.content_key(store))
        cache.similarity_index(store, "all", "idf-cosine")
        (directory / "index-all-idf.npz").write_bytes(
            (directory / "index-all-idf-cosine.npz").read_bytes()
        )
        (directory / "index-all-idf-v1.npz").write_bytes(b"an older version")
        assert cache.similarity_index(store, "all", "idf").top(inc.papers[0], 5) == fresh.top(
            inc.papers[0], 5
        )
        names = set(os.listdir(directory))
        assert "index-all-idf-v2.npz" in names and "index-all-idf-cosine.npz" in names
        assert "index-all-idf.npz" not in names and "index-all-idf-v1.npz" not in names
        # A file of the right name holding other weights (as an older kg could have left):
        cache._MEMORY.clear()
        path = directory / cache._index_name(inc.relations, "idf")
        with path.open("wb") as out:
            np.savez(out, **{**state, "weight": state["weight"] * 2})  # type: ignore[arg-type]
        reread = cache.similarity_index(store, "all", "idf")
        assert np.array_equal(reread.weight, fresh.weight)
        paper = inc.papers[0]
        assert reread.top(paper, 5) == fresh.top(paper, 5)


def test_a_record_written_since_makes_the_cache_stale(store_path: Path, tmp_path: Path) -> None:
    with GraphStore.open(store_path, read_only=True) as store:
        old_key = cache.content_key(store)
        before = cache.incidence(store, "all")
    with GraphStore.open(store_path) as store:
        ingest(store, [str(_write(tmp_path / "b.jsonl", 300, 20))], base_iri=BASE)
    with GraphStore.open(store_path, read_only=True) as store:
        assert cache.content_key(store) != old_key
        after = cache.incidence(store, "all")
        assert after.papers == _papers(store) and len(after.papers) > len(before.papers)
        # the stale directory is gone, the current one holds the new matrix
        assert os.listdir(store_path / cache.CACHE_DIR) == [cache.content_key(store)]


def test_a_fresh_process_answers_from_the_cache_like_the_store(store_path: Path) -> None:
    with GraphStore.open(store_path, read_only=True) as store:
        paper = _papers(store)[5]
        direct = similar(
            store, paper, base_iri=BASE, top=5, incidence=load_incidence(store, "all")
        ).as_dict()
    env = {**os.environ, "KG_STORE": str(store_path)}
    for _ in range(2):  # the first run builds the cache, the second reads it
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "kg",
                "--store",
                str(store_path),
                "similar",
                paper,
                "--by",
                "all",
                "--top",
                "5",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert json.loads(out.stdout) == direct
    assert (store_path / cache.CACHE_DIR).is_dir()


def test_a_memory_store_builds_in_memory(seed_store: GraphStore) -> None:
    assert cache.content_key(seed_store) is None
    got = cache.incidence(seed_store, "methods")
    assert got.papers == load_incidence(seed_store, "methods").papers


_LINE = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=8)


@given(st.lists(_LINE, max_size=30).filter(lambda lines: lines != [""]), st.data())
def test_cached_lines_behave_as_the_list_they_were_written_from(
    lines: list[str], data: st.DataObject
) -> None:
    read = cache.Lines.of("\n".join(lines).encode())
    assert len(read) == len(lines) and list(read) == lines and read == lines
    assert [read[i] for i in range(-len(lines), len(lines))] == lines + lines
    assert read[1:-1:2] == lines[1:-1:2]
    for value in [*lines, *data.draw(st.lists(_LINE, max_size=3))]:
        if value in lines:
            assert read.index(value) == lines.index(value)
        else:
            with pytest.raises(ValueError):
                read.index(value)
    rows = data.draw(st.lists(st.integers(0, max(len(lines) - 1, 0)), max_size=10))
    if lines:
        taken, want = read.take(np.array(rows, dtype=np.int64)), [lines[r] for r in rows]
        assert list(taken) == want
        assert [taken.index(v) for v in want] == [want.index(v) for v in want]
        start, stop = data.draw(st.integers(-12, 12)), data.draw(st.integers(-12, 12))
        for value in want:
            try:
                expected: int | None = want.index(value, start, stop)
            except ValueError:
                expected = None
            if expected is None:
                with pytest.raises(ValueError):
                    taken.index(value, start, stop)
            else:
                assert taken.index(value, start, stop) == expected
