"""The search index of a first ingest, built by a second process beside the load
(kg.search.beside): the same documents a rebuild from the store makes, field by field; a
child that dies fails the ingest and leaves the index dirty (a reader rebuilds it); a child
whose parent went away commits nothing."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.errors import StoreError
from kg.ingest.identity import Iris
from kg.ingest.ingestor import Ingestor, WrittenBatch
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG, STD
from kg.search import Upkeep, beside, open_index, rebuild
from kg.search.beside import serve
from kg.search.index import Index, Writer, index_path, keys_in_graphs
from kg.testing.records import records
from tests.conftest import BASE, ROOT


def index_contents(store_path: Path, names: list[str]) -> list[tuple[Any, ...]]:
    """Every document of the store's index, whole: its stored fields in order, and which of
    the graphs `names` find it (that field is not stored: asked graph by graph)."""
    import tantivy

    index = Index.open(index_path(store_path))
    searcher = index.searcher()
    out: list[tuple[Any, ...]] = []
    for _, addr in searcher.search(tantivy.Query.all_query(), 1_000_000).hits:
        doc = searcher.doc(addr)
        if doc["type"][0] != "_state":
            out.append(tuple(tuple(doc[f]) for f in ("key", "type", "label", "alt", "body", "ids")))
    graphs: dict[str, set[str]] = {}
    for g in names:
        for key in keys_in_graphs(index, [g]):
            graphs.setdefault(key, set()).add(g)
    return sorted((*v, tuple(sorted(graphs.get(v[0][0], ())))) for v in out)


def write_records(path: Path) -> None:
    """Records of both generators, and one whose abstract holds what the child looks for in
    a batch's bytes (a title predicate, in a literal): it must not become a title."""
    with path.open("w", encoding="utf-8") as f:
        for generator in ("archive", "wide"):
            for rec in records(40, seed=3, generator=generator):
                f.write(json.dumps(rec) + "\n")
        trap = {"title": "A trap", "arxiv_id": "2101.00001",
                "abstract": f'x> {STD.title} "Not a title" <{BASE}g> .\n> {STD.type} y'}
        f.write(json.dumps(trap) + "\n")


