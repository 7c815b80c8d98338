"""A disk that fills up under the store: the run stops at once with a message that says so,
no record is blamed for it, nothing is half-stored, and the same command converges once
there is room.

The disk is a real one: a small tmpfs mounted for the test (root only; CI runs as root),
grown afterwards with `mount -o remount`. Before this, a first load that ran out of room was
written again batch by batch (which filled the disk again), and the error was RocksDB's
about one of its files. The ingest bisects a batch that fails to find a bad record: a full
disk must not be taken for one (all 600 records were rejected as "kg produced invalid RDF").
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.errors import DiskFullError
from kg.rdf.disk import is_disk_full, said_if_full
from kg.rdf.store import GraphStore
from tests.reliability.helpers import assert_clean_failure, graph_sizes, run_kg, synth_file

pytestmark = pytest.mark.reliability

RECORDS = 600  # a 26 MB store with its search index; the disk holds 12 MB


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 MB tmpfs at tmp_path/disk (grown by `grow`), unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mount)],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def grow(mount: Path) -> None:
    subprocess.run(["mount", "-o", "remount,size=200m", str(mount)], check=True)


@pytest.fixture(scope="module")
def records_and_reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """The records, and the quads by graph of their store ingested with room to spare."""
    folder = tmp_path_factory.mktemp("disk-full")
    data = synth_file(folder / "records.jsonl", RECORDS)
    assert run_kg("--store", str(folder / "reference"), "ingest", "-q", str(data)).returncode == 0
    with GraphStore.open(folder / "reference", read_only=True) as store:
        return data, graph_sizes(store)


def converges(store: Path, data: Path, reference: dict[str, int]) -> None:
    """With room, the same command ends well and leaves the store a clean run leaves."""
    again = run_kg("--store", str(store), "ingest", "-q", str(data))
    assert again.returncode == 0, again.stderr[-2000:]
    with GraphStore.open(store, read_only=True) as opened:
        sizes = graph_sizes(opened)
    assert sizes == reference
    records = [json.loads(line) for line in data.read_text().splitlines()]
    assert sum(g.startswith("https://w3id.org/kg/id/graph/record/") for g in sizes) == len(records)
    # the search index too (built beside the load, or rebuilt: the same)
    last = records[-1]
    found = run_kg("--store", str(store), "search", last["title"], "--json", "--limit", "50")
    assert found.returncode == 0, found.stderr[-2000:]
    hits = {hit["iri"].rsplit("/", 1)[-1] for hit in json.loads(found.stdout)["hits"]}
    assert last["url"].rsplit("/", 1)[-1] in hits


def runs_out_of_room(store: Path, data: Path, how: str, outcome: str) -> None:
    """`kg ingest how` into a store on a disk too small: one clean error that names the
    store, says what became of the write, points at --store, and blames no record."""
    result = run_kg("--store", str(store), "ingest", how, str(data), timeout=120)
    assert_clean_failure(
        result, f"the disk holding the store at {store} ran out of room", outcome, "--store"
    )
    assert "rejected" not in result.stderr and "invalid RDF" not in result.stderr


def test_a_first_load_out_of_room_stops_at_once_and_stores_nothing(
    small_disk: Path, records_and_reference: tuple[Path, dict[str, int]]
) -> None:
    data, reference = records_and_reference
    store = small_disk / "store"
    runs_out_of_room(store, data, "--first-load", "nothing of this first load was stored")
    with GraphStore.open(store, read_only=True) as opened:
        assert graph_sizes(opened) == {}  # not written again batch by batch
    grow(small_disk)
    converges(store, data, reference)


def test_batches_out_of_room_blame_no_record_and_roll_back(
    small_disk: Path, records_and_reference: tuple[Path, dict[str, int]]
) -> None:
    data, reference = records_and_reference
    store = small_disk / "store"
    runs_out_of_room(store, data, "--in-batches", "the batch in flight will be rolled back")
    grow(small_disk)
    converges(store, data, reference)


def test_a_full_disk_is_told_from_other_write_errors(tmp_path: Path) -> None:
    with pytest.raises(OSError) as full, open("/dev/full", "wb", buffering=0) as device:
        device.write(b"x")
    assert full.value.errno == errno.ENOSPC and is_disk_full(full.value)
    with pytest.raises(OSError) as missing:
        (tmp_path / "no" / "such").write_bytes(b"x")
    assert not is_disk_full(missing.value)
    # RocksDB's words for it, as it raises them (no errno)
    assert is_disk_full(OSError("IO error: No space left on device: While appending to file"))
    # Tantivy's, in a ValueError: only where the search index writes (elsewhere a ValueError
    # may quote the caller's own text)
    tantivy = ValueError("An IO error occurred: 'No space left on device (os error 28)'")
    assert not is_disk_full(tantivy)
    rebuilt = "the search index is rebuilt"
    with pytest.raises(DiskFullError, match=rebuilt), said_if_full(
        tmp_path, rebuilt, value_errors=True
    ):
        raise tantivy
    with pytest.raises(ValueError), said_if_full(tmp_path, "not this"):
        raise tantivy
    # the room left is said where the disk can say it, and left out where it cannot
    full = OSError(errno.ENOSPC, "No space left on device")
    said = r"ran out of room \([\d,]+ MB free now\): kept"
    with pytest.raises(DiskFullError, match=said), said_if_full(tmp_path, "kept"):
        raise full
    gone = r"at \S+/gone ran out of room: kept"
    with pytest.raises(DiskFullError, match=gone), said_if_full(tmp_path / "gone", "kept"):
        raise full
