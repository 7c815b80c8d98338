"""Exports: the store, one graph, or a CONSTRUCT result, in every standard RDF format.

Order. The output is sorted, so the same graph gives the same bytes whichever store holds
it and in whatever order it was loaded: the default graph, then the named graphs by IRI,
each graph's triples sorted by their N-Triples text. Dataset formats (N-Quads, TriG) write
each graph in turn.

Union. Formats without named graphs (N-Triples, Turtle, RDF/XML, JSON-LD) write the
store's default graph, which is the RDF merge of all graphs (each triple once, kept by
kg.rdf.store on every write), so one sorted pass over one graph suffices. For a store
written before kg kept the merge, they read every graph and write each triple once: a
Bloom filter remembers the subjects written so far, and a subject seen again has its
triples read from the store once, so that each line is written by the first graph that
holds it. JSON-LD writes one object per entity: a first pass finds the subjects several
graphs describe (a 64-bit hash per graph and subject), and those are written whole, where
they first occur. Dataset formats (N-Quads, TriG) write the named graphs, what each source
stated; the default graph's merge is derived from them, so it is not written again.

Memory. Oxigraph writes each graph's N-Triples natively into a sorter that keeps at most
the sort budget in memory and spills sorted runs of a larger graph to temporary files,
merged at the end.

The journal graph is never exported, nor the graphs a batch in flight has listed in it
(a read-only snapshot taken mid-ingest sees them half-written).
"""

from __future__ import annotations

import bisect
import gzip as gz
import hashlib
import itertools
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from kg.errors import NotFoundError, Param, ParameterError, StoreError, UsageError
from kg.export.jsonld import JsonLdWriter
from kg.export.turtle import TurtleWriter
from kg.rdf.engine import BinaryWriter, parse_triples, serialize_lines
from kg.rdf.formats import Format, rdf_format
from kg.rdf.results import GraphResult, Term
from kg.rdf.store import GraphStore
from kg.rdf.terms import is_absolute_iri
from kg.rdf.vocab import JOURNAL_GRAPH, PREFIXES
from kg.resources import exports_dir

#: Bytes of N-Triples sorted in memory before sorted runs spill to temporary files.
DEFAULT_SORT_BUDGET = 64 * 1024 * 1024
_BATCH_LINES = 20_000


def export_format(name: str) -> Format:
    """An export format by name, alias, extension or media type."""
    return rdf_format(name, writable=True)


@dataclass
class ExportReport:
    format: str
    statements: int = 0  # triples, or quads for N-Quads and TriG
    graphs: int = 0
    skipped_graphs: list[str] = field(default_factory=list)
    path: Path | None = None
    bytes: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "path": None if self.path is None else str(self.path),
            "statements": self.statements,
            "graphs": self.graphs,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "skipped_graphs": self.skipped_graphs,
        }


# --- sorting ---------------------------------------------------------------------------------


