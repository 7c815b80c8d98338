"""The one registry of formats kg reads and writes: RDF serialisations and SPARQL results.

Each format has one entry: its name (what `--format` and `format=` take), the aliases users
and clients give for it, its media type and the other media types servers send for it, its
file extension, whether it holds named graphs, and its W3C format IRI (for VoID and the
service description). The store, the exporter, content negotiation, the remote client, VoID
and the CLI all look formats up here, so a format is added or renamed in one place.

>>> rdf_format("ttl").media_type
'text/turtle'
>>> rdf_format("application/n-triples").name
'ntriples'
>>> results_format("xml").media_type
'application/sparql-results+xml'
"""

from __future__ import annotations

from dataclasses import dataclass

from kg.errors import UsageError

#: The namespace of the W3C format IRIs.
W3C_FORMATS = "http://www.w3.org/ns/formats/"


@dataclass(frozen=True)
class Format:
    name: str
    label: str  # as people write it: "Turtle", "N-Triples"
    media_type: str
    extension: str
    aliases: tuple[str, ...] = ()
    media_aliases: tuple[str, ...] = ()  # other media types that mean this format
    dataset: bool = False  # kg writes the named graphs in it (its JSON-LD is the merged graph)
    w3c: str = ""  # the W3C format IRI, http://www.w3.org/ns/formats/…
    writable: bool = True  # kg writes it (N3 is only read)

    def names(self) -> tuple[str, ...]:
        """Every string that names this format: name, aliases, extension, media types."""
        return (self.name, *self.aliases, self.extension, self.media_type, *self.media_aliases)


#: RDF formats, in the order kg offers them (content negotiation's default is the first).
RDF_FORMATS: tuple[Format, ...] = (
    Format(
        "turtle",
        "Turtle",
        "text/turtle",
        "ttl",
        media_aliases=("application/x-turtle", "application/turtle"),
        w3c=f"{W3C_FORMATS}Turtle",
    ),
    Format(
        "ntriples",
        "N-Triples",
        "application/n-triples",
        "nt",
        aliases=("n-triples",),
        media_aliases=("text/plain",),  # servers that predate its media type
        w3c=f"{W3C_FORMATS}N-Triples",
    ),
    Format(
        "jsonld",
        "JSON-LD",
        "application/ld+json",
        "jsonld",
        aliases=("json-ld",),
        media_aliases=("application/json",),  # for RDF; SPARQL results read it as JSON
        w3c=f"{W3C_FORMATS}JSON-LD",
    ),
    Format(
        "rdfxml",
        "RDF/XML",
        "application/rdf+xml",
        "rdf",
        aliases=("xml", "rdf/xml", "rdf+xml", "owl"),
        media_aliases=("application/xml", "text/xml"),
        w3c=f"{W3C_FORMATS}RDF_XML",
    ),
    Format(
        "nquads",
        "N-Quads",
        "application/n-quads",
        "nq",
        aliases=("n-quads",),
        dataset=True,
        w3c=f"{W3C_FORMATS}N-Quads",
    ),
    Format("trig", "TriG", "application/trig", "trig", dataset=True, w3c=f"{W3C_FORMATS}TriG"),
    Format("n3", "N3", "text/n3", "n3", w3c=f"{W3C_FORMATS}N3", writable=False),
)

#: SPARQL query results formats, in the order kg offers them.
RESULTS_FORMATS: tuple[Format, ...] = (
    Format(
        "json",
        "SPARQL JSON",
        "application/sparql-results+json",
        "srj",
        media_aliases=("application/json",),
        w3c=f"{W3C_FORMATS}SPARQL_Results_JSON",
    ),
    Format(
        "xml",
        "SPARQL XML",
        "application/sparql-results+xml",
        "srx",
        media_aliases=("application/xml", "text/xml"),
        w3c=f"{W3C_FORMATS}SPARQL_Results_XML",
    ),
    Format("csv", "CSV", "text/csv", "csv", w3c=f"{W3C_FORMATS}SPARQL_Results_CSV"),
    Format(
        "tsv", "TSV", "text/tab-separated-values", "tsv", w3c=f"{W3C_FORMATS}SPARQL_Results_TSV"
    ),
)

_RDF_BY_NAME: dict[str, Format] = {f.name: f for f in RDF_FORMATS}
#: The RDF formats kg writes (exports, CONSTRUCT results), by name.
WRITABLE_RDF: dict[str, Format] = {f.name: f for f in RDF_FORMATS if f.writable}


def _index(formats: tuple[Format, ...]) -> dict[str, Format]:
    index: dict[str, Format] = {}
    for fmt in formats:
        for key in fmt.names():
            index.setdefault(key, fmt)  # the earlier format keeps a shared key
    return index


_RDF_INDEX = _index(RDF_FORMATS)
_RESULTS_INDEX = _index(RESULTS_FORMATS)


def _key(name: str) -> str:
    return name.split(";")[0].strip().lower().lstrip(".")


def find_rdf_format(name: str) -> Format | None:
    """The RDF format a name, alias, extension or media type names, or None."""
    return _RDF_INDEX.get(_key(name))


def find_results_format(name: str) -> Format | None:
    """The SPARQL results format a name, extension or media type names, or None."""
    return _RESULTS_INDEX.get(_key(name))


def rdf_format(name: str, *, writable: bool = False) -> Format:
    """The RDF format `name` names (one kg writes, if `writable`); a UsageError lists the
    choices if none does."""
    fmt = find_rdf_format(name)
    if fmt is None or (writable and not fmt.writable):
        what, choices = ("export", WRITABLE_RDF) if writable else ("RDF", _RDF_BY_NAME)
        raise UsageError(f"unknown {what} format {name!r}; use one of: {', '.join(choices)}")
    return fmt


def results_format(name: str) -> Format:
    """The SPARQL results format `name` names; a UsageError lists the choices if none does."""
    fmt = find_results_format(name)
    if fmt is None:
        names = ", ".join(f.name for f in RESULTS_FORMATS)
        raise UsageError(f"unknown results format {name!r}; use one of: {names}")
    return fmt


def by_extension(extension: str) -> Format | None:
    """The RDF format whose file extension this is (`nt`, `.ttl`), or None."""
    key = _key(extension)
    return next((f for f in RDF_FORMATS if f.extension == key), None)
