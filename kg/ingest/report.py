"""What an ingest reports: the run's figures (`IngestReport`), and each written batch as its
observers see it (`WrittenBatch`: the search index keeps itself in step through it)."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from kg.errors import RecordError
from kg.ingest.mapping import Mapped
from kg.rdf.compaction import Compaction


@dataclass
class IngestReport:
    """What a run did. `read` counts the items read (records, dump entries); `graphs` the
    units the figures count: one per graph mapped (a record's, a dump entry's, each part an
    entry states apart) plus one per item rejected before it made any. So `added + updated +
    unchanged + rejected == graphs`, on a first run and on a rerun alike."""

    read: int = 0
    graphs: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    quads: int = 0
    seconds: float = 0.0
    recovered: int = 0
    renamed: int = 0  # fallback paper IRIs merged into the slug IRI a later source taught
    files: int = 0
    # how far through the input files, in bytes as stored (for a progress bar; no total
    # when reading stdin)
    bytes_read: int = 0
    bytes_total: int | None = None
    kinds: Counter[str] = field(default_factory=Counter)
    unknown_keys: Counter[str] = field(default_factory=Counter)
    # input values that did not land, by "where (why)"; whole entries by file and item
    not_mapped: Counter[str] = field(default_factory=Counter)
    entries_not_mapped: list[str] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    compaction: Compaction | None = None  # the store compacted after the ingest, when it paid
    # the quads the store holds once the run's writes are done (GraphStore.count), when it was
    # counted beside the search index's finish (`on_written`); else None
    store_quads: int | None = None
    # seconds by phase (see `Ingestor.run`; the library adds the search index's and "total")
    timings: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "read": self.read,
            "graphs": self.graphs,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "rejected": self.rejected,
            "quads_written": self.quads,
            "seconds": round(self.seconds, 3),
            "recovered": self.recovered,
            "papers_merged": self.renamed,
            "kinds": dict(self.kinds),
            "unknown_keys": dict(self.unknown_keys),
            "not_mapped": dict(self.not_mapped),
            "entries_not_mapped": list(self.entries_not_mapped),
            "compaction": None if self.compaction is None else self.compaction.as_dict(),
            "timings": {phase: round(s, 3) for phase, s in self.timings.items()},
        }


def ingest_time() -> str:
    """Now, or SOURCE_DATE_EPOCH when set (reproducible builds), as xsd:dateTime."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (
        dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        if epoch and epoch.isdigit()
        else dt.datetime.now(dt.UTC)
    )
    return moment.replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class WrittenBatch:
    """What one batch changed in the store, for an observer (the search index keeps itself
    in step through it): the records written, the graphs whose earlier version was dropped,
    and the paper IRIs that were renamed (old -> new) once the batch was in; the N-Quads
    the store loaded for it (the records' lines and the shared lines not sent before), and
    whether they are the whole batch (False when a failed load was retried record by record:
    then `nquads` is empty and some records may have been refused)."""

    written: list[Mapped]
    replaced: list[str]
    renamed: dict[str, str]
    nquads: list[bytes] = field(default_factory=list)
    whole: bool = True
