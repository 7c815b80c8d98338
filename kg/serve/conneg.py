"""HTTP content negotiation: which SPARQL results, RDF or page format a client asked for.

Each offer is a media type kg can produce, with the aliases clients send for it
(`application/json` for SPARQL JSON, `text/plain` for N-Triples …). The best offer is the one
the Accept header rates highest; ties go to the server's order, so `*/*` or no header at
all gets the first offer (SPARQL JSON for results, Turtle for graphs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kg.rdf.formats import (
    RESULTS_FORMATS,
    Format,
    find_rdf_format,
    find_results_format,
    rdf_format,
    results_format,
)

JSON = results_format("json").media_type
XML = results_format("xml").media_type
CSV = results_format("csv").media_type
TSV = results_format("tsv").media_type
TURTLE = rdf_format("turtle").media_type
NTRIPLES = rdf_format("ntriples").media_type
JSONLD = rdf_format("jsonld").media_type
RDFXML = rdf_format("rdfxml").media_type
HTML = "text/html"


@dataclass(frozen=True)
class Offer:
    media_type: str
    aliases: tuple[str, ...] = ()

    @classmethod
    def of(cls, fmt: Format) -> Offer:
        return cls(fmt.media_type, fmt.media_aliases)


RESULT_OFFERS: tuple[Offer, ...] = tuple(Offer.of(f) for f in RESULTS_FORMATS)
#: The graph formats the endpoint serves, in its order of preference.
GRAPH_FORMATS: tuple[Format, ...] = tuple(
    rdf_format(name) for name in ("turtle", "ntriples", "jsonld", "rdfxml")
)
GRAPH_OFFERS: tuple[Offer, ...] = tuple(Offer.of(f) for f in GRAPH_FORMATS)
#: Every format the endpoint answers in (its service description lists them).
SERVED_FORMATS: tuple[Format, ...] = (*RESULTS_FORMATS, *GRAPH_FORMATS)
#: Linked Data pages: RDF first (the default for `*/*`), HTML for browsers.
HTML_OFFER = Offer(HTML, ("application/xhtml+xml",))
PAGE_OFFERS: tuple[Offer, ...] = (*GRAPH_OFFERS, HTML_OFFER)
#: A named query's answers: results first (the default for `*/*`), a page for browsers.
NAMED_QUERY_OFFERS: tuple[Offer, ...] = (*RESULT_OFFERS, *GRAPH_OFFERS, HTML_OFFER)


def _ranges(accept: str) -> list[tuple[str, str, float]]:
    out = []
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if "/" not in media:
            continue
        main, sub = media.split("/", 1)
        q = 1.0
        for param in fields[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    q = 0.0
        out.append((main, sub, q))
    return out


def _quality(media_type: str, ranges: list[tuple[str, str, float]]) -> float:
    """The q of the most specific range that matches (RFC 9110 §12.5.1)."""
    main, sub = media_type.split("/", 1)
    best, best_specificity = 0.0, -1
    for r_main, r_sub, q in ranges:
        if r_main == "*" and r_sub == "*":
            specificity = 0
        elif r_main == main and r_sub == "*":
            specificity = 1
        elif r_main == main and r_sub == sub:
            specificity = 2
        else:
            continue
        if specificity > best_specificity:
            best, best_specificity = q, specificity
    return best


def negotiate(accept: str | None, offers: Sequence[Offer]) -> str | None:
    """The media type of the best offer for `accept`, or None if the client takes none.

    >>> negotiate(None, GRAPH_OFFERS)
    'text/turtle'
    >>> negotiate("application/json", RESULT_OFFERS)
    'application/sparql-results+json'
    >>> negotiate("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", PAGE_OFFERS)
    'text/html'
    >>> negotiate("image/png", RESULT_OFFERS) is None
    True
    """
    if not accept or not accept.strip():
        return offers[0].media_type
    ranges = _ranges(accept)
    if not ranges:
        return offers[0].media_type
    best: str | None = None
    best_q = 0.0
    for offer in offers:
        q = max(_quality(m, ranges) for m in (offer.media_type, *offer.aliases))
        if q > best_q:
            best, best_q = offer.media_type, q
    return best


def by_format_name(name: str, offers: Sequence[Offer]) -> str | None:
    """The offer a `format=` value names (a short name or a media type), if offered.

    >>> by_format_name("json", GRAPH_OFFERS)  # JSON for a graph is JSON-LD
    'application/ld+json'
    """
    key = name.strip().lower()
    named = (find_results_format(key), find_rdf_format(key))
    candidates = [f.media_type for f in named if f is not None]
    candidates += [HTML] if key == "html" else [key]
    if key == "json":  # JSON for a graph is JSON-LD
        candidates.append("application/json")
    for media_type in candidates:
        for offer in offers:
            if media_type == offer.media_type or media_type in offer.aliases:
                return offer.media_type
    return None


def choose(formats: Sequence[str], accept: str | None, offers: Sequence[Offer]) -> str | None:
    """The media type to send: the first `format=` value that names an offer, else what
    the Accept header prefers.

    Values may be comma-separated lists, and unknown or empty ones are passed over: clients
    such as SPARQLWrapper send `format=json&format=` or a list of media types, and always
    an Accept header as well.

    >>> choose(["rdf+xml", "application/rdf+xml"], "*/*", GRAPH_OFFERS)
    'application/rdf+xml'
    >>> choose(["docx"], "text/csv", RESULT_OFFERS)
    'text/csv'
    """
    for value in formats:
        for name in value.split(","):
            found = by_format_name(name, offers) if name.strip() else None
            if found is not None:
                return found
    return negotiate(accept, offers)


def content_type(media_type: str) -> str:
    """The Content-Type header for a media type: text types say they are UTF-8."""
    base = media_type.split(";")[0].strip()
    return f"{base}; charset=utf-8" if base.startswith("text/") else base


def offered(offers: Sequence[Offer]) -> str:
    return ", ".join(o.media_type for o in offers)
