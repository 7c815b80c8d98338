"""Queries run in worker processes, so that a query past its time limit really stops.

pyoxigraph has no query timeout, and a running aggregate ignores interrupts, so a thread
cannot be stopped. A process can: the pool keeps a few worker processes, each holding its
own read-only snapshot of the store (or its own copy of a memory store). The server's event
loop hands one request at a time to an idle worker and waits with a deadline; a worker that
overruns is killed (SIGKILL) and replaced, and the client gets a `QueryTimeoutError`. The
results are serialised natively inside the worker into a capped buffer, so a result over
the size limit stops the query too, and nothing is sent before the query has finished: an
error is always an error status, never a truncated 200.

Freshness. A read-only open is a snapshot. The pool has a generation number; when it moves
on, each worker reopens its snapshot before its next request. It moves on when the store
directory changes (checked every `refresh` seconds), on `refresh()` (the server calls it on
SIGHUP), and after an update through the pool's writer. A disk worker that finds an ingest
batch half-written (the store's journal graph is not empty) keeps its old snapshot and
tries again a second later, so no request sees half a batch. pyoxigraph calls a read-only
open beside a live writer undefined behaviour; in practice such an open can fail, so a
worker whose reopen fails also keeps its old snapshot and tries again later.

Updates, when allowed, go to one writer process that holds the store for writing; it is
killed on overrun too (an update is one transaction, so it leaves nothing behind). For a
memory store the writer holds the master copy and hands back an N-Quads snapshot after each
update, from which the readers (and a replacement writer) reload: fine for the small,
throwaway graphs a memory store is for.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import io
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg import errors
from kg.errors import (
    KgError,
    MemoryLimitError,
    Param,
    QueryTimeoutError,
    ResultTooLargeError,
    StoreError,
)
from kg.rdf.limits import (
    MEMORY_SIGNALS,
    default_memory_mb,
    is_engine_noise,
    memory_message,
    set_memory_limit,
)
from kg.rdf.results import QueryResult, Term
from kg.rdf.snapshots import store_signature
from kg.rdf.store import GraphStore

if TYPE_CHECKING:
    from kg.library import KnowledgeGraph
    from kg.search import StoreSearch
    from kg.serve.sandbox import AllowList, Supervisor

_WORKERS = Param("workers", "setting")  # what a client asks the operator to raise
_WORKER_CODE = "from kg.serve.pool import worker_entry; worker_entry()"
#: How long the pool waits before retrying a new snapshot that found an ingest batch in flight.
_REOPEN_RETRY_S = 1.0
_OPERATOR_REMEDY = "ask the operator to raise {parameter}"
_MEMORY = Param("max_memory_mb", "setting")
#: Who is asking (the client's address), set per request by the server: queries from one
#: client hold at most `QueryPool.client_workers` workers at once (fair shares).
CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("kg_client", default=None)


class _Share:
    """One client's hold on the pool: a semaphore of its share, and its queries in flight."""

    def __init__(self, share: int) -> None:
        self.slots = asyncio.Semaphore(share)
        self.count = 0  # running or waiting


class _Shares:
    """At most `share` workers per client; `queue` more of its queries wait, the rest get
    503 at once. A query's slot is given back when its worker finishes, not when its
    client stops waiting, so a client that hangs up cannot hold more than its share."""

    def __init__(self, share: int, queue: int) -> None:
        self.share = share
        self.queue = queue
        self._clients: dict[str, _Share] = {}

    def enter(self, client: str) -> _Share:
        entry = self._clients.get(client)
        if entry is None:
            entry = self._clients[client] = _Share(self.share)
        if entry.count >= self.share + self.queue:
            raise QueryTimeoutError(
                f"this client already has {entry.count} queries running or waiting (at most "
                f"{self.share} run at once, {self.queue} more wait); send fewer at a time, "
                "or ask the operator to raise {parameter}",
                parameter=Param("client_queue", "setting"),
            )
        entry.count += 1
        return entry

    def leave(self, client: str, entry: _Share, held: bool) -> None:
        if held:
            entry.slots.release()
        entry.count -= 1
        if entry.count == 0 and self._clients.get(client) is entry:
            del self._clients[client]


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
class _Request:
    op: str  # "serialize", "result", "update", "graph", "call", "ping"
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


