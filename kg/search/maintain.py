"""Keeping the index in step with the store: rebuild, open-or-rebuild, and per-batch upkeep.

- `rebuild` reads every searchable entity from the store into a new index beside the old
  one, then swaps it in (readers of the old one keep their open files).
- `open_index` is how readers get an index: the one on disk when it is current, else a
  rebuilt one (a missing index, another schema version, or a writer that died mid-way).
- `Upkeep` is what `kg ingest` drives: `begin` before the first store write, `batch` after
  each batch is in the store (its records' entities re-read from the store and re-indexed,
  the entities whose text lived in dropped graphs re-read or removed), `finish` at the end.
  Into an empty store, the index is built beside the load by a second process instead
  (`kg.search.beside`): each written batch's N-Quads go to it, so at the end only its
  commit is left.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.rdf.store import GraphStore
from kg.search.beside import BesideBuilder
from kg.search.documents import all_documents, documents_of, literal_texts, text_subjects

if TYPE_CHECKING:
    from kg.ingest.ingestor import WrittenBatch

from kg.search.index import (
    Index,
    IndexLock,
    Writer,
    index_path,
    keys_in_graphs,
    leftovers,
    stored_texts,
    swap_in,
)


def _build(store: GraphStore, index: Index) -> int:
    writer = Writer(index)
    writer.begin()
    n = writer.add(all_documents(store))
    writer.finish()
    writer.close()
    return n


def rebuild(store: GraphStore, store_path: Path | None) -> tuple[Index, int]:
    """A new index of everything searchable in `store`; on disk beside it, if it has a path.
    Returns the open index and how many documents it holds."""
    if store_path is None:
        index = Index.memory()
        return index, _build(store, index)
    lock = IndexLock(store_path)
    lock.acquire()
    try:
        for stale in leftovers(store_path):
            shutil.rmtree(stale, ignore_errors=True)
        target = index_path(store_path)
        new = target.with_name(f"{target.name}.new-{os.getpid()}")
        n = _build(store, Index.create(new))
        swap_in(new, target)
        return Index.open(target), n
    finally:
        lock.release()


def open_index(
    store: GraphStore | Callable[[], GraphStore], store_path: Path | None, *, quiet: bool = False
) -> Index:
    """The store's index, rebuilt first when it is missing or stale (`store` may be a
    function that opens the store: it is called only to rebuild)."""
    if store_path is not None:
        path = index_path(store_path)
        if (path / "meta.json").exists():
            index = Index.open(path)
            if index.is_current(IndexLock(store_path)):
                return index
            why = "is stale (an ingest was interrupted, or kg changed its index format)"
        else:
            why = "does not exist yet"
        if not quiet:
            print(f"kg: the search index of {store_path} {why}; building it from the store",
                  file=sys.stderr)
    return rebuild(store if isinstance(store, GraphStore) else store(), store_path)[0]


class Upkeep:
    """Index maintenance during one ingest (the ingest's store is open for writing)."""

    def __init__(self, store: GraphStore, store_path: Path | None) -> None:
        self.store = store
        self.store_path = store_path
        self.lock = IndexLock(store_path) if store_path is not None else None
        self.index: Index | None = None
        self.writer: Writer | None = None
        self.indexed = 0
        self.removed = 0
        #: The index was empty at the start (a first ingest): it is built once at the end,
        #: from the whole store, instead of batch by batch (the README's ingest: 44.8 -> 38.4
        #: CPU-s; a rebuild of all its entities takes 6).
        self.deferred = False
        #: A first ingest into an empty store: the index built by a second process from the
        #: written batches (None when there is none, or once a batch replaced graphs or was
        #: written record by record: then the whole store is read at the end).
        self.beside: BesideBuilder | None = None
        self.child: dict[str, Any] = {}  # what the child said it did (counts, seconds)

    def begin(self) -> None:
        """Before the store changes: a current index, marked dirty while it catches up."""
        if self.store_path is None:
            self.index = Index.memory()
            self.indexed = _build(self.store, self.index)
        elif self.store.found_unpublished_writes:
            # a reader may have rebuilt the index from the older publication and called
            # it clean; the writes it missed are in the store, and no ingest re-indexes
            # records that did not change
            self.index = rebuild(self.store, self.store_path)[0]
        else:
            self.index = open_index(self.store, self.store_path, quiet=True)
        if self.lock is not None:
            self.lock.acquire()
        self.writer = Writer(self.index)
        self.writer.begin()
        self.deferred = self.index.doc_count() == 0
        if self.deferred and self.store_path is not None and self.store.count() == 0:
            self.writer.close()
            self.writer = None  # the child writes the index (one writer at a time)
            self.beside = BesideBuilder(index_path(self.store_path))

    def batch(
        self,
        subjects: Iterable[str],
        dropped_graphs: Iterable[str] = (),
        renamed: Mapping[str, str] | None = None,
    ) -> None:
        """A batch is in the store: re-index `subjects` (entities its records state text or a
        class for), what lived in `dropped_graphs`, and both sides of each rename."""
        assert self.writer is not None and self.index is not None
        affected = set(subjects)
        dropped = list(dropped_graphs)
        if dropped:
            affected |= keys_in_graphs(self.index, dropped)
        for old, new in (renamed or {}).items():
            affected |= {old, new}
        if not affected:
            return
        docs, gone = documents_of(self.store, affected)
        self.writer.delete(gone)
        self.indexed += self.writer.replace(docs)
        self.removed += len(gone)
        self.writer.commit()

    def observe(self, batch: WrittenBatch) -> None:
        """`Ingestor(on_batch=…)`: keep the index in step with one written batch.

        The subjects of the records' own triples are re-read from the store. The subjects of
        shared triples only (the entities graph: an author's name, a method's label, which
        only ever grow) are re-read only when that text is new to their document: most
        batches name thousands of authors and methods the index already has.
        """
        assert self.index is not None
        if self.deferred:
            if self.beside is not None:
                if batch.replaced or not batch.whole:
                    # the store holds more than the lines sent: read it whole at the end
                    self._fall_back()
                else:
                    self.beside.batch(batch.nquads, batch.renamed)
            return
        own = text_subjects(line for m in batch.written for line in m.triples)
        shared_lines = [line for m in batch.written for line in m.shared]
        shared = text_subjects(shared_lines) - own
        if shared:
            known = stored_texts(self.index, sorted(shared))
            for subject, text in literal_texts(shared_lines):
                if subject in shared and text not in known.get(subject, ()):
                    own.add(subject)
        self.batch(own, batch.replaced, batch.renamed)

    def _fall_back(self) -> None:
        """Stop the child (nothing of it committed) and build the index at the end instead."""
        assert self.beside is not None and self.index is not None
        self.beside.abort()
        self.beside = None
        self.writer = Writer(self.index)

    def finish(self) -> None:
        if self.beside is not None:
            try:
                self.child = self.beside.finish()
                self.indexed = int(self.child["indexed"])
            finally:
                self.beside = None
                if self.lock is not None:
                    self.lock.release()
            return
        if self.writer is not None:
            if self.deferred:  # the whole store is in: every entity, once
                self.indexed = self.writer.add(all_documents(self.store))
            self.writer.finish()
            self.writer.close()
            self.writer = None
        if self.lock is not None:
            self.lock.release()

    def abort(self) -> None:
        """The ingest failed: what was indexed is committed, the index stays marked dirty
        (the next reader rebuilds it, unless the next ingest brings it up to date)."""
        if self.beside is not None:
            self.beside.abort()
            self.beside = None
        self.writer = None
        if self.lock is not None:
            self.lock.release()
