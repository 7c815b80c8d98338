"""Reading JSON inputs: files, directories, gzip and standard input, as a stream.

Yields one `Item` per JSON value (a record, or one element of a dump's top-level array),
each with where it came from. A value that cannot be read becomes an `Item` with an
error, so one bad line never hides the good ones around it.

* `.jsonl` / `.ndjson`: one value per line; a line longer than the record limit is skipped
  without being held in memory.
* `.json`: one value, a top-level array (streamed with ijson, so a 1 GB dump is read in
  constant memory), or JSON Lines after all (sniffed from the first line).
* `.gz` of any of these; directories are walked recursively in sorted order; `-` is stdin.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import ijson

from kg.config import MAX_RECORD_BYTES
from kg.errors import InputError, RecordError

INPUT_SUFFIXES = (".json", ".jsonl", ".ndjson")
_LINE_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class Item:
    source: str  # the file, as given
    locator: str  # "line 3", "item 2" or "" for a single-value file
    value: Any = None
    error: RecordError | None = None


def expand(paths: list[str]) -> Iterator[str]:
    """Files to read, in order: directories are walked recursively, `-` is kept as is."""
    for raw in paths:
        if raw == "-":
            yield raw
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.name.removesuffix(".gz").endswith(INPUT_SUFFIXES)
            )
            yield from (str(p) for p in found)
        elif path.exists():
            yield raw
        else:
            raise InputError(f"{raw}: no such file or directory")


def gzip_date(name: str) -> str | None:
    """The modification date (UTC, YYYY-MM-DD) in a gzip file's header, or None.

    The Papers-with-Code dumps were published gzipped, and this date is when the dump was
    written: kg uses it as the dump's snapshot unless told otherwise.
    """
    if name == "-":
        return None
    try:
        with open(name, "rb") as handle:
            header = handle.read(8)
    except OSError:
        return None
    if len(header) < 8 or header[:2] != b"\x1f\x8b":
        return None
    mtime = int.from_bytes(header[4:8], "little")
    if not mtime:
        return None
    return dt.datetime.fromtimestamp(mtime, dt.UTC).date().isoformat()


def open_binary(name: str) -> IO[bytes]:
    """Open a file (gunzipped when its name or its magic bytes say gzip) or stdin."""
    if name == "-":
        return sys.stdin.buffer
    try:
        handle: IO[bytes] = open(name, "rb")  # noqa: SIM115 - returned to the caller
    except OSError as exc:
        raise InputError(f"{name}: cannot open: {exc.strerror}") from None
    if handle.read(2) == b"\x1f\x8b":
        handle.seek(0)
        return gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[return-value]
    handle.seek(0)
    return handle


class _Replay:
    """A read()-able stream that first returns bytes already consumed."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n < 0 or n >= len(self._head):
                out, self._head = self._head, b""
                more = self._rest.read(-1 if n < 0 else n - len(out))
                return out + more
            out, self._head = self._head[:n], self._head[n:]
            return out
        return self._rest.read(n)


def _decode_line(raw: bytes, source: str, locator: str) -> Item:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Item(
            source,
            locator,
            error=RecordError(
                f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                source=source,
                locator=locator,
            ),
        )
    try:
        return Item(source, locator, json.loads(text))
    except json.JSONDecodeError as exc:
        return Item(
            source,
            locator,
            error=RecordError(
                f"malformed JSON: {exc.msg} (column {exc.colno})", source=source, locator=locator
            ),
        )
    except RecursionError:
        return Item(
            source,
            locator,
            error=RecordError("JSON is nested too deeply to read", source=source, locator=locator),
        )


def _read_line(stream: IO[bytes], limit: int) -> tuple[bytes, bool]:
    """One line of at most `limit` bytes; (b"", False) at the end; too long → (b"", True)."""
    line = stream.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line, False
    while line and not line.endswith(b"\n"):  # skip the rest without keeping it
        line = stream.readline(1 << 20)
    return b"", True


def _lines(
    stream: IO[bytes], source: str, limit: int, first: bytes = b"", start: int = 1
) -> Iterator[Item]:
    number = start
    line, too_long = (first, False) if first else _read_line(stream, limit)
    while line or too_long:
        locator = f"line {number}"
        if too_long:
            yield Item(
                source,
                locator,
                error=RecordError(
                    f"is longer than the record limit of {limit:,} bytes",
                    source=source,
                    locator=locator,
                ),
            )
        elif line.strip():
            yield _decode_line(line.strip(), source, locator)
        number += 1
        line, too_long = _read_line(stream, limit)


def _document(stream: IO[bytes], source: str, is_array: bool) -> Iterator[Item]:
    index = 0
    try:
        if is_array:
            for index, value in enumerate(ijson.items(stream, "item", use_float=True)):
                yield Item(source, f"item {index}", value)
        else:
            for index, value in enumerate(
                ijson.items(stream, "", use_float=True, multiple_values=True)
            ):
                yield Item(source, f"value {index}" if index else "", value)
    except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError) as exc:
        where = f"item {index + 1}" if is_array else "value"
        yield Item(
            source,
            where,
            error=RecordError(
                f"malformed JSON, so the rest of the file was not read: {str(exc)[:200]}",
                source=source,
                locator=where,
            ),
        )


def read_items(name: str, *, limit: int = MAX_RECORD_BYTES) -> Iterator[Item]:
    """Every JSON value in one input (a file name or `-`)."""
    stream = open_binary(name)
    source = "<stdin>" if name == "-" else name
    try:
        if name.removesuffix(".gz").endswith(_LINE_SUFFIXES):
            yield from _lines(stream, source, limit)
            return
        # Sniff: skip blank lines, look at the first line.
        number = 1
        first, too_long = _read_line(stream, limit)
        while first and not first.strip() and not too_long:
            number += 1
            first, too_long = _read_line(stream, limit)
        first = first.removeprefix(b"\xef\xbb\xbf") if number == 1 else first
        head = first.lstrip()
        if too_long or not head:
            if too_long:  # one huge line: could be one record or a whole dump on one line
                raise InputError(
                    f"{source}: the first line is longer than {limit:,} bytes and "
                    "is not a JSON array; split it into JSON Lines"
                )
            return
        if head[:1] == b"[":
            yield from _document(_Replay(first, stream), source, is_array=True)  # type: ignore[arg-type]
            return
        if head[:1] == b"{":
            try:
                value = json.loads(first)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                value = None
            if isinstance(value, dict):  # a complete object on line 1: JSON Lines
                yield Item(source, f"line {number}", value)
                yield from _lines(stream, source, limit, start=number + 1)
                return
            yield from _document(_Replay(first, stream), source, is_array=False)  # type: ignore[arg-type]
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
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{source}: cannot read: {exc}") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
