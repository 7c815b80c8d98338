"""Stores that say their version (issue 30): a store records the version of kg's mapping and
layout that wrote it (kg.rdf.stamp), and a kg that finds another version says what to do
before answering anything.

A store written before this change has the same files as one written now, except the stamp:
removing the stamp makes exactly such a store (one built by the main of that day was checked
by hand the same way: every command refused it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kg.errors import StoreVersionError
from kg.rdf.snapshots import store_signature
from kg.rdf.stamp import STORE_VERSION, VERSION_FILE
from kg.rdf.store import GraphStore
from tests.reliability.helpers import run_kg

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> Path:
    """A store of the two seed records, written by this kg (copy it before changing it)."""
    store = tmp_path_factory.mktemp("stamped") / "store"
    done = run_kg("--store", str(store), "ingest", *map(str, seed_paths))
    assert done.returncode == 0, done.stderr
    return store


def _copy(built: Path, into: Path, stamp: str | None) -> Path:
    """The built store, its stamp replaced (None: removed, as in a store from before)."""
    store = into / "store"
    shutil.copytree(built, store, ignore=shutil.ignore_patterns(".kg-readers"))
    if stamp is None:
        (store / VERSION_FILE).unlink()
    else:
        (store / VERSION_FILE).write_text(stamp, encoding="ascii")
    return store


def _refused(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 1 and one `error:` line (no traceback, no answer on stdout)."""
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert done.stdout == ""
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_a_store_without_a_stamp_is_older_and_every_command_says_so(
    built: Path, tmp_path: Path, seed_paths: list[Path]
) -> None:
    store = _copy(built, tmp_path, None)
    before = store_signature(store)
    for argv in (
        ["stats"],
        ["sparql", "SELECT * WHERE { ?s ?p ?o } LIMIT 1"],
        ["export", "--format", "nt", "-o", str(tmp_path / "out.nt")],
        ["ingest", *map(str, seed_paths)],
    ):
        line = _refused(
            run_kg("--store", str(store), *argv),
            "written by an older kg",
            "store version 1",
            "re-ingest",
            "kg --store NEW ingest",
        )
        print(argv[0], "->", line[:120])
    # refused before anything was opened: no stamp written, no file touched, nothing exported
    assert store_signature(store) == before
    assert not (store / VERSION_FILE).exists()
    assert not (tmp_path / "out.nt").exists()
    with pytest.raises(StoreVersionError) as caught:
        GraphStore.open(store, read_only=True)
    assert caught.value.found is None


@pytest.mark.parametrize("allow_update", [False, True])
def test_serve_refuses_to_start_on_an_older_store(
    built: Path, tmp_path: Path, allow_update: bool
) -> None:
    store = _copy(built, tmp_path, "1")
    argv = ["--store", str(store), "serve", "--port", "0", "--workers", "1"]
    done = run_kg(*argv, *(["--allow-update"] if allow_update else []), timeout=120)
    _refused(done, "written by an older kg", "store version 1;", "re-ingest")
    assert "kg serve: http" not in done.stderr and "update token" not in done.stderr


def test_a_newer_store_is_refused_with_what_to_do(built: Path, tmp_path: Path) -> None:
    store = _copy(built, tmp_path, f"{STORE_VERSION + 1}\n")
    for argv in (["stats"], ["ingest", str(tmp_path / "nothing.jsonl")]):
        _refused(run_kg("--store", str(store), *argv), "written by a newer kg", "upgrade kg")
    (store / VERSION_FILE).write_bytes(b"\xff\xfe2")
    _refused(run_kg("--store", str(store), "stats"), VERSION_FILE, "rebuild the store")


def test_stats_shows_the_version_and_the_size_on_disk(built: Path, tmp_path: Path) -> None:
    store = _copy(built, tmp_path, f"{STORE_VERSION}\n")
    # a reader's snapshot pin (links to the tables, copies of the rest) is not the store's
    pin = store / ".kg-readers" / "1-0"
    pin.mkdir(parents=True)
    os.link(next(store.glob("*.sst")), pin / "000001.sst")
    (pin / "MANIFEST-000001").write_bytes(b"x" * 100_000)
    done = run_kg("--store", str(store), "stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["store_version"] == STORE_VERSION == int((store / VERSION_FILE).read_text())
    # independently: `find` lists every file but the pins with its inode and size
    listing = subprocess.run(
        ["find", str(store), "-path", str(store / ".kg-readers"), "-prune",
         "-o", "-type", "f", "-printf", "%i %s\n"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    expected = sum(int(size) for size in dict(line.split() for line in listing.splitlines()).values())
    assert stats["bytes_on_disk"] == expected > 0
    text = run_kg("--store", str(store), "stats")
    assert f"store version {STORE_VERSION} (kg's mapping and layout)" in text.stdout
    assert f"{expected / 1_048_576:,.1f} MB on disk" in text.stdout


def test_a_new_store_is_stamped_and_opens_again(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with GraphStore.open(store) as opened:
        assert opened.version() == STORE_VERSION
    assert (store / VERSION_FILE).read_text() == f"{STORE_VERSION}\n"
    with GraphStore.open(store, read_only=True) as again:
        assert again.version() == STORE_VERSION
    memory = GraphStore.memory()
    assert memory.version() is None and memory.size_on_disk() is None


def test_a_broken_store_is_called_broken_not_older(built: Path, tmp_path: Path) -> None:
    """Only RocksDB's CURRENT and IDENTITY left: no version could read it."""
    store = tmp_path / "store"
    store.mkdir()
    for name in ("CURRENT", "IDENTITY"):
        shutil.copy(built / name, store / name)
    for argv in (["stats"], ["ingest", str(tmp_path / "none.jsonl")]):
        line = _refused(run_kg("--store", str(store), *argv), "is broken", "no MANIFEST")
        assert "older" not in line, line
    assert sorted(p.name for p in store.iterdir()) == ["CURRENT", "IDENTITY"]


def test_ingest_refuses_a_folder_of_other_files(tmp_path: Path, seed_paths: list[Path]) -> None:
    folder = tmp_path / "my-papers"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    _refused(run_kg("--store", str(folder), "ingest", *map(str, seed_paths)),
             str(folder), "notes.txt", "no kg store", "new or empty folder")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]  # nothing written among them
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_kg("--store", str(empty), "ingest", *map(str, seed_paths)).returncode == 0
