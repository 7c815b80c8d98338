"""A first ingest into an empty store as one bulk load, fed while the rest is mapped.

Batch by batch, each batch's sorted files land over the whole key range of a store that
keeps growing, and RocksDB rewrites the data once per level it passes: at the archive's
scale the ingest took twice the time of one bulk load of the same quads. Into a store that
holds nothing there is nothing to replace, so `kg ingest` streams every batch through a pipe
into one bulk load instead (`GraphStore.first_load`).

- Oxigraph's loader reads the pipe natively (no interpreter lock) while the next batch is
  mapped, sorts what it reads into files beside the store, and ingests them all in one
  step when the pipe is closed (RocksDB's atomic ingestion). Until then the store holds
  nothing new: readers see the empty store it was, and a crash leaves it empty (the next
  writer removes the loader's files, GraphStore.remove_orphan_bulk_files). No journal.
- What the load cannot do is change what it already read: the ingest streams last the
  units a later rename may move (kg.ingest.aliases), so the load holds final IRIs only.
- A parse error (kg mapped a record into bad N-Quads) ingests nothing; the caller writes
  the run again batch by batch, which isolates the record. A full disk ingests nothing
  either, and stops the run (`DiskFullError`): the batches would fill it again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

from kg.errors import StoreError
from kg.rdf.disk import disk_full_error, is_disk_full
from kg.rdf.engine import Engine

#: Bytes the pipe holds (Linux's F_SETPIPE_SZ): fewer wake-ups than its 64 KiB default.
PIPE_BYTES = 1 << 20

#: Machines with this much memory sort two chunks of a million quads at a time, others one
#: (about 0.6 GB each): at the archive's scale, 720 s and a 4.65 GB peak for the process
#: tree against 904 s and 4.06 GB (docs/performance.md, "One bulk load for a first ingest").
TWO_SORTERS_FROM = 12 << 30

#: A line that never parses: written before closing a load that must not commit.
_POISON = b"\n<\n"


def streaming_available() -> bool:
    """Whether this platform reads a pipe by its /dev/fd name and lets a thread choose its
    CPUs (Linux): elsewhere an ingest writes batch by batch."""
    return sys.platform.startswith("linux") and hasattr(os, "sched_setaffinity")


def sorters() -> int:
    """How many chunks the loader sorts side by side (see TWO_SORTERS_FROM)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 1
    return 2 if memory >= TWO_SORTERS_FROM else 1


class FirstLoadError(StoreError):
    """The first load stopped and stored nothing: the caller may write the run in batches."""


class FirstLoad:
    """One bulk load fed N-Quads through a pipe (see the module docstring). `feed` from one
    thread at a time; then `commit`, or `abort`."""

    def __init__(self, engine: Engine, where: Path | None = None) -> None:
        self._engine = engine
        self._where = where  # the store's folder, for the errors
        self._read_fd, self._write_fd = os.pipe()
        with contextlib.suppress(OSError):  # a smaller pipe only costs wake-ups
            fcntl.fcntl(self._write_fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, name="kg-first-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            self._engine.bulk_load_nquads_stream(self._read_fd, sorters=sorters())
        except BaseException as exc:  # reported by `feed` or `commit`
            self._error = exc
        finally:
            os.close(self._read_fd)  # the feeding side gets EPIPE, not a wait for ever

    def _failure(self, how: str = "stopped") -> StoreError:
        """What stopped the load: a full disk, or a FirstLoadError (the caller may write the
        run in batches)."""
        self._thread.join()
        if self._error is not None and is_disk_full(self._error):
            return disk_full_error(self._where, "nothing of this first load was stored")
        return FirstLoadError(f"the store's first load {how}: {self._error or 'it ended early'}")

    def feed(self, chunks: Iterable[bytes]) -> None:
        """Write N-Quads (whole lines) into the load; waits while the loader catches up.
        FirstLoadError if the loader stopped (nothing of it will be stored), DiskFullError
        if it stopped for want of room."""
        if self._write_fd < 0:
            raise StoreError("the store's first load is over; nothing more can be fed to it")
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                try:
                    written = os.write(self._write_fd, view)
                except BrokenPipeError:
                    raise self._failure() from None
                view = view[written:]

    def commit(self) -> None:
        """End the input: the loader ingests everything it read, in one step."""
        self._close()
        self._thread.join()
        if self._error is not None:
            raise self._failure("failed") from None

    def abort(self) -> None:
        """Stop the load without storing anything of it (its files are removed)."""
        if self._write_fd >= 0:
            with contextlib.suppress(BrokenPipeError):
                os.write(self._write_fd, _POISON)
            self._close()
        self._thread.join()

    def _close(self) -> None:
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1
