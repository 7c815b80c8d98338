"""The store read out whole: native dumps, N-Quads and N-Triples streams, and digests.

What exports (kg.export), `kg dump` and the fidelity checks read; a part of GraphStore
(kg.rdf.store), which it takes as a base class, reading through kg.rdf.engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from kg.rdf import merge
from kg.rdf.engine import BinaryWriter, Engine, supports_datasets
from kg.rdf.vocab import JOURNAL_GRAPH


class StoreExport:
    """GraphStore's reads of everything at once (GraphStore defines the two methods)."""

    _engine: Engine
    path: Path | None

    def keeps_merge(self) -> bool:
        raise NotImplementedError

    def derived_default(self) -> bool:
        raise NotImplementedError

    # -- dumping ---------------------------------------------------------------------------
    def dump(
        self,
        out: IO[bytes] | str | Path,
        fmt: str,
        *,
        graph: str | None = None,
        prefixes: dict[str, str] | None = None,
        include_merge: bool = False,
    ) -> None:
        """Write the store (or one graph) natively. Triple formats get the merge (the
        default graph) unless `graph`; dataset formats the named graphs, and the default
        graph's merge too with `include_merge` (what the store holds, for benchmarks)."""
        datasets = supports_datasets(fmt)
        if graph is not None:
            self._engine.dump_graph(out, fmt, graph, prefixes)
        elif datasets:
            skip_default = self.derived_default() and not include_merge
            own = self._own_query(skip_default)
            self._engine.dump_dataset(out, fmt, prefixes, skip_default=skip_default, own=own)
        elif self.keeps_merge():
            self._engine.dump_graph(out, fmt, None, prefixes)
        else:
            self._engine.dump_union(out, fmt, prefixes)

    def quads_nquads(self, graph: str | None = None) -> Iterator[str]:
        """Every quad of the named graphs (or of one graph) as an N-Quads line, in store
        order: what the sources state. The default graph comes too only when it is data of
        its own (`derived_default`)."""
        skip_default = graph is None and self.derived_default()
        own = self._own_query(skip_default)
        yield from self._engine.quads_nquads(graph, skip_default=skip_default, own=own)

    def _own_query(self, wanted: bool) -> str | None:
        """The query for the default graph's own triples (see `has_own_default`), when
        `wanted` and the store may hold some."""
        return merge.OWN_DEFAULT if wanted and not merge.merge_only(self.path) else None

    def has_own_default(self) -> bool:
        """Whether the default graph states triples that no named graph states (written by
        a SPARQL update or `load` into the default graph): dataset exports keep those."""
        if merge.merge_only(self.path):
            return False
        return self._engine.ask(f"ASK {{ {merge.OWN_PATTERN} }}")

    def merge_ntriples(self) -> Iterator[str]:
        """The default graph (the merge) as N-Triples lines, in store order."""
        yield from self._engine.merge_ntriples()

    # -- exporting (kg.export) ----------------------------------------------------------------
    def pending_graphs(self) -> set[str]:
        """Graphs that a batch in flight has listed in the journal.

        A read-only snapshot taken mid-batch sees them half-written, so exports leave them out.
        """
        return self._engine.graph_subjects(JOURNAL_GRAPH)

    def graph_ntriples(self, graph: str | None, out: BinaryWriter, *, own: bool = False) -> None:
        """One graph's triples (None: the default graph) as N-Triples lines, written natively
        into `out` in 8 KiB pieces, in store order. With `own`, only the default graph's
        triples that no named graph states (its own statements, not the merge's copies)."""
        if graph is None and own:
            self._engine.construct_ntriples(merge.OWN_DEFAULT, out)
            return
        self._engine.graph_ntriples(graph, out)

    def subject_lines_by_graph(self, subject: bytes) -> dict[str | None, list[bytes]]:
        """The N-Triples lines about the IRI token `subject` (`<…>`), graph by graph (None:
        the default graph; not the journal), in Oxigraph's own N-Triples form."""
        return self._engine.subject_lines_by_graph(subject)

    def triple_graphs(self, ntriples_line: bytes) -> list[str | None]:
        """The graphs (None: the default graph) that hold the triple on one N-Triples line."""
        return self._engine.triple_graphs(ntriples_line)

    def canonical_union_digest(self) -> str:
        """A SHA-256 over the canonical N-Triples of the union of all graphs, each triple once
        (isomorphism by hash, for formats without named graphs)."""
        return self._engine.canonical_union_digest(self.keeps_merge)

    def canonical_digest(self, exclude_predicates: Iterable[str] = ()) -> str:
        """A SHA-256 over the canonical N-Quads of the whole store (isomorphism by hash)."""
        return self._engine.canonical_digest(exclude_predicates)
