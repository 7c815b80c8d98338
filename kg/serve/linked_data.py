"""Linked Data: what the server answers for an entity IRI, as RDF or as a small HTML page.

An entity's description is its own triples, the triples of the nodes minted under its IRI
(a paper's `/authorship/N` and `/code/…` nodes), and the triples that point at it (capped,
since a method like Adam is used by a large share of all papers). A named graph's IRI (a
record, `graph/record/<key>`) describes the graph's contents.

The functions here only build query text and shape rows for the templates (`Labeller`,
`page_context`); the server runs the queries in its worker pool. IRIs enter query text
through `kg.query.named.sparql_term`, which rejects any character an IRI may not hold, so a
request path cannot inject SPARQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

from kg.errors import ParameterError
from kg.query.named import sparql_term
from kg.rdf.results import SelectResult, Term
from kg.rdf.vocab import PREFIXES, RDF_NS, shortener

#: First path segments of kg's instance IRIs that resolve at the server.
KINDS = (
    "paper",
    "author",
    "repository",
    "task",
    "method",
    "dataset",
    "venue",
    "repo-kind",
    "area",
    "collection",
    "dump",
    "graph",
    "leaderboard",
)
#: Most triples pointing at one entity that a description carries.
INCOMING_RDF_LIMIT = 1000
INCOMING_HTML_LIMIT = 200
OUTGOING_LIMIT = 5000
_LABELS = (
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://purl.org/dc/terms/title",
    "http://xmlns.com/foaf/0.1/name",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
)
_TYPE = f"{RDF_NS}type"
_ESCAPED_OCTETS = re.compile(r"(?:%[89A-Fa-f][0-9A-Fa-f])+")
# What `kg.rdf.terms.segment` keeps raw beyond ASCII: non-ASCII letters IRIs allow.
_IRI_UCSCHAR = re.compile(r"[\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef]")


def _decode_ucs(match: re.Match[str]) -> str:
    """Percent-encoded UTF-8 back to the characters an IRI holds raw (RFC 3987 §3.2)."""
    text = match.group(0)
    try:
        decoded = bytes.fromhex(text.replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return text.upper()
    return "".join(
        ch if _IRI_UCSCHAR.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        for ch in decoded
    )


def iri_for_path(raw_path: str, base: str) -> str | None:
    """The instance IRI a request path names, or None if it names none.

    >>> iri_for_path("/author/zo%C3%AB-%C3%A1bel", "https://w3id.org/kg/id/")
    'https://w3id.org/kg/id/author/zoë-ábel'
    >>> iri_for_path("/paper/a%20b", "https://w3id.org/kg/id/")
    'https://w3id.org/kg/id/paper/a%20b'
    >>> iri_for_path("/static/x.js", "https://w3id.org/kg/id/") is None
    True
    """
    path = raw_path.lstrip("/")
    head = path.split("/", 1)[0]
    if head not in KINDS or "/" not in path or path.endswith("/"):
        return None
    iri = base + _ESCAPED_OCTETS.sub(_decode_ucs, path)
    try:
        sparql_term(Term("uri", iri))
    except ParameterError:
        return None
    return iri


def local_href(iri: str, base: str) -> str | None:
    """The server path that resolves an instance IRI (non-ASCII percent-encoded)."""
    if not iri.startswith(base) or len(iri) == len(base):
        return None
    return "/" + quote(iri[len(base) :], safe="/%:@!$&'()*+,;=-._~")


# --- queries --------------------------------------------------------------------------------


def is_graph_query(iri: str) -> str:
    return f"ASK {{ GRAPH {sparql_term(Term('uri', iri))} {{ ?s ?p ?o }} }}"


def graph_contents_query(iri: str) -> str:
    return (
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {sparql_term(Term('uri', iri))} {{ ?s ?p ?o }} }}"
    )


def _label_options(var: str) -> str:
    return " ".join(f"OPTIONAL {{ {var} <{p}> ?l{i} }}" for i, p in enumerate(_LABELS))


def graph_rows_query(iri: str) -> str:
    """A named graph's triples as rows, with object labels (for its page)."""
    graph = sparql_term(Term("uri", iri))
    return (
        f"SELECT DISTINCT ?s ?p ?o ?l0 ?l1 ?l2 ?l3 WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} "
        f"{_label_options('?o')} }} LIMIT {OUTGOING_LIMIT}"
    )


