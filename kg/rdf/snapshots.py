"""Read-only snapshots beside a writer: pinned checkpoints, and the signature of a store.

A plain read-only open reads its table files lazily, so a writer beside it that compacts
(an ingest) can delete a file the snapshot still needs: its queries then fail, and an
aggregate over the failing scan grows without bound (pyoxigraph 0.5 collects the same error
forever; it took 23 GB). Pinning checkpoints the snapshot into `<store>/.kg-readers/<pid>-<n>`:
hard links (milliseconds, no copy) that the writer cannot delete. The pin is removed on
close, or by the next opener if this process died.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import time
from pathlib import Path

from kg.errors import StoreError
from kg.rdf.engine import Engine

#: Where read-only snapshots pin their files (see `open_snapshot`).
READERS_DIR = ".kg-readers"
_PIN_NUMBERS = itertools.count()
#: How often opening a snapshot is tried while a writer deletes the files being linked.
_SNAPSHOT_ATTEMPTS = 10
#: The files a RocksDB directory is opened from (not LOCK, the info LOG, or a bulk load's
#: files in progress): tables and logs are linked both before and after the manifest copy.
_STORE_FILES = re.compile(r"CURRENT|IDENTITY|MANIFEST-\d+|OPTIONS-\d+")
_DATA_FILES = re.compile(r"\d+\.(log|sst)")


def remove_stale_pins(path: Path) -> None:
    """Remove the snapshot pins of processes that ended without closing them."""
    for pin in (path / READERS_DIR).glob("*-*"):
        pid = pin.name.split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(pin, ignore_errors=True)
        except OSError:
            pass  # alive, someone else's


def release(pin: Path) -> None:
    """Remove a pin (its snapshot must be closed, or be another process's to close)."""
    shutil.rmtree(pin, ignore_errors=True)


def _link_store_files(path: Path, into: Path, names: re.Pattern[str]) -> None:
    """Hard-link the store's files whose names match into `into` (see _pinned). A
    file gone meanwhile was dropped by the writer after a newer version stopped using it.
    The manifest is copied instead: frozen, it names no table made after the copy."""
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if names.fullmatch(entry.name) and not (into / entry.name).exists():
            with contextlib.suppress(FileNotFoundError):
                if entry.name.startswith("MANIFEST-"):
                    shutil.copyfile(entry.path, into / entry.name)
                else:
                    os.link(entry.path, into / entry.name)


def store_signature(path: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of a store directory's files: any write changes it.

    The server's workers reopen their snapshots when it moves on, and kg.graph.cache keys
    its persisted matrices to it. Subdirectories (snapshot pins, caches) do not count.
    """
    out = []
    try:
        for entry in os.scandir(path):
            if entry.is_file():
                st = entry.stat()
                out.append((entry.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return ()
    return tuple(sorted(out))


def vanished(exc: BaseException) -> bool:
    """Whether a RocksDB error says a table file is gone (a writer compacted it away)."""
    return "No such file or directory" in str(exc)


def _lost_race(exc: BaseException) -> bool:
    """Whether opening a snapshot failed on the writer's moves: a file gone, or the copy of
    a manifest caught mid-write (an error about a file in READERS_DIR). Worth another go."""
    return vanished(exc) or READERS_DIR in str(exc)


def open_snapshot(path: Path) -> tuple[Engine, Path | None]:
    """A read-only snapshot of the store at `path`, and its pin (None when unpinned: the
    directory is read-only, or cannot hold hard links). The caller removes the pin with
    `release` after closing the snapshot."""
    for attempt in range(_SNAPSHOT_ATTEMPTS):
        try:
            return _pinned(path)
        except (OSError, RuntimeError) as exc:
            if attempt < _SNAPSHOT_ATTEMPTS - 1 and _lost_race(exc):
                # the writer compacted a file away while we linked it: again, a
                # little later (a busy 2-core machine lost three attempts in a row)
                time.sleep(0.02 * attempt)
                continue
            raise StoreError(f"cannot open the store at {path} read-only: {exc}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _pinned(path: Path) -> tuple[Engine, Path | None]:
    """A read-only snapshot, pinned when the directory is writable (see the module docstring).

    The checkpoint is taken from a second directory of hard links to the store's files,
    with a copy of the manifest, not from the store itself: the writer cannot delete
    what the checkpoint still has to link, and the frozen manifest names no table made
    after it (a busy 2-core machine lost ten attempts in a row to each). Tables and logs
    are linked before the copy and again after it. A read-only checkpoint holds no
    write-ahead log, so the writer's latest transactions (a cleared journal, removed
    graphs) would be missing: the linked logs are copied into the pin too, as a plain
    read-only open replays them. Copied, so that every open of one pin sees the same
    version (a log cut mid-record is replayed up to its last whole transaction).
    """
    remove_stale_pins(path)
    pin = path / READERS_DIR / f"{os.getpid()}-{next(_PIN_NUMBERS)}"
    links = pin.with_name(pin.name + ".links")
    try:
        links.mkdir(parents=True)
    except OSError as exc:
        if vanished(exc):
            raise
        return Engine.read_only(path), None  # read-only: unpinned
    try:
        _link_store_files(path, links, _DATA_FILES)
        _link_store_files(path, links, _STORE_FILES)
        _link_store_files(path, links, _DATA_FILES)
        Engine.checkpoint(links, pin)
        for log in links.glob("*.log"):
            # a copy, not the link: the writer appends to its live log, and a linked log
            # would show each later opener of this pin more than the first one saw
            shutil.copyfile(log, pin / log.name)
        shutil.rmtree(links)
    except (OSError, RuntimeError) as exc:
        shutil.rmtree(pin, ignore_errors=True)
        shutil.rmtree(links, ignore_errors=True)
        if isinstance(exc, RuntimeError) or _lost_race(exc):
            raise
        return Engine.read_only(path), None  # no hard links: unpinned
    try:
        engine = Engine.read_only(pin)
    except (OSError, RuntimeError):
        shutil.rmtree(pin, ignore_errors=True)
        raise
    return engine, pin
