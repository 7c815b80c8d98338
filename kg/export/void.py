"""A VoID description of the store: what it holds, in which vocabularies, where its dumps are.

The counts come from the same queries as `kg stats` (`kg.query.stats.compute`): `void:triples`
is the number of distinct triples of the union of all graphs, and each class partition's
`void:entities` the number of distinct subjects typed with that class. Partitions get
deterministic IRIs under the dataset's, so the same store gives the same description.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kg.query.stats import compute
from kg.rdf.engine import convert
from kg.rdf.formats import Format, by_extension
from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.rdf.terms import integer, literal, segment, typed
from kg.rdf.vocab import DCTERMS_NS, KG_NS, PREFIXES, RDF_NS, VOID_NS, XSD, expand, iri, shorten

VOID_PREFIXES = {**PREFIXES, "void": VOID_NS}
#: The Papers-with-Code archive's licence, used when the records name none.
DEFAULT_LICENSE = "https://creativecommons.org/licenses/by-sa/4.0/"  # one IRI per licence
TITLE = "kg: a knowledge graph of machine-learning research"
DESCRIPTION = (
    "Papers, authors, tasks, methods, datasets, code repositories and harvested code samples "
    "from the Papers with Code archive, as RDF."
)
_PROPERTIES = """
SELECT ?p (COUNT(*) AS ?n) WHERE { SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o } }
GROUP BY ?p ORDER BY ?p
"""
_COUNTS = """
SELECT (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?o) AS ?objects)
WHERE { ?s ?p ?o }
"""
_ENTITIES = f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s <{RDF_NS}type> ?class }}"
_EXAMPLES = f"SELECT DISTINCT ?s WHERE {{ ?s <{RDF_NS}type> <{KG_NS}Paper> }} ORDER BY ?s LIMIT 3"
#: Every licence the data is under: records' and dumps' own, and the archives' of records.
_LICENCE_PATH = f"<{DCTERMS_NS}license>|<{KG_NS}archiveLicence>"
_LICENSES = f"SELECT DISTINCT ?l WHERE {{ ?r {_LICENCE_PATH} ?l }} ORDER BY ?l"
_MODIFIED = f"SELECT (MAX(?t) AS ?m) WHERE {{ ?r <{KG_NS}ingestedAt> ?t }}"


@dataclass
class VoidDescription:
    dataset: str
    triples: int
    entities: int
    distinct_subjects: int
    distinct_objects: int
    classes: dict[str, int] = field(default_factory=dict)  # class IRI -> entities
    properties: dict[str, int] = field(default_factory=dict)  # property IRI -> triples
    vocabularies: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    dumps: list[str] = field(default_factory=list)
    licenses: list[str] = field(default_factory=list)
    uri_space: str = ""
    modified: str | None = None
    sparql_endpoint: str | None = None

    def ntriples(self) -> str:
        """The description as N-Triples, lines sorted."""
        d = iri(self.dataset)
        void = VOID_NS
        lines = [
            f"{d} <{RDF_NS}type> <{void}Dataset>",
            f"{d} <{DCTERMS_NS}title> {literal(TITLE)}",
            f"{d} <{DCTERMS_NS}description> {literal(DESCRIPTION)}",
            f"{d} <{void}triples> {integer(self.triples)}",
            f"{d} <{void}entities> {integer(self.entities)}",
            f"{d} <{void}distinctSubjects> {integer(self.distinct_subjects)}",
            f"{d} <{void}distinctObjects> {integer(self.distinct_objects)}",
            f"{d} <{void}classes> {integer(len(self.classes))}",
            f"{d} <{void}properties> {integer(len(self.properties))}",
        ]
        if self.uri_space:
            lines.append(f"{d} <{void}uriSpace> {literal(self.uri_space)}")
        if self.modified:
            lines.append(f"{d} <{DCTERMS_NS}modified> {typed(self.modified, XSD.dateTime)}")
        if self.sparql_endpoint:
            lines.append(f"{d} <{void}sparqlEndpoint> {iri(self.sparql_endpoint)}")
        lines += [f"{d} <{void}vocabulary> {iri(v)}" for v in self.vocabularies]
        lines += [f"{d} <{void}exampleResource> {iri(e)}" for e in self.examples]
        lines += [f"{d} <{DCTERMS_NS}license> {iri(lic)}" for lic in self.licenses]
        for url in self.dumps:
            lines.append(f"{d} <{void}dataDump> {iri(url)}")
            fmt = _dump_format(url)
            if fmt is not None:
                lines.append(f"{d} <{void}feature> {iri(fmt.w3c)}")
        for cls, n in self.classes.items():
            part = iri(f"{self.dataset}/class/{segment(shorten(cls, VOID_PREFIXES) or cls)}")
            lines += [
                f"{d} <{void}classPartition> {part}",
                f"{part} <{void}class> {iri(cls)}",
                f"{part} <{void}entities> {integer(n)}",
            ]
        for prop, n in self.properties.items():
            part = iri(f"{self.dataset}/property/{segment(shorten(prop, VOID_PREFIXES) or prop)}")
            lines += [
                f"{d} <{void}propertyPartition> {part}",
                f"{part} <{void}property> {iri(prop)}",
                f"{part} <{void}triples> {integer(n)}",
            ]
        return "".join(f"{line} .\n" for line in sorted(set(lines)))

    def serialize(self, fmt: str = "turtle") -> bytes:
        text = self.ntriples()
        if fmt in ("ntriples", "nt"):
            return text.encode("utf-8")
        return convert(text, fmt, VOID_PREFIXES)


def _dump_format(url: str) -> Format | None:
    """The export format of a dump file, by its extension (before any `.gz`)."""
    name = url.rsplit("/", 1)[-1].removesuffix(".gz")
    fmt = by_extension(name.rsplit(".", 1)[-1]) if "." in name else None
    return fmt if fmt is not None and fmt.writable else None


def namespace(value: str) -> str:
    """The vocabulary an IRI belongs to: a known prefix's namespace, else up to '#' or '/'."""
    for ns in VOID_PREFIXES.values():
        if value.startswith(ns):
            return ns
    cut = max(value.rfind("#"), value.rfind("/"))
    return value[: cut + 1] if cut > 0 else value


