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
"""

from __future__ import annotations

import codecs
import contextlib
import datetime as dt
import io
import json
import os
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kg.config import MAX_RECORD_BYTES
from kg.errors import InputError, RecordError
from kg.ingest.manifest import is_manifest

INPUT_SUFFIXES = (".json", ".jsonl", ".ndjson")
_LINE_SUFFIXES = (".jsonl", ".ndjson")
_CHUNK = 1 << 16
_MAX_INFLATE = 1 << 20  # bytes of decompressed output per step
_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]+")
_BLANK_BYTES = b" \t\n\r"
# A string (or a lone '"': one the buffer does not hold to its end), or a bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|"|[\[\]{}]', re.DOTALL)


@dataclass
class Item:
    source: str  # the file, as given
    locator: str  # "line 3", "item 2" or "" for a single-value file
    value: Any = None
    error: RecordError | None = None


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
        handle = _Replay(head, handle)  # type: ignore[assignment]
    else:
        head = peek(2)[:2]
    if head == b"\x1f\x8b":
        return io.BufferedReader(Gunzip(handle), _CHUNK)
    return handle


class GzipDamage(OSError):
    """Compressed data that cannot be decompressed past `offset` (a byte of the .gz file)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class Gunzip(io.RawIOBase):
    """Decompresses a .gz stream (members one after another), giving out every byte that
    can be recovered before damaged or missing data, then raising `GzipDamage` with the
    compressed offset where it stopped. (gzip.GzipFile drops the output of the read that
    fails, so whole records just before the damage were lost.)"""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._inflater = zlib.decompressobj(wbits=31)
        self._pending = b""
        self._offset = 0  # compressed bytes consumed
        self._failure: GzipDamage | None = None
        self._started = False  # the current member has produced or consumed input

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            if not self._fill():
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _fill(self) -> bool:
        """Decompress more; False at the clean end of the stream."""
        if self._inflater.eof:
            rest = self._inflater.unused_data
            self._inflater = zlib.decompressobj(wbits=31)
            self._started = False
            if rest:
                return self._feed(rest)
        elif self._inflater.unconsumed_tail:  # input held back by the output cap
            return self._feed(self._inflater.unconsumed_tail)
        data = self._raw.read(_CHUNK)
        if not data:
            if self._started and not self._inflater.eof:
                self._failure = GzipDamage("the file ends inside compressed data", self._offset)
            return self._failure is not None
        return self._feed(data)

    def _feed(self, data: bytes) -> bool:
        self._started = True
        saved = self._inflater.copy()
        try:
            # at most _MAX_INFLATE out of one read: 64 KiB of a bomb inflate to 64 MiB
            self._pending = self._inflater.decompress(data, _MAX_INFLATE)
            inflater = self._inflater  # input left: past the member's end, or held back
            left = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            self._offset += len(data) - len(left)
            return True
        except zlib.error as exc:
            # again a byte at a time from before this chunk, to keep all that inflates
            self._inflater, out = saved, bytearray()
            for i in range(len(data)):
                try:
                    out += self._inflater.decompress(data[i : i + 1])
                except zlib.error:
                    self._failure = GzipDamage(str(exc), self._offset + i)
                    break
            self._pending = bytes(out)
            return True

    def close(self) -> None:
        self._raw.close()
        super().close()


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

    def peek(self, n: int = 0) -> bytes:
        """Bytes ahead without consuming them (b"" when the stream cannot look ahead)."""
        if self._head:
            return self._head
        peek = getattr(self._rest, "peek", None)
        return peek(n) if peek is not None else b""

    def readline(self, n: int = -1) -> bytes:
        if not self._head:
            return self._rest.readline(n)
        end = self._head.find(b"\n") + 1 or len(self._head)
        if 0 <= n < end:
            end = n
        out, self._head = self._head[:end], self._head[end:]
        if out.endswith(b"\n") or self._head or n == len(out):
            return out
        return out + self._rest.readline(-1 if n < 0 else n - len(out))

    @property
    def closed(self) -> bool:
        return bool(self._rest.closed)

    def tell(self) -> int:
        return self._rest.tell()

    def close(self) -> None:
        self._rest.close()


