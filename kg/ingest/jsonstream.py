"""JSON values out of a byte stream, as `Item`s, in memory bounded by the record limit.

* JSON Lines: one value per line; a line longer than the limit is skipped without being
  held, blank text is consumed a buffer at a time, and a run of it longer than the limit
  ends the file with one error (a decompression bomb).
* A document: the items of a top-level array streamed one by one through the `json`
  module's C decoder, or whitespace-separated values; JSON Lines after all when the first
  line turns out to be one value of many.

`kg.ingest.reader` opens the inputs and decides which of the two a file is.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from kg.errors import RecordError
from kg.ingest.gunzip import CHUNK

_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]+")
_BLANK_BYTES = b" \t\n\r"
# A string (or a lone '"': one the buffer does not hold to its end), or a bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|"|[\[\]{}]', re.DOTALL)


@dataclass
class Item:
    """One JSON value of an input, or the error that stands for it, and where it was."""

    source: str  # the file, as given
    locator: str  # "line 3", "item 2" or "" for a single-value file
    value: Any = None
    error: RecordError | None = None


class Replay:
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
        data = self._stream.read(max(CHUNK, pending))
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


def decode_line(raw: bytes, source: str, locator: str) -> Item:
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


def read_line(stream: IO[bytes], limit: int) -> tuple[bytes, bool]:
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
        ahead = peek(CHUNK)
        blank = len(ahead) - len(ahead.lstrip(_BLANK_BYTES))
        if not blank:
            break
        newlines += ahead.count(b"\n", 0, blank)
        stream.read(blank)
        done += blank
    return done, newlines


def past_blanks(
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
        line, too_long = read_line(stream, limit)
    return line, too_long, skipped, False


def blank_run(source: str, number: int, limit: int) -> Item:
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


def read_lines(
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
        line, too_long = read_line(stream, limit)
    while line or too_long:
        if not too_long and not line.strip():
            line, too_long, skipped, over = past_blanks(stream, line, too_long, limit)
            if over:
                yield blank_run(source, number, limit)
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
            yield decode_line(line.strip(), source, locator)
        number += 1
        line, too_long = read_line(stream, limit)


def read_document(stream: IO[bytes], source: str, is_array: bool, limit: int) -> Iterator[Item]:
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
            yield from read_lines(Replay(rest, stream), source, limit, start=line)  # type: ignore[arg-type]
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
    yield from read_lines(Replay(rest, stream), source, limit, start=line)  # type: ignore[arg-type]