class _Sorter:
    """A file-like sink for Oxigraph's native N-Triples that gives the lines back sorted.

    Up to `budget` bytes are sorted in memory; beyond that, sorted runs spill to temporary
    files. Sorting bytes sorts by code point (UTF-8 keeps the order). N-Triples escapes
    line breaks inside literals, so every b"\n" ends a line.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.parts: list[bytes] = []
        self.size = 0  # bytes held in memory
        self.total = 0  # bytes written
        self.runs: list[IO[bytes]] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        self.total += len(data)
        if self.size >= self.budget:
            self._spill()
        return len(data)

    def flush(self) -> None:
        pass

    def _take_lines(self, final: bool) -> list[bytes]:
        data = b"".join(self.parts)
        cut = len(data) if final else data.rfind(b"\n") + 1
        rest = data[cut:]
        self.parts, self.size = ([rest], len(rest)) if rest else ([], 0)
        lines = data[:cut].splitlines(keepends=True)  # bytes split only at \n and \r
        lines.sort()
        return lines

    def _spill(self) -> None:
        lines = self._take_lines(final=False)
        if lines:
            run = tempfile.TemporaryFile()  # noqa: SIM115 (closed after the merge)
            run.writelines(lines)
            run.seek(0)
            self.runs.append(run)

    def batches(self) -> Iterator[list[bytes]]:
        """The sorted lines, in batches."""
        tail = self._take_lines(final=True)
        if not self.runs:
            for i in range(0, len(tail), _BATCH_LINES):
                yield tail[i : i + _BATCH_LINES]
            return
        try:
            yield from _merge(
                self.runs, tail, max(self.budget // (2 * len(self.runs) + 2), 1 << 16)
            )
        finally:
            for run in self.runs:
                run.close()


def _merge(runs: list[IO[bytes]], tail: list[bytes], hint: int) -> Iterator[list[bytes]]:
    """Merge sorted runs a block at a time: take from every buffer the lines up to the
    smallest buffer's last line and sort them together (Timsort merges sorted pieces in C,
    far faster than `heapq.merge` line by line). Unread lines of a run are never below its
    buffer's last line, so each block precedes everything still unread."""
    files: list[IO[bytes] | None] = [*runs, None]
    buffers = [run.readlines(hint) for run in runs] + [tail]
    while True:
        live = [i for i, buf in enumerate(buffers) if buf]
        if not live:
            return
        bound = min(buffers[i][-1] for i in live)
        block: list[bytes] = []
        for i in live:
            buf = buffers[i]
            cut = bisect.bisect_right(buf, bound)
            block += buf[:cut]
            buffers[i] = buf[cut:]
            source = files[i]
            if not buffers[i] and source is not None:
                buffers[i] = source.readlines(hint)
        block.sort()
        yield block


# --- which graphs --------------------------------------------------------------------------


@dataclass
class _Graphs:
    """The graphs an export reads, in export order (None is the default graph)."""

    order: list[str | None]
    skipped: list[str]
    own_default: bool = False  # the default graph is the merge: read only its own triples


def _graphs(store: GraphStore, graph: str | None, *, dataset: bool) -> _Graphs:
    if graph is not None:
        if graph == JOURNAL_GRAPH:
            raise UsageError("the journal graph is kg's own bookkeeping and is never exported")
        if not store.has_graph(graph):
            raise NotFoundError(
                f"the store has no graph <{graph}>; list the graphs with "
                "kg sparql 'SELECT DISTINCT ?g WHERE { GRAPH ?g {} } ORDER BY ?g'"
            )
        if graph in store.pending_graphs():
            raise StoreError(
                f"<{graph}> is being written by an ingest right now; export it when that ends"
            )
        return _Graphs([graph], [])
    pending = store.pending_graphs()
    if not dataset and store.keeps_merge():
        return _Graphs([None], sorted(pending))  # the merge: every triple once, whole records
    names = sorted(g for g in store.named_graphs() if g not in pending)
    if store.derived_default():  # the merge is derived from the named graphs: not again
        if store.has_own_default():  # but what a SPARQL update stated there is kept
            return _Graphs([None, *names], sorted(pending), own_default=True)
        return _Graphs([*names], sorted(pending))
    return _Graphs([None, *names], sorted(pending))


