"""Read-only snapshots beside a writer: publications, pinned checkpoints, and the signature
of a store.

Readers see whole writes only, by construction. At the end of each whole write (an ingest
batch with its merge and cleared journal, a recovery, an update, a rename...) the writer
publishes a checkpoint of its open store into `<store>/.kg-published/<generation>`
(`publish`: hard links, written under a temporary name and renamed, so a half-made
publication is never seen), and removes the older ones. Readers open the newest
publication (`open_snapshot`), never the live files, so whatever the writer is doing
between two publications (a batch loaded in several steps) is invisible to them. Within a
long run of writes (an ingest's batches) a whole write's publication may wait for a later
one's, so that publishing stays under about a tenth of the run (PUBLISH_GAP); readers then
see whole batches a little later, never a part of one, and the run's last write is always
published.

A plain read-only open reads its table files lazily, so a writer beside it can delete a
file the snapshot still needs (a compaction, or the removal of an older publication): its
queries then fail, and an aggregate over the failing scan grows without bound (pyoxigraph
0.5 collects the same error forever; it took 23 GB). Pinning hard-links the snapshot's
files into `<store>/.kg-readers/<pid>-<n>` (milliseconds, no copy), which the writer cannot
delete. The pin is removed on close, or by the next opener if this process died. Removing
a publication therefore never breaks a reader that pinned it: its files live on through
the pin's links.

A store with no publication (written by an older kg, or on read-only media) is read as
before: a pin of the live files.
"""

from __future__ import annotations

import contextlib
import errno
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
#: Where the writer publishes the checkpoints readers open (see `publish`).
PUBLISHED_DIR = ".kg-published"
#: Present from the start of a write until its publication (see `mark_unpublished`).
UNPUBLISHED_FILE = ".kg-unpublished"
#: Whether writers publish (bench/publish.py turns it off to measure what it costs; a
#: store written so is read from its live files, or from an older, stale publication).
PUBLISHING = True

#: Within a run of many writes (`GraphStore.publishing_in_bulk`: an ingest's batches), a
#: write is published only once the time since the last publication is at least this many
#: times what that publication took, so publishing stays under about a tenth of the run
#: (at the archive's scale a publication takes 2.5 s: one a batch was 21 % of the load).
#: A run's last write is always published. 0 publishes every write.
PUBLISH_GAP = 9.0
_PIN_NUMBERS = itertools.count()
#: How often opening a snapshot is tried while a writer deletes the files being linked.
_SNAPSHOT_ATTEMPTS = 10
#: The files a RocksDB directory is opened from (not LOCK, the info LOG, or a bulk load's
#: files in progress): tables and logs are linked both before and after the manifest copy.
_STORE_FILES = re.compile(r"CURRENT|IDENTITY|MANIFEST-\d+|OPTIONS-\d+")
_DATA_FILES = re.compile(r"\d+\.(log|sst)")
_TABLE_FILES = re.compile(r"\d+\.sst")


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


# --- publications (the writer's side) ------------------------------------------------------


def _generation(name: str) -> int | None:
    return int(name) if name.isdigit() else None


def _publications(root: Path) -> list[int]:
    """The generations of the complete publications in `root`, oldest first."""
    try:
        names = os.listdir(root)
    except OSError:
        return []
    return sorted(g for g in map(_generation, names) if g is not None)


def mark_unpublished(path: Path) -> None:
    """Say, before a write starts, that the store is about to hold what readers have not
    seen; `publish` takes it back. A writer killed in between leaves it behind, and the
    next writer knows that its readers saw an older version than the store holds (what
    they derived from it, as the search index, may be behind: see `has_unpublished`)."""
    (path / UNPUBLISHED_FILE).touch()


def has_unpublished(path: Path) -> bool:
    """Whether a writer wrote what it never published (it died between the two)."""
    return (path / UNPUBLISHED_FILE).exists()


