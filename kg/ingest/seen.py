"""The graphs one ingest run has written, to tell a repeated record (unchanged) from a
conflicting one (rejected, naming where the first was read).

Each graph is kept as two 16-byte digests (BLAKE2b: no collision in practice), of its IRI and
of its content, and where it was read, packed in one bytes object: the archive's 952,139
graphs held about 500 MB as text, 253 MB as tuples of digests and strings, 149 MB so.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass


def digest(text: str) -> bytes:
    """16 bytes that stand for `text` in a run's memory."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(frozen=True)
class Earlier:
    """The graph's first record in the run: whether its content was the same, and where."""

    same: bool
    where: str  # "file:locator"


class SeenGraphs:
    """A run's graphs, each seen once with its content and where it was read."""

    def __init__(self) -> None:
        self._first: dict[bytes, bytes] = {}  # graph -> content, file number, locator
        self._files: dict[str, int] = {}

    def see(self, graph: str, content: str, source: str, locator: str) -> Earlier | None:
        """None for a graph new to the run (remembered, with where it was read), else what
        its first record was."""
        key, content_digest = digest(graph), digest(content)
        first = self._first.get(key)
        if first is None:
            number = self._files.setdefault(source, len(self._files))
            where = locator.encode("utf-8", "surrogatepass")
            self._first[key] = b"".join((content_digest, number.to_bytes(4, "big"), where))
            return None
        if first[:16] == content_digest:
            return Earlier(True, "")  # unchanged: where is not asked
        number = int.from_bytes(first[16:20], "big")
        file = next(name for name, n in self._files.items() if n == number)
        return Earlier(False, f"{file}:{first[20:].decode('utf-8', 'surrogatepass')}".rstrip(":"))

    def __len__(self) -> int:
        return len(self._first)

    def nbytes(self) -> int:
        """The memory its graphs take (the map, its keys and values), for the benchmarks."""
        return sys.getsizeof(self._first) + sum(
            sys.getsizeof(k) + sys.getsizeof(v) for k, v in self._first.items()
        )

    def clear(self) -> None:
        self._first.clear()