# --- the worker process --------------------------------------------------------------------


class _WorkerState:
    def __init__(self, source: Source, writable: bool, generation: int = 0) -> None:
        self.source = source
        self.writable = writable
        self.store = source.open(write=writable)
        self.generation = generation
        self.search: StoreSearch | None = None
        self.graphs: dict[str, KnowledgeGraph] = {}  # the library over this store, by base

    def library(self, base_iri: str) -> KnowledgeGraph:
        """The library (kg.library) over this worker's snapshot, for the MCP tools' calls."""
        graph = self.graphs.get(base_iri)
        if graph is None:
            from kg.mcp.calls import WorkerGraph

            graph = self.graphs[base_iri] = WorkerGraph(self.store, self.source.path, base_iri)
        return graph

    def searcher(self) -> StoreSearch:
        """The full-text index of this worker's store (kg.search), opened on first use."""
        if self.search is None:
            from kg.search import StoreSearch

            self.search = StoreSearch(self.store, self.source.path, quiet=True)
        return self.search

    def catch_up(self, request: _Request) -> None:
        """Move to the version the pool names before answering (never answer from an
        older one: if the new snapshot cannot be opened, the request fails)."""
        if request.reload is not None and request.generation != self.generation:
            fresh = request.reload.open(write=self.writable)
            self.store.close()
            self.store, self.source = fresh, request.reload
            self.generation = request.generation
            self.search = None  # reopened on the new snapshot when next needed
            self.graphs = {}

    def handle(self, request: _Request) -> Any:
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
        if request.op == "graph":
            return _graph_call(store, *request.payload)
        if request.op == "call":  # an MCP tool's call (kg.mcp.calls), on the library
            from kg.mcp.calls import run_call

            name, kwargs, base_iri = request.payload
            return store.reading(lambda: run_call(self.library(base_iri), name, kwargs))
        if request.op == "ping":
            return os.getpid()
        raise KgError(f"unknown worker operation {request.op!r}")


def _graph_call(store: GraphStore, name: str, kwargs: dict[str, Any]) -> Any:
    """`kg similar` / `kg shared` / `kg suggest` in a worker, as their JSON (the worker keeps
    the index and the model). A request trains no large store's suggestion model: it needs
    the model trained ahead (kg.graph.cache.suggest_model, `on_request`)."""
    from kg.graph import cache, similarity

    if name == "similar":

        def run() -> Any:
            similarity.resolve_paper(store, kwargs["paper"], kwargs["base_iri"])
            index = cache.similarity_index(store, kwargs["by"], kwargs["metric"])
            return similarity.similar(store, **kwargs, index=index).as_dict()

        return store.reading(run)
    if name == "shared":
        return store.reading(lambda: similarity.shared(store, **kwargs).as_dict())
    if name == "suggest":
        from kg.graph import suggest

        def run_suggest() -> Any:
            similarity.resolve_paper(store, kwargs["paper"], kwargs["base_iri"])
            model = cache.suggest_model(store, on_request=True)
            return suggest.suggest(store, **kwargs, model=model).as_dict()

        return store.reading(run_suggest)
    if name in ("item_papers", "shared_items", "counted_items"):  # pages' lists (kg.graph.lists)
        from kg.graph import lists

        listed = getattr(lists, name)
        return store.reading(lambda: listed(store, **kwargs))
    if name == "warm":  # what a first paper or list page would make (kg.serve.app warm-up)
        from kg.graph import lists

        def run_warm() -> dict[str, bool]:
            cache.similarity_index(store, "all", "idf")
            try:
                cache.suggest_model(store, on_request=True)
                suggest_ready = True
            except KgError:  # not trained ahead and too large to train here: pages say so
                suggest_ready = False
            return {"suggest": suggest_ready, "order": lists.prepare(store)}

        return store.reading(run_warm)
    if name == "lookup":  # a path's name -> the thing, or the near ones (kg.query.resolve)
        from kg.query.resolve import lookup

        return store.reading(lambda: lookup(store, **kwargs))
    if name == "resolve":  # a named query's names, slugs and ids -> IRIs (kg.query.resolve)
        from kg.query.resolve import resolved_reply

        return store.reading(lambda: resolved_reply(store, **kwargs))
    raise KgError(f"unknown graph operation {name!r}")