def outgoing_query(iri: str) -> str:
    """The entity's triples and those of the nodes minted under its IRI, with object labels."""
    this = sparql_term(Term("uri", iri))
    below = sparql_term(Term("literal", iri + "/"))
    labels = _label_options("?o")
    # The parts are joined inside one graph at a time, and made distinct before the labels
    # are looked up: a paper's code links restated in a dozen evaluation-table graphs would
    # otherwise multiply at every join (37 s instead of 1 s for ResNet's page).
    return (
        f"SELECT DISTINCT ?s ?p ?o ?l0 ?l1 ?l2 ?l3 WHERE {{\n"
        f"  {{ SELECT DISTINCT ?s ?p ?o WHERE {{\n"
        f"    {{ {this} ?p ?o BIND({this} AS ?s) }}\n"
        f"    UNION\n"
        f"    {{ GRAPH ?g {{ {this} ?link ?s . "
        f"FILTER(isIRI(?s) && STRSTARTS(STR(?s), {below})) ?s ?p ?o }} }}\n"
        f"  }} LIMIT {OUTGOING_LIMIT} }}\n"
        f"  {labels}\n"
        f"}}"
    )


def incoming_query(iri: str, *, labels: bool, limit: int) -> str:
    """Triples pointing at the entity (capped; with subject labels for pages)."""
    this = sparql_term(Term("uri", iri))
    if not labels:
        return f"SELECT DISTINCT ?s ?p WHERE {{ ?s ?p {this} }} LIMIT {limit}"
    return (
        f"SELECT DISTINCT ?s ?p ?l0 ?l1 ?l2 ?l3 WHERE {{ ?s ?p {this} {_label_options('?s')} }} "
        f"LIMIT {limit}"
    )


# --- descriptions ---------------------------------------------------------------------------

Triple = tuple[Term, Term, Term]