class _Reader:
    """Reads the graphs as sorted N-Triples and hands them out as chunks of whole lines,
    counting the statements it hands out."""

    def __init__(self, store: GraphStore, graphs: _Graphs, budget: int) -> None:
        self.store = store
        self.graphs = graphs
        self.budget = budget
        self.statements = 0
        self.nonempty = 0

    def _sorted_graphs(self) -> Iterator[tuple[str | None, _Sorter]]:
        """Each graph that holds triples, with its N-Triples lines in a sorter."""
        for graph in self.graphs.order:
            sorter = _Sorter(self.budget)
            self.store.graph_ntriples(graph, sorter, own=self.graphs.own_default)
            if sorter.total:
                self.nonempty += 1
                yield graph, sorter

    def graphs_lines(self) -> Iterator[tuple[str | None, list[bytes]]]:
        """(graph, N-Triples lines) batches, graph by graph, each graph's lines sorted."""
        for graph, sorter in self._sorted_graphs():
            for batch in sorter.batches():
                self.statements += len(batch)
                yield graph, batch

    def union(self) -> Iterator[list[bytes]]:
        """N-Triples of the union of the graphs in one pass: graph by graph, each graph's
        lines sorted, each triple once.

        A subject seen in an earlier graph (a Bloom filter remembers them) has its lines
        skipped where an earlier graph holds them (`_Owners`). Such a subject's triples
        therefore come in one block per graph that describes it.
        """
        seen = _SeenSubjects(len(self.graphs.order)).check_add
        owners = _Owners(self.store, self.graphs)
        rank: dict[str | None, int] = {}
        for graph, sorter in self._sorted_graphs():
            here = rank[graph] = len(rank)
            for batch in sorter.batches():
                again = {s for s in _subjects(batch) if seen(s)}
                if again and here:  # (a subject continued from the last batch lands here too)
                    batch = [
                        line
                        for line in batch
                        if line[: line.index(b" ")] not in again
                        or not owners.written_before(line, graph, here, rank)
                    ]
                self.statements += len(batch)
                yield batch

    def entities(self) -> Iterator[list[bytes]]:
        """N-Triples of the union of the graphs, each subject's triples together (one block
        per entity): graph by graph, each graph's lines sorted, each triple once.

        Subjects that several graphs describe are found first (`_sharing`), then written
        whole, from every graph, where they first occur, and skipped after.
        """
        sharing = _sharing(self.store, self.graphs)
        skip = set(self.graphs.skipped)
        written: set[int] = set()
        for graph, sorter in self._sorted_graphs():
            clean = sharing.batch_of[graph] not in sharing.dirty
            previous, keep = b"", True
            for batch in sorter.batches():
                if clean:  # no subject here is described by another graph: nothing to merge
                    self.statements += len(batch)
                    yield batch
                    continue
                kept: list[bytes] = []
                for line in batch:
                    subject = line[: line.index(b" ")]
                    if subject != previous:
                        key = hash(subject)
                        previous = subject
                        keep = subject[:1] != b"<" or key not in sharing.subjects
                        if not keep and key not in written:
                            written.add(key)  # write it whole, from every graph, once
                            by_graph = self.store.subject_lines_by_graph(subject)
                            kept += sorted(
                                {x for g, lines in by_graph.items() if g not in skip for x in lines}
                            )
                    if keep:
                        kept.append(line)
                self.statements += len(kept)
                yield kept


def _subjects(lines: list[bytes]) -> Iterator[bytes]:
    """The subjects of sorted N-Triples lines, each once: one bisection per subject, since
    a subject's lines are one run (nothing but a space follows a subject, and no UTF-8
    byte is 0xFF)."""
    i, end = 0, len(lines)
    while i < end:
        line = lines[i]
        subject = line[: line.index(b" ")]
        yield subject
        i = bisect.bisect_left(lines, subject + b" \xff", i + 1)


class _Owners:
    """Which exported graph writes each triple of the subjects several graphs describe: the
    first, in export order, that holds it. A subject's triples are read from the store once
    and remembered (up to `_OWNER_LINES` lines in all; forgetting only means reading again).
    Only a whole-store export has several graphs: the default graph, then by IRI."""

    def __init__(self, store: GraphStore, graphs: _Graphs) -> None:
        self.store = store
        self.skipped = set(graphs.skipped)
        self.cache: dict[bytes, dict[bytes, str | None]] = {}
        self.lines = 0

    def written_before(
        self, line: bytes, graph: str | None, here: int, rank: dict[str | None, int]
    ) -> bool:
        """Whether a graph before `graph` (ranked `here`) holds the triple on `line`."""
        subject = line[: line.index(b" ")]
        if subject[:1] != b"<":  # a blank node (kg makes none): this line alone
            return any(rank.get(g, here) < here for g in self.store.triple_graphs(line))
        owner = self.cache.get(subject)
        if owner is None:
            if self.lines > _OWNER_LINES:
                self.cache.clear()
                self.lines = 0
            owner = {}
            by_graph = self.store.subject_lines_by_graph(subject)
            for name in sorted(by_graph, key=lambda g: (g is not None, g or "")):
                if name not in self.skipped:
                    for held in by_graph[name]:
                        owner.setdefault(held, name)
            self.cache[subject] = owner
            self.lines += len(owner)
        return owner.get(line, graph) != graph


