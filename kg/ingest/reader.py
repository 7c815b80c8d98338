"""Reading JSON inputs: files, directories, gzip and standard input, as a stream.

Yields one `Item` per JSON value (a record, or one element of a dump's top-level array),
each with where it came from. A value that cannot be read becomes an `Item` with an
error, so one bad line never hides the good ones around it.

* `.jsonl` / `.ndjson`: one value per line; a line longer than the record limit is skipped
  without being held in memory.
* `.json` and stdin: one value, a top-level array (streamed, so a 1 GB dump on one line is
  read in memory bounded by the record limit), or JSON Lines after all (sniffed from the
  start: a first line that is a whole object, or one that is broken while the next line is
  a whole object, means JSON Lines, so a bad first line costs one record, not the stream).
* `.gz` of any of these: damaged or truncated compressed data ends that file with one error
  naming the byte where reading stopped; every record before it is kept, and the next file
  is read. Directories are walked recursively in sorted order; `-` is stdin.
* Blank text is skipped a buffer at a time, and more of it in a row than the record limit
  ends the file with one error naming the line where it began: a 1 MB gzip of 1 G newlines
  (a decompression bomb) cost 17 min of CPU read a line at a time; now it stops after the
  limit's worth, and no record can hide behind it.

This module opens the inputs and tells JSON Lines from a document; kg.ingest.jsonstream
reads the values out of the bytes, and kg.ingest.gunzip is the gzip decoder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from kg.config import MAX_RECORD_BYTES
from kg.errors import InputError, RecordError
from kg.ingest.gunzip import CHUNK, Gunzip, GzipDamage, gzip_date
from kg.ingest.jsonstream import (
    Item,
    Replay,
    blank_run,
    decode_line,
    past_blanks,
    read_document,
    read_line,
    read_lines,
)
from kg.ingest.manifest import is_manifest

__all__ = [
    "INPUT_SUFFIXES",
    "Item",
    "ReadPosition",
    "expand",
    "gzip_date",
    "open_binary",
    "read_items",
]

INPUT_SUFFIXES = (".json", ".jsonl", ".ndjson")
_LINE_SUFFIXES = (".jsonl", ".ndjson")


def expand(paths: list[str]) -> Iterator[str]:
    """Files to read, in order: directories are walked recursively, `-` is kept as is, and a
    path that does not exist too (`read_items` reports it: it costs only itself)."""
    for raw in paths:
        if raw == "-":
            yield raw
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.name.removesuffix(".gz").endswith(INPUT_SUFFIXES)
                and not is_manifest(p)  # kg fetch's notes on a file, not input
            )
            yield from (str(p) for p in found)
        else:
            yield raw


def open_binary(name: str) -> IO[bytes]:
    """Open a file or stdin, gunzipped when its magic bytes say gzip."""
    if name == "-":
        handle: IO[bytes] = sys.stdin.buffer
    else:
        try:
            handle = open(name, "rb")  # noqa: SIM115 - returned to the caller
        except OSError as exc:
            why = "no such file or directory" if isinstance(exc, FileNotFoundError) else (
                f"cannot open: {exc.strerror}"
            )
            raise InputError(f"{name}: {why}") from None
    peek = getattr(handle, "peek", None)
    if peek is None:  # a stdin that cannot look ahead (a test's)
        head = handle.read(2)
        handle = Replay(head, handle)  # type: ignore[assignment]
    else:
        head = peek(2)[:2]
    if head == b"\x1f\x8b":
        return io.BufferedReader(Gunzip(handle), CHUNK)
    return handle


class ReadPosition:
    """How far reading has gone through its input files, in bytes as stored on disk (a .gz
    file by its compressed bytes): for a progress bar. Standard input has no total."""

    def __init__(self, names: list[str]) -> None:
        self.total: int | None = 0
        for name in names:
            try:
                self.total = None if name == "-" or self.total is None else (
                    self.total + os.path.getsize(name)
                )
            except OSError:
                self.total = None
        self._done = 0
        self._current: IO[bytes] | None = None

    def read(self) -> int:
        """Bytes read so far: the files finished and the position in the current one."""
        current = self._current
        try:
            here = current.tell() if current is not None and not current.closed else 0
        except (OSError, ValueError):
            here = 0
        return self._done + here

    def _start(self, stream: IO[bytes]) -> None:
        raw = getattr(stream, "raw", None)
        self._current = raw._raw if isinstance(raw, Gunzip) else stream

    def _finish(self, name: str) -> None:
        self._current = None
        if name != "-":
            with contextlib.suppress(OSError):
                self._done += os.path.getsize(name)


def read_items(
    name: str, *, limit: int = MAX_RECORD_BYTES, position: ReadPosition | None = None
) -> Iterator[Item]:
    """Every JSON value in one input (a file name or `-`); `position` follows the bytes read.
    An input that cannot be opened is one error item naming it."""
    source = "<stdin>" if name == "-" else name
    try:
        stream = open_binary(name)
    except InputError as exc:
        yield Item(source, "", error=RecordError(str(exc).removeprefix(f"{name}: "), source=source))
        return
    last = ""
    if position is not None:
        position._start(stream)
    try:
        for item in _read(stream, name, source, limit):
            last = item.locator
            yield item
    except GzipDamage as exc:
        yield _damaged(source, last, exc)
    except (OSError, EOFError) as exc:
        raise InputError(f"{source}: cannot read: {exc}") from None
    finally:
        if position is not None:
            position._finish(name)
        if name != "-":
            stream.close()


def _damaged(source: str, last: str, exc: GzipDamage) -> Item:
    """The error for gzip data that cannot be decompressed past some point."""
    offset = exc.offset
    locator = f"byte {offset:,}"
    after = f"after {last}" if last else "before the first record"
    return Item(
        source,
        locator,
        error=RecordError(
            f"the gzip data is damaged or cut short ({exc}); reading stopped at byte "
            f"{offset:,} of the compressed file, {after}: the records before it were read, "
            "the rest of this file was not",
            source=source,
            locator=locator,
        ),
    )


def _read(stream: IO[bytes], name: str, source: str, limit: int) -> Iterator[Item]:
    if name.removesuffix(".gz").endswith(_LINE_SUFFIXES):
        yield from read_lines(stream, source, limit)
        return
    # Sniff the first character: a dump is often one array on one huge line, which must
    # stream rather than be read as a line.
    probe = stream.read(CHUNK)
    stream = Replay(probe, stream)  # type: ignore[assignment]
    if probe.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"[":
        yield from read_document(stream, source, is_array=True, limit=limit)
        return
    number = 1
    first, too_long = read_line(stream, limit)
    first, too_long, skipped, over = past_blanks(stream, first, too_long, limit)
    if over:
        yield blank_run(source, number, limit)
        return
    number += skipped
    first = first.removeprefix(b"\xef\xbb\xbf") if number == 1 else first
    head = first.lstrip()
    if too_long:  # one record longer than the limit: say so, read on as JSON Lines
        yield from read_lines(stream, source, limit, start=number, first_too_long=True)
        return
    if not head:
        return
    if head[:1] == b"[":
        yield from read_document(Replay(first, stream), source, is_array=True, limit=limit)  # type: ignore[arg-type]
        return
    if head[:1] == b"{":
        value, goes_on = _first_line(first)
        if isinstance(value, dict):  # a complete object on line 1: JSON Lines
            yield Item(source, f"line {number}", value)
            yield from read_lines(stream, source, limit, start=number + 1)
            return
        nxt, too_long = read_line(stream, limit)
        nxt, too_long, blank_lines, over = past_blanks(stream, nxt, too_long, limit)
        skipped = 1 + blank_lines
        if over:  # a broken first line, then a bomb of blank lines
            yield decode_line(first.strip(), source, f"line {number}")
            yield blank_run(source, number + 1, limit)
            return
        if goes_on and not too_long and not _is_record(nxt):
            # a document over several lines (pretty-printed): read it as one
            replay = Replay(first + b"\n" * (skipped - 1) + nxt, stream)
            yield from read_document(replay, source, is_array=False, limit=limit)  # type: ignore[arg-type]
            return
        # JSON Lines whose first line is broken: that line costs one record
        yield decode_line(first.strip(), source, f"line {number}")
        if nxt or too_long:
            yield from read_lines(
                stream, source, limit, nxt, number + skipped, first_too_long=too_long
            )
        return
    yield Item(
        source,
        f"line {number}",
        error=RecordError(
            "is not JSON (expected an object, an array of objects or JSON Lines)",
            source=source,
            locator=f"line {number}",
        ),
    )
    yield from read_lines(stream, source, limit, start=number + 1)


def _first_line(line: bytes) -> tuple[Any, bool]:
    """The first line's value (None if it does not parse) and whether the value may go on
    on the next line (the text is fine up to its end, as on a pretty-printed object's)."""
    try:
        return json.loads(line), False
    except json.JSONDecodeError as exc:
        return None, exc.pos >= len(line.decode("utf-8", "replace").rstrip())
    except (UnicodeDecodeError, RecursionError):
        return None, False


def _is_record(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
