"""The worker side of the query pool (kg.serve.pool): a process that holds its own
read-only snapshot of the store (or its own copy of a memory store), under its limits, and
answers one request at a time.

A worker is a fresh interpreter (`worker_entry`), started by the pool with a connected
socket. It limits itself first (memory: kg.rdf.limits; network: kg.serve.sandbox), keeps
the engine runtime's own text off the log (kg.rdf.limits.quiet_native_stderr), opens the
store, says it is ready, then loops: each `Request` names the store version (generation) to
answer from, and the worker catches up to it before it answers (a new snapshot, or a memory
store's new N-Quads copy). A query's result is serialised natively into a capped buffer, so
a result over the size limit stops the query. What may cross the process boundary is plain
data: the request types here (`Source`, `QueryJob`, `Request`, `Limits`) and the replies
(`("ok", value, generation)` or `("error", error class name, message)`).
"""

from __future__ import annotations

import io
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import KgError, ResultTooLargeError, StoreError
from kg.rdf.limits import quiet_native_stderr, set_memory_limit
from kg.rdf.results import Term
from kg.rdf.store import GraphStore

if TYPE_CHECKING:
    from kg.library import KnowledgeGraph
    from kg.search import StoreSearch


@dataclass(frozen=True)
class Source:
    """Where workers get their store: a directory, or an N-Quads snapshot of a memory store.

    `snapshot` is a checkpoint of the directory the pool pinned (GraphStore.share_snapshot):
    every worker given the same one sees the same version of the store.
    """

    path: Path | None = None
    nquads: bytes = b""
    snapshot: Path | None = None

    @classmethod
    def of(cls, store: GraphStore) -> Source:
        """The source for an open store: its directory, or a snapshot of its contents."""
        if store.path is not None:
            return cls(path=store.path)
        return cls(nquads="".join(store.quads_nquads()).encode("utf-8"))

    @property
    def on_disk(self) -> bool:
        return self.path is not None

    def open(self, *, write: bool = False) -> GraphStore:
        if self.path is not None:
            if self.snapshot is not None and not write:
                try:
                    return GraphStore.open_shared(self.snapshot, self.path)
                except StoreError:
                    # The pin links the writer's live write-ahead log, which may have moved
                    # on since it was pinned. A snapshot of its own, opened now, is newer
                    # than the pinned version: reads stay monotonic.
                    pass
            return GraphStore.open(self.path, read_only=not write)
        store = GraphStore.memory()
        if self.nquads:
            store.load(self.nquads, "nquads")
        return store


@dataclass(frozen=True)
class QueryJob:
    """One SPARQL query to run and serialise. Plain data: it crosses the process boundary."""

    sparql: str
    results_type: str = "application/sparql-results+json"
    graph_type: str = "text/turtle"
    substitutions: Mapping[str, Term] | None = None
    union: bool = True
    default_graphs: list[str] | None = None
    named_graphs: list[str] | None = None
    prefixes: Mapping[str, str] | None = None
    #: Expand kg search blocks (kg.search.sparql) first, in the worker, under its limits;
    #: a named query's parameters as `search_bindings`.
    expand_search: bool = False
    search_bindings: Mapping[str, Term] | None = None


@dataclass(frozen=True)
class Answer:
    body: bytes
    media_type: str
    kind: str  # "boolean", "solutions" or "graph"


@dataclass(frozen=True)
class Request:
    op: str  # "serialize", "result", "update", "call", "ping"
    generation: int
    payload: Any = None
    reload: Source | None = None  # a new memory snapshot to load first
    max_bytes: int = 0


class _CappedBuffer(io.RawIOBase):
    """Collects output; raising on the first write past the cap stops the serialiser."""

    def __init__(self, limit: int) -> None:
        self.data = bytearray()
        self.limit = limit

    def writable(self) -> bool:
        return True

    def write(self, chunk: Any) -> int:
        size = len(chunk)
        if self.limit and len(self.data) + size > self.limit:
            raise ResultTooLargeError(
                f"the result is larger than this server's limit of {_megabytes(self.limit)}; "
                "add a LIMIT (or select fewer variables), or ask the operator to raise "
                "--max-result-mb"
            )
        self.data += chunk
        return size


