"""Settings that several modules share: the base IRI, the default store and limits."""

from __future__ import annotations

from pathlib import Path

DEFAULT_BASE_IRI = "https://w3id.org/kg/id/"
DEFAULT_STORE = Path("kg-store")
#: The environment variables that choose the store and the base IRI (the CLI and kg.open).
STORE_ENV, BASE_IRI_ENV = "KG_STORE", "KG_BASE_IRI"
#: The largest single record (one JSONL line or one JSON file) kg will read, in bytes.
MAX_RECORD_BYTES = 16 * 1024 * 1024
#: The longest string kg accepts in any one field, in characters.
MAX_FIELD_CHARS = 1_000_000
#: The most items kg accepts in any one array of a record (authors, links, samples, results,
#: code links…): the largest in the Papers-with-Code data has 288; a record over it is
#: rejected naming the field, so one record cannot fan out into millions of triples.
MAX_ARRAY_ITEMS = 10_000

#: A write batch of `kg ingest` closes at this many quads: two batches are in memory at once
#: (one mapped, one loading). 300,000 took the archive's ingest peak from 4.1 GB to 3.4 GB
#: for 1.05x the time of 500,000 (docs/performance.md).
BATCH_QUADS = 300_000
#: ...and a batch of a first load (kg.rdf.first_load) at this many: every batch streams
#: into the one load, so a batch is only what the mapping holds before it is sent. At a
#: tenth of the archive, 100,000 against 300,000: a peak 200 MB lower, the same time.
FIRST_LOAD_BATCH_QUADS = 100_000
#: Input (bytes as stored) from which a first ingest into an empty store is one bulk load
#: (kg.rdf.first_load): 0.61x the time at the archive's scale (593 MB of gzip), but 1.23x at
#: 20,000 records (79 MB of JSON) and 0.92x at a tenth of the archive (56 MB of gzip), for
#: more memory: twice at 20,000 records, 3.7-3.8 against 3.5 GB for the archive
#: (docs/performance.md, "One bulk load for a first ingest").
FIRST_LOAD_FROM = 256 << 20
#: A request (a paper page, `/suggest`, the MCP tool `suggest`) trains the suggestion model
#: itself only on a store of at most this many papers with a link (the README store has
#: 5,502: 5 s of CPU); a larger store's model is trained ahead, by `kg suggest --train`.
#: The environment variable overrides it (0: a request never trains).
SUGGEST_INLINE_PAPERS = 20_000
SUGGEST_INLINE_ENV = "KG_SUGGEST_INLINE_PAPERS"


def base_iri_of(text: str) -> str:
    """A base IRI as given, ending in `/` or `#` (a `/` is added otherwise)."""
    return text if text.endswith(("/", "#")) else text + "/"
