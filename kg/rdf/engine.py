"""The one module that talks to pyoxigraph.

Everything else in kg works with N-Quads text, format names and `kg.rdf.results` terms, so a
change in pyoxigraph's API is absorbed here. `Engine` is an Oxigraph store spoken to in
those words: IRIs as strings, N-Quads and N-Triples bytes, SPARQL text. What kg keeps in it
(the merge in the default graph, the journal, pinned snapshots) is decided above it, in
kg.rdf.merge, kg.rdf.journal, kg.rdf.snapshots and kg.rdf.store; the engine only knows
that the journal graph (`kg.rdf.vocab.JOURNAL_GRAPH`) is not data, and leaves it out of
every read of data.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import pyoxigraph as ox

from kg.errors import KgError, QuerySyntaxError, QueryTooComplexError, UsageError
from kg.rdf import formats
from kg.rdf.limits import query_text_problem
from kg.rdf.query_text import syntax_message
from kg.rdf.results import (
    AskResult,
    GraphResult,
    QueryResult,
    Row,
    SelectResult,
    SelectStream,
    Term,
)
from kg.rdf.terms import renamed_iri
from kg.rdf.vocab import JOURNAL_GRAPH, KG, QUERY_PREFIXES


def rdf_format(name: str) -> ox.RdfFormat:
    """Oxigraph's format for a kg.rdf.formats name, alias, extension or media type."""
    fmt = ox.RdfFormat.from_media_type(formats.rdf_format(name).media_type)
    if fmt is None:  # every registry format is one Oxigraph knows (tests/test_formats.py)
        raise UsageError(f"Oxigraph cannot read or write {name!r}")
    return fmt


def supports_datasets(fmt: str) -> bool:
    """Whether Oxigraph writes named graphs in `fmt` (N-Quads, TriG)."""
    return bool(rdf_format(fmt).supports_datasets)


# --- terms --------------------------------------------------------------------------------


def iri_error(value: str) -> str | None:
    """Why Oxigraph would reject `value` as an IRI (bad port, bad IPv6 host, a second '#'),
    or None. The mapping checks IRIs from the data with this, so the bulk loader never
    meets one it refuses."""
    try:
        ox.NamedNode(value)
    except ValueError as exc:
        return str(exc)
    return None


def _term(value: Any) -> Term:
    if isinstance(value, ox.NamedNode):
        return Term("uri", value.value)
    if isinstance(value, ox.Literal):
        lang = value.language
        return Term("literal", value.value, None if lang else value.datatype.value, lang)
    if isinstance(value, ox.BlankNode):
        return Term("bnode", value.value)
    if isinstance(value, ox.Triple):
        return Term("triple", str(value))
    raise TypeError(f"unexpected term {value!r}")  # pragma: no cover


def _ox_term(term: Term) -> ox.NamedNode | ox.Literal | ox.BlankNode:
    try:
        if term.kind == "uri":
            return ox.NamedNode(term.value)
        if term.kind == "bnode":
            return ox.BlankNode(term.value)
        if term.lang:
            return ox.Literal(term.value, language=term.lang)
        if term.datatype:
            return ox.Literal(term.value, datatype=ox.NamedNode(term.datatype))
        return ox.Literal(term.value)
    except ValueError as exc:
        raise UsageError(f"invalid RDF term {term.n3()[:80]}: {exc}") from None


#: What RocksDB (inside Oxigraph) names the threads that compact a store: the LOW pool of
#: one environment that every store of a process shares, started when the first store opens.
COMPACTION_THREAD = "rocksdb:low"
#: The compaction threads' CPU priority during an ingest (a nice value): below the mapping
#: and the load (0), above the search index's child (19, kg.search.beside), so that at the
#: run's end, when the command waits on the compaction, the compaction comes first. During
#: the batches 10, 15 and 19 gave the same times (docs/performance.md).
COMPACTION_NICENESS = 10


#: How long a bulk load takes to size itself by its thread's CPUs (it does so first thing):
#: the thread sees all of them again after this (`Engine.bulk_load_nquads_stream`).
_LOADER_SIZED_SECONDS = 0.5


