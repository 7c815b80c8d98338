"""Compaction of a store: in place when it pays, or into a compact copy.

RocksDB, as Oxigraph configures it, leaves much of an ingest uncompressed; a full
compaction (`GraphStore.optimize`) or one bulk load into a fresh directory writes it
compressed (docs/performance.md). GraphStore.compact_if_it_pays and GraphStore.rebuild
decide and run them with what is here.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kg.errors import StoreError
from kg.rdf import merge, snapshots, stamp
from kg.rdf.engine import Engine
from kg.rdf.vocab import JOURNAL_GRAPH

#: From this many bytes on disk, a full compaction after a large ingest pays (see
#: `compact_if_it_pays`), for its readers and, past 6 GiB, for the disk.
#:
#: Readers: an ingest runs the engine's compactions at the lowest priority
#: (`lower_compaction_priority`) and ends with many of them pending, so the store it leaves
#: (the publication `kg serve` opens) reads through many level-0 files. At a tenth of the
#: archive (1.6 GB) a paper's quads took 1-3 ms instead of 0.35 ms once compacted, and the
#: entity pages' p95 was 1.7-3.7x (task 241 against 65 ms); the compaction took 9-11 s. The
#: README's store (201 MB, a few batches) has nothing pending (0.17 against 0.16 ms).
#:
#: The disk: as Oxigraph configures RocksDB (dynamic level sizes, a 512 MiB base, LZ4 from
#: the level below the base down), the last level of an index is compressed only once the
#: index is past 512 MiB; an ingest leaves most of its data uncompressed in the base level
#: above it, and a full compaction moves it down, compressed: the archive's store went from
#: 17,282 to 10,125 MiB in 195 s. Below about 6 GiB the last level is the base itself,
#: uncompressed, and a compaction only rewrites it (+2.4 % at a tenth of the archive).
COMPACT_FROM = 512 * 2**20
#: ...and when the writes since the last compaction grew the store by at least this share:
#: a small ingest into a large store leaves little uncompressed, and a compaction rewrites
#: every index (195 s at the archive's size).
COMPACT_GROWTH = 0.25


@dataclass(frozen=True)
class Compaction:
    """What one compaction (`GraphStore.rebuild`, `GraphStore.compact_if_it_pays`) did: the
    store's bytes on disk before, the copy's or the store's after, and the seconds it took."""

    bytes_before: int
    bytes_after: int
    seconds: float

    def as_dict(self) -> dict[str, int | float]:
        return {
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "seconds": round(self.seconds, 3),
        }


def compaction_pays(size: int, grown_from: int, at_least: int) -> bool:
    """Whether compacting a store of `size` bytes, which an ingest found at `grown_from`,
    pays: it holds at least `at_least` bytes and grew by COMPACT_GROWTH of them."""
    return size >= at_least and size - grown_from >= COMPACT_GROWTH * size


def compact_copy(engine: Engine, path: Path, into: Path, beside: Iterable[str]) -> Compaction:
    """Write a compact copy of the store at `path` (open as `engine`, its one writer) into
    the new directory `into` (see GraphStore.rebuild)."""
    into = Path(into)
    if into.exists():
        raise StoreError(f"{into} exists: give a new directory for the compact copy")
    if engine.has_graph(JOURNAL_GRAPH):  # cannot be: a writer recovers on opening
        raise StoreError(f"the store at {path} has a batch in flight; open it again")
    into.parent.mkdir(parents=True, exist_ok=True)
    for stale in into.parent.glob(f".{into.name}.partial-*"):
        shutil.rmtree(stale, ignore_errors=True)
    partial = into.with_name(f".{into.name}.partial-{os.getpid()}")
    dump = partial / "dump.nq"
    before = stamp.size_on_disk(path)
    start = time.perf_counter()
    try:
        stamp.stamp(partial)  # before the store's first file, as `open` does
        engine.dump_nquads_file(dump)
        copy = Engine.open(partial)
        copy.bulk_load_nquads_file(dump)
        copy.flush()
        if snapshots.PUBLISHING:  # its readers open it as any store's
            snapshots.publish(copy, partial)
        del copy
        dump.unlink()
        if merge.merge_only(path):
            merge.mark_merge_only(partial)
        for name in beside:
            if (path / name).is_dir():
                shutil.copytree(path / name, partial / name)
        os.rename(partial, into)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return Compaction(before, stamp.size_on_disk(into), time.perf_counter() - start)