def _megabytes(n: int) -> str:
    return f"{n / 1_048_576:g} MB"


class _WorkerState:
    def __init__(self, source: Source, writable: bool, generation: int = 0) -> None:
        self.source = source
        self.writable = writable
        self.store = source.open(write=writable)
        self.generation = generation
        self.search: StoreSearch | None = None
        self.graphs: dict[str, KnowledgeGraph] = {}  # the library over this store, by base

    def library(self, base_iri: str | None) -> KnowledgeGraph:
        """The library (kg.library) over this worker's snapshot, for the worker operations
        (kg.mcp.calls); it searches with the worker's own index (`searcher`)."""
        key = base_iri or ""
        graph = self.graphs.get(key)
        if graph is None:
            graph = self.graphs[key] = _worker_graph(self.store, self.source.path, base_iri)
            graph._search = self.searcher()  # opened on first use, shared with `expand`
        return graph

    def searcher(self) -> StoreSearch:
        """The full-text index of this worker's store (kg.search), opened on first use."""
        if self.search is None:
            from kg.search import StoreSearch

            self.search = StoreSearch(self.store, self.source.path, quiet=True)
        return self.search

    def catch_up(self, request: Request) -> None:
        """Move to the version the pool names before answering (never answer from an
        older one: if the new snapshot cannot be opened, the request fails)."""
        if request.reload is not None and request.generation != self.generation:
            fresh = request.reload.open(write=self.writable)
            self.store.close()
            self.store, self.source = fresh, request.reload
            self.generation = request.generation
            self.search = None  # reopened on the new snapshot when next needed
            self.graphs = {}

    def handle(self, request: Request) -> Any:
        store = self.store
        if request.op == "serialize":
            job: QueryJob = request.payload

            sparql = job.sparql
            if job.expand_search:
                sparql = self.searcher().expand(sparql, job.search_bindings)

            def run() -> Answer:  # run again (fresh buffer) if the snapshot must be renewed
                out = _CappedBuffer(request.max_bytes)
                media_type, kind = store.query_into(
                    sparql,
                    out,
                    results_type=job.results_type,
                    graph_type=job.graph_type,
                    substitutions=job.substitutions,
                    union=job.union,
                    default_graphs=job.default_graphs,
                    named_graphs=job.named_graphs,
                    prefixes=job.prefixes,
                )
                return Answer(bytes(out.data), media_type, kind)

            return store.reading(run)
        if request.op == "result":
            sparql, substitutions, limit, search_bindings = request.payload
            if search_bindings is not None:  # expand kg search blocks here, under the limits
                sparql = self.searcher().expand(sparql, search_bindings)
            return store.query(sparql, substitutions=substitutions, limit=limit)
        if request.op == "update":
            store.update(request.payload)
            if self.source.on_disk:
                store.flush()
                return None
            snapshot = Source.of(store)
            self.source = snapshot
            return snapshot
        if request.op == "call":  # one of the worker operations (kg.mcp.calls), on the library
            from kg.mcp.calls import run_call

            name, kwargs, base_iri = request.payload
            return store.reading(lambda: run_call(self.library(base_iri), name, kwargs))
        if request.op == "ping":
            return os.getpid()
        raise KgError(f"unknown worker operation {request.op!r}")


def _worker_graph(store: GraphStore, path: Path | None, base_iri: str | None) -> KnowledgeGraph:
    """The library over a store this process already holds open (the worker's snapshot);
    closing it leaves the store to its owner."""
    from kg.library import KnowledgeGraph

    class WorkerGraph(KnowledgeGraph):
        def close(self) -> None:
            self._search = None

    graph = WorkerGraph(path, memory=path is None, base_iri=base_iri)
    graph._store = store
    return graph


