"""Ingest: read inputs, map each item, and write batches into the store.

A record is the unit of change: it is added, updated (its graph replaced whole),
unchanged (same content hash: nothing is written) or rejected (one error naming the file,
the record and the field; the rest of the batch still lands).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kg.config import BATCH_QUADS, FIRST_LOAD_BATCH_QUADS, FIRST_LOAD_FROM, MAX_ARRAY_ITEMS
from kg.errors import DiskFullError, KgError, RecordError, StoreError, UsageError
from kg.ingest.aliases import PaperAliases
from kg.ingest.dumps import DUMP_KINDS
from kg.ingest.identity import Iris
from kg.ingest.manifest import read_manifest
from kg.ingest.mapping import WEB_SCHEMES, Context, Kind, Mapped, map_record, web_iri
from kg.ingest.reader import Item, ReadPosition, expand, gzip_date, read_items
from kg.ingest.report import IngestReport as IngestReport
from kg.ingest.report import WrittenBatch as WrittenBatch
from kg.ingest.report import ingest_time as ingest_time
from kg.ingest.seen import SeenGraphs
from kg.ingest.values import iso_date
from kg.rdf.first_load import FirstLoad, FirstLoadError
from kg.rdf.limits import lower_this_thread, rare_full_collections, return_freed_memory
from kg.rdf.merge import merge_lines
from kg.rdf.store import COMPACT_FROM, GraphStore


def _looks_like_record(value: Any) -> bool:
    return isinstance(value, dict) and bool(
        {"url", "arxiv_id", "title"} & value.keys() or {"code_links", "syntology"} & value.keys()
    )


#: Input kinds by name: records, then the dump kinds (kg.ingest.dumps).
KINDS: dict[str, Kind] = {
    "record": Kind("record", _looks_like_record, lambda value, ctx: [map_record(value, ctx)]),
    **{kind.name: kind for kind in DUMP_KINDS},
}


def detect_kind(value: Any) -> Kind:
    """The kind of a file, from its first item. Specific kinds are tried before records."""
    for kind in sorted(KINDS.values(), key=lambda k: k.name == "record"):
        if kind.detect(value):
            return kind
    return KINDS["record"]


#: Records read between two progress reports (besides one after each written batch).
_PROGRESS_EVERY = 500


#: How many entities-graph triples a run remembers as written (about 150 MB at most).
_SHARED_MEMORY = 1_000_000


def _option_iri(value: str | None, name: str) -> str | None:
    """A licence or attribution IRI the user gave, checked (the error names the option)."""
    if value is None:
        return None
    try:
        return web_iri(value, name)
    except RecordError as exc:
        raise UsageError(
            f"{{parameter}} {value!r} is not an absolute IRI ({exc.message})", parameter=name
        ) from None


def _manifest_iri(value: str | None) -> str | None:
    """An IRI a manifest gives, when it is one (a manifest is input like any other); a file
    URL too, since `kg fetch` reads a local mirror through one."""
    if not value:
        return None
    try:
        return web_iri(value, "manifest", WEB_SCHEMES | {"file"})
    except RecordError:
        return None


def check_options(
    *, kind: str | None, snapshot: str | None, licence: str | None, attribution: str | None
) -> tuple[str | None, str | None]:
    """A run's options checked before any store is opened (a typo creates no store); the
    licence and attribution IRIs as the run keeps them."""
    if kind is not None and kind not in KINDS:
        raise UsageError(
            f"unknown {{parameter}} {kind!r}; use one of: {', '.join(sorted(KINDS))}",
            parameter="kind",
        )
    if snapshot is not None and iso_date(snapshot) != snapshot:
        raise UsageError(
            f"{{parameter}} {snapshot!r} is not a date: give YYYY-MM-DD",
            parameter="snapshot",
        )
    return _option_iri(licence, "licence"), _option_iri(attribution, "attribution")


@dataclass
class _Unit:
    mapped: Mapped
    source: str
    locator: str


def _count_behind(store: GraphStore) -> int:
    """The store's quads, counted at the lowest priority (see `Ingestor.run`)."""
    lower_this_thread()
    return store.count()


