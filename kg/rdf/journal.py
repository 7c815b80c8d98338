"""The intent journal, and recovery from a crash in the middle of a write.

Writes go through `write_batch`, which makes Oxigraph's fast but non-transactional bulk
loader crash-safe with an intent journal:

1. the graphs of the batch are listed in the journal graph (one atomic write), and so are
   the shared graphs it merges into;
2. one atomic update retracts the old versions of changed records: their triples leave the
   default graph unless a graph outside the batch still states them, and their graphs go;
3. the batch is bulk-loaded into its named graphs and, in the same bulk load, into the
   default graph (a set: a triple already there stays once). pyoxigraph's `bulk_load` is
   atomic (its sorted files are ingested in one step at its end), so a triple reaches the
   default graph only with the quad that states it. A large batch comes in parts (whole
   records each, with the shared triples they state) loaded side by side, one per core,
   each atomic the same way (`_load_in_parts`);
4. the journal is cleared (one atomic write).

Readers see none of these steps: they open only what the writer publishes once the batch
is whole (kg.rdf.snapshots), so a batch is visible whole or not at all however many steps
it took.

A writer that opens a store whose journal is not empty (a crash between 1 and 4) runs the
retraction of step 2 on every listed graph and drops them, and puts back into the default
graph any triple of a listed shared graph it lacks (`recover`). Every triple in the default
graph after step 3 began belongs to a listed graph, so each record is either wholly present
or wholly absent, in its graph and in the default graph, and running the same ingest again
converges. A rebuild of the merge (`rebuild_merge`) is journalled too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kg.errors import KgError, StoreError
from kg.rdf.disk import disk_full_error, is_disk_full
from kg.rdf.engine import Engine
from kg.rdf.merge import merge_lines
from kg.rdf.vocab import JOURNAL_GRAPH, KG

#: What follows a graph's IRI on its journal line (N-Quads): "this graph is being loaded".
_PENDING_SUFFIX = (
    f' {KG.pendingLoad} "true"^^<http://www.w3.org/2001/XMLSchema#boolean> <{JOURNAL_GRAPH}> .\n'
)
#: A shared graph the batch set-merges into (the entities graph): recovery keeps it and
#: puts its triples back into the default graph.
_MERGING_SUFFIX = (
    f' {KG.pendingLoad} "false"^^<http://www.w3.org/2001/XMLSchema#boolean> <{JOURNAL_GRAPH}> .\n'
)


#: A batch is loaded in up to this many parts side by side (see `_load_in_parts`), each of
#: at least so many quads: below that a part costs more in fixed work than it gains.
LOAD_THREADS = max(1, min(4, os.cpu_count() or 1))
LEAST_PART_QUADS = 5_000


def part_count(quads: int) -> int:
    """How many parts a batch of `quads` is best written in (see `write_batch`)."""
    return max(1, min(LOAD_THREADS, quads // LEAST_PART_QUADS))


def _load_in_parts(
    engine: Engine, parts: list[bytes], merges: list[bytes] | None = None
) -> list[SyntaxError]:
    """Bulk-load N-Quads parts into their named graphs and, in the same load, into the
    default graph (the merge). Each part is one atomic bulk load of its quads and their
    merge lines, so the default graph never holds a triple whose quad is missing. One
    bulk load is one thread in Oxigraph (a single chunk) and releases the GIL, so the
    parts run side by side on the other cores. `merges`, when given, are the parts' merge
    lines as the caller made them (`merge_lines` of each part, made cheaper: the regular
    expression holds the interpreter's lock, 3.4 s of 20,000 records' ingest). Returns
    the parse errors (all parts are done by then)."""

    def load(part: bytes, merge: bytes | None) -> SyntaxError | None:
        try:
            # the merge lines: each line's graph IRI removed (the default graph)
            engine.bulk_load_nquads(part + (merge_lines(part) if merge is None else merge))
        except SyntaxError as exc:
            return exc
        return None

    given: list[bytes | None] = list(merges) if merges is not None else [None] * len(parts)
    if len(given) != len(parts):
        raise ValueError("one merge text a part")
    if len(parts) == 1:
        problems = [load(parts[0], given[0])]
    else:
        with ThreadPoolExecutor(len(parts), thread_name_prefix="kg-load") as pool:
            problems = list(pool.map(load, parts, given))  # every part done before recovery
    return [p for p in problems if p is not None]


def retraction(graphs: list[str], *, journal: bool, merge_back: bool = False) -> str:
    """One SPARQL update that takes graphs out of the store: their triples leave the
    default graph unless a graph outside them still states them, and `graphs` are dropped.
    Run as one update, it is one transaction.

    With `journal`, the graphs retracted are those the journal lists as pending (a batch's,
    whose new graphs are still empty) and "outside" means not listed so (an index lookup
    per triple, however large the batch); else they are `graphs`. With `merge_back`
    (recovery), the triples of the shared graphs the journal lists as merged into
    (`_MERGING_SUFFIX`) are first put back into the default graph."""
    j = f"<{JOURNAL_GRAPH}>"
    parts = []
    if merge_back:
        parts.append(
            f"INSERT {{ ?s ?p ?o }} WHERE {{ GRAPH {j} {{ ?m {KG.pendingLoad} false }} "
            "GRAPH ?m { ?s ?p ?o } FILTER NOT EXISTS { ?s ?p ?o } }"
        )
    if journal:
        chosen = f"GRAPH {j} {{ ?g {KG.pendingLoad} true }}"
        outside = f"FILTER NOT EXISTS {{ GRAPH {j} {{ ?h {KG.pendingLoad} true }} }}"
    else:
        chosen = f"VALUES ?g {{ {' '.join(f'<{g}>' for g in graphs)} }}"
        outside = f"FILTER (?h NOT IN ({', '.join(f'<{g}>' for g in graphs)}))"
    parts.append(
        f"DELETE {{ ?s ?p ?o }} WHERE {{ {chosen} GRAPH ?g {{ ?s ?p ?o }} "
        f"FILTER NOT EXISTS {{ GRAPH ?h {{ ?s ?p ?o }} FILTER (?h != {j}) {outside} }} }}"
    )
    parts.extend(f"DROP SILENT GRAPH <{g}>" for g in graphs)
    return " ;\n".join(parts)


def write_batch(
    engine: Engine,
    nquads: bytes | list[bytes],
    graphs: Iterable[str],
    replace: Iterable[str],
    shared: Iterable[str],
    *,
    recover: Callable[[], int],
    where: Path | None,
    merges: list[bytes] | None = None,
) -> None:
    """Steps 1 to 4 of the module docstring (see GraphStore.write_batch). `recover` undoes
    the batch if its text does not parse; `where` names the store in the error; `merges`
    are the parts' merge lines when the caller has them (`_load_in_parts`)."""
    replace = list(replace)
    try:
        # One transaction, parsed natively: a quad object per graph costs ~30 us each.
        engine.load_nquads(
            (
                "".join(f"<{g}>{_PENDING_SUFFIX}" for g in graphs)
                + "".join(f"<{g}>{_MERGING_SUFFIX}" for g in shared)
            ).encode()
        )
        if replace:  # the old versions leave their graphs and the merge, atomically
            engine.update(retraction(replace, journal=True))
            # journal and removals on disk before the new versions: the write-ahead
            engine.flush()  # log is not synced, and a power cut must not merge them
        # One atomic bulk load per part: the quads into their graphs and, as the merge
        # lines, their triples into the default graph.
        parts = [nquads] if isinstance(nquads, bytes) else nquads
        problems = _load_in_parts(engine, parts, merges)
        if problems:  # nothing may stay half-loaded: drop the batch's graphs, then report
            recover()
            raise StoreError(f"the batch did not parse as N-Quads: {problems[0]}") from None
        engine.drop_graph(JOURNAL_GRAPH)
    except OSError as exc:  # disk full, I/O error: the journal lets the next writer recover
        if is_disk_full(exc):
            raise disk_full_error(
                where, "the batch in flight will be rolled back when the store is next opened "
                "for writing"
            ) from None
        raise KgError(
            f"writing to the store at {where} failed ({exc}); the batch in flight "
            "will be rolled back when the store is next opened for writing"
        ) from None