_OWNER_LINES = 2_000_000


class _SeenSubjects:
    """A Bloom filter of subjects (N-Triples bytes): no false negatives, few false positives.

    About 2,048 bits per graph (a record graph has some 30 subjects), between 8 KiB and
    32 MiB: at the cap, 3 probes give about 0.2% false positives at 13 M subjects (the full
    archive). A false positive costs one read of that subject's triples. (Probing a
    graph's subjects at once with numpy was no faster: a record graph has too few.)
    """

    def __init__(self, graphs: int) -> None:
        bits = min(max(1 << 16, 1 << (graphs * 2048).bit_length()), 1 << 28)
        self.mask = bits - 1
        self.bits = bytearray(bits >> 3)

    def check_add(self, key: bytes) -> bool:
        """Whether `key` was (probably) added before; adds it."""
        h = hash(key)
        mask, bits = self.mask, self.bits
        step = (h >> 32) | 1
        p1, p2, p3 = h & mask, (h + step) & mask, (h + 2 * step) & mask
        b1, b2, b3 = 1 << (p1 & 7), 1 << (p2 & 7), 1 << (p3 & 7)
        seen = bits[p1 >> 3] & b1 and bits[p2 >> 3] & b2 and bits[p3 >> 3] & b3
        bits[p1 >> 3] |= b1
        bits[p2 >> 3] |= b2
        bits[p3 >> 3] |= b3
        return bool(seen)


@dataclass
class _Sharing:
    """The subjects that several graphs describe, by `hash` of their N-Triples token, and the
    batches of graphs that hold one (the others need no per-line look)."""

    subjects: set[int]
    dirty: set[int]
    batch_of: dict[str | None, int]


# One row per (graph, subject) pair, projected to the subject: a subject in two graphs of the
# batch comes twice. (A FILTER(isIRI(?s)) would double the cost; blank nodes are harmless:
# pass 2 merges IRIs only.)
_SUBJECTS_IN = """SELECT ?s WHERE {{ {{ SELECT DISTINCT ?g ?s
WHERE {{ VALUES ?g {{ {graphs} }} GRAPH ?g {{ ?s ?p ?o }} }} }} }}"""
_DEFAULT_SUBJECTS = "SELECT DISTINCT ?s WHERE { ?s ?p ?o }"
_GRAPHS_PER_QUERY = 512


def _sharing(store: GraphStore, graphs: _Graphs) -> _Sharing:
    """Ask the store, a batch of graphs at a time, for the subjects of each graph; keep a
    64-bit hash per (graph, subject) pair (12 bytes with its batch number) and find the
    hashes that occur twice. The rows stream in as TSV (whose IRIs are the N-Triples
    tokens) and are hashed in C, so no term objects are built. A hash collision only makes
    a subject look shared, which costs a read from the store, never a wrong triple."""
    import numpy as np

    batches: list[tuple[str, bool]] = []
    batch_of: dict[str | None, int] = {}
    if None in graphs.order:
        batch_of[None] = 0
        batches.append((_DEFAULT_SUBJECTS, False))
    names = [g for g in graphs.order if g is not None]
    for i in range(0, len(names), _GRAPHS_PER_QUERY):
        chunk = names[i : i + _GRAPHS_PER_QUERY]
        batch_of.update(dict.fromkeys(chunk, len(batches)))
        batches.append((_SUBJECTS_IN.format(graphs=" ".join(f"<{g}>" for g in chunk)), True))
    if len(graphs.order) < 2:
        return _Sharing(set(), set(), batch_of)
    hashes: list[Any] = []
    numbers: list[Any] = []
    for number, (sparql, union) in enumerate(batches):
        sink = _HashSink()
        store.query_into(
            sparql,
            cast(IO[bytes], sink),
            results_type="text/tab-separated-values",
            graph_type="application/n-triples",
            union=union,
        )
        hashes.append(np.array(sink.hashes, dtype=np.int64))
        numbers.append(np.full(len(sink.hashes), number, dtype=np.int32))
    all_hashes = np.concatenate(hashes)
    order = np.argsort(all_hashes, kind="stable")
    sorted_hashes, batch_numbers = all_hashes[order], np.concatenate(numbers)[order]
    twice = sorted_hashes[1:] == sorted_hashes[:-1]
    repeated = np.zeros(len(sorted_hashes), dtype=bool)
    repeated[1:] |= twice
    repeated[:-1] |= twice
    return _Sharing(
        set(sorted_hashes[repeated].tolist()), set(batch_numbers[repeated].tolist()), batch_of
    )


