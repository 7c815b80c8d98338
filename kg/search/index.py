"""The full-text index beside the store: a tantivy index in `<store>/search/`.

Why tantivy (bench/search_libraries.py, docs/search.md): at 108,000 documents its warm
queries take a fraction of a millisecond where SQLite FTS5 needs milliseconds for a common
word, its index is a third of FTS5's size, it scores each field with its own length (so a
method's name outranks a long description that mentions it) and it commits atomically.

One document per entity (paper, method, task, dataset, area, collection, author,
repository), keyed by its IRI:

| field | what | analysis |
| --- | --- | --- |
| `key` | the entity's IRI | raw |
| `type` | its class, as `paper`, `method`, … | raw |
| `label` | the title or name | lower-cased, accent-folded words |
| `label_stem` | the same, stemmed | + English stemming |
| `alt` | full names, synonyms, other titles | lower-cased, accent-folded words |
| `body` | abstract, or description as plain text | + English stemming |
| `exact` | each name, normalised whole | raw (whole-name matches rank first) |
| `ids` | identifiers: `arxiv:…`, `slug:…`, `doi:…`, `repo:owner/name` | raw (rank first) |
| `graphs` | the named graphs its text came from | raw (finds what a dropped graph leaves) |

Crash safety: every tantivy commit is atomic. One more document, the state document, says
whether the index agrees with the store: a writer marks it `dirty` (committed) before the
store changes and `clean` after the last batch is indexed. A writer holds `<store>/search.lock`
(flock) for as long as it writes, so a reader that finds the index `dirty` and the lock
free knows a writer died mid-way: the index is stale, and is rebuilt from the store.
A rebuild writes a new index beside the old one and swaps the directories.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
import unicodedata
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.errors import StoreError
from kg.rdf.disk import said_if_full

#: Bump when the schema or analysis changes: an index of another version is rebuilt.
SCHEMA_VERSION = "2"
INDEX_DIR = "search"
LOCK_FILE = "search.lock"
_STATE_KEY = "urn:x-kg:search-state"
_STATE_TYPE = "_state"
PLAIN = "kg_plain"
STEM = "kg_stem"
#: How many times opening is tried while a writer replaces the files being opened.
_OPEN_ATTEMPTS = 10


@dataclass
class Document:
    """One entity as the index sees it."""

    key: str
    type: str
    label: str
    alt: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    graphs: set[str] = field(default_factory=set)
    ids: list[str] = field(default_factory=list)


#: A run of ASCII letters and digits (what str.isalnum keeps of an ASCII text).
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def normalise(text: str) -> str:
    """A name reduced for exact comparison: accents off, lower case, words joined by spaces.

    >>> normalise("  Attention is Not Only a Weight: Analyzing Transformers ")
    'attention is not only a weight analyzing transformers'
    >>> normalise("Élan-Vital")
    'elan vital'
    >>> normalise("ReLU_6 (x2)"), normalise("ReLU_6 (x2)\u00a0")  # ASCII or not, alike
    ('relu 6 x2', 'relu 6 x2')
    """
    return " ".join(normalised_words(text))


def normalised_words(text: str) -> list[str]:
    """The words of `normalise(text)`, in order."""
    if text.isascii():  # most texts: the same words, 10× faster than by character
        return _ASCII_WORD.findall(text.lower())
    folded = unicodedata.normalize("NFKD", text)
    kept = "".join(
        c if c.isalnum() else " " for c in folded if not unicodedata.combining(c)
    )
    return kept.lower().split()


def _tantivy() -> Any:
    import tantivy

    return tantivy


def analyzers() -> dict[str, Any]:
    """The two analyzers, by tokenizer name: words lower-cased and accent-folded, and the
    same stemmed (English, Snowball)."""
    t = _tantivy()
    out = {}
    for name, stem in ((PLAIN, False), (STEM, True)):
        builder = (
            t.TextAnalyzerBuilder(t.Tokenizer.simple())
            .filter(t.Filter.remove_long(100))
            .filter(t.Filter.lowercase())
            .filter(t.Filter.ascii_fold())
        )
        if stem:
            builder = builder.filter(t.Filter.stemmer("english"))
        out[name] = builder.build()
    return out


def _schema() -> Any:
    t = _tantivy()
    sb = t.SchemaBuilder()
    sb.add_text_field("key", stored=True, tokenizer_name="raw")
    sb.add_text_field("type", stored=True, tokenizer_name="raw")
    sb.add_text_field("label", stored=True, tokenizer_name=PLAIN)
    sb.add_text_field("label_stem", stored=False, tokenizer_name=STEM)
    sb.add_text_field("alt", stored=True, tokenizer_name=PLAIN)
    sb.add_text_field("body", stored=True, tokenizer_name=STEM)
    sb.add_text_field("exact", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("ids", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("graphs", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("state", stored=True, tokenizer_name="raw", index_option="basic")
    return sb.build()


def index_path(store_path: Path) -> Path:
    return Path(store_path) / INDEX_DIR


class IndexLock:
    """`<store>/search.lock`, held (flock) by whoever writes the index."""

    def __init__(self, store_path: Path) -> None:
        self.path = Path(store_path) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self, timeout: float = 60.0) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise StoreError(
                        f"the search index of {self.path.parent} is busy: another kg process "
                        "is writing it; wait for it to finish"
                    ) from None
                time.sleep(0.05)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def held_elsewhere(self) -> bool:
        """Whether another process writes the index now (a probe; never blocks)."""
        if self._fd is not None:
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False


class Index:
    """An open search index (on disk or in memory) with its searcher."""

    def __init__(self, inner: Any, path: Path | None) -> None:
        self.inner = inner
        self.path = path
        self.schema = inner.schema
        for name, analyzer in analyzers().items():
            inner.register_tokenizer(name, analyzer)
        self._searcher: Any = None

    @classmethod
    def memory(cls) -> Index:
        return cls(_tantivy().Index(_schema()), None)

    @classmethod
    def create(cls, path: Path) -> Index:
        path.mkdir(parents=True, exist_ok=True)
        return cls(_tantivy().Index(_schema(), path=str(path), reuse=False), path)

    @classmethod
    def open(cls, path: Path) -> Index:
        """Open an existing index; a writer swapping directories meanwhile is retried."""
        t = _tantivy()
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                index = cls(t.Index.open(str(path)), path)
                index.searcher()
                return index
            except (OSError, ValueError) as exc:
                if attempt == _OPEN_ATTEMPTS - 1 or not (path / "meta.json").exists():
                    raise StoreError(f"cannot open the search index at {path}: {exc}") from None
                time.sleep(0.02 * (attempt + 1))
        raise AssertionError("unreachable")

    def searcher(self) -> Any:
        if self._searcher is None:
            self.inner.reload()
            self._searcher = self.inner.searcher()
        return self._searcher

    def refresh(self) -> None:
        """See the latest commit (a writer in this or another process)."""
        self._searcher = None

    # -- the state document --------------------------------------------------------------
    def state(self) -> dict[str, str]:
        """{"state": clean|dirty, "version": …, "generation": …}; empty for a fresh index."""
        t = _tantivy()
        searcher = self.searcher()
        hits = searcher.search(t.Query.term_query(self.schema, "key", _STATE_KEY), 1).hits
        if not hits:
            return {}
        doc = searcher.doc(hits[0][1])
        state, version, generation = (doc["state"] + ["", "", ""])[:3]
        return {"state": state, "version": version, "generation": generation}

    def is_current(self, lock: IndexLock | None) -> bool:
        """Whether this index may be trusted: right version, and clean or being written."""
        state = self.state()
        if state.get("version") != SCHEMA_VERSION:
            return False
        if state.get("state") == "clean":
            return True
        return lock is not None and lock.held_elsewhere()

    def doc_count(self) -> int:
        return int(self.searcher().num_docs) - (1 if self.state() else 0)


class Writer:
    """Writes an index: documents in, documents out, commits that each land whole."""

    def __init__(self, index: Index, *, heap: int = 200_000_000, threads: int = 2) -> None:
        self.index = index
        self._t = _tantivy()
        self._w = index.inner.writer(heap_size=heap, num_threads=threads)
        # A writer killed inside a commit leaves its files (`SEGMENT.OPSTAMP.del`) but not the
        # meta that names them; the next writer, starting from the same opstamp, would refuse
        # to overwrite one ("FileAlreadyExists"). Files no commit names are removed first.
        self._w.garbage_collect_files()
        self.generation = uuid.uuid4().hex

    def _set_state(self, state: str) -> None:
        self._w.delete_documents_by_term("key", _STATE_KEY)
        doc = self._t.Document(key=_STATE_KEY, type=_STATE_TYPE)
        for value in (state, SCHEMA_VERSION, self.generation):
            doc.add_text("state", value)
        self._w.add_document(doc)

    def begin(self) -> None:
        """Mark the index dirty, durably, before the store changes."""
        self._set_state("dirty")
        self.commit()

    def finish(self) -> None:
        """The index agrees with the store again."""
        self._set_state("clean")
        self.commit()

    def delete(self, keys: Iterable[str]) -> None:
        for key in keys:
            self._w.delete_documents_by_term("key", key)

    def add(self, docs: Iterable[Document]) -> int:
        n = 0
        t = self._t
        for d in docs:
            doc = t.Document(key=d.key, type=d.type, label=d.label, label_stem=d.label)
            for alt in d.alt:
                doc.add_text("alt", alt)
            for body in d.body:
                doc.add_text("body", body)
            for name in {normalise(x) for x in (d.label, *d.alt)} - {""}:
                doc.add_text("exact", name)
            for ident in d.ids:
                doc.add_text("ids", ident)
            for graph in sorted(d.graphs):
                doc.add_text("graphs", graph)
            self._w.add_document(doc)
            n += 1
        return n

    def replace(self, docs: Iterable[Document]) -> int:
        """Add `docs`, each replacing the document of the same key."""
        n = 0
        for d in docs:
            self._w.delete_documents_by_term("key", d.key)
            n += self.add([d])
        return n

    def commit(self) -> None:
        # the index lives in the store's folder: a full disk there is the store's
        folder = None if self.index.path is None else self.index.path.parent
        rebuilt = "the search index is rebuilt by the next command that reads it"
        with said_if_full(folder, rebuilt, value_errors=True):
            self._w.commit()
        self.index.refresh()

    def close(self) -> None:
        self._w.wait_merging_threads()
        self.index.refresh()


def keys_in_graphs(index: Index, graphs: list[str]) -> set[str]:
    """The keys of the documents whose text came (in part) from any of `graphs`."""
    t = _tantivy()
    searcher = index.searcher()
    out: set[str] = set()
    for start in range(0, len(graphs), 512):
        chunk = graphs[start : start + 512]
        query = t.Query.term_set_query(index.schema, "graphs", chunk)
        limit = max(16, 4 * len(chunk))
        while True:
            result = searcher.search(query, limit, count=True)
            if result.count <= limit:
                break
            limit = result.count
        out.update(searcher.doc(addr)["key"][0] for _, addr in result.hits)
    return out


def stored_texts(index: Index, keys: list[str]) -> dict[str, set[str]]:
    """The label, other names, body texts and identifiers of the documents of `keys` (those
    that exist)."""
    t = _tantivy()
    searcher = index.searcher()
    out: dict[str, set[str]] = {}
    for start in range(0, len(keys), 1024):
        chunk = keys[start : start + 1024]
        query = t.Query.term_set_query(index.schema, "key", chunk)
        for _, addr in searcher.search(query, len(chunk), count=False).hits:
            doc = searcher.doc(addr)
            out[doc["key"][0]] = {*doc["label"], *doc["alt"], *doc["body"], *doc["ids"]}
    return out


def swap_in(new: Path, target: Path) -> None:
    """Put the index built at `new` in place of `target` (which may not exist)."""
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def leftovers(store_path: Path) -> Iterator[Path]:
    """Build and swap directories a killed rebuild left behind."""
    for pattern in (f"{INDEX_DIR}.new-*", f"{INDEX_DIR}.old-*"):
        yield from Path(store_path).glob(pattern)
