"""The one module that talks to pyoxigraph.

Everything else in kg works with N-Quads text, format names and `kg.rdf.results` terms, so a
change in pyoxigraph's API is absorbed here.

Where triples live. Each record and dump entry states its triples in its own named graph
(provenance); shared entity declarations live in one entities graph. Oxigraph's real
default graph holds the RDF merge of all of them: every distinct triple once. Queries
without FROM / GRAPH read that default graph, so `COUNT(*)` counts each fact once
(pyoxigraph's `use_default_graph_as_union` is a bag: a triple in n graphs matches n times).
The store keeps the merge exact on every write (`write_batch`, `load`, `recover`).

Writes go through `write_batch`, which makes Oxigraph's fast but non-transactional bulk
loader crash-safe with an intent journal:

1. the graphs of the batch are listed in the journal graph (one atomic write), and so are
   the shared graphs it merges into;
2. one atomic update retracts the old versions of changed records: their triples leave the
   default graph unless a graph outside the batch still states them, and their graphs go;
3. the batch is bulk-loaded into its named graphs and, in the same bulk load, into the
   default graph (a set: a triple already there stays once). pyoxigraph's `bulk_load` is
   atomic (its sorted files are ingested in one step at its end), so a triple reaches the
   default graph only with the quad that states it, and readers see a batch whole or not
   at all;
4. the journal is cleared (one atomic write).

A writer that opens a store whose journal is not empty (a crash between 1 and 4) runs the
retraction of step 2 on every listed graph and drops them, and puts back into the default
graph any triple of a listed shared graph it lacks. Every triple in the default graph after
step 3 began belongs to a listed graph, so each record is either wholly present or wholly
absent, in its graph and in the default graph, and running the same ingest again converges.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import pyoxigraph as ox

from kg.errors import (
    KgError,
    QuerySyntaxError,
    QueryTooComplexError,
    StoreBusyError,
    StoreError,
    StoreMissingError,
    UsageError,
)
from kg.rdf import formats
from kg.rdf.limits import query_text_problem
from kg.rdf.query_text import syntax_message
from kg.rdf.results import (
    AskResult,
    GraphResult,
    QueryResult,
    Row,
    SelectResult,
    SelectStream,
    Term,
)
from kg.rdf.sparql_scan import scan
from kg.rdf.vocab import KG, QUERY_PREFIXES

#: The journal graph lives outside the base so that no instance IRI can collide with it.
JOURNAL_GRAPH = "urn:x-kg:journal"
#: What follows a graph's IRI on its journal line (N-Quads): "this graph is being loaded".
_PENDING_SUFFIX = (
    f' {KG.pendingLoad} "true"^^<http://www.w3.org/2001/XMLSchema#boolean> <{JOURNAL_GRAPH}> .\n'
)
#: A shared graph the batch set-merges into (the entities graph): recovery keeps it and
#: puts its triples back into the default graph.
_MERGING_SUFFIX = (
    f' {KG.pendingLoad} "false"^^<http://www.w3.org/2001/XMLSchema#boolean> <{JOURNAL_GRAPH}> .\n'
)
#: Every N-Quads line ends with its graph's IRI: replaced, the line is an N-Triples line of
#: the default graph (literals escape newlines, so the pattern only matches line ends).
_GRAPH_AT_END = re.compile(rb" <[^<>\n]*> \.\n")
T = TypeVar("T")
#: Where read-only snapshots pin their files (see GraphStore._open_snapshot).
READERS_DIR = ".kg-readers"
#: A file kg writes into a store it creates: the default graph holds only the merge of the
#: named graphs. It goes, before the write, with the first write that may state a triple of
#: the default graph's own (a SPARQL update, a load into the default graph), and never comes
#: back. Without it, exports look for such triples with a scan of the whole default graph
#: (a query per triple: over 15 minutes at 100,000 records).
MERGE_ONLY_MARK = ".kg-merge-only"
_PIN_NUMBERS = itertools.count()
#: How often opening a snapshot is tried while a writer deletes the files being linked.
_SNAPSHOT_ATTEMPTS = 10


def rdf_format(name: str) -> ox.RdfFormat:
    """Oxigraph's format for a kg.rdf.formats name, alias, extension or media type."""
    fmt = ox.RdfFormat.from_media_type(formats.rdf_format(name).media_type)
    if fmt is None:  # every registry format is one Oxigraph knows (tests/test_formats.py)
        raise UsageError(f"Oxigraph cannot read or write {name!r}")
    return fmt


# --- terms --------------------------------------------------------------------------------


def _remove_stale_pins(path: Path) -> None:
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


#: The files a RocksDB directory is opened from (not LOCK, the info LOG, or a bulk load's
#: files in progress): tables and logs are linked both before and after the manifest copy.
_STORE_FILES = re.compile(r"CURRENT|IDENTITY|MANIFEST-\d+|OPTIONS-\d+")
_DATA_FILES = re.compile(r"\d+\.(log|sst)")


def _link_store_files(path: Path, into: Path, names: re.Pattern[str]) -> None:
    """Hard-link the store's files whose names match into `into` (see _open_snapshot). A
    file gone meanwhile was dropped by the writer after a newer version stopped using it.
    The manifest is copied instead: frozen, it names no table made after the copy."""
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if names.fullmatch(entry.name) and not (into / entry.name).exists():
            with contextlib.suppress(FileNotFoundError):
                if entry.name.startswith("MANIFEST-"):
                    shutil.copyfile(entry.path, into / entry.name)
                else:
                    os.link(entry.path, into / entry.name)