class _HashSink:
    """A file-like sink that keeps the `hash` of each line of a TSV result but its header."""

    def __init__(self) -> None:
        self.hashes: list[int] = []
        self.rest = b""
        self.header = True

    def write(self, data: bytes) -> int:
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        if self.header and lines:
            del lines[0]  # "?s", in every batch: it would make every batch look shared
            self.header = False
        self.hashes.extend(map(hash, lines))
        return len(data)

    def flush(self) -> None:
        pass


# --- writing ---------------------------------------------------------------------------------


def _write_jsonld(out: BinaryWriter, batches: Iterable[list[bytes]]) -> None:
    writer = JsonLdWriter(out)
    triples = itertools.chain.from_iterable(parse_triples(b"".join(b)) for b in batches)
    for subject, group in itertools.groupby(triples, key=lambda t: t[0]):
        writer.node(subject, ((p, o) for _, p, o in group))
    writer.close()


def export(
    store: GraphStore,
    out: BinaryWriter,
    fmt: str,
    *,
    graph: str | None = None,
    sort_budget: int = DEFAULT_SORT_BUDGET,
) -> ExportReport:
    """Write the store (or the named graph `graph`) to `out` in `fmt`, deterministically."""
    start = time.perf_counter()
    spec = export_format(fmt)
    graphs = _graphs(store, graph, dataset=spec.dataset)
    reader = _Reader(store, graphs, sort_budget)
    if spec.name == "nquads":
        for name, batch in reader.graphs_lines():
            suffix = b" .\n" if name is None else f" <{name}> .\n".encode()
            # Every line ends with b" .\n" and nothing else can: literals escape \n.
            out.write(b"".join(batch).replace(b" .\n", suffix))
    elif spec.name == "ntriples":
        for batch in reader.union():
            out.write(b"".join(batch))
    elif spec.name in ("turtle", "trig"):
        turtle = TurtleWriter(out, PREFIXES)
        if spec.name == "trig":
            for name, batch in reader.graphs_lines():
                turtle.write(batch, name)
        else:
            for batch in reader.union():
                turtle.write(batch)
        turtle.close()
    elif spec.name == "jsonld":
        _write_jsonld(out, reader.entities())
    else:
        serialize_lines((b"".join(b) for b in reader.union()), out, spec.name, prefixes=PREFIXES)
    return ExportReport(
        format=spec.name,
        statements=reader.statements,
        graphs=reader.nonempty,
        skipped_graphs=graphs.skipped,
        seconds=time.perf_counter() - start,
    )


# --- subsets: CONSTRUCT queries --------------------------------------------------------------


@dataclass(frozen=True)
class Subset:
    """A CONSTRUCT query ready to run: its name (for the file name), text and bindings."""

    name: str
    sparql: str
    substitutions: Mapping[str, Term] = field(default_factory=dict)