@dataclass(frozen=True)
class Limits:
    """What a worker process may do: its memory, and whether it may open network sockets."""

    memory_mb: int = 0  # 0: no limit
    guard_network: bool = True
    #: With guard_network: the hosts a SERVICE may reach, each connect checked by the
    #: server (kg.serve.sandbox.Supervisor); empty: no Internet socket at all.
    allow_hosts: tuple[str, ...] = ()


def _error_reply(exc: BaseException, limits: Limits | None = None) -> tuple[Any, ...]:
    """("error", the error class's name, its message[, its template, its parameter]): the
    parameter goes along so that the face that asked words it (`KgError.worded`)."""
    if isinstance(exc, KgError):
        if exc.parameter is not None:
            return ("error", type(exc).__name__, str(exc), exc.template, exc.parameter)
        return ("error", type(exc).__name__, str(exc))
    if isinstance(exc, MemoryError):  # the parent words it (QueryPool.memory_error)
        return ("error", "MemoryLimitError", "")
    if type(exc).__name__ == "PanicException":  # pyo3's: a Rust panic inside the engine
        print(f"kg serve worker {os.getpid()}: the query engine failed (a panic)", file=sys.stderr)
        return (
            "error",
            "StoreError",
            "the query engine failed on this query (details are in the server's log); "
            "try a simpler query",
        )
    if isinstance(exc, OSError):  # raised by pyoxigraph for I/O and SERVICE failures
        from kg.serve.sandbox import outbound_error

        print(f"kg serve worker {os.getpid()}: {exc}", file=sys.stderr)  # the log keeps it
        failure = outbound_error(exc, limits.guard_network if limits else False)
        return ("error", type(failure).__name__, str(failure))
    return ("error", "KgError", f"the query failed: {type(exc).__name__}: {exc}")


def _apply(limits: Limits) -> int | None:
    """Limit this worker process before it opens the store (see kg.rdf.limits,
    kg.serve.sandbox); the seccomp listener's descriptor when the server must supervise it."""
    if limits.memory_mb:
        set_memory_limit(limits.memory_mb)
    if not limits.guard_network:
        return None
    from kg.serve.sandbox import forbid_network, supervise_network

    if limits.allow_hosts:
        return supervise_network()
    forbid_network()
    return None


def worker_entry() -> None:
    """The worker process's main: `python -c '…worker_entry()' FD`, FD a connected socket.

    Workers are started as fresh interpreters rather than through multiprocessing's spawn,
    which would re-import the parent's `__main__` (and fail for an unguarded script).
    """
    conn = Connection(int(sys.argv[1]))
    source, writable, generation, limits = conn.recv()
    _worker_main(conn, source, writable, generation, limits)


def _worker_main(
    conn: Connection, source: Source, writable: bool, generation: int, limits: Limits
) -> None:
    # Ctrl-C reaches the whole process group; the parent shuts workers down by closing pipes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The engine runtime's own text (a failed allocation's size, a backtrace, a panic) goes
    # nowhere; kg's lines (sys.stderr) still reach the server's log, and the pool writes one
    # line when a worker dies of it (QueryPool._death).
    quiet_native_stderr()
    try:
        listener = _apply(limits)
        if listener is not None:  # the server takes a copy, then answers every connect
            conn.send(("listener", os.getpid(), listener))
            conn.recv()
            os.close(listener)
        state = _WorkerState(source, writable, generation)
    except BaseException as exc:
        conn.send(_error_reply(exc, limits))
        return
    conn.send(("ready", os.getpid(), 0))
    while True:
        try:
            request: Request = conn.recv()
        except (EOFError, OSError):
            return
        try:
            state.catch_up(request)
            reply: tuple[Any, ...] = ("ok", state.handle(request), state.generation)
        except BaseException as exc:
            reply = _error_reply(exc, limits)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return