def store_signature(path: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of a store directory's files: any write changes it.

    The server's workers reopen their snapshots when it moves on, and kg.graph.cache keys
    its persisted matrices to it. Subdirectories (snapshot pins, caches) do not count.
    """
    out = []
    try:
        for entry in os.scandir(path):
            if entry.is_file():
                st = entry.stat()
                out.append((entry.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return ()
    return tuple(sorted(out))


def _vanished(exc: BaseException) -> bool:
    """Whether a RocksDB error says a table file is gone (a writer compacted it away)."""
    return "No such file or directory" in str(exc)


def _lost_race(exc: BaseException) -> bool:
    """Whether opening a snapshot failed on the writer's moves: a file gone, or the copy of
    a manifest caught mid-write (an error about a file in READERS_DIR). Worth another go."""
    return _vanished(exc) or READERS_DIR in str(exc)


def iri_error(value: str) -> str | None:
    """Why Oxigraph would reject `value` as an IRI (bad port, bad IPv6 host, a second '#'),
    or None. The mapping checks IRIs from the data with this, so the bulk loader never
    meets one it refuses."""
    try:
        ox.NamedNode(value)
    except ValueError as exc:
        return str(exc)
    return None


def _term(value: Any) -> Term:
    if isinstance(value, ox.NamedNode):
        return Term("uri", value.value)
    if isinstance(value, ox.Literal):
        lang = value.language
        return Term("literal", value.value, None if lang else value.datatype.value, lang)
    if isinstance(value, ox.BlankNode):
        return Term("bnode", value.value)
    if isinstance(value, ox.Triple):
        return Term("triple", str(value))
    raise TypeError(f"unexpected term {value!r}")  # pragma: no cover


def _ox_term(term: Term) -> ox.NamedNode | ox.Literal | ox.BlankNode:
    try:
        if term.kind == "uri":
            return ox.NamedNode(term.value)
        if term.kind == "bnode":
            return ox.BlankNode(term.value)
        if term.lang:
            return ox.Literal(term.value, language=term.lang)
        if term.datatype:
            return ox.Literal(term.value, datatype=ox.NamedNode(term.datatype))
        return ox.Literal(term.value)
    except ValueError as exc:
        raise UsageError(f"invalid RDF term {term.n3()[:80]}: {exc}") from None


def _check_query_text(sparql: str) -> None:
    """Refuse a query too long or nested too deeply for the parser (it would crash)."""
    problem = query_text_problem(sparql)
    if problem is not None:
        raise QueryTooComplexError(problem)


def _graph(iri: str | None) -> ox.NamedNode | ox.DefaultGraph:
    return ox.DefaultGraph() if iri is None else ox.NamedNode(iri)


KG_PENDING = ox.NamedNode(KG.pendingLoad[1:-1])
#: A default-graph triple that no named graph states (the journal aside).
_OWN_PATTERN = (
    f"?s ?p ?o FILTER NOT EXISTS {{ GRAPH ?g {{ ?s ?p ?o }} FILTER (?g != <{JOURNAL_GRAPH}>) }}"
)
_OWN_DEFAULT = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {_OWN_PATTERN} }}"
#: What keeps the default graph a superset of the named graphs after a SPARQL update (not
#: of a graph the journal lists: a batch in flight joins the merge once it is whole).
_MERGE_MISSING = (
    "INSERT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } "
    f"FILTER (?g != <{JOURNAL_GRAPH}>) "
    f"FILTER NOT EXISTS {{ GRAPH <{JOURNAL_GRAPH}> {{ ?g ?flag ?v }} }} "
    "FILTER NOT EXISTS { ?s ?p ?o } }"
)


def _retraction(graphs: list[str], *, journal: bool, merge_back: bool = False) -> str:
    """One SPARQL update that takes graphs out of the store: their triples leave the
    default graph unless a graph outside them still states them, and `graphs` are dropped.
    Run as one update, it is one transaction.

    With `journal`, the graphs retracted are those the journal lists as pending (a batch's,
    whose new graphs are still empty) and "outside" means not listed so (an index lookup
    per triple, however large the batch); else they are `graphs`. With `merge_back`
    (recovery), the triples of the shared graphs the journal lists as merged into
    (`_MERGING_SUFFIX`) are first put back into the default graph."""
    j = f"<{JOURNAL_GRAPH}>"
    parts = []
    if merge_back:
        parts.append(
            f"INSERT {{ ?s ?p ?o }} WHERE {{ GRAPH {j} {{ ?m {KG.pendingLoad} false }} "
            "GRAPH ?m { ?s ?p ?o } FILTER NOT EXISTS { ?s ?p ?o } }"
        )
    if journal:
        chosen = f"GRAPH {j} {{ ?g {KG.pendingLoad} true }}"
        outside = f"FILTER NOT EXISTS {{ GRAPH {j} {{ ?h {KG.pendingLoad} true }} }}"
    else:
        chosen = f"VALUES ?g {{ {' '.join(f'<{g}>' for g in graphs)} }}"
        outside = f"FILTER (?h NOT IN ({', '.join(f'<{g}>' for g in graphs)}))"
    parts.append(
        f"DELETE {{ ?s ?p ?o }} WHERE {{ {chosen} GRAPH ?g {{ ?s ?p ?o }} "
        f"FILTER NOT EXISTS {{ GRAPH ?h {{ ?s ?p ?o }} FILTER (?h != {j}) {outside} }} }}"
    )
    parts.extend(f"DROP SILENT GRAPH <{g}>" for g in graphs)
    return " ;\n".join(parts)


# --- the store ----------------------------------------------------------------------------


class GraphStore:
    """An Oxigraph store, on disk or in memory, as kg uses it."""

    def __init__(self, inner: ox.Store, path: Path | None, read_only: bool) -> None:
        self._store = inner
        self.path = path
        self.read_only = read_only
        self._pin: Path | None = None  # the checkpoint a pinned snapshot reads (see open)
        self._journal_present: bool | None = None  # read-only: a crashed batch's journal
        self._keeps_merge: bool | None = None  # see keeps_merge

    @classmethod
    def memory(cls) -> GraphStore:
        return cls(ox.Store(), None, False)

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
            for attempt in range(_SNAPSHOT_ATTEMPTS):
                try:
                    return cls._open_snapshot(path)
                except (OSError, RuntimeError) as exc:
                    if attempt < _SNAPSHOT_ATTEMPTS - 1 and _lost_race(exc):
                        # the writer compacted a file away while we linked it: again, a
                        # little later (a busy 2-core machine lost three attempts in a row)
                        time.sleep(0.02 * attempt)
                        continue
                    raise StoreError(f"cannot open the store at {path} read-only: {exc}") from None
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path} is a file, not a store directory; pick another --store path")
        fresh = not (path / "CURRENT").exists()
        try:
            store = cls(ox.Store(str(path)), path, False)
        except OSError as exc:
            if "lock" in str(exc).lower() or "temporarily unavailable" in str(exc).lower():
                raise StoreBusyError(
                    f"the store at {path} is busy: another kg process is writing to it. "
                    "Wait for it to finish, or run read-only commands (query, export, serve), "
                    "which open a snapshot beside the writer."
                ) from None
            raise StoreError(f"cannot open the store at {path}: {exc}") from None
        if fresh:
            (path / MERGE_ONLY_MARK).touch()
        store.recover()
        store.remove_orphan_bulk_files()
        _remove_stale_pins(path)
        return store

    @classmethod
    def _open_snapshot(cls, path: Path) -> GraphStore:
        """A read-only snapshot, pinned when the directory is writable.

        A plain read-only open reads its table files lazily, so a writer beside it that
        compacts (an ingest) can delete a file the snapshot still needs: its queries then
        fail, and an aggregate over the failing scan grows without bound (pyoxigraph 0.5
        collects the same error forever; it took 23 GB). Pinning checkpoints the snapshot
        into `<store>/.kg-readers/<pid>-<n>`: hard links (milliseconds, no copy) that the
        writer cannot delete. The pin is removed on close, or by the next opener if this
        process died.

        The checkpoint is taken from a second directory of hard links to the store's files,
        with a copy of the manifest, not from the store itself: the writer cannot delete
        what the checkpoint still has to link, and the frozen manifest names no table made
        after it (a busy 2-core machine lost ten attempts in a row to each). Tables and logs
        are linked before the copy and again after it. A read-only checkpoint holds no
        write-ahead log, so the writer's latest transactions (a cleared journal, removed
        graphs) would be missing: the linked logs move into the pin too, as a plain
        read-only open replays them.
        """
        _remove_stale_pins(path)
        pin = path / READERS_DIR / f"{os.getpid()}-{next(_PIN_NUMBERS)}"
        links = pin.with_name(pin.name + ".links")
        try:
            links.mkdir(parents=True)
        except OSError as exc:
            if _vanished(exc):
                raise
            return cls(ox.Store.read_only(str(path)), path, True)  # read-only: unpinned
        try:
            _link_store_files(path, links, _DATA_FILES)
            _link_store_files(path, links, _STORE_FILES)
            _link_store_files(path, links, _DATA_FILES)
            live = ox.Store.read_only(str(links))
            live.backup(str(pin))
            del live
            for log in links.glob("*.log"):
                os.replace(log, pin / log.name)
            shutil.rmtree(links)
        except (OSError, RuntimeError) as exc:
            shutil.rmtree(pin, ignore_errors=True)
            shutil.rmtree(links, ignore_errors=True)
            if isinstance(exc, RuntimeError) or _lost_race(exc):
                raise
            return cls(ox.Store.read_only(str(path)), path, True)  # no hard links: unpinned
        try:
            store = cls(ox.Store.read_only(str(pin)), path, True)
        except (OSError, RuntimeError):
            shutil.rmtree(pin, ignore_errors=True)
            raise
        store._pin = pin
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
            return cls(ox.Store.read_only(str(pin)), Path(path), True)
        except (OSError, RuntimeError) as exc:
            raise StoreError(f"cannot open the snapshot {pin} of {path}: {exc}") from None

    @staticmethod
    def release_snapshot(pin: Path) -> None:
        shutil.rmtree(pin, ignore_errors=True)

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
            if not (self.read_only and self.path is not None and _vanished(exc)):
                raise
        fresh = GraphStore.open(self.path, read_only=True)
        old_pin = self._pin
        self._store, self._pin, fresh._pin = fresh._store, fresh._pin, None
        self._journal_present = None
        if old_pin is not None:
            shutil.rmtree(old_pin, ignore_errors=True)
        try:
            return operation()
        except (OSError, RuntimeError) as exc:
            if not _vanished(exc):
                raise
            raise StoreError(
                f"the store at {self.path} changed under this reader twice; run it again"
            ) from None

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if not self.read_only and self.path is not None:
            self._store.flush()
        del self._store
        if self._pin is not None:
            shutil.rmtree(self._pin, ignore_errors=True)
            self._pin = None

    def __len__(self) -> int:
        """The number of quads in all graphs."""
        return len(self._store)

    # -- writing ---------------------------------------------------------------------------
    def _writable(self) -> ox.Store:
        if self.read_only:
            raise StoreError("this store was opened read-only")
        return self._store

    def recover(self) -> int:
        """Undo the batch a crash left half-written (see the module docstring). Returns how
        many graphs it dropped."""
        store = self._writable()
        journal = ox.NamedNode(JOURNAL_GRAPH)
        if not store.contains_named_graph(journal):
            if not self.keeps_merge():
                self.rebuild_merge()  # a store written before kg kept the merge
            return 0
        pending = [
            q.subject.value
            for q in store.quads_for_pattern(None, KG_PENDING, None, journal)
            if isinstance(q.subject, ox.NamedNode)
            and isinstance(q.object, ox.Literal)
            and q.object.value == "true"
        ]
        if any(g == JOURNAL_GRAPH for g in pending):  # a rebuild of the merge was cut short
            self.rebuild_merge()
            return 0
        store.update(_retraction(pending, journal=True, merge_back=True))
        store.remove_graph(journal)
        return len(pending)

    def keeps_merge(self) -> bool:
        """Whether the default graph holds the merge of the named graphs: false only for a
        store written before kg kept it (named graphs, an empty default graph)."""
        if self._keeps_merge is None:
            self._keeps_merge = self._default_graph_is_nonempty() or not any(
                g != ox.NamedNode(JOURNAL_GRAPH) for g in self._store.named_graphs()
            )
        return self._keeps_merge

    def rebuild_merge(self) -> None:
        """Fill the default graph with the merge of every named graph (not the journal), in
        bulk: for a store written before kg kept the merge, and after a bulk import. The
        journal marks it in flight (its own IRI as the pending graph), so a crash makes the
        next writer run it again."""
        store = self._writable()
        journal = ox.NamedNode(JOURNAL_GRAPH)
        store.load(f"<{JOURNAL_GRAPH}>{_PENDING_SUFFIX}".encode(), format=ox.RdfFormat.N_QUADS)
        chunk: list[ox.Quad] = []
        for quad in store:
            if isinstance(quad.graph_name, ox.NamedNode) and quad.graph_name != journal:
                chunk.append(ox.Quad(quad.subject, quad.predicate, quad.object))
                if len(chunk) >= 1_000_000:
                    store.bulk_extend(chunk)
                    chunk = []
        if chunk:
            store.bulk_extend(chunk)
        store.flush()
        store.remove_graph(journal)
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

    def write_batch(
        self,
        nquads: bytes,
        graphs: Iterable[str],
        replace: Iterable[str] = (),
        shared: Iterable[str] = (),
    ) -> None:
        """Load a batch of N-Quads whose records live in `graphs`, replacing `replace` first.

        `nquads` may also hold triples for the `shared` graphs (the entities graph); those
        are set-merged. Every triple also goes into the default graph, which stays the merge
        of all graphs. See the module docstring for why this is crash-safe.
        """
        store = self._writable()
        journal = ox.NamedNode(JOURNAL_GRAPH)
        replace = list(replace)
        try:
            # One transaction, parsed natively: a quad object per graph costs ~30 us each.
            store.load(
                (
                    "".join(f"<{g}>{_PENDING_SUFFIX}" for g in graphs)
                    + "".join(f"<{g}>{_MERGING_SUFFIX}" for g in shared)
                ).encode(),
                format=ox.RdfFormat.N_QUADS,
            )
            if replace:  # the old versions leave their graphs and the merge, atomically
                store.update(_retraction(replace, journal=True))
                # journal and removals on disk before the new versions: the write-ahead
                store.flush()  # log is not synced, and a power cut must not merge them
            try:
                # One atomic bulk load: the quads into their graphs and, as the merge lines
                # (each line's graph IRI removed), their triples into the default graph.
                merge = _GRAPH_AT_END.sub(b" .\n", nquads)
                store.bulk_load(nquads + merge, format=ox.RdfFormat.N_QUADS)
            except SyntaxError as exc:
                # Nothing may stay half-loaded: drop the batch's graphs again, then report.
                self.recover()
                raise StoreError(f"the batch did not parse as N-Quads: {exc}") from None
            store.remove_graph(journal)
        except OSError as exc:  # disk full, I/O error: the journal lets the next writer recover
            raise KgError(
                f"writing to the store at {self.path} failed ({exc}); the batch in flight "
                "will be rolled back when the store is next opened for writing"
            ) from None

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
        try:
            quads = [
                q if graph is None else ox.Quad(q.subject, q.predicate, q.object, _graph(graph))
                for q in ox.parse(data, format=rdf_format(fmt), base_iri=base_iri)
            ]
        except SyntaxError as exc:
            raise KgError(f"the {fmt} input does not parse: {exc}") from None
        merged = [
            ox.Quad(q.subject, q.predicate, q.object)
            for q in quads
            if isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value != JOURNAL_GRAPH
        ]
        store = self._writable()
        if any(isinstance(q.graph_name, ox.DefaultGraph) for q in quads):
            self._may_state_own_default()
        store.extend(quads + merged)

    def bulk_load(self, data: bytes, fmt: str) -> None:
        """Load RDF in any format with Oxigraph's bulk loader: several times faster than
        `load`, but not atomic, so only for a fresh store (re-importing an export). The
        default graph's merge is rebuilt afterwards."""
        store = self._writable()
        had_default = self._default_graph_is_nonempty()
        try:
            store.bulk_load(data, format=rdf_format(fmt))
        except SyntaxError as exc:
            raise KgError(f"the {fmt} input does not parse: {exc}") from None
        finally:
            if had_default or self._default_graph_is_nonempty():
                self._may_state_own_default()  # the data may state triples of the default graph
        if rdf_format(fmt).supports_datasets:
            self.rebuild_merge()

    def remove_graph(self, graph: str) -> None:
        """Drop a named graph; its triples leave the default graph unless another graph
        still states them (one transaction)."""
        self._writable().update(_retraction([graph], journal=False))

    def update(self, sparql: str) -> None:
        """Run a SPARQL update; in the same transaction, what it inserted into named graphs
        joins the default graph's merge (a scan of the named graphs). What it deletes from a
        named graph stays in the merge: drop or re-ingest graphs through kg for that."""
        _check_query_text(sparql)
        self._may_state_own_default()
        try:
            self._writable().update(f"{sparql}\n;\n{_MERGE_MISSING}", prefixes=QUERY_PREFIXES)
        except SyntaxError as exc:
            raise QuerySyntaxError(syntax_message(sparql, str(exc))) from None

    def flush(self) -> None:
        self._writable().flush()

    def optimize(self) -> None:
        self._writable().optimize()

    # -- reading ---------------------------------------------------------------------------
    def graph_hashes(self, graphs: list[str]) -> dict[str, str]:
        """The stored `kg:contentHash` of each of `graphs` that exists."""
        out: dict[str, str] = {}
        store = self._store
        prop = ox.NamedNode(KG.contentHash[1:-1])
        for g in graphs:
            node = ox.NamedNode(g)
            for quad in store.quads_for_pattern(node, prop, None, node):
                if isinstance(quad.object, ox.Literal):
                    out[g] = quad.object.value
        return out

    def named_graphs(self) -> Iterator[str]:
        for g in self._store.named_graphs():
            if isinstance(g, ox.NamedNode) and g.value != JOURNAL_GRAPH:
                yield g.value

    def has_graph(self, graph: str) -> bool:
        return bool(self._store.contains_named_graph(ox.NamedNode(graph)))

    def subjects_with(self, predicate: str, value: str) -> list[str]:
        """IRIs (sorted) of the subjects with `predicate` "value" (a plain string), any graph."""
        pattern = (None, ox.NamedNode(predicate), ox.Literal(value), None)
        quads = self._store.quads_for_pattern(*pattern)
        return sorted({q.subject.value for q in quads if isinstance(q.subject, ox.NamedNode)})

    def literal_values(self, subject: str, predicate: str) -> list[str]:
        """The lexical forms of `subject`'s `predicate` literals, any graph."""
        quads = self._store.quads_for_pattern(ox.NamedNode(subject), ox.NamedNode(predicate), None)
        return sorted({q.object.value for q in quads if isinstance(q.object, ox.Literal)})

    def rename_iris(self, renames: Mapping[str, str]) -> int:
        """Rewrite each `old` IRI to `new` in every graph, in one atomic update.

        Nodes minted beneath `old` (`old/result/…`, found by following its links) move with
        it, in the named graphs and in the default graph's merge. Returns how many quads of the
        named graphs were rewritten.
        """
        store = self._writable()
        journal = ox.NamedNode(JOURNAL_GRAPH)
        found: dict[ox.Quad, None] = {}
        for old in renames:
            todo, seen = [old], {old}
            while todo:
                node = ox.NamedNode(todo.pop())
                for quad in [
                    *store.quads_for_pattern(node, None, None, None),
                    *store.quads_for_pattern(None, None, node, None),
                ]:
                    if quad.graph_name == journal:
                        continue
                    found[quad] = None
                    obj = quad.object
                    if (
                        isinstance(obj, ox.NamedNode)
                        and obj.value.startswith(old + "/")
                        and obj.value not in seen
                    ):
                        seen.add(obj.value)
                        todo.append(obj.value)
        if not found:
            return 0
        prefixes = sorted(renames, key=len, reverse=True)  # longest match first

        def moved(term: Any) -> Any:
            if isinstance(term, ox.NamedNode):
                for old in prefixes:
                    value = term.value
                    if value == old or value.startswith(old + "/"):
                        return ox.NamedNode(renames[old] + value[len(old) :])
            return term

        def data(quads: Iterable[ox.Quad]) -> str:
            return " ".join(
                f"GRAPH {q.graph_name} {{ {q.subject} {q.predicate} {q.object} }}"
                if isinstance(q.graph_name, ox.NamedNode)
                else f"{q.subject} {q.predicate} {q.object} ."
                for q in quads
            )

        new = [ox.Quad(moved(q.subject), q.predicate, moved(q.object), q.graph_name) for q in found]
        store.update(f"DELETE DATA {{ {data(found)} }} ;\nINSERT DATA {{ {data(new)} }}")
        return sum(1 for q in found if isinstance(q.graph_name, ox.NamedNode))  # not the merge

    def _dataset(
        self,
        sparql: str,
        union: bool,
        default_graphs: list[str] | None,
        named_graphs: list[str] | None,
    ) -> dict[str, Any]:
        """The query dataset, as SPARQL 1.1 and its protocol define it.

        Without FROM / FROM NAMED in the query and without protocol graphs, the default
        graph is the store's real default graph: the merge of all graphs, each triple once
        (a store written before kg kept the merge falls back to Oxigraph's union, a bag).
        `default_graphs` replace it; `named_graphs` alone leave it empty, as the protocol
        says. `union=False` asks for the real default graph whatever the store keeps.
        """
        kwargs: dict[str, Any] = {}
        if default_graphs is not None:
            kwargs["default_graph"] = [ox.NamedNode(g) for g in default_graphs]
        elif named_graphs is not None:
            kwargs["default_graph"] = []
        elif union and not self.keeps_merge() and not scan(sparql).has_dataset:
            kwargs["use_default_graph_as_union"] = True  # a FROM / FROM NAMED overrides it
        if named_graphs is not None:
            kwargs["named_graphs"] = [ox.NamedNode(g) for g in named_graphs]
        return kwargs

    def _hide_journal(self, kwargs: dict[str, Any]) -> None:
        """Keep a crashed batch's journal graph out of a read-only snapshot's queries.

        A writer clears the journal when it opens the store; until then a reader's snapshot
        still holds it, and the union default graph (and GRAPH ?g) would show its
        kg:pendingLoad quads. Only snapshots taken of a crashed store pay for listing the
        graphs (checked once per snapshot).
        """
        if not self.read_only:
            return
        if self._journal_present is None:
            self._journal_present = self._store.contains_named_graph(ox.NamedNode(JOURNAL_GRAPH))
        if not self._journal_present:
            return
        graphs = [ox.NamedNode(g) for g in self.named_graphs()]
        if kwargs.pop("use_default_graph_as_union", False):
            kwargs["default_graph"] = [ox.DefaultGraph(), *graphs]
        kwargs.setdefault("named_graphs", graphs)

    def _run(
        self,
        sparql: str,
        substitutions: Mapping[str, Term] | None,
        union: bool,
        default_graphs: list[str] | None,
        named_graphs: list[str] | None,
        *,
        check: bool = True,
    ) -> Any:
        subs: dict[ox.Variable, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple] = {
            ox.Variable(k): _ox_term(v) for k, v in (substitutions or {}).items()
        }
        if check:  # the limits meant for user text, not for the queries kg builds itself
            _check_query_text(sparql)
        kwargs = self._dataset(sparql, union, default_graphs, named_graphs)
        if "default_graph" not in kwargs and not scan(sparql).has_dataset:
            self._hide_journal(kwargs)
        try:
            return self._store.query(
                sparql, prefixes=QUERY_PREFIXES, substitutions=subs or None, **kwargs
            )
        except SyntaxError as exc:
            raise QuerySyntaxError(syntax_message(sparql, str(exc))) from None
        except ValueError as exc:
            raise UsageError(str(exc)) from None

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
        result = self._run(sparql, substitutions, union, default_graphs, named_graphs)
        if isinstance(result, ox.QueryBoolean):
            return AskResult(bool(result))
        if isinstance(result, ox.QuerySolutions):
            variables = [v.value for v in result.variables]
            rows: list[Row] = []
            for solution in result:
                rows.append(
                    tuple(None if solution[v] is None else _term(solution[v]) for v in variables)
                )
                if limit is not None and len(rows) >= limit:
                    break
            return SelectResult(variables, rows)
        text = ox.serialize(result, format=ox.RdfFormat.N_TRIPLES) or b""
        return GraphResult(text.decode("utf-8"))

    def stream(
        self, sparql: str, *, substitutions: Mapping[str, Term] | None = None
    ) -> SelectStream | AskResult | GraphResult:
        """Run SPARQL as `query` does, a SELECT's rows read lazily as the engine yields them
        (for writers that print each row as it comes: `kg sparql` on a large result)."""
        result = self._run(sparql, substitutions, True, None, None)
        if isinstance(result, ox.QueryBoolean):
            return AskResult(bool(result))
        if isinstance(result, ox.QuerySolutions):
            width = len(result.variables)

            def rows() -> Iterator[Row]:
                for s in result:
                    yield tuple(None if s[i] is None else _term(s[i]) for i in range(width))

            def count_rest() -> int:
                return sum(1 for _ in result)

            return SelectStream([v.value for v in result.variables], rows(), count_rest)
        text = ox.serialize(result, format=ox.RdfFormat.N_TRIPLES) or b""
        return GraphResult(text.decode("utf-8"))

    def select_values(self, sparql: str, *, union: bool = True) -> Iterator[tuple[str | None, ...]]:
        """Stream a SELECT's rows as plain lexical values (None where unbound).

        For bulk reads (millions of rows) where `query`'s typed terms cost more than the
        values: no term objects are built and nothing is held beyond the current row.
        For kg's own queries only: the length and depth limits meant for user queries do not
        apply (a VALUES block of stored IRIs may be long however it is chunked).
        """
        result = self._run(sparql, None, union, None, None, check=False)
        if not isinstance(result, ox.QuerySolutions):
            raise UsageError("select_values needs a SELECT query")
        width = len(result.variables)
        for solution in result:
            yield tuple(None if solution[i] is None else solution[i].value for i in range(width))

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
        result = self._run(sparql, substitutions, union, default_graphs, named_graphs)
        if isinstance(result, ox.QueryTriples):
            fmt = ox.RdfFormat.from_media_type(graph_type)
            if fmt is None or fmt in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
                raise UsageError(f"{graph_type} is not a triple format for graph results")
            kwargs: dict[str, Any] = {}
            if prefixes and fmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.RDF_XML):
                kwargs["prefixes"] = dict(prefixes)
            ox.serialize(result, output, format=fmt, **kwargs)  # type: ignore[arg-type]
            return fmt.media_type, "graph"
        rfmt = ox.QueryResultsFormat.from_media_type(results_type)
        if rfmt is None:
            raise UsageError(f"{results_type} is not a SPARQL results format")
        result.serialize(output, format=rfmt)
        kind = "boolean" if isinstance(result, ox.QueryBoolean) else "solutions"
        return rfmt.media_type, kind

    def count(self, graph: str | None = None) -> int:
        """The quads of one named graph, or of all of them: what the sources state, each
        statement in its graph (neither the journal nor the default graph's merge)."""
        if graph is None:
            journal_graph = ox.NamedNode(JOURNAL_GRAPH)
            journal = sum(1 for _ in self._store.quads_for_pattern(None, None, None, journal_graph))
            merge = self.merge_size() if self.derived_default() else 0
            return len(self._store) - journal - merge
        return sum(1 for _ in self._store.quads_for_pattern(None, None, None, ox.NamedNode(graph)))

    def merge_size(self) -> int:
        """The triples of the default graph: the distinct triples of all graphs."""
        result = self._store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert isinstance(result, ox.QuerySolutions)
        return int(next(iter(result))[0].value)

    def derived_default(self) -> bool:
        """Whether the default graph is derived (the merge of the named graphs, which then
        exist) rather than data of its own (a memory store of a CONSTRUCT result)."""
        journal = ox.NamedNode(JOURNAL_GRAPH)
        return self.keeps_merge() and any(g != journal for g in self._store.named_graphs())

    # -- dumping ---------------------------------------------------------------------------
    def dump(
        self,
        out: IO[bytes] | str | Path,
        fmt: str,
        *,
        graph: str | None = None,
        prefixes: dict[str, str] | None = None,
        include_merge: bool = False,
    ) -> None:
        """Write the store (or one graph) natively. Triple formats get the merge (the
        default graph) unless `graph`; dataset formats the named graphs, and the default
        graph's merge too with `include_merge` (what the store holds, for benchmarks)."""
        rfmt = rdf_format(fmt)
        target = str(out) if isinstance(out, Path) else out
        kwargs: dict[str, Any] = {}
        if prefixes and rfmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
            kwargs["prefixes"] = prefixes
        if graph is not None:
            self._store.dump(target, format=rfmt, from_graph=ox.NamedNode(graph), **kwargs)
        elif rfmt.supports_datasets:
            skip_default = self.derived_default() and not include_merge
            quads = itertools.chain(
                (
                    q
                    for q in self._store
                    if not (
                        isinstance(q.graph_name, ox.NamedNode)
                        and q.graph_name.value == JOURNAL_GRAPH
                    )
                    and not (skip_default and isinstance(q.graph_name, ox.DefaultGraph))
                ),
                (ox.Quad(t.subject, t.predicate, t.object) for t in self._own(skip_default)),
            )
            ox.serialize(quads, target, format=rfmt, **kwargs)
        elif self.keeps_merge():
            self._store.dump(target, format=rfmt, from_graph=ox.DefaultGraph(), **kwargs)
        else:
            triples = self._store.query(
                "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", use_default_graph_as_union=True
            )
            ox.serialize(triples, target, format=rfmt, **kwargs)  # type: ignore[arg-type]

    def quads_nquads(self, graph: str | None = None) -> Iterator[str]:
        """Every quad of the named graphs (or of one graph) as an N-Quads line, in store
        order: what the sources state. The default graph comes too only when it is data of
        its own (`derived_default`)."""
        g = None if graph is None else ox.NamedNode(graph)
        skip_default = graph is None and self.derived_default()
        for q in self._store.quads_for_pattern(None, None, None, g):
            if isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value == JOURNAL_GRAPH:
                continue
            if skip_default and isinstance(q.graph_name, ox.DefaultGraph):
                continue
            yield f"{q} .\n"
        for triple in self._own(skip_default):  # the default graph's own statements
            yield f"{triple} .\n"

    def _own(self, wanted: bool) -> Iterator[ox.Triple]:
        """The default graph's own triples (see `has_own_default`), when `wanted`."""
        if wanted and not self._merge_only():
            result = self._store.query(_OWN_DEFAULT)
            assert isinstance(result, ox.QueryTriples)
            yield from result

    def has_own_default(self) -> bool:
        """Whether the default graph states triples that no named graph states (written by
        a SPARQL update or `load` into the default graph): dataset exports keep those."""
        if self._merge_only():
            return False
        result = self._store.query(f"ASK {{ {_OWN_PATTERN} }}")
        return bool(result)

    def _merge_only(self) -> bool:
        """Whether no write has stated a triple of the default graph's own (MERGE_ONLY_MARK);
        false for a store kg did not create, or that a SPARQL update has written."""
        return self.path is not None and (self.path / MERGE_ONLY_MARK).exists()

    def _may_state_own_default(self) -> None:
        """Before a write that may state a triple of the default graph's own: the store is no
        longer known to hold only the merge there. Removed first, so a crash leaves it out."""
        if self.path is not None:
            (self.path / MERGE_ONLY_MARK).unlink(missing_ok=True)

    def _default_graph_is_nonempty(self) -> bool:
        return (
            next(iter(self._store.quads_for_pattern(None, None, None, ox.DefaultGraph())), None)
            is not None
        )

    def merge_ntriples(self) -> Iterator[str]:
        """The default graph (the merge) as N-Triples lines, in store order."""
        for q in self._store.quads_for_pattern(None, None, None, ox.DefaultGraph()):
            yield f"{q.triple} .\n"

    # -- exporting (kg.export) ----------------------------------------------------------------
    def pending_graphs(self) -> set[str]:
        """Graphs that a batch in flight has listed in the journal.

        A read-only snapshot taken mid-batch sees them half-written, so exports leave them out.
        """
        journal = ox.NamedNode(JOURNAL_GRAPH)
        return {
            q.subject.value
            for q in self._store.quads_for_pattern(None, None, None, journal)
            if isinstance(q.subject, ox.NamedNode)
        }

    def graph_ntriples(self, graph: str | None, out: BinaryWriter, *, own: bool = False) -> None:
        """One graph's triples (None: the default graph) as N-Triples lines, written natively
        into `out` in 8 KiB pieces, in store order. With `own`, only the default graph's
        triples that no named graph states (its own statements, not the merge's copies)."""
        if graph is None and own:
            ox.serialize(self._store.query(_OWN_DEFAULT), out, format=ox.RdfFormat.N_TRIPLES)  # type: ignore[arg-type]
            return
        self._store.dump(out, format=ox.RdfFormat.N_TRIPLES, from_graph=_graph(graph))  # type: ignore[arg-type]

    def subject_lines_by_graph(self, subject: bytes) -> dict[str | None, list[bytes]]:
        """The N-Triples lines about the IRI token `subject` (`<…>`), graph by graph (None:
        the default graph; not the journal), in Oxigraph's own N-Triples form."""
        by_graph: dict[str | None, list[ox.Triple]] = {}
        node = ox.NamedNode(subject[1:-1].decode())
        for q in self._store.quads_for_pattern(node, None, None, None):
            name = q.graph_name.value if isinstance(q.graph_name, ox.NamedNode) else None
            if name != JOURNAL_GRAPH:
                by_graph.setdefault(name, []).append(q.triple)
        return {
            name: (ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"").splitlines(
                keepends=True
            )
            for name, triples in by_graph.items()
        }

    def triple_graphs(self, ntriples_line: bytes) -> list[str | None]:
        """The graphs (None: the default graph) that hold the triple on one N-Triples line."""
        triple = next(iter(ox.parse(ntriples_line, format=ox.RdfFormat.N_TRIPLES)))
        return [
            q.graph_name.value if isinstance(q.graph_name, ox.NamedNode) else None
            for q in self._store.quads_for_pattern(
                triple.subject, triple.predicate, triple.object, None
            )
        ]

    def canonical_union_digest(self) -> str:
        """A SHA-256 over the canonical N-Triples of the union of all graphs, each triple once
        (isomorphism by hash, for formats without named graphs)."""
        dataset = ox.Dataset(
            ox.Quad(q.subject, q.predicate, q.object)
            for q in self._store
            if not (isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value == JOURNAL_GRAPH)
            and not (isinstance(q.graph_name, ox.NamedNode) and self.keeps_merge())
        )
        dataset.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
        lines = sorted(f"{q} .\n" for q in dataset)
        return hashlib.sha256("".join(lines).encode()).hexdigest()

    def canonical_digest(self, exclude_predicates: Iterable[str] = ()) -> str:
        """A SHA-256 over the canonical N-Quads of the whole store (isomorphism by hash)."""
        skip = set(exclude_predicates)
        if not skip:
            fast = self._sorted_dump_digest()
            if fast is not None:
                return fast
        dataset = ox.Dataset(
            q
            for q in self._store
            if q.predicate.value not in skip
            and not (isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value == JOURNAL_GRAPH)
        )
        dataset.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
        lines = sorted(f"{q} .\n" for q in dataset)
        return hashlib.sha256("".join(lines).encode()).hexdigest()

    def _sorted_dump_digest(self) -> str | None:
        """`canonical_digest` from Oxigraph's native N-Quads dump, several times faster on
        a disk store; None when a blank node may be present (those need canonical labels)."""
        buffer = io.BytesIO()
        self._store.dump(buffer, format=ox.RdfFormat.N_QUADS)
        journal = f" <{JOURNAL_GRAPH}> .".encode()
        lines = [line for line in buffer.getvalue().splitlines() if not line.endswith(journal)]
        del buffer
        if any(b"_:" in line for line in lines):
            return None
        lines.sort()  # UTF-8 byte order is code point order: the same order as sorted(str)
        digest = hashlib.sha256()
        for line in lines:
            digest.update(line)
            digest.update(b"\n")
        return digest.hexdigest()


