"""Linked Data: what the server answers for an entity IRI, as RDF or as a small HTML page.

An entity's description is its own triples, the triples of the nodes minted under its IRI
(a paper's `/authorship/N` and `/code/…` nodes), and the triples that point at it (capped,
since a method like Adam is used by a large share of all papers). A named graph's IRI (a
record, `graph/record/<key>`) describes the graph's contents.

The functions here only build query text and render rows; the server runs the queries in
its worker pool. IRIs enter query text through `kg.query.named.sparql_term`, which rejects any
character an IRI may not hold, so a request path cannot inject SPARQL.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from kg.errors import ParameterError
from kg.query.named import sparql_term
from kg.rdf.results import SelectResult, Term
from kg.rdf.vocab import PREFIXES, RDF_NS, XSD, shorten

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
    "graph",
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


# --- HTML -----------------------------------------------------------------------------------

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem 1.5rem;
color:#1d232a}
header{border-bottom:1px solid #d6dbe0;padding-bottom:.4rem;margin-bottom:1rem;color:#5b6570}
header a{color:#5b6570}a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.1rem;margin-top:1.6rem}
code,.iri{font:13px ui-monospace,monospace;word-break:break-all}
table{border-collapse:collapse;width:100%}td{border-top:1px solid #e6e9ec;padding:.3rem .5rem;
vertical-align:top}td.p{width:14rem;color:#5b6570;font:13px ui-monospace,monospace}
.meta{color:#5b6570;font-size:13px}.dt{color:#8a939c;font-size:12px}
ul{padding-left:1.2rem}
section{margin-top:1.2rem}h3{font-size:.95rem;margin:.8rem 0 .2rem;color:#5b6570}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.6rem 0}
dl.facts dt{color:#5b6570}dl.facts dd{margin:0}.abstract{max-width:46rem}
table.rows th{text-align:left;font-weight:600;color:#5b6570;font-size:13px;padding:.3rem .5rem}
.flag{display:inline-block;border:1px solid #c9d1d9;border-radius:3px;padding:0 .3rem;
font-size:12px;color:#5b6570}.flag.official{border-color:#2da44e;color:#1a7f37}
.rank{white-space:nowrap;font-weight:600}.why{font-size:13px;color:#5b6570}
ol.similar li{margin-bottom:.5rem}.nav a{margin-right:1rem}
details.all{margin-top:2rem}details.all summary{cursor:pointer;font-weight:600}
@media (max-width:40rem){body{padding:.6rem .8rem}td.p{width:auto;display:block;
border:0;padding-bottom:0}table.rows,table.rows tbody,table.rows tr,table.rows td{display:block}
table.rows th{display:none}table.rows tr{border-top:1px solid #e6e9ec;padding:.3rem 0}
table.rows td{border:0;padding:.1rem 0}dl.facts{grid-template-columns:1fr}}
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


class _Page:
    def __init__(self, desc: Description, base: str) -> None:
        self.desc = desc
        self.base = base
        self.prefixes = {"": base, **PREFIXES}

    def short(self, iri: str) -> str:
        return shorten(iri, self.prefixes) or iri

    def link(self, term: Term) -> str:
        """An IRI as a link: to this server for kg's IRIs, out for http(s), else plain text."""
        iri = term.value
        label = self.desc.labels.get(iri)
        text = _esc(label) if label else f'<span class="iri">{_esc(self.short(iri))}</span>'
        href = local_href(iri, self.base)
        if href is None and iri.lower().startswith(("http://", "https://")):
            href = iri
        if href is None:  # never link other schemes (javascript:, data: …)
            return text
        return f'<a href="{_esc(href)}" title="{_esc(iri)}">{text}</a>'

    def value(self, term: Term) -> str:
        if term.kind == "uri":
            return self.link(term)
        if term.kind == "bnode":
            return f"<code>_:{_esc(term.value)}</code>"
        suffix = ""
        if term.lang:
            suffix = f' <span class="dt">@{_esc(term.lang)}</span>'
        elif term.datatype and term.datatype != XSD.string:
            suffix = f' <span class="dt">{_esc(self.short(term.datatype))}</span>'
        return f"{_esc(term.value)}{suffix}"

    def table(self, triples: list[Triple]) -> str:
        """One row per property, its values one per line."""
        by_property: dict[str, list[Term]] = {}
        for _, p, o in triples:
            by_property.setdefault(p.value, []).append(o)
        rows = "".join(
            f'<tr><td class="p">{_esc(self.short(p))}</td>'
            f"<td>{'<br>'.join(self.value(o) for o in values)}</td></tr>"
            for p, values in by_property.items()
        )
        return f"<table>{rows}</table>"


