"""kg's own gzip decoder, for inputs: it gives out every byte that can be recovered before
damaged or missing compressed data, then raises `GzipDamage` with the compressed offset where
it stopped (gzip.GzipFile drops the output of the read that fails); it inflates at most
`MAX_INFLATE` bytes per step, so a decompression bomb costs bounded memory. And the date in a
gzip file's header, which kg takes as a dump's snapshot.
"""

from __future__ import annotations

import datetime as dt
import io
import zlib
from typing import IO, Any

CHUNK = 1 << 16  # bytes read from an input at a time
_MAX_INFLATE = 1 << 20  # bytes of decompressed output per step


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
        data = self._raw.read(CHUNK)
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