def publish(engine: Engine, path: Path) -> Path:
    """Publish the committed state of the writer's open store `engine` (at `path`) as the
    newest generation, and remove the older publications and any a killed writer left half
    made. Only the writer calls this (it holds the store's lock), between its writes.
    Returns the publication.

    The checkpoint is written under a temporary name and renamed: a reader sees a whole
    publication or none. An older one is renamed out of the way before its files are
    removed, so a reader still linking its files notices (the name is gone) and pins the
    newer one instead (see `_pin_published`).

    It is made from the store's files, as the pin of a store without publications is
    (`_checkpoint_of_files`: the writer's logs carry what its memtables hold), not by
    RocksDB's checkpoint: that flushes the memtables first, and a flush waits while level 0
    holds nearly as many files as stall the writes (19 of 20), for the compaction. An
    ingest, whose compaction runs in the time the load leaves, waited so for most of it
    (8.3 s of publishing at 20,000 records, 4 s of it in one publication). RocksDB's
    checkpoint is the fallback when the files' race with a compaction is lost ten times.
    """
    root = path / PUBLISHED_DIR
    root.mkdir(exist_ok=True)
    generations = _publications(root)
    generation = (generations[-1] if generations else 0) + 1
    making = root / f".new-{generation}-{os.getpid()}"
    shutil.rmtree(making, ignore_errors=True)
    if not _checkpoint_of_files_settled(path, making):
        engine.backup(making)
    published = root / f"{generation:012d}"
    os.rename(making, published)
    with contextlib.suppress(FileNotFoundError):
        (path / UNPUBLISHED_FILE).unlink()
    for entry in os.scandir(root):
        if entry.name == published.name:
            continue
        old = Path(entry.path)
        if _generation(entry.name) is not None:
            gone = root / f".gone-{entry.name}-{os.getpid()}"
            with contextlib.suppress(FileNotFoundError):
                os.rename(old, gone)
            old = gone
        shutil.rmtree(old, ignore_errors=True)  # a .new- or .gone- a killed writer left
    return published


#: The share of a store's bytes that its newest publication may hold in tables the writer
#: has compacted away before a closing writer publishes again (`is_stale`).
STALE_SHARE = 0.1


def is_stale(path: Path) -> bool:
    """Whether the newest publication holds tables the live store no longer uses (the
    writer compacted them away since) worth more than STALE_SHARE of the store's bytes.

    Their links keep them on disk until the next publication replaces it. After the last
    batch of a large ingest nothing does: at archive scale 0.1 they were 643 of 2,365 MB.
    """
    newest = _newest(path / PUBLISHED_DIR)
    if newest is None:
        return False
    live = _file_sizes(path, _DATA_FILES)
    stale = sum(
        size for inode, size in _file_sizes(newest[0], _TABLE_FILES).items() if inode not in live
    )
    return stale > STALE_SHARE * (sum(live.values()) + stale)


def _file_sizes(folder: Path, names: re.Pattern[str]) -> dict[int, int]:
    """{inode: bytes} of the files in `folder` whose names match; none if it is gone."""
    sizes: dict[int, int] = {}
    with contextlib.suppress(FileNotFoundError):  # a publication replaced meanwhile
        for entry in os.scandir(folder):
            if names.fullmatch(entry.name):
                with contextlib.suppress(FileNotFoundError):
                    st = entry.stat()
                    sizes[st.st_ino] = st.st_size
    return sizes


# --- the signature ---------------------------------------------------------------------------


def _newest(root: Path) -> tuple[Path, os.stat_result] | None:
    """The newest complete publication in `root` and its directory's status, or None."""
    for _ in range(_SNAPSHOT_ATTEMPTS):
        generations = _publications(root)
        if not generations:
            return None
        newest = root / f"{generations[-1]:012d}"
        try:
            return newest, os.stat(newest)
        except FileNotFoundError:
            continue  # removed meanwhile: a newer one exists
    return None


Signature = tuple[tuple[str, int, int], ...]


def _published_signature(where: Path, st: os.stat_result) -> Signature:
    # no inode: a copy of the store that keeps times (`cp -a`, shutil.copytree) keeps its
    # signature, and with it its caches (kg.graph.cache), as a store without publications does
    return ((f"{PUBLISHED_DIR}/{where.name}", 0, st.st_mtime_ns),)


def store_signature(path: Path) -> Signature:
    """What changes exactly when readers would see new data: the newest publication (its
    name and time), or for a store without publications the names, sizes and
    modification times of its files (any write changes them).

    The server's workers reopen their snapshots when it moves on, and kg.graph.cache keys
    its persisted matrices to it. Subdirectories (snapshot pins, caches) do not count.
    """
    newest = _newest(path / PUBLISHED_DIR)
    if newest is not None:
        return _published_signature(*newest)
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


def _lost_race(exc: BaseException, among: str = READERS_DIR) -> bool:
    """Whether opening a snapshot failed on the writer's moves: a file gone, or the copy of
    a manifest caught mid-write (an error about a file `among` the copies: READERS_DIR for a
    reader's, PUBLISHED_DIR for the writer's). Worth another go."""
    return vanished(exc) or among in str(exc)


def open_snapshot(path: Path) -> tuple[Engine, Path | None, Signature | None]:
    """A read-only snapshot of the store at `path`, its pin (None when unpinned: the
    directory is read-only, or cannot hold hard links) and the signature of the publication
    it holds (as `store_signature` gave it then; None for a store without publications).
    The caller removes the pin with `release` after closing the snapshot."""
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


