"""A first ingest into an empty store is one bulk load (kg.rdf.first_load).

The promises: it stores exactly what the batch-by-batch ingest stores (compared quad for
quad on the bundled dumps, whose papers are merged by alias, and on generated records); the
store shows nothing of it until it ends, and a kill leaves the store empty; a load that does
not parse stores nothing and the run is written again batch by batch.
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

import kg.rdf.first_load
from kg.ingest.ingestor import ingest
from kg.rdf.merge import merge_lines
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.reliability.helpers import (
    BASE,
    EPOCH,
    run_kg,
    start_kg,
    synth_file,
    write_jsonl,
)
from tests.reliability.test_kill import dump_slice

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not kg.rdf.first_load.streaming_available(), reason="first loads stream on Linux only"
)


def _ingested(
    path: Path, inputs: list[str], *, first_load: bool, **options: Any
) -> tuple[str, int, Any]:
    """The canonical digest and quad count of a fresh store holding `inputs`, and the report."""
    with GraphStore.open(path) as store:
        assert store.can_load_first()
        report = ingest(
            store, inputs, base_iri=BASE, first_load=first_load, compact_from=None, **options
        )
        assert not store.can_load_first()
        return store.canonical_digest(), len(store), report


def test_a_first_load_stores_what_the_batches_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled records, the seeds, and the bundled dumps' evaluation entries that name
    papers merged by alias (whose units are held back and streamed last) with 300 methods,
    in small batches so that the renames fall between them: the same quads, one load
    against many batches."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    dumps = dump_slice(tmp_path / "dumps", methods=300)
    inputs = [str(ROOT / "examples" / "records"), str(ROOT.parent / "shared" / "seeds"), str(dumps)]
    fed: list[bytes] = []
    feed = kg.rdf.first_load.FirstLoad.feed

    def feeding(self: Any, chunks: Any) -> None:
        chunks = list(chunks)
        fed.extend(chunks)
        feed(self, chunks)

    monkeypatch.setattr(kg.rdf.first_load.FirstLoad, "feed", feeding)
    one = _ingested(tmp_path / "one", inputs, first_load=True, batch_quads=2_000)
    batches = _ingested(tmp_path / "batches", inputs, first_load=False, batch_quads=2_000)
    assert one[0] == batches[0]
    assert one[1] == batches[1] > 20_000
    assert one[2].renamed == batches[2].renamed >= 3
    assert (one[2].added, one[2].rejected) == (batches[2].added, 0)
    # fed as pairs: a batch's N-Quads, then exactly their lines in the default graph
    assert len(fed) >= 4 and len(fed) % 2 == 0
    for data, merge in zip(fed[::2], fed[1::2], strict=True):
        assert merge == merge_lines(data)
    # the merged papers' units were held back: the last pair names the arXiv IRIs they got
    assert f"<{BASE}paper/arxiv/".encode() in fed[-2]
    # (a title IRI renamed once a later row taught its arXiv id: never in the load)
    assert f"<{BASE}paper/title/3e3c4759ebdc243a".encode() not in b"".join(fed)


def test_generated_records_in_one_load_or_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Odd text (a tail that looks like a graph IRI, quotes, emoji, accents) and the wide
    generator's shared entities, through the pipe."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    recs = list(records(400, seed=11, generator="wide"))
    recs[3]["abstract"] = 'Ends with a graph-like tail <urn:x:g> .\n and "quotes" \\ here'
    recs[5]["title"] = "Zoë's 🙂 astral title"
    recs[7] = recs[6]  # a duplicate: unchanged, once
    path = str(write_jsonl(tmp_path / "r.jsonl", recs))
    one = _ingested(tmp_path / "one", [path], first_load=True, batch_size=90)
    batches = _ingested(tmp_path / "batches", [path], first_load=False, batch_size=90)
    assert one[:2] == batches[:2]
    assert (one[2].added, one[2].unchanged) == (batches[2].added, batches[2].unchanged)
    assert one[2].unchanged >= 1


def test_the_store_shows_nothing_of_a_first_load_until_it_ends(tmp_path: Path) -> None:
    """Fed but not committed: the store, and a reader beside it, hold nothing; committed,
    everything at once. Aborted: nothing, and the loader's files are gone."""
    store = GraphStore.open(tmp_path / "s")
    lines = b"".join(
        f'<urn:x:s{i}> <urn:x:p> "v{i}" <urn:x:g{i % 7}> .\n<urn:x:s{i}> <urn:x:p> "v{i}" .\n'.encode()
        for i in range(20_000)
    )
    try:
        with store.first_load() as load:
            load.feed([lines[: len(lines) // 2], lines[len(lines) // 2 :]])
            assert len(store) == 0
            with GraphStore.open(tmp_path / "s", read_only=True) as reader:
                assert len(reader) == 0
        assert len(store) == 40_000
        with GraphStore.open(tmp_path / "s", read_only=True) as reader:
            assert len(reader) == 40_000
    finally:
        store.close()

    fresh = GraphStore.open(tmp_path / "t")
    try:
        with pytest.raises(RuntimeError), fresh.first_load() as load:
            load.feed([lines])
            raise RuntimeError("the ingest failed")
        assert len(fresh) == 0 and fresh.can_load_first()
        assert not list((tmp_path / "t").glob("bulk-*.sst"))
        with fresh.first_load() as load:  # and the next first load works
            load.feed([lines])
        assert len(fresh) == 40_000
        with pytest.raises(kg.errors.StoreError, match="empty store"), fresh.first_load():
            pass
    finally:
        fresh.close()


def test_a_first_load_that_does_not_parse_stores_nothing(tmp_path: Path) -> None:
    store = GraphStore.open(tmp_path / "s")
    try:
        with pytest.raises(kg.rdf.first_load.FirstLoadError), store.first_load() as load:
            load.feed([b'<urn:x:s> <urn:x:p> "v" <urn:x:g> .\n', b"<not an iri> <urn:p> <urn:o> .\n"])
            # the loader may stop reading before this: a feed raises then, else the commit
            load.feed([b'<urn:x:s> <urn:x:p> "w" <urn:x:g> .\n' * 200_000])
        assert len(store) == 0
    finally:
        store.close()


def test_a_killed_first_ingest_leaves_the_store_empty(tmp_path: Path) -> None:
    """`kg ingest` killed (SIGKILL) at random moments of its first load: each time the store
    it leaves is empty (nothing half-written, the loader's files removed by the next writer);
    the run to the end then stores what a clean run stores."""
    records_file = synth_file(tmp_path / "r.jsonl", 1_000, seed=5)
    clean = tmp_path / "clean"
    done = run_kg("--store", str(clean), "ingest", str(records_file), "-q", "--no-compact")
    assert done.returncode == 0, done.stderr[-2000:]
    store_dir = tmp_path / "store"
    rng = random.Random(5)
    kills = 0
    for _ in range(2):
        proc = start_kg(
            "--store", str(store_dir), "ingest", str(records_file), "-q", "--no-compact",
            "--first-load",  # by default only inputs of 256 MiB or more
        )
        time.sleep(rng.uniform(0.8, 2.0))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        kills += 1
        with GraphStore.open(store_dir) as store:
            assert len(store) == 0
            assert store.can_load_first()
        assert not list(store_dir.glob("bulk-*.sst"))
    assert kills >= 1, "the ingest ended before the first kill"
    done = run_kg("--store", str(store_dir), "ingest", str(records_file), "--json", "--no-compact")
    assert done.returncode == 0, done.stderr[-2000:]
    with (
        GraphStore.open(store_dir, read_only=True) as resumed,
        GraphStore.open(clean, read_only=True) as reference,
    ):
        assert resumed.canonical_digest() == reference.canonical_digest()
        assert len(resumed) > 100_000


def test_a_rename_moves_an_old_style_arxiv_iri_whole() -> None:
    """A renamed fallback IRI is moved as GraphStore.rename_iris moves it: the longest
    renamed IRI first, the nodes beneath it with it, an old-style arXiv id ("hep-th/…", a
    "/" inside) whole. Only the first path segment was looked up before."""
    from kg.ingest.aliases import PaperAliases
    from kg.ingest.identity import Iris

    iris = Iris(BASE)
    papers = PaperAliases(GraphStore.memory(), iris, deferred=True)
    old, new = iris.paper_by_arxiv("hep-th/9901001"), iris.paper("a-slug")
    papers._applied = {old: new}
    line = f"<{old}/result/1> <urn:x:of> <{old}> <{BASE}graph/g> .\n"
    other = f"<{iris.paper_by_arxiv('hep-th/9901002')}> <urn:x:p> <{old}x> .\n"
    assert papers.settled_text(line + other) == (
        f"<{new}/result/1> <urn:x:of> <{new}> <{BASE}graph/g> .\n" + other
    )
    assert papers.rewrite([line.removesuffix(f" <{BASE}graph/g> .\n")]) == [
        f"<{new}/result/1> <urn:x:of> <{new}>"
    ]
    assert papers.names_fallback(other) and not papers.names_fallback(f"<{new}> <urn:x:p> 1 .")


def test_by_default_only_a_large_input_is_one_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`first_load=None` (the CLI's default): batch by batch below FIRST_LOAD_FROM bytes of
    input, one load from it; never from stdin."""
    import kg.ingest.ingestor

    path = str(synth_file(tmp_path / "r.jsonl", 60, seed=3))
    loads: list[str] = []
    monkeypatch.setattr(
        GraphStore, "write_batch", lambda self, *a, **k: loads.append("batch")
    )
    with GraphStore.open(tmp_path / "small") as store:
        ingest(store, [path], base_iri=BASE)
        assert loads  # batch by batch (the batches' writes are left out here)
    loads.clear()
    monkeypatch.setattr(kg.ingest.ingestor, "FIRST_LOAD_FROM", 1)
    with GraphStore.open(tmp_path / "large") as store:
        report = ingest(store, [path], base_iri=BASE)
        assert not loads and len(store) > 0 and report.added == 60


def test_a_first_load_streams_smaller_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first load closes its batches at FIRST_LOAD_BATCH_QUADS, below the `batch_quads`
    of a batch-by-batch ingest: they all stream into the one load, so a batch is only what
    the mapping holds before it is sent (the command's peak memory)."""
    import kg.ingest.ingestor as ingestor

    sizes: list[int] = []
    feed = ingestor.Ingestor._feed

    def feeding(self: Any, load: Any, data: list[bytes], merges: list[bytes]) -> None:
        sizes.append(sum(part.count(b"\n") for part in data))
        feed(self, load, data, merges)

    monkeypatch.setattr(ingestor.Ingestor, "_feed", feeding)
    monkeypatch.setattr(ingestor, "FIRST_LOAD_BATCH_QUADS", 4_000)
    path = str(write_jsonl(tmp_path / "r.jsonl", list(records(300, seed=4, generator="wide"))))
    _, quads, report = _ingested(
        tmp_path / "one", [path], first_load=True, batch_quads=10**6, batch_size=10**6
    )
    assert report.added == 300 and quads > 5 * 4_000
    assert len(sizes) >= 5 and sum(sizes) <= quads
    assert max(sizes) < 4_000 + 3_000  # the cap, and the record that crossed it