def _tsv_term(term: Term | None) -> str:
    if term is None:
        return ""
    if term.kind == "triple":  # RDF 1.2 triple term syntax
        return f"<<( {term.value} )>>"
    return term.n3().replace("\t", "\\t")  # a tab only ever stands in a literal


def serialize_results(result: SelectResult | AskResult, fmt: str) -> bytes:
    """SPARQL results as `fmt` (json, xml, csv, tsv or a media type), written by Oxigraph's
    own serialisers: the ones the server streams, so every results writer in kg is one.

    Results from anywhere (the store, a remote endpoint, a truncated --limit) are handed to
    Oxigraph as TSV, whose terms are plain SPARQL syntax (`Term.n3`)."""
    native = ox.QueryResultsFormat.from_media_type(formats.results_format(fmt).media_type)
    if native is None:
        raise UsageError(f"Oxigraph cannot write results as {fmt!r}")
    if isinstance(result, AskResult):
        answer = b'{"head":{},"boolean":true}' if result.value else b'{"head":{},"boolean":false}'
        parsed = ox.parse_query_results(answer, format=ox.QueryResultsFormat.JSON)
    else:
        lines = ["\t".join(f"?{v}" for v in result.variables)]
        lines += ["\t".join(_tsv_term(t) for t in row) for row in result.rows]
        parsed = ox.parse_query_results(
            "\n".join(lines).encode("utf-8"), format=ox.QueryResultsFormat.TSV
        )
    return parsed.serialize(format=native) or b""