def _select(store: GraphStore, sparql: str) -> SelectResult:
    result = store.query(sparql)
    assert isinstance(result, SelectResult)
    return result


def _number(result: SelectResult, column: int = 0) -> int:
    cell = result.rows[0][column] if result.rows else None
    return int(cell.value) if cell is not None else 0


def dump_files(directory: Path) -> list[Path]:
    """The whole-store exports in `directory` (`kg.<ext>` and `kg.<ext>.gz`), by name."""
    if not directory.is_dir():
        return []
    return sorted(
        p
        for p in directory.iterdir()
        if p.is_file() and _dump_format(p.name) is not None and p.name.split(".", 1)[0] == "kg"
    )


def dump_urls(files: Iterable[Path], url_base: str) -> list[str]:
    base = url_base if url_base.endswith("/") else url_base + "/"
    return [base + segment(p.name) for p in files]


def describe(
    store: GraphStore,
    base_iri: str,
    *,
    dumps: Sequence[str] = (),
    sparql_endpoint: str | None = None,
) -> VoidDescription:
    """Count what the store holds and describe it; `dumps` are the dump URLs to list."""
    stats = compute(store, base_iri)
    counts = _select(store, _COUNTS)
    properties = {
        row[0].value: int(row[1].value)
        for row in _select(store, _PROPERTIES).rows
        if row[0] is not None and row[1] is not None
    }
    classes = {expand(name): n for name, n in sorted(stats.classes.items())}
    vocabularies = sorted({namespace(i) for i in (*properties, *classes)})
    examples = [row[0].value for row in _select(store, _EXAMPLES).rows if row[0] is not None]
    licenses = [row[0].value for row in _select(store, _LICENSES).rows if row[0] is not None]
    modified = _select(store, _MODIFIED).rows
    return VoidDescription(
        dataset=f"{base_iri}dataset",
        triples=stats.triples,
        entities=_number(_select(store, _ENTITIES)),
        distinct_subjects=_number(counts, 0),
        distinct_objects=_number(counts, 1),
        classes=classes,
        properties=properties,
        vocabularies=vocabularies,
        examples=examples,
        dumps=list(dumps),
        licenses=licenses or [DEFAULT_LICENSE],
        uri_space=base_iri,
        modified=modified[0][0].value if modified and modified[0][0] is not None else None,
        sparql_endpoint=sparql_endpoint,
    )
