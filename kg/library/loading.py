"""The graph in: ingest records and dumps, pull from the live API, compact the store."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kg.config import MAX_ARRAY_ITEMS
from kg.errors import StoreMissingError, UsageError
from kg.library.base import GraphBase

if TYPE_CHECKING:
    from kg.errors import RecordError
    from kg.ingest.ingestor import IngestReport
    from kg.rdf.store import Compaction
    from kg.sources.pwc_api import PullReport


class Loading(GraphBase):
    """The graph in: ingest, pull, compact."""

    def ingest(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        strict: bool = False,
        kind: str | None = None,
        snapshot: str | None = None,
        licence: str | None = None,
        attribution: str | None = None,
        batch_size: int = 20_000,
        max_items: int = MAX_ARRAY_ITEMS,
        on_error: Callable[[RecordError], None] | None = None,
        on_progress: Callable[[IngestReport], None] | None = None,
        compact: bool = True,
        compact_in_spare_time: bool = False,
        first_load: bool | None = None,
    ) -> IngestReport:
        """Load paper records and Papers-with-Code dumps (files, directories, `-` for stdin)
        into a writable store (`kg ingest`); the search index follows. Identical records are
        skipped, changed ones replaced whole; a bad record is reported (`on_error`) without
        stopping the others. With `compact`, a large ingest into a large store compacts it
        afterwards (`report.compaction`; see kg.rdf.store.COMPACT_FROM). With
        `compact_in_spare_time`, the store's background compaction runs at the lowest CPU
        priority from now on, in this whole process (it cannot be raised again): for a
        process whose job is this ingest, as `kg ingest`'s (docs/performance.md). An ingest
        into an empty store is one bulk load, stored whole at its end or not at all
        (kg.rdf.first_load), with `first_load=True`, or by default for inputs of 256 MiB or
        more (kg.config.FIRST_LOAD_FROM); else batch by batch, as into any store.

        >>> with kg.open(memory=True) as scratch:
        ...     report = scratch.ingest([seeds])
        >>> report.added, report.rejected
        (2, 0)
        """
        self._writable("to ingest")
        from kg.ingest.identity import Iris
        from kg.ingest.ingestor import Ingestor, check_options
        from kg.rdf.store import COMPACT_FROM
        from kg.search import Upkeep

        check_options(kind=kind, snapshot=snapshot, licence=licence, attribution=attribution)
        start = time.perf_counter()

        # the search index beside the store follows every batch (kg.search.maintain)
        upkeep = None if self.path is None else Upkeep(self.store, self.path)
        ingestor = Ingestor(
            self.store,
            Iris(self.base_iri),
            batch_size=batch_size,
            strict=strict,
            kind=kind,
            snapshot=snapshot,
            max_items=max_items,
            licence=licence,
            attribution=attribution,
            on_error=on_error,
            on_progress=on_progress,
            on_batch=None if upkeep is None else upkeep.observe,
            on_written=None if upkeep is None else lambda: finish_index(ingestor.report),
            compact_from=COMPACT_FROM if compact else None,
            first_load=first_load,
        )

        def finish_index(report: IngestReport) -> None:
            assert upkeep is not None
            started = time.perf_counter()
            upkeep.finish()
            report.timings["search_index"] += time.perf_counter() - started

        if compact_in_spare_time:
            self.store.compact_in_spare_time()
        if upkeep is not None:
            upkeep.begin()
        index_seconds = time.perf_counter() - start
        try:
            report = ingestor.run([os.fspath(p) for p in paths])
        except BaseException:
            if upkeep is not None:
                upkeep.abort()
            raise
        self._search = None  # the next search sees the new index
        # the index opened before the run, and finished (built whole, after a first ingest)
        # once the batches were in, before the compaction (`on_written`)
        report.timings["search_index"] += index_seconds
        report.timings["total"] = time.perf_counter() - start
        return report

    def pull(
        self,
        *,
        base_url: str = "https://paperswithcode.co/api/v1",
        since: str | None = None,
        until: str | None = None,
        recent_days: int = 30,
        max_requests: int | None = None,
        rate: float = 1.0,
        attempts: int = 5,
        backoff: float = 2.0,
        licence: str | None = None,
        attribution: str | None = None,
        on_error: Callable[[RecordError], None] | None = None,
        on_page: Callable[[PullReport], None] | None = None,
    ) -> PullReport:
        """Bring the store up to date from the relaunched Papers with Code API (`kg pull`,
        docs/live.md): the taxonomy, papers published since the cursor less `recent_days`
        (every date on a first run; `since`/`until` bound it, YYYY-MM-DD), then benchmarks
        and their results, each page committed before the next is asked for; the cursor
        moves only when the run completes. Requests go only below `base_url`, at most
        `rate` a second (`max_requests` in all); a source failing `attempts` times in a row
        raises `SourceError`, keeping what was pulled. Same identity as the archive.

        >>> g.pull(base_url="http://127.0.0.1:9/api/v1")  # g is open read-only
        Traceback (most recent call last):
        ...
        kg.errors.StoreError: the store at ... is open read-only; open it with ... to pull
        """
        self._writable("to pull")
        from kg.ingest import api
        from kg.ingest.identity import Iris
        from kg.ingest.ingestor import Ingestor
        from kg.search import Upkeep
        from kg.sources.http import PoliteClient
        from kg.sources.pwc_api import Pull, parse_date

        first = parse_date(since, "since") if since else None
        last = parse_date(until, "until") if until else None
        if first and last and first > last:
            raise UsageError(f"{{parameter}} {since} is after --until {until}", parameter="since")
        if max_requests is not None and max_requests < 1:
            raise UsageError("{parameter} must be at least 1", parameter="max-requests")
        client = PoliteClient(
            base_url, rate=rate, attempts=attempts, backoff=backoff, max_requests=max_requests
        )
        upkeep = None if self.path is None else Upkeep(self.store, self.path)
        licence = licence or api.API_LICENCE
        attribution = attribution or api.API_ATTRIBUTION
        ingestor = Ingestor(
            self.store,
            Iris(self.base_iri),
            licence=licence,
            attribution=attribution,
            on_error=on_error,
            on_batch=None if upkeep is None else upkeep.observe,
            compact_from=None,
        )
        run = Pull(
            self.store, ingestor, client, since=first, until=last, recent_days=recent_days,
            licence=licence, attribution=attribution, on_page=on_page,
        )  # fmt: skip
        if upkeep is not None:
            upkeep.begin()
        try:
            report = run.run()
        except BaseException:  # what was committed stays; the index catches up on next use
            if upkeep is not None:
                upkeep.abort()
            self._search = None
            raise
        if upkeep is not None:
            upkeep.finish()
        self._search = None
        return report

    def compact(self, into: str | os.PathLike[str]) -> Compaction:
        """Write a compact copy of the store into the new directory `into` (`kg compact`):
        the store dumped and bulk-loaded in one go, about a third smaller than a small store
        built batch by batch, which RocksDB's compactions leave partly uncompressed
        (docs/performance.md). The store is only read (its readers are undisturbed); the
        copy appears whole or not at all, with the search index. Returns the bytes on disk
        of the store and of the copy, and the time it took.

        >>> with kg.open(tmp / "s", read_only=False) as g:
        ...     _ = g.ingest([seeds], first_load=False)
        ...     done = g.compact(tmp / "compact")
        >>> done.bytes_after < done.bytes_before
        True
        """
        self._writable("to compact it")
        if self.path is None:
            raise UsageError("a memory store has no files to compact")
        if self._store is None and not (self.path / "CURRENT").exists():
            raise StoreMissingError(f"no kg store at {self.path} to compact")
        from kg.search.index import INDEX_DIR

        return self.store.rebuild(Path(into), beside=[INDEX_DIR])