def methods_dump(tmp_path: Path) -> Path:
    """Twelve methods of the examples' dump, as the generated records' most named methods."""
    with gzip.open(ROOT / "examples" / "pwc" / "methods.json.gz", "rt", encoding="utf-8") as f:
        methods = json.load(f)[:12]
    for i, method in enumerate(methods):
        method["url"] = f"https://paperswithcode.com/method/method-{i}"
    path = tmp_path / "methods.json"
    path.write_text(json.dumps(methods), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("kept", "commit_every", "behind"),
    [(beside.KEPT, beside.COMMIT_EVERY, beside.BEHIND), (7, 5, 1)],
)
def test_the_index_built_beside_the_load_is_the_rebuilds(
    tmp_path: Path,
    seed_paths: list[Path],
    kept: int,
    commit_every: int,
    behind: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small batches name the same authors and methods again; then a methods dump gives
    methods the records named their descriptions (their documents made again). The index
    the child built equals a rebuild from the store, document by document and field by
    field; with the entities the child keeps in memory bounded too (7: they go to its spill
    file after almost every batch), the child's own commits after almost every batch (5
    documents: documents made again replace committed ones), and the batches it may leave
    unread bounded to one (each batch's file waits until the child removed the one before)."""
    monkeypatch.setattr(beside, "KEPT", kept)
    monkeypatch.setattr(beside, "COMMIT_EVERY", commit_every)
    monkeypatch.setattr(beside, "BEHIND", behind)
    data = tmp_path / "records.jsonl"
    write_records(data)
    path = tmp_path / "store"
    unread: list[int] = []
    with GraphStore.open(path) as store:
        upkeep = Upkeep(store, path)
        upkeep.begin()
        assert upkeep.beside is not None  # an empty store: the child builds the index
        spool = upkeep.beside.spool

        def observe(batch: WrittenBatch) -> None:
            unread.append(len(os.listdir(spool)))
            upkeep.observe(batch)

        report = Ingestor(store, Iris(BASE), batch_size=13, on_batch=observe).run(
            [str(data), *map(str, seed_paths)]
        )
        Ingestor(store, Iris(BASE), on_batch=observe).run([str(methods_dump(tmp_path))])
        upkeep.finish()
        assert not spool.exists()  # every batch's file read, the folder removed
        assert len(unread) > 5 and (max(unread) <= 1 if behind == 1 else True)
        assert upkeep.child["remade"] > 10  # entities named again in a later batch
        assert (upkeep.child["spilled"] > 5) == (kept == 7)
        rebuild(store, tmp_path / "copy")
        names = [g for (g,) in store.select_values("SELECT DISTINCT ?g { GRAPH ?g {} }")
                 if g is not None]
    assert report.added > 80 and report.rejected == 0
    assert Index.open(index_path(path)).state()["state"] == "clean"
    built, rebuilt = index_contents(path, names), index_contents(tmp_path / "copy", names)
    assert built == rebuilt
    assert len(built) == upkeep.indexed == upkeep.child["indexed"] > 500
    assert {d[1][0] for d in built} >= {"paper", "author", "method", "task", "repository"}
    assert [d[2] for d in built if d[2] == ("Not a title",)] == []
    trap = [d for d in built if d[2] == ("A trap",)]
    assert len(trap) == 1 and trap[0][1] == ("paper",)


@contextlib.contextmanager
def first_ingest(tmp_path: Path) -> Iterator[tuple[Path, GraphStore, Upkeep]]:
    """Records to ingest, and an empty store at `tmp_path / "store"` whose index a child
    builds beside the load (begun, not finished)."""
    data = tmp_path / "records.jsonl"
    write_records(data)
    path = tmp_path / "store"
    with GraphStore.open(path) as store:
        upkeep = Upkeep(store, path)
        upkeep.begin()
        yield data, store, upkeep


def ingest_or_abort(
    store: GraphStore, upkeep: Upkeep, data: Path, observe: Callable[[WrittenBatch], None]
) -> None:
    """Ingest `data` batch by batch (the store holds the batches written before a failure);
    if it fails, stop the index's child as the library does, and raise."""
    try:
        Ingestor(store, Iris(BASE), batch_size=20, on_batch=observe, first_load=False).run(
            [str(data)]
        )
    except BaseException:
        upkeep.abort()
        raise


def test_a_child_that_dies_fails_the_ingest_and_leaves_the_index_dirty(
    tmp_path: Path,
) -> None:
    """The child killed after the first batch: the next batch's hand-over fails the ingest with
    an error that names the search index; the index is left dirty, and a reader rebuilds it
    from what the store holds."""
    path = tmp_path / "store"
    with first_ingest(tmp_path) as (data, store, upkeep):
        assert upkeep.beside is not None
        child, spool = upkeep.beside.proc, upkeep.beside.spool

        def observe(batch: WrittenBatch) -> None:
            upkeep.observe(batch)
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.wait()

        with pytest.raises(StoreError, match="search index could not be built beside the load"):
            ingest_or_abort(store, upkeep, data, observe)
        assert not spool.exists()  # the batches the child had not read: removed
        assert Index.open(index_path(path)).state()["state"] == "dirty"
        index = open_index(store, path, quiet=True)  # a reader: the index is rebuilt
        assert index.state()["state"] == "clean" and index.doc_count() > 50


def test_batches_the_temporary_folder_cannot_take_go_down_the_pipe(tmp_path: Path) -> None:
    """The folder the batches wait in cannot take them (full, gone: here a file in its
    place): each batch goes down the pipe instead, and the index is the rebuild's, clean.
    (A 64 MB tmpfs as TMPDIR failed 20,000 records' ingest before.)"""
    path = tmp_path / "store"
    with first_ingest(tmp_path) as (data, store, upkeep):
        assert upkeep.beside is not None
        spool = upkeep.beside.spool
        spool.rmdir()
        spool.write_text("not a folder", encoding="utf-8")
        try:
            report = Ingestor(store, Iris(BASE), batch_size=20, on_batch=upkeep.observe).run(
                [str(data)]
            )
            upkeep.finish()
        finally:
            spool.unlink(missing_ok=True)
        assert report.added > 80 and upkeep.indexed == upkeep.child["indexed"] > 500
        rebuild(store, tmp_path / "copy")
        names = [g for (g,) in store.select_values("SELECT DISTINCT ?g { GRAPH ?g {} }")
                 if g is not None]
    assert Index.open(index_path(path)).state()["state"] == "clean"
    assert index_contents(path, names) == index_contents(tmp_path / "copy", names)


def test_the_batches_waiting_take_at_most_half_the_temporary_folders_room(
    tmp_path: Path,
) -> None:
    """BEHIND, or half of the folder's free space and of what already waits there."""
    import shutil

    free = shutil.disk_usage(tmp_path).free
    close = 1 << 24  # other files come and go meanwhile
    assert abs(beside.spool_room(tmp_path, 0) - min(beside.BEHIND, free // 2)) <= close
    waiting = 1 << 30
    assert abs(beside.spool_room(tmp_path, waiting) - min(beside.BEHIND, (free + waiting) // 2)) <= close
    assert beside.spool_room(tmp_path / "absent", 0) == beside.BEHIND  # it cannot be told


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="priorities via /proc")
def test_the_child_indexes_at_the_lowest_priority(tmp_path: Path, seed_paths: list[Path]) -> None:
    """The child lowers its own priority first thing (its threads inherit it): it indexes
    in the time the ingest leaves, and still builds the whole index."""

    def nice(pid: int) -> int:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        return int(stat[stat.rindex(")") + 2 :].split()[16])

    path = tmp_path / "store"
    with GraphStore.open(path) as store:
        upkeep = Upkeep(store, path)
        upkeep.begin()
        assert upkeep.beside is not None
        child = upkeep.beside.proc.pid
        Ingestor(store, Iris(BASE), on_batch=upkeep.observe).run(list(map(str, seed_paths)))
        deadline = time.monotonic() + 60  # it is still there: it waits for the end frame
        while (seen := nice(child)) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # still starting (its imports)
        upkeep.finish()
    assert seen == beside.CHILD_NICENESS == 19
    assert upkeep.indexed > 10


def test_a_child_whose_parent_went_away_commits_nothing(tmp_path: Path) -> None:
    """The frames end without the end frame (the ingest died): the child exits without its
    last commit, and the index keeps the dirty mark the ingest committed first, whether or not
    the child committed documents on the way. The same frames with the end frame commit the
    paper's document, and the index is clean."""
    paper = f"<{BASE}paper/p>"
    lines = (f'{paper} {STD.title} "Lost" <{BASE}g> .\n'
             f"{paper} {STD.type} {KG.Paper} <{BASE}g> .\n").encode()

    def frame(kind: bytes, payload: bytes = b"") -> bytes:
        return kind + len(payload).to_bytes(8, "big") + payload

    cut, whole = frame(b"D", lines) + frame(b"T"), frame(b"D", lines) + frame(b"T") + frame(b"E")
    for name, frames, commit_every, status in (("cut", cut, beside.COMMIT_EVERY, 3),
                                               ("cut-committed", cut, 1, 3),
                                               ("whole", whole, beside.COMMIT_EVERY, 0)):
        index = Index.create(tmp_path / name)
        writer = Writer(index)
        writer.begin()
        writer.close()
        del writer  # the child is the only writer
        out = io.BytesIO()
        assert serve(tmp_path / name, io.BytesIO(frames), out, commit_every=commit_every) == status
        again = Index.open(tmp_path / name)
        if status:
            # committed on the way or not, the index is still marked dirty: a reader rebuilds
            assert out.getvalue() == b""
            assert again.state()["state"] == "dirty"
            assert again.doc_count() == (commit_every == 1)
        else:
            assert json.loads(out.getvalue())["indexed"] == 1
            assert again.state()["state"] == "clean" and again.doc_count() == 1


def test_a_spill_file_that_cannot_grow_names_the_temporary_folder() -> None:
    """The child's spill file full (SQLite's own limit on its pages, as a full disk gives):
    the error says which folder needs more room, and how to give it."""
    docs = beside.LineDocuments(kept=10)

    def batch(first: int) -> None:
        for n in range(first, first + 30):
            s = f"<{BASE}paper/p{n}>"
            docs.feed_line(f"{s} {STD.type} {KG.Paper}", f"{BASE}graph/{n}")
            docs.feed_line(f'{s} {STD.title} "Paper {n} {"x" * 2000}"', f"{BASE}graph/{n}")
        docs.take()

    batch(0)  # past `kept`: spilled, the file made
    assert docs.spilled == 1 and docs._spill is not None
    pages = docs._spill.execute("PRAGMA page_count").fetchone()[0]
    docs._spill.execute(f"PRAGMA max_page_count = {pages}")
    try:
        with pytest.raises(OSError, match=r"spill file in .+ could not be written \(database or "
                           r"disk is full\): give the temporary folder \(TMPDIR\) more room"):
            batch(100)
    finally:
        docs.close()


def test_a_child_whose_parent_went_away_removes_the_batches_folder(tmp_path: Path) -> None:
    """A parent killed (SIGKILL) cannot remove the folder its batches wait in: the child,
    reading the pipe's end without the end frame, removes it (after reading what it names)."""
    index = Index.create(tmp_path / "index")
    writer = Writer(index)
    writer.begin()
    writer.close()
    del writer
    spool = tmp_path / f"{beside.FEED_PREFIX}{os.getpid()}-x"
    spool.mkdir()
    lines = f'<{BASE}paper/p> {STD.title} "Left" <{BASE}g> .\n'.encode()
    batch = spool / "00000000"
    batch.write_bytes(b"D" + len(lines).to_bytes(8, "big") + lines + b"T" + bytes(8))
    (spool / "00000001").write_bytes(b"never named down the pipe")
    child = subprocess.run(
        [sys.executable, "-c", "from kg.search.beside import main; main()",
         str(tmp_path / "index"), str(beside.KEPT), str(beside.COMMIT_EVERY), str(spool)],
        input=b"F" + len(str(batch)).to_bytes(8, "big") + str(batch).encode(),  # no end frame
        capture_output=True, timeout=120, check=False,
    )
    assert child.returncode == 3, child.stderr[-2000:]
    assert not spool.exists()
    assert Index.open(tmp_path / "index").state()["state"] == "dirty"


def test_the_folders_killed_ingests_left_are_removed_by_the_next(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    """Folders of batches and spill files whose process is gone (a SIGKILL, which nothing
    survives to clean up after) and untouched for ORPHAN_IDLE are removed by the next first
    ingest, as the real command runs it; a live process's folder, a folder written to since
    (its process may live in another PID namespace sharing the folder), and folders not
    named so, stay."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    orphans = [temp / f"{beside.FEED_PREFIX}{gone.pid}-a", temp / f"{beside.SPILL_PREFIX}{gone.pid}-b"]
    kept = [temp / f"{beside.FEED_PREFIX}{os.getpid()}-c", temp / f"{beside.FEED_PREFIX}d",
            temp / "other", temp / f"{beside.FEED_PREFIX}{gone.pid}-fresh"]
    long_ago = time.time() - beside.ORPHAN_IDLE - 60
    for folder in orphans + kept:
        folder.mkdir()
        (folder / "00000000").write_bytes(b"x" * 1000)
        if not folder.name.endswith("fresh"):  # written to a minute ago: another namespace's?
            os.utime(folder / "00000000", (long_ago, long_ago))
            os.utime(folder, (long_ago, long_ago))
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-m", "kg", "--store", str(tmp_path / "store"), "ingest", "-q",
         *map(str, seed_paths)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert [f for f in orphans if f.exists()] == []
    assert all((f / "00000000").exists() for f in kept)
    assert sorted(p.name for p in temp.iterdir()) == sorted(f.name for f in kept)  # its own: gone