@dataclass
class Description:
    iri: str
    outgoing: list[Triple] = field(default_factory=list)
    incoming: list[tuple[Term, Term]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    incoming_capped: bool = False
    #: The IRI names a graph: the description is the graph's contents.
    is_graph: bool = False

    @property
    def empty(self) -> bool:
        return not self.outgoing and not self.incoming

    def ntriples(self) -> str:
        """The description as N-Triples, in a fixed order (deterministic for a given store)."""
        this = Term("uri", self.iri)
        own = {f"{s.n3()} {p.n3()} {o.n3()} .\n" for s, p, o in self.outgoing if s == this}
        parts = {f"{s.n3()} {p.n3()} {o.n3()} .\n" for s, p, o in self.outgoing if s != this}
        incoming = {f"{s.n3()} {p.n3()} {this.n3()} .\n" for s, p in self.incoming}
        # The entity first, then its parts, then what points at it: Turtle groups them so.
        return "".join([*sorted(own), *sorted(parts - own), *sorted(incoming - own - parts)])


def _first_label(row: Iterable[Term | None]) -> str | None:
    return next((t.value for t in row if t is not None), None)


def describe(iri: str, outgoing: SelectResult, incoming: SelectResult, cap: int) -> Description:
    """Build a description from the rows of `outgoing_query` and `incoming_query`."""
    desc = Description(iri)
    seen: set[Triple] = set()
    for row in outgoing.rows:
        s, p, o = row[0], row[1], row[2]
        if s is None or p is None or o is None:
            continue
        if (s, p, o) not in seen:
            seen.add((s, p, o))
            desc.outgoing.append((s, p, o))
        label = _first_label(row[3:])
        if label is not None and o.kind == "uri":
            desc.labels.setdefault(o.value, label)
        if s.value == iri and p.value in _LABELS and o.kind == "literal":
            desc.labels.setdefault(iri, o.value)
    pairs: set[tuple[Term, Term]] = set()
    for row in incoming.rows:
        s, p = row[0], row[1]
        if s is None or p is None or (s, p) in pairs:
            continue
        pairs.add((s, p))
        desc.incoming.append((s, p))
        label = _first_label(row[2:])
        if label is not None:
            desc.labels.setdefault(s.value, label)
    desc.outgoing.sort(key=lambda t: (t[0].value != iri, t[0].value, t[1].value, t[2].value))
    desc.incoming.sort(key=lambda t: (t[1].value, t[0].value))
    desc.incoming_capped = len(desc.incoming) >= cap
    if desc.incoming_capped:
        desc.incoming = desc.incoming[: cap - 1]
    return desc


# --- what a page shows of a description ------------------------------------------------------

Value = dict[str, str | None]


class Labeller:
    """Turns a description's terms into what the templates show: a link (to this server for
    kg's IRIs, out for http(s), else plain text: never another scheme), or a literal with
    its language or datatype. The labels are the description's, plus those added later."""

    def __init__(self, desc: Description, base: str) -> None:
        self.desc = desc
        self.base = base
        self.prefixes = {"": base, **PREFIXES}
        self._shorten = shortener(self.prefixes)

    def short(self, iri: str) -> str:
        return self._shorten(iri) or iri

    def label(self, iri: str, label: str | None = None) -> str | None:
        if label:
            self.desc.labels.setdefault(iri, label)
        return self.desc.labels.get(iri)

    def href(self, iri: str) -> str | None:
        href = local_href(iri, self.base)
        if href is None and iri.lower().startswith(("http://", "https://")):
            href = iri
        return href

    def link(self, iri: str, label: str | None = None) -> Value:
        """{href, label, iri, short}: the `link` macro of _macros.html shows it."""
        return {
            "href": self.href(iri),
            "label": self.label(iri, label),
            "iri": iri,
            "short": self.short(iri),
        }

    def value(self, term: Term) -> Value:
        if term.kind == "uri":
            return self.link(term.value)
        if term.kind == "bnode":
            return {"bnode": term.value}
        # A language tag is shown; a datatype (xsd:date, xsd:decimal) is not: a reader
        # sees the value, and the RDF forms of the page carry the type.
        return {"text": term.value, "note": f"@{term.lang}" if term.lang else None}

    def table(self, triples: Iterable[Triple]) -> list[dict[str, object]]:
        """One row per property, its values in order: [{property, values}]."""
        by_property: dict[str, list[Value]] = {}
        for _, p, o in triples:
            by_property.setdefault(p.value, []).append(self.value(o))
        return [{"property": self.short(p), "values": v} for p, v in by_property.items()]


ALTERNATES = (
    ("Turtle", "turtle"),
    ("JSON-LD", "jsonld"),
    ("N-Triples", "ntriples"),
    ("RDF/XML", "rdfxml"),
)


def page_context(desc: Description, view: Labeller, *, is_graph: bool = False) -> dict[str, object]:
    """What every entity page shows: title, IRI, types, other formats and all statements."""
    iri = desc.iri
    own = [t for t in desc.outgoing if t[0].value == iri]
    parts: dict[str, list[Triple]] = {}
    for t in desc.outgoing:
        if t[0].value != iri:
            parts.setdefault(t[0].value, []).append(t)
    return {
        "title": desc.labels.get(iri) or view.short(iri),
        "iri": iri,
        "types": [view.value(o) for _, p, o in own if p.value == _TYPE],
        "alternates": ALTERNATES,
        "is_graph": is_graph,
        "triple_count": len(desc.outgoing),
        "statements": view.table(t for t in own if t[1].value != _TYPE),
        "parts": [
            {"node": view.link(node), "rows": view.table(triples)}
            for node, triples in parts.items()
        ],
        "incoming": [
            {"from": view.link(s.value), "property": view.short(p.value)} for s, p in desc.incoming
        ],
        "incoming_capped": desc.incoming_capped,
    }