def search_form(query: str = "", type_: str | None = None) -> str:
    """The search box of every page: a plain GET form to /search (works without script)."""
    from kg.search.documents import CLASSES

    options = "".join(
        f'<option value="{t}"{" selected" if t == type_ else ""}>{t}</option>' for t in CLASSES
    )
    return (
        '<form class="kg-search" action="/search" method="get" role="search">'
        f'<input type="search" name="q" value="{_esc(query)}" placeholder="search papers, '
        'methods, tasks…" aria-label="search" required>'
        f'<select name="type" aria-label="class"><option value="">all</option>{options}</select>'
        '<button type="submit">Search</button></form>'
    )


def render_html(
    desc: Description,
    base: str,
    *,
    is_graph: bool = False,
    sections: Sequence[str] = (),
    page: _Page | None = None,
) -> str:
    """A small page for browsers: the entity's properties, its parts, and what points at it.

    `sections` (kg.serve.story: a paper's authors, code, results, similar papers…) come
    first; the statements then follow under a disclosure.
    """
    page = page or _Page(desc, base)
    iri = desc.iri
    title = desc.labels.get(iri) or page.short(iri)
    own = [t for t in desc.outgoing if t[0].value == iri]
    types = [o for _, p, o in own if p.value == _TYPE]
    parts: dict[str, list[Triple]] = {}
    for t in desc.outgoing:
        if t[0].value != iri:
            parts.setdefault(t[0].value, []).append(t)
    alternates = [
        ("Turtle", "turtle"),
        ("JSON-LD", "jsonld"),
        ("N-Triples", "ntriples"),
        ("RDF/XML", "rdfxml"),
    ]
    formats = " · ".join(f'<a href="?format={f}">{name}</a>' for name, f in alternates)
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>{_esc(title)} · kg</title>",
        *(
            f'<link rel="alternate" type="{t}" href="?format={f}">'
            for t, f in (("text/turtle", "turtle"), ("application/ld+json", "jsonld"))
        ),
        f"<style>{_STYLE}</style></head><body>",
        '<header><a href="/">kg</a> · SPARQL endpoint at <a href="/sparql">/sparql</a>'
        f"{search_form()}</header>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="iri">{_esc(iri)}</p>',
    ]
    if types:
        out.append(f'<p class="meta">a {", ".join(page.value(t) for t in types)}</p>')
    out.append(f'<p class="meta">as {formats}</p>')
    if is_graph:
        out.append(
            f'<p class="meta">A named graph holding {len(desc.outgoing):,} triples; '
            "its RDF forms carry all of them.</p>"
        )
    out.extend(sections)
    if sections:
        out.append('<details class="all"><summary>All statements</summary>')
    rest = [t for t in own if t[1].value != _TYPE]
    if rest:
        out.append(page.table(rest))
    for node, triples in parts.items():
        out.append(f"<h2>{page.link(Term('uri', node))}</h2>")
        out.append(page.table(triples))
    if desc.incoming:
        more = " (the first ones)" if desc.incoming_capped else ""
        out.append(f"<h2>Referenced by{more}</h2><ul>")
        out.extend(
            f'<li>{page.link(s)} <span class="dt">{_esc(page.short(p.value))}</span></li>'
            for s, p in desc.incoming
        )
        out.append("</ul>")
    if sections:
        out.append("</details>")
    out.append("</body></html>\n")
    return "\n".join(out)