def subset_query(
    spec: str, params: Mapping[str, str], base_iri: str, store: GraphStore | None = None
) -> Subset:
    """`NAME` (a named query in queries/) or `@file.rq`, with its parameters bound.

    A file that starts with a `#+` header is read as a named query (so it takes --param);
    any other file is plain SPARQL. With `store`, names, slugs and ids of things are looked
    up there (kg.query.resolve), as `kg query` does.
    """
    from kg.query.named import bind, find_query, parse_query, prepare_local

    if spec.startswith("@"):
        path = Path(spec[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: cannot read the query file: {exc}") from None
        if not text.lstrip().startswith("#+"):
            if params:
                raise ParameterError(
                    f"{path} declares no parameters (no '#+ params:' header), so "
                    f"{{parameter}} cannot bind anything; write the values into the query",
                    parameter=Param(next(iter(params)), "query"),
                )
            return Subset(_file_stem(path.stem), text)
        query = parse_query(text, path)
        name = _file_stem(path.stem)
    else:
        query = find_query(spec)
        name = query.name
    if store is None:
        bindings = bind(query, params, base_iri)
    else:
        from kg.query.binding import bind_resolved

        bindings = bind_resolved(store, query, params, base_iri)
    prepared = prepare_local(query.sparql, bindings)
    return Subset(name, prepared.sparql, prepared.substitutions)


def construct(store: GraphStore, subset: Subset) -> GraphStore:
    """Run a CONSTRUCT (or DESCRIBE) query; its result as a fresh in-memory store."""
    result = store.query(subset.sparql, substitutions=dict(subset.substitutions))
    if not isinstance(result, GraphResult):
        raise UsageError(
            f"query {subset.name!r}: export needs a CONSTRUCT or DESCRIBE query, "
            "which returns a graph; this one returns rows (use kg query or kg sparql for it)"
        )
    graph = GraphStore.memory()
    graph.load(result.ntriples.encode("utf-8"), "ntriples")
    return graph


# --- files -----------------------------------------------------------------------------------


def _file_stem(text: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "graph"
    if len(stem) > 120:  # file names have a length limit; keep them unique with a hash
        stem = f"{stem[:100]}-{hashlib.sha1(text.encode()).hexdigest()[:12]}"
    return stem


def resolve_graph(graph: str, base_iri: str) -> str:
    """A graph IRI, or a key under the base (`graph/entities`) made into one."""
    text = graph.strip()
    if is_absolute_iri(text):
        return text
    return base_iri + text.lstrip("/")


def default_path(
    fmt: str,
    *,
    compress: bool = False,
    graph: str | None = None,
    query: str | None = None,
    base_iri: str = "",
) -> Path:
    """Where an export goes unless told: exports/kg.<ext>, or named after the graph/query."""
    spec = export_format(fmt)
    stem = "kg"
    if query is not None:
        stem = f"query-{_file_stem(query)}"
    elif graph is not None:
        key = graph[len(base_iri) :] if base_iri and graph.startswith(base_iri) else graph
        stem = f"kg-{_file_stem(key)}"
    return exports_dir() / f"{stem}.{spec.extension}{'.gz' if compress else ''}"


@contextmanager
def output_stream(out: IO[bytes], compress: bool) -> Iterator[BinaryWriter]:
    """`out` itself, or a gzip stream over it with no file name or time in its header (so
    the same graph gives the same bytes), closed at the end."""
    if not compress:
        yield out
        return
    with gz.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) as zipped:
        yield zipped


def export_file(
    store: GraphStore,
    fmt: str,
    path: Path,
    *,
    compress: bool = False,
    graph: str | None = None,
    sort_budget: int = DEFAULT_SORT_BUDGET,
) -> ExportReport:
    """Export into `path`, atomically: a failed export leaves any earlier file in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with (
            open(partial, "wb", buffering=1 << 20) as raw,
            output_stream(raw, compress) as stream,
        ):
            report = export(store, stream, fmt, graph=graph, sort_budget=sort_budget)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    report.path = path
    report.bytes = path.stat().st_size
    return report


def check_destination(path: Path) -> None:
    if path.is_dir():
        raise UsageError(
            f"{{parameter}} {path} is a directory; give a file name (or - for stdout)",
            parameter="out",
        )
