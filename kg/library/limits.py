"""A query run under a memory limit, in a child process of its own (`kg sparql`, `kg query`):
over the limit it stops with MemoryLimitError, and the caller goes on."""

from __future__ import annotations

from collections.abc import Callable

from kg.errors import MemoryLimitError


def run_limited(megabytes: int | None, body: Callable[[int], int]) -> int:
    """Run `body(limit)` in a forked child whose memory is limited to `megabytes` (default:
    half the machine's); its exit code. Fork before opening the store. An allocation failure
    of the engine becomes MemoryLimitError (kg.rdf.limits.run_limited)."""
    from kg.rdf.limits import default_memory_mb
    from kg.rdf.limits import run_limited as run_in_child

    limit = megabytes or default_memory_mb()
    return run_in_child(limit, lambda: body(limit))


def memory_limit_error(megabytes: int) -> MemoryLimitError:
    """The error of a query stopped at the memory limit of `megabytes` MB (about the
    `max_memory_mb` setting), for a MemoryError met inside `run_limited`'s body."""
    from kg.rdf.limits import memory_message

    return MemoryLimitError(memory_message(megabytes), parameter="max_memory_mb")