def _open_pin(pin: Path) -> Engine:
    """Open a complete pin read-only; removed if it cannot be opened."""
    try:
        return Engine.read_only(pin)
    except (OSError, RuntimeError):
        shutil.rmtree(pin, ignore_errors=True)
        raise


def _pin_published(
    path: Path, root: Path
) -> tuple[Engine, Path | None, Signature | None] | None:
    """The newest publication in `root`, pinned (None when the store has none).

    Every file of the publication is hard-linked into a new pin; if its name is gone once
    they are (the writer published a newer one and removed this one meanwhile), a file may
    have been missed, and FileNotFoundError makes `open_snapshot` try again with the
    newer one. The writer never changes a publication's files, only removes them, so a
    complete set of links is a frozen, whole version.
    """
    newest = _newest(root)
    if newest is None:
        return None
    published, before = newest
    signature = _published_signature(published, before)
    pin = path / READERS_DIR / f"{os.getpid()}-{next(_PIN_NUMBERS)}"
    try:
        pin.mkdir(parents=True)
    except OSError as exc:
        if vanished(exc):
            raise
        return Engine.read_only(published), None, signature  # read-only media: unpinned
    try:
        for entry in os.scandir(published):
            if _STORE_FILES.fullmatch(entry.name) or _DATA_FILES.fullmatch(entry.name):
                os.link(entry.path, pin / entry.name)
        after = os.stat(published)
        if (after.st_ino, after.st_dev) != (before.st_ino, before.st_dev):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(published))
    except FileNotFoundError:
        shutil.rmtree(pin, ignore_errors=True)
        raise  # lost the race with the writer's removal: the newer one, next attempt
    except OSError:
        shutil.rmtree(pin, ignore_errors=True)
        return Engine.read_only(published), None, signature  # no hard links: unpinned
    return _open_pin(pin), pin, signature


def _pinned(path: Path) -> tuple[Engine, Path | None, Signature | None]:
    """A read-only snapshot of the newest publication, pinned (see the module docstring);
    for a store without one, a pinned checkpoint of its live files, as below.

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
    published = _pin_published(path, path / PUBLISHED_DIR)
    if published is not None:
        return published
    pin = path / READERS_DIR / f"{os.getpid()}-{next(_PIN_NUMBERS)}"
    links = pin.with_name(pin.name + ".links")
    try:
        links.mkdir(parents=True)
    except OSError as exc:
        if vanished(exc):
            raise
        return Engine.read_only(path), None, None  # read-only: unpinned
    try:
        _checkpoint_of_files(path, links, pin)
    except (OSError, RuntimeError) as exc:
        shutil.rmtree(pin, ignore_errors=True)
        if isinstance(exc, RuntimeError) or _lost_race(exc):
            raise
        return Engine.read_only(path), None, None  # no hard links: unpinned
    return _open_pin(pin), pin, None


def _checkpoint_of_files(path: Path, links: Path, into: Path) -> None:
    """Write a checkpoint of the store at `path` into the new directory `into` from its
    files, through the new directory `links` (removed at the end), without asking the
    process that writes the store (see `_pinned` for why this is whole). OSError or
    RuntimeError if the writer's moves made it fail (`_lost_race` says which)."""
    try:
        _link_store_files(path, links, _DATA_FILES)
        _link_store_files(path, links, _STORE_FILES)
        _link_store_files(path, links, _DATA_FILES)
        Engine.checkpoint(links, into)
        for log in links.glob("*.log"):
            # a copy, not the link: the writer appends to its live log, and a linked log
            # would show each later opener of this checkpoint more than the first one saw
            shutil.copyfile(log, into / log.name)
    finally:
        shutil.rmtree(links, ignore_errors=True)


def _checkpoint_of_files_settled(path: Path, into: Path) -> bool:
    """`_checkpoint_of_files` by the writer itself, between its writes: only its
    background work (a compaction, a flush) moves files then, and a race lost to it is
    tried again. False if it did not succeed (`into` is then absent)."""
    links = into.with_name(into.name + ".links")
    shutil.rmtree(links, ignore_errors=True)  # a killed writer's (each try removes its own)
    for attempt in range(_SNAPSHOT_ATTEMPTS):
        try:
            links.mkdir()
            _checkpoint_of_files(path, links, into)
            return True
        except (OSError, RuntimeError) as exc:
            shutil.rmtree(into, ignore_errors=True)
            # a file system's refusal (no hard links, no space) is no race: RocksDB's turn
            refused = getattr(exc, "errno", None) not in (None, errno.ENOENT)
            if refused or not _lost_race(exc, PUBLISHED_DIR):
                return False
            time.sleep(0.02 * attempt)
    return False