class _TooLong(Exception):
    """One JSON value in a document ran past the record limit."""


class _BlankRun(Exception):
    """More blank text in a row than the record limit, in a document."""


#: Characters before the end of the text read where a JSON error may still be a token cut
#: by the chunk boundary (the longest: a surrogate pair's two `\uXXXX` escapes).
_TOKEN_SLACK = 16


class _Text:
    """The decoded text of a byte stream, read on demand, forgetting what was consumed.

    Values are parsed with the `json` module's C decoder, so memory stays bounded by the
    record limit and nesting by the recursion limit (ijson builds a prefix string per
    level: 200 KB of '[' took 22 GB).
    """

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._limit = limit
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.dropped_lines = 0  # newlines in the text consumed and forgotten
        self.failed_at = -1  # where the value that could not be read went wrong

    def line_at(self, pos: int) -> int:
        """The line number (from 1) of position `pos` of the buffer."""
        return self.dropped_lines + self.buf.count("\n", 0, pos) + 1

    def rest_from_line_of(self, pos: int) -> tuple[int, bytes]:
        """Where to read on as JSON Lines after a failure at `pos`: the line it is on when
        only blanks precede it there, else the next line; and the text from there on."""
        start = self.buf.rfind("\n", 0, pos) + 1
        if self.buf[start:pos].strip():
            start = self.buf.find("\n", pos) + 1 or len(self.buf)
        return self.line_at(start), self.buf[start:].encode("utf-8")

    def more(self) -> bool:
        """Read more (at least as much as is pending); False at the end of the stream."""
        if self.eof:
            return False
        pending = len(self.buf) - self.pos
        if pending > self._limit:
            raise _TooLong
        data = self._stream.read(max(_CHUNK, pending))
        self.eof = not data
        self.dropped_lines += self.buf.count("\n", 0, self.pos)
        self.buf = self.buf[self.pos :] + self._decoder.decode(data, final=self.eof)
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not blank ('' at the end), without consuming it.
        More blank text in a row than the limit raises _BlankRun (a decompression bomb)."""
        run = 0
        while True:
            match = _BLANK.match(self.buf, self.pos)
            if match:
                run += match.end() - self.pos
                self.pos = match.end()
            if run > self._limit:
                raise _BlankRun
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self) -> Any:
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # wrong well before the end of what is read: more text cannot mend it (near
                # the end, a chunk may have cut a token: `tr|ue`, `\u00|e9`, `1e|5`)
                final = exc.pos + _TOKEN_SLACK < len(self.buf.rstrip()) and not (
                    exc.msg.startswith("Unterm")
                )
                if not final and self.more():
                    continue
                self.failed_at = exc.pos
                if final:
                    raise ValueError(f"{exc.msg} (line {self.line_at(exc.pos)})") from None
                raise ValueError(f"{exc.msg} (the file ends inside this value)") from None
            if end == len(self.buf) and self.more():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value

    def skip_value(self) -> None:
        """Step over one value without building it (for one nested too deeply to build)."""
        while True:
            depth = 0
            for token in _TOKEN.finditer(self.buf, self.pos):
                mark = token.group()
                if mark == '"':  # a string the buffer does not hold to its end
                    break
                if mark in "[{":
                    depth += 1
                elif mark in "]}":
                    depth -= 1
                if depth == 0:
                    self.pos = token.end()
                    return
            if not self.more():
                raise ValueError("the file ends inside this value")


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


def _skip_blanks(stream: IO[bytes], budget: int) -> tuple[int, int]:
    """Consume the blank bytes at the stream's position a buffer at a time (a line at a time
    costs a Python loop per line: 1 G newlines took 17 min), `budget` bytes and at most one
    buffer more. Returns (bytes, newlines) consumed; the first other byte stays unread."""
    peek = getattr(stream, "peek", None)
    done = newlines = 0
    while peek is not None and done <= budget:
        ahead = peek(_CHUNK)
        blank = len(ahead) - len(ahead.lstrip(_BLANK_BYTES))
        if not blank:
            break
        newlines += ahead.count(b"\n", 0, blank)
        stream.read(blank)
        done += blank
    return done, newlines


def _past_blanks(
    stream: IO[bytes], line: bytes, too_long: bool, limit: int
) -> tuple[bytes, bool, int, bool]:
    """From `line` on (already read), the first line that is not blank: (it, whether it is
    too long, how many lines came before it, and whether the blank lines ran past `limit`
    bytes: then reading this file stops, and the line is b"")."""
    skipped = blank = 0
    while line and not too_long and not line.strip():
        blank += len(line)
        more, newlines = _skip_blanks(stream, limit - blank)
        blank += more
        skipped += 1 + newlines
        if blank > limit:
            return b"", False, skipped, True
        line, too_long = _read_line(stream, limit)
    return line, too_long, skipped, False


def _blank_run(source: str, number: int, limit: int) -> Item:
    locator = f"line {number}"
    return Item(
        source,
        locator,
        error=RecordError(
            f"begins more than {limit:,} bytes of blank lines in a row (the record limit; a "
            "decompression bomb?), so the rest of the file was not read; the records before "
            "it were",
            source=source,
            locator=locator,
        ),
    )


def _lines(
    stream: IO[bytes],
    source: str,
    limit: int,
    first: bytes = b"",
    start: int = 1,
    *,
    first_too_long: bool = False,
) -> Iterator[Item]:
    """JSON Lines from line `start` on; `first` (or `first_too_long`): that line, already read."""
    number = start
    if first or first_too_long:
        line, too_long = first, first_too_long
    else:
        line, too_long = _read_line(stream, limit)
    while line or too_long:
        if not too_long and not line.strip():
            line, too_long, skipped, over = _past_blanks(stream, line, too_long, limit)
            if over:
                yield _blank_run(source, number, limit)
                return
            number += skipped
            continue
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
        else:
            yield _decode_line(line.strip(), source, locator)
        number += 1
        line, too_long = _read_line(stream, limit)


def _document(stream: IO[bytes], source: str, is_array: bool, limit: int) -> Iterator[Item]:
    """The values of a JSON document: the items of a top-level array, or whitespace-separated
    values. A malformed or oversized value ends the file (its end cannot be found)."""
    text = _Text(stream, limit)
    index = 0
    where = "item 0" if is_array else ""
    try:
        if is_array:
            text.peek()
            text.pos += 1  # the '[' the caller saw
            if text.peek() == "]":
                yield from _after_array(text, stream, source, limit)
                return
        while True:
            where = f"item {index}" if is_array else (f"value {index}" if index else "")
            if text.peek() == "":
                if is_array:
                    raise ValueError("the file ends inside the array")
                return
            try:
                yield Item(source, where, text.value())
            except RecursionError:
                text.skip_value()
                yield Item(
                    source,
                    where,
                    error=RecordError(
                        "JSON is nested too deeply to read", source=source, locator=where
                    ),
                )
            index += 1
            if is_array:
                mark = text.peek()
                if mark == "]":
                    yield from _after_array(text, stream, source, limit)
                    return
                if mark != ",":
                    text.failed_at = text.pos
                    found = repr(mark) if mark else "the end of the file"
                    raise ValueError(f"expected ',' or ']' after item {index - 1}, found {found}")
                text.pos += 1
    except _TooLong:
        problem, detail = f"is longer than the record limit of {limit:,} bytes", ""
    except _BlankRun:
        problem = (
            f"is followed by more than {limit:,} bytes of blank text in a row (the record "
            "limit; a decompression bomb?)"
        )
        detail = ""
    except UnicodeDecodeError as exc:
        problem, detail = f"is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x})", ""
    except ValueError as exc:
        if not text.eof and text.failed_at >= 0:
            # not one array after all (JSON Lines whose first line starts with '['): this
            # costs the line it went wrong on at most; read on from the next whole line
            line, rest = text.rest_from_line_of(text.failed_at)
            locator = f"line {text.line_at(text.failed_at)}"
            yield Item(
                source,
                locator,
                error=RecordError(
                    f"malformed JSON: {str(exc)[:200]}; read on as JSON Lines from line {line}",
                    source=source,
                    locator=locator,
                ),
            )
            yield from _lines(_Replay(rest, stream), source, limit, start=line)  # type: ignore[arg-type]
            return
        problem, detail = "malformed JSON", f": {str(exc)[:200]}"
    yield Item(
        source,
        where or "value",
        error=RecordError(
            f"{problem}, so the rest of the file was not read{detail}",
            source=source,
            locator=where or "value",
        ),
    )


def _after_array(text: _Text, stream: IO[bytes], source: str, limit: int) -> Iterator[Item]:
    """At an array's closing bracket: the end of the input, or JSON Lines after all (the
    array was their first line: it cost what it held)."""
    text.pos += 1
    if text.peek() == "":
        return
    line, rest = text.rest_from_line_of(text.pos)
    yield from _lines(_Replay(rest, stream), source, limit, start=line)  # type: ignore[arg-type]


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
        yield from _lines(stream, source, limit)
        return
    # Sniff the first character: a dump is often one array on one huge line, which must
    # stream rather than be read as a line.
    probe = stream.read(_CHUNK)
    stream = _Replay(probe, stream)  # type: ignore[assignment]
    if probe.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"[":
        yield from _document(stream, source, is_array=True, limit=limit)
        return
    number = 1
    first, too_long = _read_line(stream, limit)
    first, too_long, skipped, over = _past_blanks(stream, first, too_long, limit)
    if over:
        yield _blank_run(source, number, limit)
        return
    number += skipped
    first = first.removeprefix(b"\xef\xbb\xbf") if number == 1 else first
    head = first.lstrip()
    if too_long:  # one record longer than the limit: say so, read on as JSON Lines
        yield from _lines(stream, source, limit, start=number, first_too_long=True)
        return
    if not head:
        return
    if head[:1] == b"[":
        yield from _document(_Replay(first, stream), source, is_array=True, limit=limit)  # type: ignore[arg-type]
        return
    if head[:1] == b"{":
        value, goes_on = _first_line(first)
        if isinstance(value, dict):  # a complete object on line 1: JSON Lines
            yield Item(source, f"line {number}", value)
            yield from _lines(stream, source, limit, start=number + 1)
            return
        nxt, too_long = _read_line(stream, limit)
        nxt, too_long, blank_lines, over = _past_blanks(stream, nxt, too_long, limit)
        skipped = 1 + blank_lines
        if over:  # a broken first line, then a bomb of blank lines
            yield _decode_line(first.strip(), source, f"line {number}")
            yield _blank_run(source, number + 1, limit)
            return
        if goes_on and not too_long and not _is_record(nxt):
            # a document over several lines (pretty-printed): read it as one
            replay = _Replay(first + b"\n" * (skipped - 1) + nxt, stream)
            yield from _document(replay, source, is_array=False, limit=limit)  # type: ignore[arg-type]
            return
        # JSON Lines whose first line is broken: that line costs one record
        yield _decode_line(first.strip(), source, f"line {number}")
        if nxt or too_long:
            yield from _lines(stream, source, limit, nxt, number + skipped, first_too_long=too_long)
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
    yield from _lines(stream, source, limit, start=number + 1)


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