@dataclass(frozen=True)
class Limits:
    """What a worker process may do: its memory, and whether it may open network sockets."""

    memory_mb: int = 0  # 0: no limit
    guard_network: bool = True
    #: With guard_network: the hosts a SERVICE may reach, each connect checked by the
    #: server (kg.serve.sandbox.Supervisor); empty: no Internet socket at all.
    allow_hosts: tuple[str, ...] = ()


def _error_reply(exc: BaseException, limits: Limits | None = None) -> tuple[str, str, str]:
    if isinstance(exc, KgError):
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
            request: _Request = conn.recv()
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


# --- the parent side -----------------------------------------------------------------------


class _Overrun(Exception):
    pass


class _Died(Exception):
    pass


class _Worker:
    def __init__(
        self,
        source: Source,
        writable: bool,
        generation: int = 0,
        limits: Limits | None = None,
        allow: AllowList | None = None,
    ) -> None:
        self.allow = allow
        self.supervisor: Supervisor | None = None
        ours, theirs = socket.socketpair()
        with ours, theirs:
            fd = theirs.fileno()
            self.process = subprocess.Popen(
                [sys.executable, "-c", _WORKER_CODE, str(fd)],
                pass_fds=(fd,),
                stdin=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            self.conn = Connection(ours.detach())
        threading.Thread(
            target=_relay, args=(self.process, sys.stderr), daemon=True, name="kg-stderr"
        ).start()
        self.conn.send((source, writable, generation, limits or Limits(guard_network=False)))
        self.generation = generation
        self.source = source

    def wait_ready(self, timeout: float) -> None:
        if not self.conn.poll(timeout):
            self.kill()
            raise StoreError(f"a query worker did not start within {timeout:g} s")
        try:
            reply = self.conn.recv()
            if reply[0] == "listener" and self.allow is not None:
                from kg.serve.sandbox import Supervisor, take_listener

                listener = take_listener(self.process.pid, reply[2])
                self.supervisor = Supervisor(listener, self.process.pid, self.allow)
                self.conn.send("taken")
                if not self.conn.poll(timeout):
                    self.kill()
                    raise StoreError(f"a query worker did not start within {timeout:g} s")
                reply = self.conn.recv()
        except (EOFError, OSError):
            self.kill()
            raise StoreError("a query worker exited while opening the store") from None
        if reply[0] != "ready":
            self.kill()
            raise _rebuild_error(reply[1], reply[2])

    def call(self, request: _Request, timeout: float) -> tuple[Any, ...]:
        """Send one request and wait for its reply (blocking; runs in a thread)."""
        try:
            self.conn.send(request)
            if not self.conn.poll(max(timeout, 0.0)):
                raise _Overrun
            reply: tuple[Any, ...] = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            raise _Died from None
        return reply

    def kill(self) -> None:
        if self.supervisor is not None:
            self.supervisor.close()
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        with contextlib.suppress(Exception):
            self.conn.close()

    def stop(self) -> None:
        """Ask politely (close the pipe), then kill."""
        with contextlib.suppress(Exception):
            self.conn.close()
        try:
            self.process.wait(2)
        except subprocess.TimeoutExpired:
            self.kill()


def _relay(process: subprocess.Popen[bytes], out: Any) -> None:
    """Pass a worker's stderr on to the server's, without the engine runtime's own text (a
    failed allocation's size, a backtrace, a panic): one kg line says what happened."""
    assert process.stderr is not None
    told = False
    for raw in process.stderr:
        line = raw.decode("utf-8", "replace")
        if is_engine_noise(line):
            if not told:
                told = True
                line = (
                    f"kg serve worker {process.pid}: the query engine failed (out of memory, "
                    "or an internal error) and the worker is replaced\n"
                )
            else:
                continue
        with contextlib.suppress(Exception):
            out.write(line)
            out.flush()


def _finished(loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
    """A future that completed with an untouched worker's no-op reply."""
    future: asyncio.Future[Any] = loop.create_future()
    future.set_result(("skipped", None, None))
    return future


def _rebuild_error(name: str, message: str) -> KgError:
    cls = getattr(errors, name, KgError)
    if not (isinstance(cls, type) and issubclass(cls, KgError)):
        cls = KgError
    try:
        return cls(message)
    except TypeError:
        return KgError(message)


@dataclass
class PoolStats:
    completed: int = 0
    timeouts: int = 0
    replaced: int = 0
    reloads: int = 0
    memory_stops: int = 0
    worker_pids: list[int] = field(default_factory=list)
    killed_pids: list[int] = field(default_factory=list)


class QueryPool:
    """A fixed number of query worker processes (and an optional writer), used from asyncio."""

    def __init__(
        self,
        source: Source,
        *,
        workers: int = 4,
        timeout: float = 30.0,
        max_result_bytes: int = 64 * 1_048_576,
        allow_update: bool = False,
        refresh: float = 5.0,
        start_timeout: float = 60.0,
        max_memory_mb: int | None = None,
        guard_network: bool = True,
        allow_hosts: tuple[str, ...] = (),
        client_workers: int | None = None,
        client_queue: int = 32,
    ) -> None:
        if workers < 1:
            raise errors.UsageError("{parameter} must be at least 1", parameter="workers")
        if timeout <= 0:
            raise errors.UsageError(
                "{parameter} must be a positive number of seconds", parameter="timeout"
            )
        self.source = source
        self.size = workers
        self.timeout = timeout
        self.max_result_bytes = max_result_bytes
        self.allow_update = allow_update
        self.refresh_every = refresh
        self.start_timeout = start_timeout
        self.generation = 0
        self.stats = PoolStats()
        share = max(1, workers // 2) if client_workers is None else max(1, client_workers)
        self._shares = _Shares(min(share, workers), max(0, client_queue))
        self._threads = ThreadPoolExecutor(max_workers=workers + 3, thread_name_prefix="kg-pool")
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._workers: set[_Worker] = set()
        #: Every worker started and not yet seen dead: close() stops them all, including one
        #: a cancelled `_replace` had taken out of `_workers` but not yet killed (a runaway
        #: query would otherwise keep it busy after the server is gone).
        self._spawned: set[_Worker] = set()
        self._spawning = threading.Lock()  # _spawn runs in several executor threads at once
        self._writer: _Worker | None = None
        self._writers: asyncio.Queue[_Worker] = asyncio.Queue()  # holds the writer when idle
        self._tasks: set[asyncio.Task[Any]] = set()
        self._signature: tuple[tuple[str, int, int], ...] = ()
        self._closed = False
        memory = default_memory_mb(workers + 1) if max_memory_mb is None else max_memory_mb
        self.limits = Limits(
            memory_mb=memory, guard_network=guard_network, allow_hosts=allow_hosts
        )
        self._allow: AllowList | None = None
        if guard_network and allow_hosts:
            from kg.serve.sandbox import AllowList

            self._allow = AllowList(allow_hosts)
        #: The pinned snapshots workers may still be reading, by generation (disk stores).
        self._snapshots: dict[int, Path] = {}
        self._publishing = asyncio.Lock()

    # -- life cycle ----------------------------------------------------------------------------
    def _spawn(self, writable: bool = False) -> _Worker:
        source, generation = self.source, self.generation  # together: the same version
        worker = _Worker(source, writable, generation, self.limits, self._allow)
        with self._spawning:  # close() stops every worker added here before it closed
            closed = self._closed
            if not closed:
                self._spawned = {w for w in self._spawned if w.process.poll() is None}
                self._spawned.add(worker)
        if closed:  # a replacement that started as the pool closed: nobody else will stop it
            worker.kill()
            raise StoreError("the query pool is shut down")
        worker.wait_ready(self.start_timeout)
        return worker

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.source.path is not None:
            self._signature = store_signature(self.source.path)
        if self.allow_update:  # first, so that it can recover a crashed batch before readers open
            self._writer = await loop.run_in_executor(self._threads, self._spawn, True)
            self._writers.put_nowait(self._writer)
        if self.source.path is not None:
            await self._publish(force=True)
        spawned = await asyncio.gather(
            *(loop.run_in_executor(self._threads, self._spawn) for _ in range(self.size)),
            return_exceptions=True,
        )
        failures = [s for s in spawned if isinstance(s, BaseException)]
        for worker in spawned:
            if isinstance(worker, _Worker):
                self._workers.add(worker)
                self._idle.put_nowait(worker)
        if failures:
            await self.close()
            raise failures[0]
        self.stats.worker_pids = [w.process.pid for w in self._workers]
        if self.source.path is not None and self.refresh_every > 0:
            self._keep(asyncio.create_task(self._watch()))

    async def close(self) -> None:
        with self._spawning:
            self._closed = True
            spawned, self._spawned = self._spawned, set()
        for task in list(self._tasks):
            task.cancel()
        workers = {*self._workers, *spawned, *([self._writer] if self._writer else [])}
        self._workers.clear()
        self._writer = None
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._threads, w.stop) for w in workers))
        self._threads.shutdown(wait=False, cancel_futures=True)
        for pin in self._snapshots.values():
            GraphStore.release_snapshot(pin)
        self._snapshots.clear()

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- freshness -----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Move every worker to a new snapshot before its next request (SIGHUP)."""
        if self.source.path is None:
            self._advance(self.source)
        elif not self._closed:
            self._keep(asyncio.ensure_future(self._publish()))

    def _advance(self, source: Source) -> None:
        self.source = source
        self.generation += 1
        self.stats.reloads += 1

    async def _publish(self, *, force: bool = False) -> bool:
        """Pin a new snapshot of the store and make it the one every worker answers from.

        Monotonic reads: a worker answers a request only from the generation the request
        names (the newest one when it was sent), so once any answer came from a version, no
        later request is answered from an older one. A snapshot that holds a half-written
        ingest batch is not published (unless `force`, at start); False then.
        """
        path = self.source.path
        assert path is not None
        loop = asyncio.get_running_loop()
        async with self._publishing:
            try:
                pin, pending = await loop.run_in_executor(
                    self._threads, GraphStore.share_snapshot, path
                )
            except KgError:  # e.g. the writer compacted files away ten times: later
                if force and not self._snapshots and self.generation == 0:
                    raise
                return False
            if self._closed or (pending and not force):
                if pin is not None:
                    GraphStore.release_snapshot(pin)
                return False
            self._advance(Source(path=path, snapshot=pin))
            if pin is not None:
                self._snapshots[self.generation] = pin
            self._release_snapshots()
            return True

    def _release_snapshots(self) -> None:
        """Remove the pins no worker can still be reading (all have confirmed newer ones)."""
        oldest = min((w.generation for w in self._workers), default=self.generation)
        for generation in [g for g in self._snapshots if g < min(oldest, self.generation)]:
            GraphStore.release_snapshot(self._snapshots.pop(generation))

    async def _watch(self) -> None:
        assert self.source.path is not None
        path = self.source.path
        retry = False  # the last new snapshot held a batch in flight: look again soon
        while not self._closed:
            pause = min(self.refresh_every, _REOPEN_RETRY_S) if retry else self.refresh_every
            await asyncio.sleep(pause)
            signature = store_signature(path)
            if signature != self._signature:
                retry = not await self._publish()
                if not retry:
                    self._signature = signature

    # -- running -------------------------------------------------------------------------------
    def _busy(self, limit: float) -> QueryTimeoutError:
        """The error of a request whose time limit ran out while it waited for a worker."""
        return QueryTimeoutError(
            f"the server is busy: all {self.size} query workers stayed busy for the {limit:g} s "
            "this request may take, and it was not started; try again later, or ask the "
            "operator to raise {parameter}",
            parameter=_WORKERS,
        )

    async def _acquire(self, deadline: float, limit: float) -> _Worker:
        """An idle worker, waited for until `deadline` (the request's own time limit)."""
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(self._idle.get(), max(deadline - loop.time(), 0.001))
        except TimeoutError:
            raise self._busy(limit) from None

    def _request(self, worker: _Worker, op: str, payload: Any) -> _Request:
        reload = None
        if worker.generation != self.generation:
            reload = self.source
        return _Request(op, self.generation, payload, reload, self.max_result_bytes)

    async def _dispatch(
        self,
        worker: _Worker,
        request: _Request,
        deadline: float,
        on_done: Callable[..., None],
        limit: float,
    ) -> Any:
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time()
        if remaining < 0.05:  # the wait for a worker used up the time: do not start and kill
            on_done(worker, _finished(loop))
            raise self._busy(limit)
        future = loop.run_in_executor(self._threads, worker.call, request, remaining)
        future.add_done_callback(lambda f: on_done(worker, f))
        try:
            reply = await asyncio.shield(future)
        except _Overrun:
            self.stats.timeouts += 1
            raise QueryTimeoutError(
                f"the query ran past this server's time limit of {self.timeout:g} s and was "
                "stopped; narrow it (a LIMIT, more specific patterns) or ask the operator to "
                "raise {parameter}",
                parameter=Param("timeout", "setting"),
            ) from None
        except _Died:
            raise await self._death(worker) from None
        if reply[0] == "ok":
            worker.generation = reply[2]
            self.stats.completed += 1
            self._release_snapshots()
            return reply[1]
        if reply[1] == "MemoryLimitError":
            raise self.memory_error()
        raise _rebuild_error(reply[1], reply[2])

    def memory_error(self) -> MemoryLimitError:
        message = memory_message(self.limits.memory_mb, _OPERATOR_REMEDY)
        return MemoryLimitError(message, parameter=_MEMORY)

    async def _death(self, worker: _Worker) -> KgError:
        """Why a worker died mid-request: over its memory limit, or something else."""
        loop = asyncio.get_running_loop()

        def status() -> int | None:
            try:
                return worker.process.wait(5)
            except subprocess.TimeoutExpired:
                return None

        code = await loop.run_in_executor(self._threads, status)
        if code is not None and code < 0 and -code in MEMORY_SIGNALS:
            self.stats.memory_stops += 1
            return self.memory_error()
        return StoreError("the query worker died while running this query; it has been replaced")

    def _reader_done(self, worker: _Worker, future: asyncio.Future[Any]) -> None:
        if future.cancelled() or future.exception() is not None:
            self._keep(asyncio.ensure_future(self._replace(worker)))
        elif self._closed:
            return
        else:
            self._idle.put_nowait(worker)

    async def _replace(self, worker: _Worker) -> None:
        loop = asyncio.get_running_loop()
        self._workers.discard(worker)
        self.stats.worker_pids = [w.process.pid for w in self._workers]
        await loop.run_in_executor(self._threads, worker.kill)
        self.stats.killed_pids.append(worker.process.pid)
        if self._closed:
            return
        self.stats.replaced += 1
        while not self._closed:
            try:
                fresh = await loop.run_in_executor(self._threads, self._spawn)
            except KgError:
                await asyncio.sleep(1.0)  # e.g. the store is briefly unavailable
                continue
            self._workers.add(fresh)
            self._idle.put_nowait(fresh)
            self.stats.worker_pids = [w.process.pid for w in self._workers]
            return

    @property
    def idle(self) -> int:
        """Workers waiting for a request now."""
        return self._idle.qsize()

    async def _run(self, op: str, payload: Any, timeout: float | None = None) -> Any:
        if self._closed:
            raise StoreError("the query pool is shut down")
        loop = asyncio.get_running_loop()
        limit = timeout or self.timeout
        deadline = loop.time() + limit
        client = CLIENT.get()
        if client is None or self._shares.share >= self.size:
            worker = await self._acquire(deadline, limit)
            return await self._dispatch(
                worker, self._request(worker, op, payload), deadline, self._reader_done, limit
            )
        entry = self._shares.enter(client)
        held = started = False

        def done(worker: _Worker, future: asyncio.Future[Any]) -> None:
            self._reader_done(worker, future)
            self._shares.leave(client, entry, held)

        try:
            try:
                await asyncio.wait_for(entry.slots.acquire(), max(deadline - loop.time(), 0.001))
            except TimeoutError:
                raise QueryTimeoutError(
                    f"the server is busy with this client's earlier requests: they held its "
                    f"{self._shares.share} worker(s) for the {limit:g} s this request may "
                    "take, and it was not started; try again later",
                ) from None
            held = True
            worker = await self._acquire(deadline, limit)
            started = True
            return await self._dispatch(
                worker, self._request(worker, op, payload), deadline, done, limit
            )
        finally:
            if not started:
                self._shares.leave(client, entry, held)

    async def serialize(self, job: QueryJob) -> Answer:
        """Run a query and return its natively serialised result."""
        answer: Answer = await self._run("serialize", job)
        return answer

    async def result(
        self,
        sparql: str,
        substitutions: Mapping[str, Term] | None = None,
        limit: int | None = None,
        search_bindings: Mapping[str, Term] | None = None,
        timeout: float | None = None,
    ) -> QueryResult:
        """Run a query and return its result as kg objects (for pages built from rows).
        With `search_bindings` (a mapping, possibly empty), its kg search blocks are
        expanded first, in the worker. `timeout`: seconds instead of the pool's (the
        start-up warm-up's queries, which no client waits for)."""
        result: QueryResult = await self._run(
            "result", (sparql, substitutions, limit, search_bindings), timeout
        )
        return result

    async def graph(self, name: str, timeout: float | None = None, **kwargs: Any) -> Any:
        """`similar` or `shared` (kg.graph.similarity) as JSON data, run in a worker.

        The worker keeps the loaded index (kg.graph.cache), so warm calls only rank. The
        first call on a store without a current cache reads every link: give it a longer
        `timeout` than a query's.
        """
        return await self._run("graph", (name, kwargs), timeout)

    async def call(self, call: str, timeout: float | None = None, /, **kwargs: Any) -> Any:
        """An MCP tool's call (kg.mcp.calls: the library over the worker's snapshot), as
        JSON data, under the pool's limits. `base_iri` names the store's IRI base."""
        base_iri = kwargs.pop("base_iri")
        return await self._run("call", (call, kwargs, base_iri), timeout)

    async def ping(self) -> int:
        pid: int = await self._run("ping", None)
        return pid

    async def update(self, sparql: str) -> None:
        """Run a SPARQL update in the writer; the readers see it from their next request."""
        if not self.allow_update:
            raise errors.ForbiddenError(
                "this server was started without {parameter}",
                parameter=Param("allow_update", "setting"),
            )
        if self._closed:
            raise StoreError("the query pool is shut down")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        try:
            writer = await asyncio.wait_for(self._writers.get(), max(deadline - loop.time(), 0.001))
        except TimeoutError:
            raise QueryTimeoutError(
                f"the writer stayed busy with earlier updates for {self.timeout:g} s; "
                "try again later"
            ) from None
        await self._dispatch(
            writer, _Request("update", self.generation, sparql), deadline, self._writer_done,
            self.timeout,
        )
        if self.source.path is not None:  # the client's next query sees its update
            await self._publish(force=True)

    def _writer_done(self, worker: _Worker, future: asyncio.Future[Any]) -> None:
        # Runs whether or not the client is still waiting, so that state stays right.
        if future.cancelled() or future.exception() is not None:
            self._keep(asyncio.ensure_future(self._replace_writer(worker)))
            return
        reply = future.result()
        if reply[0] == "ok" and isinstance(reply[1], Source):  # a memory store's snapshot
            self._advance(reply[1])
        if not self._closed:
            self._writers.put_nowait(worker)

    async def _replace_writer(self, worker: _Worker) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._threads, worker.kill)
        while not self._closed:
            try:
                fresh = await loop.run_in_executor(self._threads, self._spawn, True)
            except KgError:
                await asyncio.sleep(1.0)
                continue
            self._writer = fresh
            self._writers.put_nowait(fresh)
            self.stats.replaced += 1
            return