def recover(
    engine: Engine, *, keeps_merge: Callable[[], bool], rebuild_merge: Callable[[], None]
) -> int:
    """Undo the batch a crash left half-written (see the module docstring), or run again a
    rebuild of the merge a crash cut short (or that a store written before kg kept the
    merge needs). Returns how many graphs it dropped."""
    if not engine.has_graph(JOURNAL_GRAPH):
        if not keeps_merge():
            rebuild_merge()  # a store written before kg kept the merge
        return 0
    pending = engine.literal_subjects(KG.pendingLoad[1:-1], "true", JOURNAL_GRAPH)
    if any(g == JOURNAL_GRAPH for g in pending):  # a rebuild of the merge was cut short
        rebuild_merge()
        return 0
    engine.update(retraction(pending, journal=True, merge_back=True))
    engine.drop_graph(JOURNAL_GRAPH)
    return len(pending)


def rebuild_merge(engine: Engine) -> None:
    """Fill the default graph with the merge of every named graph (not the journal), in
    bulk. The journal marks it in flight (its own IRI as the pending graph), so a crash
    makes the next writer run it again."""
    engine.load_nquads(f"<{JOURNAL_GRAPH}>{_PENDING_SUFFIX}".encode())
    engine.copy_named_into_default()
    engine.flush()
    engine.drop_graph(JOURNAL_GRAPH)
