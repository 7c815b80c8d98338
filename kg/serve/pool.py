"""Queries run in worker processes, so that a query past its time limit really stops. This
module is the parent's side (the server's); the worker's own side is kg.serve.worker.

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
    StoreError,
)
from kg.rdf.limits import MEMORY_SIGNALS, default_memory_mb, memory_message
from kg.rdf.results import QueryResult, Term
from kg.rdf.snapshots import store_signature
from kg.rdf.store import GraphStore
from kg.serve.worker import Answer, Limits, QueryJob, Request, Source

__all__ = ["CLIENT", "Answer", "Limits", "PoolStats", "QueryJob", "QueryPool", "Source"]

if TYPE_CHECKING:
    from kg.serve.sandbox import AllowList, Supervisor

_WORKERS = Param("workers", "setting")  # what a client asks the operator to raise
_WORKER_CODE = "from kg.serve.worker import worker_entry; worker_entry()"
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
                stdin=subprocess.DEVNULL,  # stderr: the server's; the worker quiets the engine
            )
            self.conn = Connection(ours.detach())
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
            raise _rebuild_error(*reply[1:])

    def call(self, request: Request, timeout: float) -> tuple[Any, ...]:
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


def _finished(loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
    """A future that completed with an untouched worker's no-op reply."""
    future: asyncio.Future[Any] = loop.create_future()
    future.set_result(("skipped", None, None))
    return future


def _rebuild_error(
    name: str, message: str, template: str = "", parameter: Param | None = None
) -> KgError:
    """A worker's error (kg.serve.worker._error_reply) raised again here, with the
    parameter it is about when it names one."""
    cls = getattr(errors, name, KgError)
    if not (isinstance(cls, type) and issubclass(cls, KgError)):
        cls = KgError
    try:
        if parameter is not None:
            return cls(template, parameter=parameter)
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

    def _request(self, worker: _Worker, op: str, payload: Any) -> Request:
        reload = None
        if worker.generation != self.generation:
            reload = self.source
        return Request(op, self.generation, payload, reload, self.max_result_bytes)

    async def _dispatch(
        self,
        worker: _Worker,
        request: Request,
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
        raise _rebuild_error(*reply[1:])

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
            print(
                f"kg serve worker {worker.process.pid}: the query engine failed (out of memory, "
                "or an internal error) and the worker is replaced",
                file=sys.stderr,
                flush=True,
            )
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

    async def call(self, call: str, timeout: float | None = None, /, **kwargs: Any) -> Any:
        """One of the worker operations (kg.mcp.calls.CALLS: the library over the worker's
        snapshot) as JSON data, under the pool's limits. `base_iri` (optional) names the
        store's IRI base. The worker keeps what it loads (the similarity index, the
        suggestion model, the search index: kg.graph.cache), so warm calls only rank; a
        first call on a store without a current cache reads every link: give it a longer
        `timeout` than a query's."""
        base_iri = kwargs.pop("base_iri", None)
        return await self._run("call", (call, kwargs, base_iri), timeout)

    #: The pages' name for `call` (`pool.graph("similar", …)`).
    graph = call

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
            writer, Request("update", self.generation, sparql), deadline, self._writer_done,
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
