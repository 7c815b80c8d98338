"""The pieces every page shares: query prefixes, IRIs as query text, reading a row's
values, paging, a harvested sample's fields, and the direction a metric ranks in.

Rows are a SELECT result's `term_rows()` (kg.rdf.results: {variable: Term}, unbound
variables left out); numbers are read by `kg.rdf.results.decimal_value`, the one reading
of a metric's number that the leaderboard pages use too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kg.errors import ParameterError
from kg.query.directions import metric_direction
from kg.query.named import sparql_term
from kg.rdf.results import Term
from kg.serve.linked_data import Labeller

KG_NS = "https://w3id.org/kg/ontology#"
DC, RDFS = "http://purl.org/dc/terms/", "http://www.w3.org/2000/01/rdf-schema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
PAGE_SIZE = 50
#: The prefixes the page queries use.
PREFIXES = (
    "PREFIX kg: <https://w3id.org/kg/ontology#>\n"
    "PREFIX dcterms: <http://purl.org/dc/terms/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    "PREFIX foaf: <http://xmlns.com/foaf/0.1/>\n"
    "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
    "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
    "PREFIX schema: <https://schema.org/>\n"
    "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
)

def lower_is_better(metric: str) -> bool:
    """Whether a leaderboard metric ranks its lowest value first: the direction rule of
    kg.query.directions (a metric it cannot place ranks highest first, as before).

    >>> lower_is_better("Top 1 Accuracy"), lower_is_better("MAE"), lower_is_better("FID")
    (False, True, True)
    """
    return metric_direction(metric) == "lower"


def iri_term(iri: str) -> str:
    """An IRI as query text (checked by sparql_term: a path cannot inject SPARQL)."""
    return sparql_term(Term("uri", iri))


def text_of(row: Mapping[str, Term], key: str) -> str:
    term = row.get(key)
    return term.value if term is not None else ""


def int_of(row: Mapping[str, Term], key: str) -> int:
    text = text_of(row, key)
    return int(text) if text.isdigit() else 0



def paging(number: int, shown: int, total: int, size: int = PAGE_SIZE) -> dict[str, int]:
    """Where a page of a list is: {number, first, last, total} (first and last 1-based)."""
    return {
        "number": number,
        "first": number * size + 1,
        "last": number * size + shown,
        "total": total,
    }


def kind_of(iri: str, base: str) -> str | None:
    if not iri.startswith(base):
        return None
    rest = iri[len(base) :]
    head, _, tail = rest.partition("/")
    return head if tail else None



def typed(view: Labeller, cls: str) -> bool:
    """Whether the entity is stated to be a kg:`cls` (not a node minted under one)."""
    iri = view.desc.iri
    return any(
        s.value == iri and p.value == RDF_TYPE and o.value == KG_NS + cls
        for s, p, o in view.desc.outgoing
    )


def page_number(value: str | None) -> int:
    if value is None:
        return 0
    if not value.isdigit() or int(value) > 1_000_000:
        raise ParameterError(f"page={value[:20]!r} must be a whole number (0 is the first page)")
    return int(value)


def sample(r: Mapping[str, Term]) -> dict[str, Any]:
    """A harvested sample as the pages show it (status, level, entry, path, licence)."""
    level = text_of(r, "level")
    return {
        "status": text_of(r, "status") or "unknown",
        "level": int(level) if level.isdigit() else None,
        "entry": text_of(r, "entry") or None,
        "path": text_of(r, "path") or None,
        "file": text_of(r, "file") or None,
        "licence": text_of(r, "licence") or None,
    }

