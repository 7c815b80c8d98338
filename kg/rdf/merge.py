"""The merge: the default graph holds every distinct triple of the named graphs, once.

Each record and dump entry states its triples in its own named graph (provenance); shared
entity declarations live in one entities graph. Oxigraph's real default graph holds the RDF
merge of all of them: every distinct triple once. Queries without FROM / GRAPH read that
default graph, so `COUNT(*)` counts each fact once (pyoxigraph's
`use_default_graph_as_union` is a bag: a triple in n graphs matches n times). The store
keeps the merge exact on every write (kg.rdf.journal's batches, `GraphStore.load`,
recovery); this module holds what says what the merge is and whether a store keeps it.
"""

from __future__ import annotations

import re
from pathlib import Path

from kg.rdf.engine import Engine
from kg.rdf.vocab import JOURNAL_GRAPH

#: A file kg writes into a store it creates: the default graph holds only the merge of the
#: named graphs. It goes, before the write, with the first write that may state a triple of
#: the default graph's own (a SPARQL update, a load into the default graph), and never comes
#: back. Without it, exports look for such triples with a scan of the whole default graph
#: (a query per triple: over 15 minutes at 100,000 records).
MERGE_ONLY_MARK = ".kg-merge-only"

#: Every N-Quads line ends with its graph's IRI: replaced, the line is an N-Triples line of
#: the default graph (literals escape newlines, so the pattern only matches line ends).
_GRAPH_AT_END = re.compile(rb" <[^<>\n]*> \.\n")

#: A default-graph triple that no named graph states (the journal aside).
OWN_PATTERN = (
    f"?s ?p ?o FILTER NOT EXISTS {{ GRAPH ?g {{ ?s ?p ?o }} FILTER (?g != <{JOURNAL_GRAPH}>) }}"
)
#: The default graph's own triples (see OWN_PATTERN), as a CONSTRUCT query.
OWN_DEFAULT = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {OWN_PATTERN} }}"
#: What keeps the default graph a superset of the named graphs after a SPARQL update (not
#: of a graph the journal lists: a batch in flight joins the merge once it is whole).
MERGE_MISSING = (
    "INSERT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } "
    f"FILTER (?g != <{JOURNAL_GRAPH}>) "
    f"FILTER NOT EXISTS {{ GRAPH <{JOURNAL_GRAPH}> {{ ?g ?flag ?v }} }} "
    "FILTER NOT EXISTS { ?s ?p ?o } }"
)


def merge_lines(nquads: bytes) -> bytes:
    """The N-Quads lines of a batch as lines of the default graph (each graph IRI removed):
    loaded with the batch, its triples join the merge (a set: a triple there stays once)."""
    return _GRAPH_AT_END.sub(b" .\n", nquads)


def keeps_merge(engine: Engine) -> bool:
    """Whether the default graph holds the merge of the named graphs: false only for a
    store written before kg kept it (named graphs, an empty default graph)."""
    return engine.default_graph_is_nonempty() or not engine.has_graph_besides(JOURNAL_GRAPH)


def merge_only(path: Path | None) -> bool:
    """Whether no write has stated a triple of the default graph's own (MERGE_ONLY_MARK);
    false for a store kg did not create, or that a SPARQL update has written."""
    return path is not None and (path / MERGE_ONLY_MARK).exists()


def mark_merge_only(path: Path) -> None:
    """Mark a store kg has just created: its default graph holds only the merge."""
    (path / MERGE_ONLY_MARK).touch()


def may_state_own_default(path: Path | None) -> None:
    """Before a write that may state a triple of the default graph's own: the store is no
    longer known to hold only the merge there. Removed first, so a crash leaves it out."""
    if path is not None:
        (path / MERGE_ONLY_MARK).unlink(missing_ok=True)