def lower_compaction_priority(tasks: Path = Path("/proc/self/task")) -> int:
    """Run the engine's compaction threads at a low CPU priority (COMPACTION_NICENESS), for
    the rest of this process; returns how many threads it lowered (none where there is no
    `/proc`).

    A bulk ingest lands each batch as new sorted files over the whole key range, and
    RocksDB rewrites the store's upper level each time two of them pile up: at normal
    priority that compaction took a quarter of `kg ingest`'s CPU on 2 cores, taken from the
    mapping and the load. Lowered, it runs in the time they leave and merges more files at
    once, so it does less work (docs/performance.md). An unprivileged process
    cannot raise a priority again, so only a process whose job is the ingest asks."""
    lowered = 0
    try:
        threads = os.listdir(tasks)
    except OSError:
        return 0
    for tid in threads:
        try:
            name = (tasks / tid / "comm").read_text(encoding="utf-8", errors="replace").strip()
            if name == COMPACTION_THREAD:
                os.setpriority(os.PRIO_PROCESS, int(tid), COMPACTION_NICENESS)
                lowered += 1
        except (OSError, ValueError):  # the thread ended meanwhile, or no such call here
            continue
    return lowered


def check_query_text(sparql: str) -> None:
    """Refuse a query too long or nested too deeply for the parser (it would crash)."""
    problem = query_text_problem(sparql)
    if problem is not None:
        raise QueryTooComplexError(problem)


def _graph(iri: str | None) -> ox.NamedNode | ox.DefaultGraph:
    return ox.DefaultGraph() if iri is None else ox.NamedNode(iri)


def _is_journal(graph_name: Any) -> bool:
    return isinstance(graph_name, ox.NamedNode) and graph_name.value == JOURNAL_GRAPH


#: Substitutions for a query's variables, built (and checked) by `Engine.bindings`.
Bindings = dict[Any, Any]