class Ingestor:
    """Maps and writes items in batches. One instance per run."""

    def __init__(
        self,
        store: GraphStore,
        iris: Iris,
        *,
        batch_size: int = 20_000,
        batch_quads: int = BATCH_QUADS,
        strict: bool = False,
        kind: str | None = None,
        snapshot: str | None = None,
        max_items: int = MAX_ARRAY_ITEMS,
        licence: str | None = None,
        attribution: str | None = None,
        on_error: Callable[[RecordError], None] | None = None,
        on_progress: Callable[[IngestReport], None] | None = None,
        on_batch: Callable[[WrittenBatch], None] | None = None,
        on_written: Callable[[], None] | None = None,
        compact_from: int | None = COMPACT_FROM,
        first_load: bool | None = None,
    ) -> None:
        self.compact_from = compact_from  # see GraphStore.compact_if_it_pays
        # into an empty store, one bulk load of the whole run (kg.rdf.first_load): always
        # (True), never (False), or for inputs of FIRST_LOAD_FROM bytes or more (None)
        self.first_load = first_load
        self.licence, self.attribution = check_options(
            kind=kind, snapshot=snapshot, licence=licence, attribution=attribution
        )
        self.snapshot, self.max_items, self.store, self.iris = snapshot, max_items, store, iris
        self.batch_size = batch_size
        self.batch_quads = batch_quads
        self.strict = strict
        self.kind = kind
        self.on_error = on_error
        self.on_progress = on_progress
        self.on_batch = on_batch
        # once every batch is in, before the compaction: what follows the batches (the
        # search index's last commit) ends there and frees its memory before the peak
        self.on_written = on_written
        self.report = IngestReport()
        self.ingested_at = ingest_time()
        self._seen = SeenGraphs()  # the graphs of this run, for its duplicates
        self._shared_written: set[str] = set()  # entities-graph triples written in this run
        # (the load, its units, the graphs it replaces, the quads it writes, their N-Quads)
        self._in_flight: (
            tuple[Future[None] | None, list[_Unit], list[str], int, list[bytes]] | None
        ) = None
        self._entities = iris.entities_graph()
        self._position: ReadPosition | None = None
        self._stored_before = True  # whether the store held graphs when the run began
        self._loading: FirstLoad | None = None  # the run's first load, when it is one
        self._held: IO[bytes] | None = None  # N-Quads it streams last (`_batch_nquads`)
        self._pass()

    def _pass(self, *, deferred: bool = False) -> None:
        """Fresh per-pass state: the alias index and the mappers' scratch space."""
        self.papers = PaperAliases(self.store, self.iris, deferred=deferred)
        self.memo: dict[str, Any] = {}

    # -- mapping ---------------------------------------------------------------------------
    def _units(self, items: Iterable[Item]) -> Iterator[_Unit | RecordError]:
        kind: Kind | None = KINDS[self.kind] if self.kind else None
        current_source = None
        file_name = ""
        snapshot: str | None = None
        licence, attribution, fetched_from = self.licence, self.attribution, None
        file_done = False
        for item in items:
            if item.source != current_source:
                current_source = item.source
                kind = KINDS[self.kind] if self.kind else None
                self.report.files += 1
                manifest = read_manifest(item.source)  # kg fetch's word on the file
                snapshot = (
                    self.snapshot
                    or (manifest.snapshot if manifest else None)
                    or gzip_date(item.source)
                )
                licence = self.licence or _manifest_iri(manifest.licence if manifest else None)
                attribution = self.attribution or _manifest_iri(
                    manifest.attribution if manifest else None
                )
                fetched_from = _manifest_iri(manifest.url if manifest else None)
                file_name = Path(item.source).name
                file_done = False
            self.report.read += 1
            if self.on_progress and self.report.read % _PROGRESS_EVERY == 0:
                self._progress()
            if item.error is not None:
                yield item.error
                continue
            if kind is None:
                kind = detect_kind(item.value)
            self.report.kinds[kind.name] += 1
            ctx = Context(
                self.iris,
                source_file=file_name,
                ingested_at=self.ingested_at,
                snapshot=snapshot,
                papers=self.papers,
                memo=self.memo,
                max_items=self.max_items,
                licence=licence,
                attribution=attribution,
                fetched_from=fetched_from,
            )
            if not file_done:
                file_done = True
                for mapped in kind.file_units(ctx) if kind.file_units else ():
                    yield _Unit(mapped, item.source, "")
            try:
                for mapped in kind.map(item.value, ctx):
                    yield _Unit(mapped, item.source, item.locator)
            except RecordError as exc:
                yield exc.located(item.source, item.locator)
            except RecursionError:
                yield RecordError(
                    "is nested too deeply to read", source=item.source, locator=item.locator
                )

    def _reject(self, error: RecordError) -> None:
        self.report.rejected += 1
        if len(self.report.errors) < 1000:
            self.report.errors.append(error)
        if self.on_error:
            self.on_error(error)

    # -- writing ---------------------------------------------------------------------------
    def _flush(self, batch: list[_Unit]) -> None:
        """Sort the batch into unchanged, added and updated units and hand the writes to the
        writer thread; Oxigraph's loader releases the GIL, so the next batch is mapped while
        this one loads. At most one batch is in flight."""
        if not batch:
            return
        # a store that held no graph when the run began holds only this run's, each once
        # (`_dedupe`): nothing to look up (the lookups grow with the store: 5 % of the run)
        stored = (
            self.store.graph_hashes([u.mapped.graph for u in batch]) if self._stored_before else {}
        )
        writes: list[_Unit] = []
        replace: list[str] = []
        for unit in batch:
            m = unit.mapped
            old = stored.get(m.graph)
            if old == m.content_hash:
                self.report.unchanged += 1
                continue
            writes.append(unit)
            if old is None:
                self.report.added += 1
            else:
                self.report.updated += 1
                replace.append(m.graph)
        self._settle()
        self.papers.seal()
        for unit in writes:  # renames applied since these units were mapped
            unit.mapped.triples = self.papers.rewrite(unit.mapped.triples)
            unit.mapped.shared = self.papers.rewrite(unit.mapped.shared)
        if writes:
            data, merges, quads = self._batch_nquads(writes)
            if self._loading is not None:
                future = self._writer.submit(self._feed, self._loading, data, merges)
            else:
                graphs = [u.mapped.graph for u in writes]
                future = self._writer.submit(self._load, data, merges, graphs, replace)
            self._in_flight = (future, writes, replace, quads, data)
        else:
            self._in_flight = (None, writes, replace, 0, [])

    def _settle(self) -> None:
        """Wait for the batch in flight; then apply the renames its aliases call for."""
        if self._in_flight is None:
            return
        future, writes, replace, quads, data = self._in_flight
        self._in_flight = None
        whole = True
        try:
            if future is not None:
                waited = time.perf_counter()
                future.result()
                self.report.timings["waiting_for_load"] += time.perf_counter() - waited
                self.report.quads += quads
                self._remember_shared(writes)
        except DiskFullError:  # no record is at fault
            raise
        except StoreError:
            if self._loading is not None:  # one load for the run: it is written again
                raise
            whole, data = False, []
            self._write(writes, replace)  # again, synchronously: isolates the bad record
        finally:
            self.papers.written()
            self.report.renamed = self.papers.renamed
        if self.on_batch is not None and (writes or self.papers.last_renames):
            observed = time.perf_counter()
            self.on_batch(
                WrittenBatch([u.mapped for u in writes], replace,
                             dict(self.papers.last_renames), data, whole)
            )
            self.report.timings["search_index"] += time.perf_counter() - observed

    def _batch_nquads(self, writes: list[_Unit]) -> tuple[list[bytes], list[bytes], int]:
        """The batch as N-Quads in the parts the store loads side by side (one per core,
        `GraphStore.part_count`): whole records each, with the shared-entity triples they
        state (once per part, and not again if an earlier batch of this run wrote them: the
        entities graph is set-merged); each part's lines for the default graph (the same
        triples without their graph: kg.rdf.merge.merge_lines, made by a join); and how many
        quads the batch writes. Readers see the batch only once all its parts are in (the
        store publishes it whole)."""
        done = self._shared_written
        e = f" <{self._entities}> .\n"
        own_quads = sum(len(u.mapped.triples) for u in writes)
        # a first load reads one stream (its loader sorts on the other cores); the units a
        # rename may still move go to `_held`, streamed last (kg.ingest.aliases)
        held, names_fallback = self._held, self.papers.names_fallback
        count = 1 if held is not None else self.store.part_count(own_quads)
        parts: list[bytes] = []
        merges: list[bytes] = []
        shared_quads: set[str] = set()
        start, target, so_far = 0, max(1, own_quads) / count, 0
        for end, unit in enumerate(writes, 1):
            so_far += len(unit.mapped.triples)
            if end < len(writes) and so_far < target * (len(parts) + 1):
                continue
            group = writes[start:end]
            start = end
            shared = [
                t for t in dict.fromkeys(t for u in group for t in u.mapped.shared) if t not in done
            ]
            shared_quads.update(shared)
            # Encoded unit by unit, then joined as bytes: one text for the whole part took
            # the widest character of any record (4 bytes a character for one emoji) and
            # 1.6x the CPU.
            own: list[bytes] = []
            lines: list[bytes] = []
            for u in group:
                g = f" <{u.mapped.graph}> .\n"
                text = g.join(u.mapped.triples) + g
                if held is not None and names_fallback(text):
                    held.write(text.encode("utf-8"))
                    continue
                own.append(text.encode("utf-8"))
                if u.mapped.triples:
                    lines.append((" .\n".join(u.mapped.triples) + " .\n").encode("utf-8"))
            if shared and held is not None and names_fallback(e.join(shared)):
                held.write("".join(t + e for t in shared if names_fallback(t)).encode("utf-8"))
                shared = [t for t in shared if not names_fallback(t)]
            if shared:
                own.append((e.join(shared) + e).encode("utf-8"))
                lines.append((" .\n".join(shared) + " .\n").encode("utf-8"))
            parts.append(b"".join(own))
            merges.append(b"".join(lines))
        return parts, merges, own_quads + len(shared_quads)

    def _load(
        self, data: list[bytes], merges: list[bytes], graphs: list[str], replace: list[str]
    ) -> None:
        """The writer thread's job: one batch into the store (timed: `loading`)."""
        start = time.perf_counter()
        try:
            self.store.write_batch(data, graphs, replace, [self._entities], merges=merges)
        finally:
            self.report.timings["loading"] += time.perf_counter() - start

    def _feed(self, load: FirstLoad, data: list[bytes], merges: list[bytes]) -> None:
        """The writer thread's job in a first load: one batch into its stream (timed:
        `loading`, which here is the wait for the loader to read it)."""
        start = time.perf_counter()
        try:
            load.feed(part for pair in zip(data, merges, strict=True) for part in pair)
        finally:
            self.report.timings["loading"] += time.perf_counter() - start

    def _feed_held(self, load: FirstLoad, held: IO[bytes]) -> None:
        """The units held back from a first load (they name fallback paper IRIs), rewritten
        with the run's final renames, into the load; and to `on_batch`, as a last batch."""
        if not held.tell():
            return
        held.seek(0)
        while chunk := held.readlines(1 << 24):
            text = self.papers.settled_text(b"".join(chunk).decode("utf-8"))
            data = text.encode("utf-8")
            start = time.perf_counter()
            load.feed([data, merge_lines(data)])
            self.report.timings["loading"] += time.perf_counter() - start
            if self.on_batch is not None:
                observed = time.perf_counter()
                self.on_batch(WrittenBatch([], [], {}, [data]))
                self.report.timings["search_index"] += time.perf_counter() - observed

    def _remember_shared(self, writes: list[_Unit]) -> None:
        if len(self._shared_written) > _SHARED_MEMORY:  # bounded: forgetting only re-sends
            self._shared_written.clear()
        for unit in writes:
            self._shared_written.update(unit.mapped.shared)

    def _write(self, writes: list[_Unit], replace: list[str]) -> None:
        text = "".join(u.mapped.nquads(self._entities) for u in writes)
        try:
            self.store.write_batch(
                text.encode("utf-8"), [u.mapped.graph for u in writes], replace, [self._entities]
            )
            self.report.quads += sum(len(u.mapped.triples) + len(u.mapped.shared) for u in writes)
        except DiskFullError:  # no record is at fault
            raise
        except StoreError:
            if len(writes) == 1:  # a mapping bug produced bad N-Quads: report, keep going
                unit = writes[0]
                self.report.added -= unit.mapped.graph not in replace
                self.report.updated -= unit.mapped.graph in replace
                self._reject(
                    RecordError(
                        "could not be stored (kg produced invalid RDF for it; please report this)",
                        source=unit.source,
                        locator=unit.locator,
                    )
                )
                return
            half = len(writes) // 2  # bisect: log2(batch) loads find it, not one per record
            for part in (writes[:half], writes[half:]):
                graphs = {u.mapped.graph for u in part}
                self._write(part, [g for g in replace if g in graphs])

    def _dedupe(self, unit: _Unit) -> bool:
        """False when the run already had this graph: identical is unchanged, else a conflict."""
        m = unit.mapped
        earlier = self._seen.see(m.graph, m.content_hash, unit.source, unit.locator)
        if earlier is None:
            return True
        if earlier.same:
            self.report.unchanged += 1
        else:
            where = earlier.where
            self._reject(
                RecordError(
                    f"duplicate record for {self.iris.local_key(m.subject)} with different "
                    f"content; the first one ({where}) was kept",
                    source=unit.source,
                    locator=unit.locator,
                )
            )
        return False

    def run(self, paths: list[str]) -> IngestReport:
        """Ingest everything in `paths` (files, directories, `-`).

        `report.timings` says where the time went, in seconds: `mapping` (the main thread
        reading, mapping and batching, less the two below), `waiting_for_load` (the main
        thread waiting for the writer), `search_index` (keeping the index in step, through
        `on_batch`), `compaction`, `strict_check` (--strict's first pass); `ending`, the
        run's end, in which the compaction runs beside the search index's finish (both in
        it); and, on the writer thread beside the mapping, `loading` (the batches' writes),
        of which `publishing` (each batch's publication for readers).
        """
        start = time.perf_counter()
        published = self.store.publish_seconds
        names = list(expand(paths))
        if not names:
            raise UsageError("no input files found (looked for .json, .jsonl, .ndjson and .gz)")
        spool: Path | None = None
        try:
            if self.strict:
                if "-" in names:  # stdin can be read only once: keep a copy for the second pass
                    fd, tmp = tempfile.mkstemp(suffix=".json")
                    with os.fdopen(fd, "wb") as out:
                        shutil.copyfileobj(sys.stdin.buffer, out)
                    spool = Path(tmp)
                    names = [str(spool) if n == "-" else n for n in names]
                self._check_all(names)
            checked = time.perf_counter()
            grown_from = self.store.size_on_disk() or 0
            self._ingest(names)
        finally:
            if spool is not None:
                spool.unlink(missing_ok=True)
        ingested = time.perf_counter()
        timings = self.report.timings
        timings["mapping"] = (
            ingested - checked - timings["waiting_for_load"] - timings["search_index"]
        )
        # The compaction (one core) runs beside the rest of the run's end: the search index's
        # finish (a first ingest's child indexes mostly now: kg.search.beside) and the count
        # (23 s at the archive's size), both at a lower priority than the compaction's.
        ending_from = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="kg-end") as ending:
            compacted = ending.submit(
                self.store.compact_if_it_pays, grown_from, at_least=self.compact_from
            )
            if self.on_written is not None:
                counted = ending.submit(_count_behind, self.store)
                self.on_written()
                self.report.store_quads = counted.result()
            self.report.compaction = compacted.result()
        timings["ending"] = time.perf_counter() - ending_from
        self.report.seconds = time.perf_counter() - start
        if self.strict:
            timings["strict_check"] = checked - start
        timings["publishing"] = self.store.publish_seconds - published
        if self.report.compaction is not None:
            timings["compaction"] = self.report.compaction.seconds
        return self.report

    def _items(self, names: list[str]) -> Iterator[Item]:
        self._position = ReadPosition(names)
        for name in self._ordered(names):
            yield from read_items(name, position=self._position)

    def _progress(self) -> None:
        """Tell `on_progress` how far reading has gone (records, and bytes of the inputs)."""
        if self._position is not None:
            self.report.bytes_read = self._position.read()
            self.report.bytes_total = self._position.total
        if self.on_progress:
            self.on_progress(self.report)

    def _ordered(self, names: list[str]) -> list[str]:
        """Files by the priority of their kind (stable): see `Kind.priority`."""
        if self.kind is not None or len(names) < 2:
            return names

        def priority(name: str) -> int:
            if name == "-":
                return KINDS["record"].priority
            first = next(read_items(name), None)
            if first is None or first.error is not None:
                return KINDS["record"].priority
            return detect_kind(first.value).priority

        return sorted(names, key=priority)

    def _check_all(self, names: list[str]) -> None:
        """--strict: map everything first; the first error stops the run before any write."""
        seen: dict[str, str] = {}
        for unit in self._units(self._items(names)):
            if isinstance(unit, RecordError):
                raise KgError(
                    f"{unit} ({{parameter}}: nothing was written)", parameter="strict"
                )
            earlier = seen.setdefault(unit.mapped.graph, unit.mapped.content_hash)
            if earlier != unit.mapped.content_hash:
                raise KgError(
                    f"{unit.source}:{unit.locator}: duplicate record for "
                    f"{self.iris.local_key(unit.mapped.subject)} with different content "
                    "({parameter}: nothing was written)",
                    parameter="strict",
                )
        self.report = IngestReport()
        self._pass()

    def _ingest(self, names: list[str]) -> None:
        return_freed_memory()
        self._stored_before = self.store.holds_graphs()
        if self._loads_first(names):
            try:
                self._load_first(names)
                return
            except FirstLoadError:
                self._again_in_batches()
        self._write_all(self._units(self._items(names)))

    def _loads_first(self, names: list[str]) -> bool:
        """Whether this run is one bulk load (see `first_load`). Not from stdin: it cannot
        be read twice, which a failed first load needs (`_again_in_batches`)."""
        if self.first_load is False or "-" in names or not self.store.can_load_first():
            return False
        return self.first_load is True or (ReadPosition(names).total or 0) >= FIRST_LOAD_FROM

    def _load_first(self, names: list[str]) -> None:
        """The whole run as one bulk load into the empty store (kg.rdf.first_load); the
        units a rename may move are held in a file beside the store and streamed last."""
        self._pass(deferred=True)
        where = None if self.store.path is None else str(self.store.path)
        try:
            with (
                tempfile.TemporaryFile(prefix=".kg-held-", dir=where) as held,
                self.store.first_load() as load,
            ):
                self._loading, self._held = load, held
                self._write_all(self._units(self._items(names)))
                self._feed_held(load, held)
        finally:
            self._loading = self._held = None

    def _again_in_batches(self) -> None:
        """A first load failed and stored nothing (kg mapped a record into N-Quads that do
        not parse): the run starts again batch by batch, which isolates the record. Errors
        already reported are not reported twice."""
        reported = {str(e) for e in self.report.errors}
        on_error = self.on_error
        if on_error is not None:
            self.on_error = lambda error: None if str(error) in reported else on_error(error)
        if self.on_batch is not None:  # the search index: built from the store at the end
            self.on_batch(WrittenBatch([], [], {}, [], whole=False))
        self.report = IngestReport()
        self._seen.clear()
        self._shared_written.clear()
        self._pass()

    def _write_all(self, units: Iterable[_Unit | RecordError]) -> None:
        """`units` into the store batch by batch, a writer thread loading one batch while
        the next is mapped; every batch is settled when this returns."""
        with (
            rare_full_collections(),
            self.store.publishing_in_bulk(),
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="kg-writer") as writer,
        ):
            self._writer = writer
            try:
                self._ingest_batches(units)
            finally:
                self._settle()

    def context(self, source_file: str, snapshot: str | None) -> Context:
        """The mapping context of this run for units mapped outside `run` (`write`)."""
        return Context(
            self.iris,
            source_file=source_file,
            ingested_at=self.ingested_at,
            snapshot=snapshot,
            papers=self.papers,
            memo=self.memo,
            max_items=self.max_items,
            licence=self.licence,
            attribution=self.attribution,
        )

    def write(self, units: Iterable[Mapped | RecordError], *, source: str) -> None:
        """Write units mapped elsewhere (the live API's responses, kg.sources.pwc_api) the
        way `run` writes files' units: unchanged ones skipped, changed graphs replaced whole,
        aliases applied, errors reported. Everything is committed when this returns."""
        self.report.files += 1
        self._write_all(
            unit if isinstance(unit, RecordError) else _Unit(unit, source, unit.graph)
            for unit in units
        )

    def _ingest_batches(self, units: Iterable[_Unit | RecordError]) -> None:
        batch: list[_Unit] = []
        quads = 0
        # The first batches are smaller, so that the writer (and the search index's child)
        # start while the mapping has barely begun: the first full batch kept a core idle.
        most = self.batch_quads
        if self._loading is not None:  # batches of a first load: only what the mapping holds
            most = min(most, FIRST_LOAD_BATCH_QUADS)
        cap = max(1, most // FIRST_BATCH_SHARE)
        for unit in units:
            self.report.graphs += 1
            if isinstance(unit, RecordError):
                self._reject(unit)
                continue
            if unit.mapped.unknown_keys:
                self.report.unknown_keys.update(unit.mapped.unknown_keys)
            if unit.mapped.not_mapped:
                self.report.not_mapped.update(unit.mapped.not_mapped)
            for entry in unit.mapped.entries_not_mapped:
                self.report.entries_not_mapped.append(f"{unit.source}:{unit.locator}: {entry}")
            if not self._dedupe(unit):
                continue
            batch.append(unit)
            quads += len(unit.mapped.triples) + len(unit.mapped.shared)
            if len(batch) >= self.batch_size or quads >= cap:
                self._flush(batch)
                batch, quads = [], 0
                cap = min(most, cap * 2)
                self._progress()
        self._flush(batch)
        self._progress()


#: The first batch of a run holds this share of `batch_quads`; each next one twice the last.
FIRST_BATCH_SHARE = 8


def ingest(store: GraphStore, paths: list[str], *, base_iri: str, **options: Any) -> IngestReport:
    """Library entry point: ingest `paths` into `store` and return the report."""
    return Ingestor(store, Iris(base_iri), **options).run(paths)
