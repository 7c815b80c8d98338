"""RDF text conversions shared by the CLI, the exports and the server."""

from __future__ import annotations

from kg.rdf.engine import convert
from kg.rdf.formats import rdf_format
from kg.rdf.vocab import PREFIXES


def graph_text(ntriples: str, fmt: str) -> str:
    """N-Triples text re-serialised as `fmt` (Turtle uses kg's prefixes)."""
    fmt = rdf_format(fmt, writable=True).name
    if fmt == "ntriples":
        return ntriples
    if fmt == "jsonld":
        from kg.export.jsonld import compact_ntriples

        return compact_ntriples(ntriples)
    return convert(ntriples, fmt, PREFIXES).decode("utf-8")
