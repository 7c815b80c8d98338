"""The store: a kg knowledge graph in Oxigraph, on disk or in memory, as the library uses it.

`GraphStore` is what the rest of kg opens, writes and reads. It brings together the rooms
of kg.rdf that each keep one promise, and talks to Oxigraph only through kg.rdf.engine (the
one module that imports pyoxigraph):

- kg.rdf.merge: the default graph holds the merge of the named graphs, each triple once;
- kg.rdf.journal: writes are journalled, and a writer recovers what a crash cut short;
- kg.rdf.first_load: into an empty store, one bulk load stored whole at its end (no journal);
- kg.rdf.snapshots: the writer publishes a checkpoint at the end of each whole write (in an
  ingest, at most about a tenth of its time: `publishing_in_bulk`), and readers beside it
  open the newest one, pinned: they see whole writes only;
- kg.rdf.compaction: a compaction in place when it pays, or a compact copy;
- kg.rdf.store_export: the store read out whole (dumps, N-Quads/N-Triples, digests).
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TypeVar

from kg.errors import StoreBusyError, StoreError, StoreMissingError
from kg.rdf import journal, merge, snapshots, stamp
from kg.rdf.compaction import COMPACT_FROM as COMPACT_FROM
from kg.rdf.compaction import COMPACT_GROWTH as COMPACT_GROWTH
from kg.rdf.compaction import Compaction as Compaction
from kg.rdf.compaction import compact_copy, compaction_pays
from kg.rdf.disk import said_if_full
from kg.rdf.engine import (
    Engine,
    QueryDataset,
    check_query_text,
    lower_compaction_priority,
    supports_datasets,
)
from kg.rdf.first_load import FirstLoad, streaming_available
from kg.rdf.results import AskResult, GraphResult, QueryResult, SelectStream, Term
from kg.rdf.sparql_scan import scan
from kg.rdf.store_export import StoreExport
from kg.rdf.vocab import JOURNAL_GRAPH

T = TypeVar("T")


class GraphStore(StoreExport):
    """An Oxigraph store, on disk or in memory, as kg uses it."""

    def __init__(self, engine: Engine, path: Path | None, read_only: bool) -> None:
        self._engine = engine
        self.path = path
        self.read_only = read_only
        self._pin: Path | None = None  # the checkpoint a pinned snapshot reads (see open)
        self._journal_present: bool | None = None  # read-only: a crashed batch's journal
        self._keeps_merge: bool | None = None  # see keeps_merge
        self._writes = 0  # writes in progress, nested (see _committing)
        self._signature: snapshots.Signature | None = None  # the publication read (see open)
        #: A writer died between a write and its publication: readers saw an older version
        #: than this store holds, and what they derived from it may be behind (set by open).
        self.found_unpublished_writes = False
        #: Seconds spent publishing the store for its readers so far (an ingest's timings).
        self.publish_seconds = 0.0
        self._in_bulk = 0  # runs of writes whose publications may wait (publishing_in_bulk)
        self._unpublished = False  # a write of such a run is not published yet
        self._published_at = 0.0  # when the last publication ended (perf_counter)
        self._publication_took = 0.0  # and how long it took

    @classmethod
    def memory(cls) -> GraphStore:
        return cls(Engine.memory(), None, False)

    @classmethod
    def open(cls, path: Path | None, *, read_only: bool = False) -> GraphStore:
        """Open (or create, for writing) the store at `path`; `None` gives a memory store."""
        if path is None:
            return cls.memory()
        path = Path(path)
        if read_only:
            if not (path / "CURRENT").exists():
                raise StoreMissingError(
                    f"no kg store at {path}: build one with `kg --store {path} ingest FILES`"
                )
            stamp.check(path)
            engine, pin, signature = snapshots.open_snapshot(path)
            snapshot = cls(engine, path, True)
            snapshot._pin, snapshot._signature = pin, signature
            return snapshot
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path} is a file, not a store directory; pick another --store path")
        fresh = not (path / "CURRENT").exists()
        if fresh and path.is_dir() and not (path / stamp.VERSION_FILE).exists():
            others = sorted(p.name for p in path.iterdir())
            if others:
                raise StoreError(
                    f"{path} is a folder that holds other files ({', '.join(others[:3])}"
                    f"{', …' if len(others) > 3 else ''}) and no kg store: kg will not write "
                    "its store among them; pick a new or empty folder for --store"
                )
        if fresh:
            try:
                stamp.stamp(path)
            except OSError as exc:
                raise StoreError(f"cannot create a store at {path}: {exc}") from None
        else:
            stamp.check(path)
        try:
            store = cls(Engine.open(path), path, False)
        except OSError as exc:
            if "lock" in str(exc).lower() or "temporarily unavailable" in str(exc).lower():
                raise StoreBusyError(
                    f"the store at {path} is busy: another kg process is writing to it. "
                    "Wait for it to finish, or run read-only commands (query, export, serve), "
                    "which open a snapshot beside the writer."
                ) from None
            raise StoreError(f"cannot open the store at {path}: {exc}") from None
        if fresh:
            merge.mark_merge_only(path)
        store.found_unpublished_writes = snapshots.PUBLISHING and snapshots.has_unpublished(path)
        store.recover()  # publishes what it leaves (or what a killed writer wrote after
        # its last publication) before any reader of this writer's time opens the store
        store.remove_orphan_bulk_files()
        snapshots.remove_stale_pins(path)
        return store

    @classmethod
    def share_snapshot(cls, path: Path) -> tuple[Path | None, bool]:
        """Pin a read-only snapshot for other processes to open with `open_shared`.

        Returns (its directory, whether an ingest batch is half-written in it). The
        directory is None when the store directory cannot be pinned (read-only); the
        caller owns the pin and removes it with `release_snapshot`. Every process that
        opens one pin sees exactly the same data, which is how `kg serve` moves all its
        workers to a new version together.
        """
        store = cls.open(path, read_only=True)
        pin, store._pin = store._pin, None
        try:
            pending = store.has_graph(JOURNAL_GRAPH)
        finally:
            store.close()
        return pin, pending

    @classmethod
    def open_shared(cls, pin: Path, path: Path) -> GraphStore:
        """Open a snapshot pinned by `share_snapshot` (its owner removes it, not this)."""
        try:
            return cls(Engine.read_only(pin), Path(path), True)
        except (OSError, RuntimeError) as exc:
            raise StoreError(f"cannot open the snapshot {pin} of {path}: {exc}") from None

    @staticmethod
    def release_snapshot(pin: Path) -> None:
        snapshots.release(pin)

    def reading(self, operation: Callable[[], T]) -> T:
        """Run a read, again on a fresh snapshot if a writer removed files this one needs.

        A read-only snapshot opens its table files lazily, and a writer beside it (an
        ingest) compacts and deletes files, so a query on an older snapshot can fail with
        "No such file or directory". The read is run once more on a new snapshot (which
        sees newer data, never older); pass a callable that is safe to run twice.
        """
        try:
            return operation()
        except (OSError, RuntimeError) as exc:
            if not (self.read_only and self.path is not None and snapshots.vanished(exc)):
                raise
        fresh = GraphStore.open(self.path, read_only=True)
        old_pin = self._pin
        self._engine, self._pin, fresh._pin = fresh._engine, fresh._pin, None
        self._signature = fresh._signature
        self._journal_present = None
        if old_pin is not None:
            snapshots.release(old_pin)
        try:
            return operation()
        except (OSError, RuntimeError) as exc:
            if not snapshots.vanished(exc):
                raise
            raise StoreError(
                f"the store at {self.path} changed under this reader twice; run it again"
            ) from None

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        # No flush: the logs keep what the memtables hold, and a flush waits for the compaction
        # when level 0 is nearly full, which a closing writer leaves to the next (snapshots)
        if not self.read_only and self.path is not None:
            if self._writes == 0:
                self.publish_pending()
            # the last publication again, without the tables compacted away since; never
            # a write that failed half-way (its journal): readers keep the last whole one
            if (
                snapshots.PUBLISHING
                and self._writes == 0
                and snapshots.is_stale(self.path)
                and not self._engine.has_graph(JOURNAL_GRAPH)
            ):
                self.publish()
        del self._engine
        if self._pin is not None:
            snapshots.release(self._pin)
            self._pin = None

    def __len__(self) -> int:
        """The number of quads in all graphs."""
        return len(self._engine)

    def signature(self) -> snapshots.Signature:
        """What changes exactly when the data changes (kg.rdf.snapshots.store_signature):
        for a snapshot of a publication, that publication's, whatever the writer has
        published since; else the store directory's now (empty for a memory store)."""
        if self._signature is not None:
            return self._signature
        return () if self.path is None else snapshots.store_signature(self.path)

    def version(self) -> int | None:
        """The version of kg's mapping and layout that wrote the store (kg.rdf.stamp);
        None for a memory store."""
        return None if self.path is None else stamp.read_version(self.path)

    def size_on_disk(self) -> int | None:
        """Bytes the store directory holds (kg.rdf.stamp.size_on_disk); None in memory."""
        return None if self.path is None else stamp.size_on_disk(self.path)

    # -- writing ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def _committing(self) -> Iterator[None]:
        """Around each write that leaves the store whole: when the outermost one ends well,
        publish the store for readers (kg.rdf.snapshots.publish). A write that fails
        publishes nothing: readers keep the last whole version, and the next writer
        recovers and publishes."""
        path = None if self.read_only else self.path  # (a read-only store's write fails)
        if self._writes == 0 and path is not None and snapshots.PUBLISHING:
            snapshots.mark_unpublished(path)
        self._writes += 1
        try:
            with said_if_full(path, "what it was writing is not stored"):
                yield
        finally:
            self._writes -= 1
        if self._writes == 0 and self.path is not None and not self.read_only:
            if self._in_bulk and self._publication_can_wait():
                self._unpublished = True
            else:
                self.publish()

    def _publication_can_wait(self) -> bool:
        since = time.perf_counter() - self._published_at
        return since < snapshots.PUBLISH_GAP * self._publication_took

    @contextlib.contextmanager
    def publishing_in_bulk(self) -> Iterator[None]:
        """Around a run of many writes (an ingest's batches): a write's publication may
        wait for a later one's (see snapshots.PUBLISH_GAP), so readers see whole writes a
        little later and the run spends at most about a tenth of its time publishing. What
        the run wrote is published when it ends, unless its last write failed half-way."""
        self._in_bulk += 1
        try:
            yield
        finally:
            self._in_bulk -= 1
            if not self._in_bulk:
                self.publish_pending()

    def publish_pending(self) -> None:
        """Publish the writes whose publication waited, unless a write failed half-way
        (its journal): readers keep the last whole version, and the next writer recovers."""
        if self._unpublished and not self._engine.has_graph(JOURNAL_GRAPH):
            self.publish()

    def publish(self) -> None:
        """Publish what the store holds now as the version readers open (see
        kg.rdf.snapshots): the writer does it at the end of every write it makes."""
        if self.path is None or not snapshots.PUBLISHING:
            return
        start = time.perf_counter()
        try:
            snapshots.publish(self._writable(), self.path)
            self._unpublished = False
        except (OSError, RuntimeError) as exc:
            raise StoreError(
                f"cannot publish the store at {self.path} for its readers ({exc}); "
                "the write itself is stored, and the next writer publishes it"
            ) from None
        finally:
            self._published_at = time.perf_counter()
            self._publication_took = self._published_at - start
            self.publish_seconds += self._publication_took

    def _writable(self) -> Engine:
        if self.read_only:
            raise StoreError("this store was opened read-only")
        return self._engine

    def recover(self) -> int:
        """Undo the batch a crash left half-written (see kg.rdf.journal). Returns how
        many graphs it dropped."""
        with self._committing():
            return journal.recover(
                self._writable(), keeps_merge=self.keeps_merge, rebuild_merge=self.rebuild_merge
            )

    def keeps_merge(self) -> bool:
        """Whether the default graph holds the merge of the named graphs: false only for a
        store written before kg kept it (named graphs, an empty default graph)."""
        if self._keeps_merge is None:
            self._keeps_merge = merge.keeps_merge(self._engine)
        return self._keeps_merge

    def rebuild_merge(self) -> None:
        """Fill the default graph with the merge of every named graph (not the journal), in
        bulk: for a store written before kg kept the merge, and after a bulk import. The
        journal marks it in flight, so a crash makes the next writer run it again."""
        with self._committing():
            journal.rebuild_merge(self._writable())
            self._keeps_merge = True

    def remove_orphan_bulk_files(self) -> int:
        """Delete the `bulk-*.sst` files a killed bulk load left behind. Returns how many.

        The bulk loader writes them into the store directory and moves them in when it
        finishes; after a SIGKILL they stay forever (hundreds of MB per kill). Only a writer
        may call this (it holds the store's lock, so no bulk load is running). A file that
        was already moved in is a second link to a live table: unlinking the name is safe.
        """
        self._writable()
        if self.path is None:
            return 0
        removed = 0
        for orphan in self.path.glob("bulk-*.sst"):
            orphan.unlink(missing_ok=True)
            removed += 1
        return removed

    @staticmethod
    def part_count(quads: int) -> int:
        """How many parts a batch of `quads` is best written in (see `write_batch`)."""
        return journal.part_count(quads)

    def write_batch(
        self,
        nquads: bytes | list[bytes],
        graphs: Iterable[str],
        replace: Iterable[str] = (),
        shared: Iterable[str] = (),
        *,
        merges: list[bytes] | None = None,
    ) -> None:
        """Load a batch of N-Quads whose records live in `graphs`, replacing `replace` first.

        `nquads` may also hold triples for the `shared` graphs (the entities graph); those
        are set-merged. Every triple also goes into the default graph, which stays the merge
        of all graphs. See kg.rdf.journal for why this is crash-safe. Readers see the batch
        once it is whole: it is published at its end (after the journal is cleared).

        `nquads` may come in parts (`part_count` says how many pay), loaded side by side,
        each atomically: a part should hold whole records and the shared triples they state.
        `merges` may give each part's lines for the default graph (kg.rdf.merge.merge_lines
        of it, made by the caller more cheaply); else they are derived from the text.
        """
        with self._committing():
            journal.write_batch(
                self._writable(),
                nquads,
                graphs,
                replace,
                shared,
                recover=self.recover,
                where=self.path,
                merges=merges,
            )

    def can_load_first(self) -> bool:
        """Whether the next write may be a first load (`first_load`): the store holds no
        quad at all, and the platform can stream one (kg.rdf.first_load.streaming_available)."""
        return streaming_available() and not self.read_only and self._engine.is_empty()

    @contextlib.contextmanager
    def first_load(self) -> Iterator[FirstLoad]:
        """Into an empty store (`can_load_first`): one bulk load of all fed to it, stored
        whole when the block ends or not at all (kg.rdf.first_load). Feed it the merge lines
        of what it states too (`write_batch`'s merges): the store keeps no journal for it."""
        if not self.can_load_first():
            raise StoreError("a first load needs an empty store; write batches instead")
        with self._committing():
            load = FirstLoad(self._writable(), self.path)
            try:
                yield load
            except BaseException:
                load.abort()
                raise
            load.commit()

    def load(
        self,
        data: bytes | IO[bytes],
        fmt: str,
        *,
        graph: str | None = None,
        base_iri: str | None = None,
    ) -> None:
        """Load RDF in any format, atomically (one transaction). Triples that land in a
        named graph (`graph`, or a dataset format's graphs) also join the default graph's
        merge, in the same transaction."""
        parsed = self._engine.parse(data, fmt, graph=graph, base_iri=base_iri)
        engine = self._writable()
        if parsed.states_default:
            merge.may_state_own_default(self.path)
        with self._committing():
            engine.extend(parsed)

    def bulk_load(self, data: bytes, fmt: str) -> None:
        """Load RDF in any format with Oxigraph's bulk loader: several times faster than
        `load`, but not atomic, so only for a fresh store (re-importing an export). The
        default graph's merge is rebuilt afterwards."""
        with self._committing():
            engine = self._writable()
            had_default = engine.default_graph_is_nonempty()
            try:
                engine.bulk_load(data, fmt)
            finally:
                if had_default or engine.default_graph_is_nonempty():
                    # the data may state triples of the default graph
                    merge.may_state_own_default(self.path)
            if supports_datasets(fmt):
                self.rebuild_merge()

    def remove_graph(self, graph: str) -> None:
        """Drop a named graph; its triples leave the default graph unless another graph
        still states them (one transaction)."""
        with self._committing():
            self._writable().update(journal.retraction([graph], journal=False))

    def update(self, sparql: str) -> None:
        """Run a SPARQL update; in the same transaction, what it inserted into named graphs
        joins the default graph's merge (a scan of the named graphs). What it deletes from a
        named graph stays in the merge: drop or re-ingest graphs through kg for that."""
        with self._committing():
            check_query_text(sparql)
            merge.may_state_own_default(self.path)
            self._writable().update(f"{sparql}\n;\n{merge.MERGE_MISSING}")

    def flush(self) -> None:
        self._writable().flush()

    def compact_in_spare_time(self) -> int:
        """The engine compacts at the lowest CPU priority for the rest of this process
        (kg.rdf.engine.lower_compaction_priority); how many of its threads were lowered."""
        self._writable()
        return lower_compaction_priority()

    def optimize(self) -> None:
        with self._committing():
            self._writable().optimize()

    def compact_if_it_pays(
        self, grown_from: int, *, at_least: int | None = COMPACT_FROM
    ) -> Compaction | None:
        """After a large write (an ingest that found the store at `grown_from` bytes on
        disk), compact the store in place when that pays: it holds at least `at_least`
        bytes (None: never) and grew by COMPACT_GROWTH of them. Readers keep their
        snapshot meanwhile, and see the compacted store (the same data) once published.
        Returns what the compaction did, or None when it did not run."""
        if at_least is None or self.path is None or self.read_only:
            return None
        before = stamp.size_on_disk(self.path)
        if not compaction_pays(before, grown_from, at_least):
            return None
        start = time.perf_counter()
        self.optimize()
        return Compaction(before, stamp.size_on_disk(self.path), time.perf_counter() - start)

    def rename_iris(self, renames: Mapping[str, str]) -> int:
        """Rewrite each `old` IRI to `new` in every graph, in one atomic update.

        Nodes minted beneath `old` (`old/result/…`, found by following its links) move with
        it, in the named graphs and in the default graph's merge. Returns how many quads of the
        named graphs were rewritten.
        """
        with self._committing():
            return self._writable().rename_iris(renames)

    def rebuild(self, into: Path, *, beside: Iterable[str] = ()) -> Compaction:
        """Write a compact copy of the store into the new directory `into`: every quad
        dumped as N-Quads and bulk-loaded in one go. The copy needs about a third less disk
        than a store built batch by batch, below a few GB (docs/performance.md): RocksDB's
        own compactions, during an ingest and in `optimize`, write the base level
        uncompressed, as Oxigraph configures it, while one bulk load writes it compressed.
        (Past COMPACT_FROM a store is compacted in place instead: `compact_if_it_pays`.)
        The store itself is only
        read, so its readers are undisturbed; the copy appears under its name only when
        whole (a kill leaves a `.<name>.partial-<pid>` directory, removed by the next
        rebuild). The directories named in `beside` (kept in the store directory by the
        layers above, as the search index) are copied along.
        """
        engine = self._writable()  # the one writer: nothing changes while we dump
        if self.path is None:
            raise StoreError("a memory store has no files to rebuild")
        return compact_copy(engine, self.path, Path(into), beside)

    # -- reading ---------------------------------------------------------------------------
    def graph_hashes(self, graphs: list[str]) -> dict[str, str]:
        """The stored `kg:contentHash` of each of `graphs` that exists."""
        return self._engine.graph_hashes(graphs)

    def named_graphs(self) -> Iterator[str]:
        yield from self._engine.named_graphs()

    def holds_graphs(self) -> bool:
        """Whether any named graph is stored (the journal aside)."""
        return self._engine.has_graph_besides(JOURNAL_GRAPH)

    def has_graph(self, graph: str) -> bool:
        return self._engine.has_graph(graph)

    def subjects_with(self, predicate: str, value: str) -> list[str]:
        """IRIs (sorted) of the subjects with `predicate` "value" (a plain string), any graph."""
        return self._engine.subjects_with(predicate, value)

    def literal_values(self, subject: str, predicate: str) -> list[str]:
        """The lexical forms of `subject`'s `predicate` literals, any graph."""
        return self._engine.literal_values(subject, predicate)

    def _dataset(
        self,
        sparql: str,
        union: bool,
        default_graphs: list[str] | None,
        named_graphs: list[str] | None,
    ) -> QueryDataset:
        """The query dataset, as SPARQL 1.1 and its protocol define it.

        Without FROM / FROM NAMED in the query and without protocol graphs, the default
        graph is the store's real default graph: the merge of all graphs, each triple once
        (a store written before kg kept the merge falls back to Oxigraph's union, a bag).
        `default_graphs` replace it; `named_graphs` alone leave it empty, as the protocol
        says. `union=False` asks for the real default graph whatever the store keeps.
        """
        dataset = QueryDataset()
        if default_graphs is not None:
            dataset.default_graphs = list(default_graphs)
        elif named_graphs is not None:
            dataset.default_graphs = []
        elif union and not self.keeps_merge() and not scan(sparql).has_dataset:
            dataset.union = True  # a FROM / FROM NAMED overrides it
        if named_graphs is not None:
            dataset.named_graphs = list(named_graphs)
        return dataset

    def _hide_journal(self, dataset: QueryDataset) -> None:
        """Keep a crashed batch's journal graph out of a read-only snapshot's queries.

        A writer clears the journal when it opens the store; until then a reader's snapshot
        still holds it, and the union default graph (and GRAPH ?g) would show its
        kg:pendingLoad quads. Only snapshots taken of a crashed store pay for listing the
        graphs (checked once per snapshot).
        """
        if not self.read_only:
            return
        if self._journal_present is None:
            self._journal_present = self._engine.has_graph(JOURNAL_GRAPH)
        if not self._journal_present:
            return
        graphs = list(self.named_graphs())
        if dataset.union:
            dataset.union = False
            dataset.default_graphs = [None, *graphs]
        if dataset.named_graphs is None:
            dataset.named_graphs = graphs

    def _prepare(
        self,
        sparql: str,
        union: bool,
        default_graphs: list[str] | None,
        named_graphs: list[str] | None,
        *,
        check: bool = True,
    ) -> QueryDataset:
        if check:  # the limits meant for user text, not for the queries kg builds itself
            check_query_text(sparql)
        dataset = self._dataset(sparql, union, default_graphs, named_graphs)
        if dataset.default_graphs is None and not scan(sparql).has_dataset:
            self._hide_journal(dataset)
        return dataset

    def query(
        self,
        sparql: str,
        *,
        substitutions: Mapping[str, Term] | None = None,
        union: bool = True,
        default_graphs: list[str] | None = None,
        named_graphs: list[str] | None = None,
        limit: int | None = None,
    ) -> QueryResult:
        """Run SPARQL; the default graph is the union of all graphs unless told otherwise."""
        return self.reading(
            lambda: self._query(
                sparql,
                substitutions=substitutions,
                union=union,
                default_graphs=default_graphs,
                named_graphs=named_graphs,
                limit=limit,
            )
        )

    def _query(
        self,
        sparql: str,
        *,
        substitutions: Mapping[str, Term] | None = None,
        union: bool = True,
        default_graphs: list[str] | None = None,
        named_graphs: list[str] | None = None,
        limit: int | None = None,
    ) -> QueryResult:
        """Run SPARQL; the default graph is the union of all graphs unless told otherwise."""
        subs = Engine.bindings(substitutions)
        dataset = self._prepare(sparql, union, default_graphs, named_graphs)
        return self._engine.query(sparql, subs, dataset, limit)

    def stream(
        self, sparql: str, *, substitutions: Mapping[str, Term] | None = None
    ) -> SelectStream | AskResult | GraphResult:
        """Run SPARQL as `query` does, a SELECT's rows read lazily as the engine yields them
        (for writers that print each row as it comes: `kg sparql` on a large result)."""
        subs = Engine.bindings(substitutions)
        return self._engine.stream(sparql, subs, self._prepare(sparql, True, None, None))

    def select_values(self, sparql: str, *, union: bool = True) -> Iterator[tuple[str | None, ...]]:
        """Stream a SELECT's rows as plain lexical values (None where unbound).

        For bulk reads (millions of rows) where `query`'s typed terms cost more than the
        values: no term objects are built and nothing is held beyond the current row.
        For kg's own queries only: the length and depth limits meant for user queries do not
        apply (a VALUES block of stored IRIs may be long however it is chunked).
        """
        dataset = self._prepare(sparql, union, None, None, check=False)
        yield from self._engine.select_values(sparql, dataset)

    def query_into(
        self,
        sparql: str,
        output: io.RawIOBase | IO[bytes],
        *,
        results_type: str,
        graph_type: str,
        substitutions: Mapping[str, Term] | None = None,
        union: bool = True,
        default_graphs: list[str] | None = None,
        named_graphs: list[str] | None = None,
        prefixes: Mapping[str, str] | None = None,
    ) -> tuple[str, str]:
        """Run SPARQL and serialise natively into `output` as the results stream.

        SELECT/ASK results are written as `results_type`, CONSTRUCT/DESCRIBE as `graph_type`
        (media types). An exception raised by `output.write` stops the query, so a writer
        that counts bytes enforces a size limit. Returns (media type, result kind), the kind
        being "boolean", "solutions" or "graph".
        """
        subs = Engine.bindings(substitutions)
        dataset = self._prepare(sparql, union, default_graphs, named_graphs)
        return self._engine.query_into(
            sparql,
            subs,
            dataset,
            output,
            results_type=results_type,
            graph_type=graph_type,
            prefixes=prefixes,
        )

    def count(self, graph: str | None = None) -> int:
        """The quads of one named graph, or of all of them: what the sources state, each
        statement in its graph (neither the journal nor the default graph's merge)."""
        if graph is None:
            journal_size = self._engine.graph_size(JOURNAL_GRAPH)
            merge_size = self.merge_size() if self.derived_default() else 0
            return len(self._engine) - journal_size - merge_size
        return self._engine.graph_size(graph)

    def merge_size(self) -> int:
        """The triples of the default graph: the distinct triples of all graphs."""
        return self._engine.merge_size()

    def derived_default(self) -> bool:
        """Whether the default graph is derived (the merge of the named graphs, which then
        exist) rather than data of its own (a memory store of a CONSTRUCT result)."""
        return self.keeps_merge() and self._engine.has_graph_besides(JOURNAL_GRAPH)