def parse_to_ntriples(data: bytes, fmt: str, *, base_iri: str | None = None) -> str:
    """Parse RDF in `fmt` and return it as N-Quads/N-Triples text (for tests and conversion)."""
    try:
        quads = ox.parse(data, format=rdf_format(fmt), base_iri=base_iri)
        return "".join(f"{q} .\n" for q in quads)
    except SyntaxError as exc:
        raise KgError(f"the {fmt} input does not parse: {exc}") from None


def convert(ntriples: str, fmt: str, prefixes: dict[str, str] | None = None) -> bytes:
    """Re-serialise N-Triples text into another RDF format."""
    rfmt = rdf_format(fmt)
    triples = ox.parse(ntriples.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    kwargs: dict[str, Any] = {}
    if prefixes and rfmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
        kwargs["prefixes"] = prefixes
    return ox.serialize(triples, format=rfmt, **kwargs) or b""


def select_variables(sparql: str) -> list[str] | None:
    """The variables a SELECT query projects (None for ASK, CONSTRUCT and DESCRIBE).

    pyoxigraph's `substitutions` only binds projected variables, so callers ask first. The
    query is run on an empty store, which costs a parse and nothing else.
    """
    try:
        result = ox.Store().query(sparql, prefixes=QUERY_PREFIXES)
    except SyntaxError as exc:
        raise QuerySyntaxError(syntax_message(sparql, str(exc))) from None
    if isinstance(result, ox.QuerySolutions):
        return [v.value for v in result.variables]
    return None


class BinaryWriter(Protocol):
    """What the export writers need of an output: a binary file, a gzip stream, a sink."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...


def serialize_lines(
    chunks: Iterable[bytes],
    out: BinaryWriter,
    fmt: str,
    *,
    dataset: bool = False,
    prefixes: Mapping[str, str] | None = None,
) -> None:
    """Write N-Triples chunks (N-Quads when `dataset`) as one `fmt` document, streaming.

    Each chunk must hold whole lines. The serializer keeps the input order, so it groups
    consecutive triples that share a subject (and quads that share a graph).
    """
    rfmt = rdf_format(fmt)
    source = ox.RdfFormat.N_QUADS if dataset else ox.RdfFormat.N_TRIPLES

    kwargs: dict[str, Any] = {}
    if prefixes and rfmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
        kwargs["prefixes"] = dict(prefixes)
    try:
        # itertools chains the parsers in C: no Python frame per quad.
        quads = itertools.chain.from_iterable(ox.parse(c, format=source) for c in chunks)
        ox.serialize(quads, out, format=rfmt, **kwargs)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise KgError(f"the graph cannot be written as {fmt}: {exc}") from None


def parse_triples(chunk: bytes) -> Iterator[tuple[Term, Term, Term]]:
    """The triples of N-Triples text as (subject, predicate, object) terms, in order."""
    for q in ox.parse(chunk, format=ox.RdfFormat.N_TRIPLES):
        yield _term(q.subject), _term(q.predicate), _term(q.object)
