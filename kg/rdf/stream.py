"""SPARQL results written as their rows arrive, by kg's one results writer.

`serialize_results` (Oxigraph's own serialisers) writes every byte; this module only cuts
the document into its head, the rows, and its tail, so that a result of half a million
rows is written in batches: the first rows are out before the engine has yielded the last.
The head and tail are what the writer gives for no rows; a batch's rows are what it gives
for that batch between them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

from kg.rdf import formats
from kg.rdf.results import Row, SelectResult
from kg.rdf.store import BinaryWriter, serialize_results

T = TypeVar("T")

#: Rows in the first batch (written at once) and the most in any later one.
FIRST_BATCH = 16
MAX_BATCH = 4096


def batches(
    rows: Iterable[T], first: int = FIRST_BATCH, most: int = MAX_BATCH
) -> Iterator[list[T]]:
    """The rows in batches that double from `first` up to `most` rows."""
    it = iter(rows)
    size = first
    while True:
        batch = list(islice(it, size))
        if not batch:
            return
        yield batch
        size = min(size * 2, most)


def _split(empty: bytes, full: bytes) -> tuple[int, int]:
    """The lengths of the head and tail `full` shares with the no-rows document `empty`."""
    head = 0
    for a, b in zip(empty, full, strict=False):
        if a != b:
            break
        head += 1
    tail = 0
    room = len(empty) - head
    while tail < room and empty[-1 - tail] == full[-1 - tail]:
        tail += 1
    return head, tail


def write_results(
    variables: list[str], rows: Iterable[Row], fmt: str, out: BinaryWriter
) -> int:
    """Write a SELECT result as `fmt` (json, xml, csv, tsv) to `out`, batch by batch, flushing
    after each; returns the number of rows written."""
    name = formats.results_format(fmt).name
    empty = serialize_results(SelectResult(variables, []), name)
    separator = b"," if name == "json" else b""
    written = 0
    tail = b""
    for batch in batches(rows):
        full = serialize_results(SelectResult(variables, batch), name)
        head_len, tail_len = _split(empty, full)
        body = full[head_len : len(full) - tail_len]
        if written == 0:
            out.write(full[:head_len])
            tail = full[len(full) - tail_len :] if tail_len else b""
        else:
            out.write(separator)
        out.write(body)
        out.flush()
        written += len(batch)
    if written == 0:
        out.write(empty)
    else:
        out.write(tail)
    out.flush()
    return written
