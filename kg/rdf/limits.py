"""Resource limits of the processes that run queries: memory, and the query text's shape.

Memory. A query can ask Oxigraph for any amount of memory (a cross product sorted before its
LIMIT grew a worker by 1 GB/s), so every process that runs arbitrary SPARQL runs under an
address-space limit on its data (`RLIMIT_DATA`: heap and private mappings). Past it, an
allocation fails: Python raises `MemoryError`, Oxigraph (Rust) aborts the process. Either
way only that process ends; the caller reports `MemoryLimitError` naming the limit.

`kg serve` sets it in each worker process (kg.serve.worker); `kg sparql` and `kg query` run
the query in a forked child under it (`run_limited`), so that an abort is still one error
line and exit code 1.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from kg.errors import MemoryLimitError

#: The smallest memory limit accepted: a worker with its store open needs ~100 MB.
MIN_MEMORY_MB = 128
#: Signals a process ends with when an allocation fails: Rust aborts (SIGABRT), a stack
#: that cannot grow faults (SIGSEGV, SIGBUS). Not SIGKILL: that is the pool's own timeout,
#: or someone else's kill.
MEMORY_SIGNALS = frozenset({signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS})


def physical_memory_mb() -> int:
    """The machine's memory in MB (from sysconf; 4096 when it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1_048_576)
    except (ValueError, OSError):
        return 4096


def default_memory_mb(processes: int = 1) -> int:
    """Half the machine's memory shared among `processes` (at least MIN_MEMORY_MB each)."""
    return max(MIN_MEMORY_MB, physical_memory_mb() // 2 // max(processes, 1))


def set_memory_limit(megabytes: int) -> None:
    """Limit this process's data memory (heap and private mappings) to `megabytes`."""
    limit = megabytes * 1_048_576
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY and hard < limit:
        limit = hard
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def quiet_native_stderr() -> None:
    """Keep native code's messages (Rust panics, "memory allocation of N bytes failed", a
    C++ `terminate called …`) off the real standard error, in this process only.

    They are written to file descriptor 2 directly; it is pointed at /dev/null, while
    Python's `sys.stderr` keeps writing to the stream fd 2 was (kg's own one-line errors and a
    server's log still arrive). Call it in a process that runs queries before any runs: the
    forked child of `kg sparql` / `kg query` (`run_limited`) and each `kg serve` worker.
    `KG_NATIVE_STDERR=1` leaves fd 2 alone, to debug the engine.
    """
    if os.environ.get("KG_NATIVE_STDERR") == "1":
        return
    try:
        sys.stderr.flush()
        kept = os.dup(2)
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.stderr = os.fdopen(kept, "w", buffering=1, encoding="utf-8", errors="backslashreplace")


#: glibc's mallopt parameter numbers (malloc.h)
_M_TRIM_THRESHOLD = -1


def lower_this_thread() -> None:
    """Run the calling thread at the lowest CPU priority (nice 19) for the rest of its life,
    behind whatever the command waits on first (Linux threads each have their own priority;
    elsewhere nothing changes)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def return_freed_memory() -> None:
    """Let the allocator give freed memory back to the system at once (glibc; elsewhere a
    no-op). An ingest frees hundreds of MB a batch (N-Quads text, the loader's sorted runs) on
    threads that come and go; by default glibc keeps much of it in its arenas and raises its
    thresholds as it goes: 7 % less peak RSS at 20,000 records for the same time."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_TRIM_THRESHOLD, 0)  # also stops the dynamic mmap threshold
    except (OSError, AttributeError):
        return


@contextlib.contextmanager
def rare_full_collections() -> Iterator[None]:
    """Hold off Python's automatic full garbage collections for the block (the thresholds
    are restored after it).

    A long run's batches live long enough to reach the oldest generation, and each time a
    quarter more of it has, CPython traverses every object the process holds: at archive
    scale 0.1, 19 full collections took 2.5 of the ingest's 25 CPU-s of mapping. The young
    generations are still collected; the cycles left for the next full collection were
    27,524 objects there (peak RSS 1,233 MB against 1,286 MB with them)."""
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, max(oldest, 1_000_000_000))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, oldest)


def memory_message(megabytes: int, remedy: str = "raise {parameter}") -> str:
    """The message of a `MemoryLimitError` about `max_memory_mb` (`{parameter}` in it)."""
    return (
        f"the query needed more memory than the limit of {megabytes:,} MB and was stopped; "
        f"narrow it (a LIMIT, more specific patterns, no ORDER BY over a cross product) or "
        f"{remedy}"
    )


def run_limited(megabytes: int, body: Callable[[], int]) -> int:
    """Run `body` in a forked child under a memory limit; return its exit code.

    The child inherits standard output and error, so what it prints goes where the caller's
    would. A child that ends by a signal an allocation failure sends (`MEMORY_SIGNALS`)
    becomes `MemoryLimitError`. Fork before opening the store: the child must not share
    Oxigraph's threads. Where standard output is not a file descriptor (a test harness
    capturing it), `body` runs in this process, with no limit.
    """
    try:
        sys.stdout.fileno()
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return body()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            quiet_native_stderr()  # an allocation failure's Rust message: not for the user
            set_memory_limit(megabytes)
            code = body()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except KeyboardInterrupt:
            os.kill(pid, signal.SIGINT)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in MEMORY_SIGNALS:
            raise MemoryLimitError(memory_message(megabytes), parameter="max_memory_mb")
        return 128 + sig
    return os.WEXITSTATUS(status)


#: The deepest bracket nesting a query may have. Oxigraph's parser recurses once per level
#: and overflows the 8 MB main-thread stack near depth 3,000 (a segmentation fault);
#: evaluation recurses too. 500 leaves a wide margin and no real query comes near it.
MAX_QUERY_DEPTH = 500
#: The longest query text, in characters (the server's body limit is usually lower).
MAX_QUERY_CHARS = 1_000_000
_OPEN = frozenset("{([")
_CLOSE = frozenset("})]")


def nesting_depth(text: str) -> int:
    """The deepest running count of open brackets, reading every character.

    Brackets inside strings, IRIs and comments count too, so this is an upper bound of what
    the parser nests; Oxigraph does not apply `\\u` escapes outside strings and IRIs, so an
    escape cannot hide a bracket it would nest on.
    """
    depth = deepest = 0
    for char in text:
        if char in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char in _CLOSE and depth:
            depth -= 1
    return deepest


def query_text_problem(
    text: str, *, max_depth: int = MAX_QUERY_DEPTH, max_chars: int = MAX_QUERY_CHARS
) -> str | None:
    """Why a SPARQL text is refused before it reaches the parser (too long, too deep), or None."""
    if len(text) > max_chars:
        return (
            f"the query is {len(text):,} characters long, over the limit of {max_chars:,}; "
            "send a shorter one"
        )
    if sum(text.count(c) for c in _OPEN) <= max_depth:
        return None  # cannot be deeper than it has brackets: the common case, fast
    depth = nesting_depth(text)
    if depth > max_depth:
        return (
            f"the query nests brackets {depth:,} deep, over the limit of {max_depth:,}; "
            "flatten it (fewer nested groups, parentheses or sub-queries)"
        )
    return None
