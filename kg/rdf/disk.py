"""A full disk under the store: how kg recognises one, and the error that says what to do.

RocksDB reports a full disk as an I/O error whose text names it ("No space left on
device"), not by errno, and Tantivy (the search index) as a ValueError quoting Rust's text
for it; the system's own calls set ENOSPC. Either way the writer stops with
`DiskFullError`, which says how much room is left, what became of the write, and how to go
on, instead of the engine's message about one of its files.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
from collections.abc import Iterator
from pathlib import Path

from kg.errors import DiskFullError

_NO_SPACE = "No space left on device"
#: How Tantivy words it, inside a ValueError: Rust's own text for the system's error
_RUST_NO_SPACE = f"{_NO_SPACE} (os error {errno.ENOSPC})"


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` is a write that found no room on its disk."""
    return isinstance(exc, OSError) and (exc.errno == errno.ENOSPC or _NO_SPACE in str(exc))


def _free_now(path: Path) -> str:
    """The room left, worded " (N MB free now)"; empty where the disk cannot say (the
    folder is gone)."""
    try:
        return f" ({shutil.disk_usage(path).free / 10**6:,.0f} MB free now)"
    except OSError:
        return ""


def disk_full_error(path: Path | None, outcome: str) -> DiskFullError:
    """The error for a write into the store at `path` that the disk had no room for;
    `outcome` says what became of it ("nothing of it was stored")."""
    if path is None:
        return DiskFullError(f"the disk ran out of room: {outcome}; free some and run it again")
    return DiskFullError(
        f"the disk holding the store at {path} ran out of room{_free_now(path)}: "
        f"{outcome}; free some room there, or give {{parameter}} a folder on a larger disk, "
        "and run the command again",
        parameter="store",
    )


@contextlib.contextmanager
def said_if_full(path: Path | None, outcome: str, *, value_errors: bool = False) -> Iterator[None]:
    """Around a write: a full disk raises `disk_full_error(path, outcome)`. With
    `value_errors`, a ValueError that carries the system's error counts too (Tantivy's, the
    search index's: elsewhere a ValueError may quote the caller's own text)."""
    try:
        yield
    except (OSError, ValueError) as exc:
        if is_disk_full(exc) or (
            value_errors and isinstance(exc, ValueError) and _RUST_NO_SPACE in str(exc)
        ):
            raise disk_full_error(path, outcome) from None
        raise