@dataclass
class QueryDataset:
    """The dataset a query reads, as SPARQL 1.1 and its protocol define it.

    `default_graphs` replace the real default graph (None in the list stands for it);
    `named_graphs` are those GRAPH may visit; `union` reads the union of all graphs as the
    default graph (Oxigraph's option: a bag). Nothing set: the store's real default graph.
    """

    default_graphs: list[str | None] | None = None
    named_graphs: list[str] | None = None
    union: bool = False

    def options(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.default_graphs is not None:
            kwargs["default_graph"] = [_graph(g) for g in self.default_graphs]
        if self.named_graphs is not None:
            kwargs["named_graphs"] = [ox.NamedNode(g) for g in self.named_graphs]
        if self.union:
            kwargs["use_default_graph_as_union"] = True
        return kwargs


class ParsedQuads:
    """RDF parsed for `Engine.extend`: its quads, and whether any is in the default graph."""

    def __init__(self, quads: list[ox.Quad]) -> None:
        self.quads = quads
        self.states_default = any(isinstance(q.graph_name, ox.DefaultGraph) for q in quads)


# --- the engine ---------------------------------------------------------------------------


class Engine:
    """An Oxigraph store, on disk or in memory, in kg's words."""

    def __init__(self, inner: ox.Store) -> None:
        self._store = inner

    @classmethod
    def memory(cls) -> Engine:
        return cls(ox.Store())

    @classmethod
    def open(cls, path: Path) -> Engine:
        """Open (or create) the store at `path` for writing; OSError if it is locked."""
        return cls(ox.Store(str(path)))

    @classmethod
    def read_only(cls, path: Path) -> Engine:
        return cls(ox.Store.read_only(str(path)))

    @staticmethod
    def checkpoint(source: Path, into: Path) -> None:
        """Open the store files at `source` read-only and write a checkpoint of them (hard
        links where it can) into the new directory `into`."""
        live = ox.Store.read_only(str(source))
        live.backup(str(into))
        del live

    def backup(self, into: Path) -> None:
        """Write a checkpoint of this open store (what its committed transactions hold)
        into the new directory `into`: hard links to its table files where it can, with
        the memtables flushed first (RocksDB's checkpoint)."""
        self._store.backup(str(into))

    def __len__(self) -> int:
        """The number of quads in all graphs (the journal and the default graph too)."""
        return len(self._store)

    # -- writing ---------------------------------------------------------------------------
    def load_nquads(self, data: bytes) -> None:
        """Load N-Quads in one transaction, parsed natively."""
        self._store.load(data, format=ox.RdfFormat.N_QUADS)

    def bulk_load_nquads(self, data: bytes) -> None:
        """Load N-Quads with the bulk loader (atomic: its files are ingested in one step at
        its end). Raises SyntaxError for text that does not parse."""
        self._store.bulk_load(data, format=ox.RdfFormat.N_QUADS)

    def dump_nquads_file(self, path: Path) -> None:
        """Every quad of every graph, the default graph's too, as an N-Quads file (native)."""
        self._store.dump(str(path), format=ox.RdfFormat.N_QUADS)

    def bulk_load_nquads_file(self, path: Path) -> None:
        """Bulk-load an N-Quads file (read as it loads, not held in memory)."""
        self._store.bulk_load(path=str(path), format=ox.RdfFormat.N_QUADS)

    def bulk_load_nquads_stream(self, read_fd: int, *, sorters: int = 1) -> None:
        """Bulk-load the N-Quads a pipe carries until it is closed (kg.rdf.first_load), read
        natively: no interpreter lock. Atomic, as `bulk_load_nquads`: the loader sorts what
        it reads into files beside the store and ingests them all in one step at the end; a
        parse error ingests nothing.

        Oxigraph sizes its loader by the CPUs its thread sees as the load starts: one thread
        a CPU that each sorts a million quads at a time (about 0.7 GB each), and on 4 CPUs or
        more the input read by parts, which needs a file it can seek. So this thread sees
        `sorters` CPUs as the load starts (at most 3: the pipe is read front to back), then
        all of them again: the sorting threads the loader starts later inherit that."""
        thread = threading.get_native_id()
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cpus[: max(1, min(sorters, 3))])

        def widen() -> None:
            with contextlib.suppress(OSError):  # the load may be over
                os.sched_setaffinity(thread, cpus)

        restore = threading.Timer(_LOADER_SIZED_SECONDS, widen)
        restore.start()
        try:
            self._store.bulk_load(path=f"/dev/fd/{read_fd}", format=ox.RdfFormat.N_QUADS)
        finally:
            restore.cancel()
            widen()

    def is_empty(self) -> bool:
        """Whether the store holds no quad at all, in any graph."""
        return next(iter(self._store.quads_for_pattern(None, None, None, None)), None) is None

    def bulk_load(self, data: bytes, fmt: str) -> None:
        """Load RDF in any format with the bulk loader (not atomic across its files)."""
        try:
            self._store.bulk_load(data, format=rdf_format(fmt))
        except SyntaxError as exc:
            raise KgError(f"the {fmt} input does not parse: {exc}") from None

    def parse(
        self, data: bytes | IO[bytes], fmt: str, *, graph: str | None, base_iri: str | None
    ) -> ParsedQuads:
        """Parse RDF for `extend`, every triple into `graph` when one is given."""
        try:
            return ParsedQuads(
                [
                    q if graph is None else ox.Quad(q.subject, q.predicate, q.object, _graph(graph))
                    for q in ox.parse(data, format=rdf_format(fmt), base_iri=base_iri)
                ]
            )
        except SyntaxError as exc:
            raise KgError(f"the {fmt} input does not parse: {exc}") from None

    def extend(self, parsed: ParsedQuads) -> None:
        """Add parsed quads in one transaction; those in a named graph (not the journal) go
        into the default graph too, in the same transaction."""
        merged = [
            ox.Quad(q.subject, q.predicate, q.object)
            for q in parsed.quads
            if isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value != JOURNAL_GRAPH
        ]
        self._store.extend(parsed.quads + merged)

    def update(self, sparql: str) -> None:
        """Run a SPARQL update (one transaction)."""
        try:
            self._store.update(sparql, prefixes=QUERY_PREFIXES)
        except SyntaxError as exc:
            raise QuerySyntaxError(syntax_message(sparql, str(exc))) from None

    def drop_graph(self, graph: str) -> None:
        """Remove a named graph and its quads (the default graph is left as it is)."""
        self._store.remove_graph(ox.NamedNode(graph))

    def copy_named_into_default(self) -> None:
        """Bulk-add the triples of every named graph (not the journal) to the default graph."""
        store = self._store
        journal = ox.NamedNode(JOURNAL_GRAPH)
        chunk: list[ox.Quad] = []
        for quad in store:
            if isinstance(quad.graph_name, ox.NamedNode) and quad.graph_name != journal:
                chunk.append(ox.Quad(quad.subject, quad.predicate, quad.object))
                if len(chunk) >= 1_000_000:
                    store.bulk_extend(chunk)
                    chunk = []
        if chunk:
            store.bulk_extend(chunk)

    def flush(self) -> None:
        self._store.flush()

    def optimize(self) -> None:
        self._store.optimize()

    def rename_iris(self, renames: Mapping[str, str]) -> int:
        """Rewrite each `old` IRI to `new` in every graph, in one atomic update.

        Nodes minted beneath `old` (`old/result/…`, found by following its links) move with
        it, in the named graphs and in the default graph's merge. Returns how many quads of the
        named graphs were rewritten.
        """
        store = self._store
        journal = ox.NamedNode(JOURNAL_GRAPH)
        found: dict[ox.Quad, None] = {}
        for old in renames:
            todo, seen = [old], {old}
            while todo:
                node = ox.NamedNode(todo.pop())
                for quad in [
                    *store.quads_for_pattern(node, None, None, None),
                    *store.quads_for_pattern(None, None, node, None),
                ]:
                    if quad.graph_name == journal:
                        continue
                    found[quad] = None
                    obj = quad.object
                    if (
                        isinstance(obj, ox.NamedNode)
                        and obj.value.startswith(old + "/")
                        and obj.value not in seen
                    ):
                        seen.add(obj.value)
                        todo.append(obj.value)
        if not found:
            return 0
        def moved(term: Any) -> Any:
            if isinstance(term, ox.NamedNode):
                new = renamed_iri(term.value, renames)
                if new is not None:
                    return ox.NamedNode(new)
            return term

        def data(quads: Iterable[ox.Quad]) -> str:
            return " ".join(
                f"GRAPH {q.graph_name} {{ {q.subject} {q.predicate} {q.object} }}"
                if isinstance(q.graph_name, ox.NamedNode)
                else f"{q.subject} {q.predicate} {q.object} ."
                for q in quads
            )

        new = [ox.Quad(moved(q.subject), q.predicate, moved(q.object), q.graph_name) for q in found]
        store.update(f"DELETE DATA {{ {data(found)} }} ;\nINSERT DATA {{ {data(new)} }}")
        return sum(1 for q in found if isinstance(q.graph_name, ox.NamedNode))  # not the merge

    # -- reading ---------------------------------------------------------------------------
    def has_graph(self, graph: str) -> bool:
        return bool(self._store.contains_named_graph(ox.NamedNode(graph)))

    def has_graph_besides(self, graph: str) -> bool:
        """Whether the store holds a named graph other than `graph`."""
        other = ox.NamedNode(graph)
        return any(g != other for g in self._store.named_graphs())

    def named_graphs(self) -> Iterator[str]:
        """The IRIs of the named graphs, not the journal."""
        for g in self._store.named_graphs():
            if isinstance(g, ox.NamedNode) and g.value != JOURNAL_GRAPH:
                yield g.value

    def default_graph_is_nonempty(self) -> bool:
        return (
            next(iter(self._store.quads_for_pattern(None, None, None, ox.DefaultGraph())), None)
            is not None
        )

    def graph_size(self, graph: str) -> int:
        """The quads of one named graph."""
        return sum(1 for _ in self._store.quads_for_pattern(None, None, None, ox.NamedNode(graph)))

    def merge_size(self) -> int:
        """The triples of the default graph."""
        result = self._store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert isinstance(result, ox.QuerySolutions)
        return int(next(iter(result))[0].value)

    def graph_subjects(self, graph: str) -> set[str]:
        """The IRIs that are subjects of a quad of `graph`."""
        return {
            q.subject.value
            for q in self._store.quads_for_pattern(None, None, None, ox.NamedNode(graph))
            if isinstance(q.subject, ox.NamedNode)
        }

    def literal_subjects(self, predicate: str, lexical: str, graph: str) -> list[str]:
        """The IRIs with `predicate` a literal whose lexical form is `lexical`, in `graph`, in
        store order."""
        return [
            q.subject.value
            for q in self._store.quads_for_pattern(
                None, ox.NamedNode(predicate), None, ox.NamedNode(graph)
            )
            if isinstance(q.subject, ox.NamedNode)
            and isinstance(q.object, ox.Literal)
            and q.object.value == lexical
        ]

    def graph_hashes(self, graphs: list[str]) -> dict[str, str]:
        """The stored `kg:contentHash` of each of `graphs` that exists."""
        out: dict[str, str] = {}
        store = self._store
        prop = ox.NamedNode(KG.contentHash[1:-1])
        for g in graphs:
            node = ox.NamedNode(g)
            for quad in store.quads_for_pattern(node, prop, None, node):
                if isinstance(quad.object, ox.Literal):
                    out[g] = quad.object.value
        return out

    def subjects_with(self, predicate: str, value: str) -> list[str]:
        """IRIs (sorted) of the subjects with `predicate` "value" (a plain string), read from
        the default graph, which holds every graph's triples (kg.rdf.merge): one index, where
        any graph reads two (half the time of an ingest's paper lookups)."""
        pattern = (None, ox.NamedNode(predicate), ox.Literal(value), ox.DefaultGraph())
        quads = self._store.quads_for_pattern(*pattern)
        return sorted({q.subject.value for q in quads if isinstance(q.subject, ox.NamedNode)})

    def literal_values(self, subject: str, predicate: str) -> list[str]:
        """The lexical forms of `subject`'s `predicate` literals (the default graph, as
        `subjects_with`)."""
        pattern = (ox.NamedNode(subject), ox.NamedNode(predicate), None, ox.DefaultGraph())
        quads = self._store.quads_for_pattern(*pattern)
        return sorted({q.object.value for q in quads if isinstance(q.object, ox.Literal)})

    def subject_lines_by_graph(self, subject: bytes) -> dict[str | None, list[bytes]]:
        """The N-Triples lines about the IRI token `subject` (`<…>`), graph by graph (None:
        the default graph; not the journal), in Oxigraph's own N-Triples form."""
        by_graph: dict[str | None, list[ox.Triple]] = {}
        node = ox.NamedNode(subject[1:-1].decode())
        for q in self._store.quads_for_pattern(node, None, None, None):
            name = q.graph_name.value if isinstance(q.graph_name, ox.NamedNode) else None
            if name != JOURNAL_GRAPH:
                by_graph.setdefault(name, []).append(q.triple)
        return {
            name: (ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"").splitlines(
                keepends=True
            )
            for name, triples in by_graph.items()
        }

    def triple_graphs(self, ntriples_line: bytes) -> list[str | None]:
        """The graphs (None: the default graph) that hold the triple on one N-Triples line."""
        triple = next(iter(ox.parse(ntriples_line, format=ox.RdfFormat.N_TRIPLES)))
        return [
            q.graph_name.value if isinstance(q.graph_name, ox.NamedNode) else None
            for q in self._store.quads_for_pattern(
                triple.subject, triple.predicate, triple.object, None
            )
        ]

    # -- querying --------------------------------------------------------------------------
    @staticmethod
    def bindings(substitutions: Mapping[str, Term] | None) -> Bindings:
        """Substitutions for `run`'s variables (UsageError for a term Oxigraph refuses)."""
        return {ox.Variable(k): _ox_term(v) for k, v in (substitutions or {}).items()}

    def _run(self, sparql: str, subs: Bindings, dataset: QueryDataset) -> Any:
        options = dataset.options()
        try:
            return self._store.query(
                sparql, prefixes=QUERY_PREFIXES, substitutions=subs or None, **options
            )
        except SyntaxError as exc:
            raise QuerySyntaxError(syntax_message(sparql, str(exc))) from None
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def query(
        self, sparql: str, subs: Bindings, dataset: QueryDataset, limit: int | None
    ) -> QueryResult:
        """Run SPARQL (checked by the caller with `check_query_text`) as kg results."""
        result = self._run(sparql, subs, dataset)
        if isinstance(result, ox.QueryBoolean):
            return AskResult(bool(result))
        if isinstance(result, ox.QuerySolutions):
            variables = [v.value for v in result.variables]
            rows: list[Row] = []
            for solution in result:
                rows.append(
                    tuple(None if solution[v] is None else _term(solution[v]) for v in variables)
                )
                if limit is not None and len(rows) >= limit:
                    break
            return SelectResult(variables, rows)
        text = ox.serialize(result, format=ox.RdfFormat.N_TRIPLES) or b""
        return GraphResult(text.decode("utf-8"))

    def stream(
        self, sparql: str, subs: Bindings, dataset: QueryDataset
    ) -> SelectStream | AskResult | GraphResult:
        """Run SPARQL as `query` does, a SELECT's rows read lazily as the engine yields them."""
        result = self._run(sparql, subs, dataset)
        if isinstance(result, ox.QueryBoolean):
            return AskResult(bool(result))
        if isinstance(result, ox.QuerySolutions):
            width = len(result.variables)

            def rows() -> Iterator[Row]:
                for s in result:
                    yield tuple(None if s[i] is None else _term(s[i]) for i in range(width))

            def count_rest() -> int:
                return sum(1 for _ in result)

            return SelectStream([v.value for v in result.variables], rows(), count_rest)
        text = ox.serialize(result, format=ox.RdfFormat.N_TRIPLES) or b""
        return GraphResult(text.decode("utf-8"))

    def select_values(self, sparql: str, dataset: QueryDataset) -> Iterator[tuple[str | None, ...]]:
        """Stream a SELECT's rows as plain lexical values (None where unbound)."""
        result = self._run(sparql, {}, dataset)
        if not isinstance(result, ox.QuerySolutions):
            raise UsageError("select_values needs a SELECT query")
        width = len(result.variables)
        for solution in result:
            yield tuple(None if solution[i] is None else solution[i].value for i in range(width))

    def query_into(
        self,
        sparql: str,
        subs: Bindings,
        dataset: QueryDataset,
        output: io.RawIOBase | IO[bytes],
        *,
        results_type: str,
        graph_type: str,
        prefixes: Mapping[str, str] | None = None,
    ) -> tuple[str, str]:
        """Run SPARQL and serialise natively into `output` (see GraphStore.query_into)."""
        result = self._run(sparql, subs, dataset)
        if isinstance(result, ox.QueryTriples):
            fmt = ox.RdfFormat.from_media_type(graph_type)
            if fmt is None or fmt in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
                raise UsageError(f"{graph_type} is not a triple format for graph results")
            kwargs: dict[str, Any] = {}
            if prefixes and fmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.RDF_XML):
                kwargs["prefixes"] = dict(prefixes)
            ox.serialize(result, output, format=fmt, **kwargs)  # type: ignore[arg-type]
            return fmt.media_type, "graph"
        rfmt = ox.QueryResultsFormat.from_media_type(results_type)
        if rfmt is None:
            raise UsageError(f"{results_type} is not a SPARQL results format")
        result.serialize(output, format=rfmt)
        kind = "boolean" if isinstance(result, ox.QueryBoolean) else "solutions"
        return rfmt.media_type, kind

    def ask(self, sparql: str) -> bool:
        """The answer of an ASK query of kg's own over the real default graph."""
        return bool(self._store.query(sparql))

    # -- dumping ---------------------------------------------------------------------------
    def _constructed(self, sparql: str | None) -> Iterator[ox.Triple]:
        """The triples of a CONSTRUCT query of kg's own (none when `sparql` is None)."""
        if sparql is not None:
            result = self._store.query(sparql)
            assert isinstance(result, ox.QueryTriples)
            yield from result

    @staticmethod
    def _prefix_options(rfmt: ox.RdfFormat, prefixes: Mapping[str, str] | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if prefixes and rfmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
            kwargs["prefixes"] = prefixes
        return kwargs

    def dump_graph(
        self,
        out: IO[bytes] | str | Path,
        fmt: str,
        graph: str | None,
        prefixes: dict[str, str] | None,
    ) -> None:
        """Write one graph (None: the default graph) natively as `fmt`."""
        rfmt = rdf_format(fmt)
        target = str(out) if isinstance(out, Path) else out
        kwargs = self._prefix_options(rfmt, prefixes)
        self._store.dump(target, format=rfmt, from_graph=_graph(graph), **kwargs)

    def dump_dataset(
        self,
        out: IO[bytes] | str | Path,
        fmt: str,
        prefixes: dict[str, str] | None,
        *,
        skip_default: bool,
        own: str | None,
    ) -> None:
        """Write every graph but the journal (and the default graph unless `skip_default`)
        as the dataset format `fmt`, then the triples of the CONSTRUCT query `own` (the
        default graph's own statements) into the default graph."""
        rfmt = rdf_format(fmt)
        target = str(out) if isinstance(out, Path) else out
        quads = itertools.chain(
            (
                q
                for q in self._store
                if not _is_journal(q.graph_name)
                and not (skip_default and isinstance(q.graph_name, ox.DefaultGraph))
            ),
            (ox.Quad(t.subject, t.predicate, t.object) for t in self._constructed(own)),
        )
        ox.serialize(quads, target, format=rfmt, **self._prefix_options(rfmt, prefixes))

    def dump_union(
        self, out: IO[bytes] | str | Path, fmt: str, prefixes: dict[str, str] | None
    ) -> None:
        """Write the union of all graphs (Oxigraph's, a bag) as the triple format `fmt`."""
        rfmt = rdf_format(fmt)
        target = str(out) if isinstance(out, Path) else out
        triples = self._store.query(
            "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", use_default_graph_as_union=True
        )
        ox.serialize(triples, target, format=rfmt, **self._prefix_options(rfmt, prefixes))  # type: ignore[arg-type]

    def quads_nquads(
        self, graph: str | None, *, skip_default: bool, own: str | None
    ) -> Iterator[str]:
        """Every quad (or those of one named graph) as an N-Quads line, in store order: not
        the journal's, nor the default graph's with `skip_default`; then the triples of the
        CONSTRUCT query `own` as default-graph lines."""
        g = None if graph is None else ox.NamedNode(graph)
        for q in self._store.quads_for_pattern(None, None, None, g):
            if _is_journal(q.graph_name):
                continue
            if skip_default and isinstance(q.graph_name, ox.DefaultGraph):
                continue
            yield f"{q} .\n"
        for triple in self._constructed(own):  # the default graph's own statements
            yield f"{triple} .\n"

    def merge_ntriples(self) -> Iterator[str]:
        """The default graph as N-Triples lines, in store order."""
        for q in self._store.quads_for_pattern(None, None, None, ox.DefaultGraph()):
            yield f"{q.triple} .\n"

    def graph_ntriples(self, graph: str | None, out: BinaryWriter) -> None:
        """One graph's triples (None: the default graph) as N-Triples lines, written natively
        into `out` in 8 KiB pieces, in store order."""
        self._store.dump(out, format=ox.RdfFormat.N_TRIPLES, from_graph=_graph(graph))  # type: ignore[arg-type]

    def construct_ntriples(self, sparql: str, out: BinaryWriter) -> None:
        """The triples of a CONSTRUCT query of kg's own as N-Triples lines, into `out`."""
        ox.serialize(self._store.query(sparql), out, format=ox.RdfFormat.N_TRIPLES)  # type: ignore[arg-type]

    # -- digests ---------------------------------------------------------------------------
    def canonical_union_digest(self, keeps_merge: Callable[[], bool]) -> str:
        """A SHA-256 over the canonical N-Triples of the union of all graphs, each triple once
        (the default graph only, when `keeps_merge()`: it is the merge)."""
        dataset = ox.Dataset(
            ox.Quad(q.subject, q.predicate, q.object)
            for q in self._store
            if not _is_journal(q.graph_name)
            and not (isinstance(q.graph_name, ox.NamedNode) and keeps_merge())
        )
        dataset.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
        lines = sorted(f"{q} .\n" for q in dataset)
        return hashlib.sha256("".join(lines).encode()).hexdigest()

    def canonical_digest(self, exclude_predicates: Iterable[str] = ()) -> str:
        """A SHA-256 over the canonical N-Quads of the whole store (isomorphism by hash)."""
        skip = set(exclude_predicates)
        if not skip:
            fast = self._sorted_dump_digest()
            if fast is not None:
                return fast
        dataset = ox.Dataset(
            q
            for q in self._store
            if q.predicate.value not in skip and not _is_journal(q.graph_name)
        )
        dataset.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
        lines = sorted(f"{q} .\n" for q in dataset)
        return hashlib.sha256("".join(lines).encode()).hexdigest()

    def _sorted_dump_digest(self) -> str | None:
        """`canonical_digest` from Oxigraph's native N-Quads dump, several times faster on
        a disk store; None when a blank node may be present (those need canonical labels)."""
        buffer = io.BytesIO()
        self._store.dump(buffer, format=ox.RdfFormat.N_QUADS)
        journal = f" <{JOURNAL_GRAPH}> .".encode()
        lines = [line for line in buffer.getvalue().splitlines() if not line.endswith(journal)]
        del buffer
        if any(b"_:" in line for line in lines):
            return None
        lines.sort()  # UTF-8 byte order is code point order: the same order as sorted(str)
        digest = hashlib.sha256()
        for line in lines:
            digest.update(line)
            digest.update(b"\n")
        return digest.hexdigest()


# --- results and formats ------------------------------------------------------------------


def _tsv_term(term: Term | None) -> str:
    if term is None:
        return ""
    if term.kind == "triple":  # RDF 1.2 triple term syntax
        return f"<<( {term.value} )>>"
    return term.n3().replace("\t", "\\t")  # a tab only ever stands in a literal


def serialize_results(result: SelectResult | AskResult, fmt: str) -> bytes:
    """SPARQL results as `fmt` (json, xml, csv, tsv or a media type), written by Oxigraph's
    own serialisers: the ones the server streams, so every results writer in kg is one.

    Results from anywhere (the store, a remote endpoint, a truncated --limit) are handed to
    Oxigraph as TSV, whose terms are plain SPARQL syntax (`Term.n3`)."""
    native = ox.QueryResultsFormat.from_media_type(formats.results_format(fmt).media_type)
    if native is None:
        raise UsageError(f"Oxigraph cannot write results as {fmt!r}")
    if isinstance(result, AskResult):
        answer = b'{"head":{},"boolean":true}' if result.value else b'{"head":{},"boolean":false}'
        parsed = ox.parse_query_results(answer, format=ox.QueryResultsFormat.JSON)
    else:
        lines = ["\t".join(f"?{v}" for v in result.variables)]
        lines += ["\t".join(_tsv_term(t) for t in row) for row in result.rows]
        parsed = ox.parse_query_results(
            "\n".join(lines).encode("utf-8"), format=ox.QueryResultsFormat.TSV
        )
    return parsed.serialize(format=native) or b""


def parse_to_ntriples(data: bytes, fmt: str, *, base_iri: str | None = None) -> str:
    """Parse RDF in `fmt` and return it as N-Quads/N-Triples text (for tests and conversion)."""
    try:
        quads = ox.parse(data, format=rdf_format(fmt), base_iri=base_iri)
        return "".join(f"{q} .\n" for q in quads)
    except SyntaxError as exc:
        raise KgError(f"the {fmt} input does not parse: {exc}") from None


def convert(ntriples: str, fmt: str, prefixes: dict[str, str] | None = None) -> bytes:
    """Re-serialise N-Triples text into another RDF format."""
    rfmt = rdf_format(fmt)
    triples = ox.parse(ntriples.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    kwargs: dict[str, Any] = {}
    if prefixes and rfmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
        kwargs["prefixes"] = prefixes
    return ox.serialize(triples, format=rfmt, **kwargs) or b""


def select_variables(sparql: str) -> list[str] | None:
    """The variables a SELECT query projects (None for ASK, CONSTRUCT and DESCRIBE).

    pyoxigraph's `substitutions` only binds projected variables, so callers ask first. The
    query is run on an empty store, which costs a parse and nothing else.
    """
    try:
        result = ox.Store().query(sparql, prefixes=QUERY_PREFIXES)
    except SyntaxError as exc:
        raise QuerySyntaxError(syntax_message(sparql, str(exc))) from None
    if isinstance(result, ox.QuerySolutions):
        return [v.value for v in result.variables]
    return None


class BinaryWriter(Protocol):
    """What the export writers need of an output: a binary file, a gzip stream, a sink."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...


def serialize_lines(
    chunks: Iterable[bytes],
    out: BinaryWriter,
    fmt: str,
    *,
    dataset: bool = False,
    prefixes: Mapping[str, str] | None = None,
) -> None:
    """Write N-Triples chunks (N-Quads when `dataset`) as one `fmt` document, streaming.

    Each chunk must hold whole lines. The serializer keeps the input order, so it groups
    consecutive triples that share a subject (and quads that share a graph).
    """
    rfmt = rdf_format(fmt)
    source = ox.RdfFormat.N_QUADS if dataset else ox.RdfFormat.N_TRIPLES

    kwargs: dict[str, Any] = {}
    if prefixes and rfmt in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
        kwargs["prefixes"] = dict(prefixes)
    try:
        # itertools chains the parsers in C: no Python frame per quad.
        quads = itertools.chain.from_iterable(ox.parse(c, format=source) for c in chunks)
        ox.serialize(quads, out, format=rfmt, **kwargs)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise KgError(f"the graph cannot be written as {fmt}: {exc}") from None


def parse_triples(chunk: bytes) -> Iterator[tuple[Term, Term, Term]]:
    """The triples of N-Triples text as (subject, predicate, object) terms, in order."""
    for q in ox.parse(chunk, format=ox.RdfFormat.N_TRIPLES):
        yield _term(q.subject), _term(q.predicate), _term(q.object)
