"""The vocabularies kg emits, as N-Triples IRI strings.

kg's own namespace is closed: every term is listed here once, and `tests/test_ontology.py`
checks that each one is declared in `ontology/kg.ttl` and that the mapping emits nothing
else in that namespace. Standard vocabularies are reused where they mean the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

KG_NS: Final = "https://w3id.org/kg/ontology#"

DCTERMS_NS: Final = "http://purl.org/dc/terms/"
FOAF_NS: Final = "http://xmlns.com/foaf/0.1/"
FABIO_NS: Final = "http://purl.org/spar/fabio/"
PROV_NS: Final = "http://www.w3.org/ns/prov#"
SCHEMA_NS: Final = "https://schema.org/"
RDF_NS: Final = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS: Final = "http://www.w3.org/2000/01/rdf-schema#"
XSD_NS: Final = "http://www.w3.org/2001/XMLSchema#"
OWL_NS: Final = "http://www.w3.org/2002/07/owl#"
SKOS_NS: Final = "http://www.w3.org/2004/02/skos/core#"
VOID_NS: Final = "http://rdfs.org/ns/void#"
#: kg's search blocks in SPARQL (kg.search.sparql): a namespace of the query language only.
KGS_NS: Final = "https://w3id.org/kg/search#"

#: The graph of the store's intent journal (kg.rdf.journal). It lives outside the base so
#: that no instance IRI can collide with it; it is bookkeeping, never data.
JOURNAL_GRAPH: Final = "urn:x-kg:journal"

#: Prefixes used in Turtle output, docs and query headers.
PREFIXES: Final[dict[str, str]] = {
    "kg": KG_NS,
    "dcterms": DCTERMS_NS,
    "foaf": FOAF_NS,
    "fabio": FABIO_NS,
    "prov": PROV_NS,
    "schema": SCHEMA_NS,
    "rdf": RDF_NS,
    "rdfs": RDFS_NS,
    "xsd": XSD_NS,
    "owl": OWL_NS,
    "skos": SKOS_NS,
}

#: The prefixes a query may use without declaring them (`kg sparql`, `kg query`, `/sparql`,
#: the query page): every prefix kg's outputs write, and the search block's `kgs:`. The
#: engine applies them (a query's own PREFIX wins); a query sent to another endpoint gets
#: the declarations it uses written in (kg.rdf.query_text.with_declarations).
QUERY_PREFIXES: Final[dict[str, str]] = {**PREFIXES, "kgs": KGS_NS, "void": VOID_NS}

#: Local names of every term in kg's namespace (filled in by `_kg`).
KG_TERMS: set[str] = set()


def _kg(local: str) -> str:
    KG_TERMS.add(local)
    return f"<{KG_NS}{local}>"


def shortener(prefixes: Mapping[str, str] = PREFIXES) -> Callable[[str], str | None]:
    """`shorten` for fixed `prefixes`, their namespaces ordered once, longest first (a page
    shortens hundreds of IRIs with the same prefixes)."""
    ordered = sorted(prefixes.items(), key=lambda kv: -len(kv[1]))  # stable: ties keep order

    def short(iri: str) -> str | None:
        for prefix, ns in ordered:
            if iri.startswith(ns) and len(iri) > len(ns):
                return f"{prefix}:{iri[len(ns) :]}"
        return None

    return short


def shorten(iri: str, prefixes: Mapping[str, str] = PREFIXES) -> str | None:
    """`prefix:local` for an IRI under one of `prefixes` (the longest namespace wins), else None.

    >>> shorten("http://purl.org/dc/terms/title")
    'dcterms:title'
    >>> shorten("https://example.org/x") is None
    True
    """
    return shortener(prefixes)(iri)


def expand(name: str, prefixes: Mapping[str, str] = PREFIXES) -> str:
    """The IRI of a `prefix:local` name that `shorten` gave; anything else as it is."""
    prefix, sep, local = name.partition(":")
    if sep and prefix in prefixes and not local.startswith("//"):
        return prefixes[prefix] + local
    return name


def iri(value: str) -> str:
    """An absolute IRI string as an N-Triples term. The caller guarantees it is safe."""
    return f"<{value}>"


class KG:
    """kg's own classes and properties (closed: an unknown name is an AttributeError)."""

    # classes
    Paper = _kg("Paper")
    Author = _kg("Author")
    Authorship = _kg("Authorship")
    Repository = _kg("Repository")
    CodeLink = _kg("CodeLink")
    Task = _kg("Task")
    Method = _kg("Method")
    Dataset = _kg("Dataset")
    Venue = _kg("Venue")
    Sample = _kg("Sample")
    EvaluationResult = _kg("EvaluationResult")
    Record = _kg("Record")
    RepoKind = _kg("RepoKind")
    StatusCount = _kg("StatusCount")
    RepoKindSummary = _kg("RepoKindSummary")
    HarvestedRepository = _kg("HarvestedRepository")

    # paper
    pwcSlug = _kg("pwcSlug")
    arxivId = _kg("arxivId")
    abstractPage = _kg("abstractPage")
    pdf = _kg("pdf")
    proceeding = _kg("proceeding")
    venue = _kg("venue")
    venueYear = _kg("venueYear")
    venueMonth = _kg("venueMonth")
    authorship = _kg("authorship")
    author = _kg("author")
    position = _kg("position")
    authorName = _kg("authorName")
    hasTask = _kg("hasTask")
    usesMethod = _kg("usesMethod")
    introducesMethod = _kg("introducesMethod")
    introducesDataset = _kg("introducesDataset")
    codeLink = _kg("codeLink")
    hasRepository = _kg("hasRepository")
    hasSample = _kg("hasSample")
    hasResult = _kg("hasResult")

    # code link and repository
    repository = _kg("repository")
    linkedUrl = _kg("linkedUrl")
    repositoryPath = _kg("repositoryPath")
    isOfficial = _kg("isOfficial")
    mentionedInPaper = _kg("mentionedInPaper")
    mentionedInGithub = _kg("mentionedInGithub")
    framework = _kg("framework")
    reachStatus = _kg("reachStatus")
    host = _kg("host")

    # sample
    entry = _kg("entry")
    filePath = _kg("filePath")
    fileUrl = _kg("fileUrl")
    codeSha256Prefix = _kg("codeSha256Prefix")
    executionStatus = _kg("executionStatus")
    verificationLevel = _kg("verificationLevel")
    contractCheck = _kg("contractCheck")
    metamorphicTier = _kg("metamorphicTier")
    behaviourFingerprint = _kg("behaviourFingerprint")
    licenceName = _kg("licenceName")
    inlineOk = _kg("inlineOk")
    linkBasis = _kg("linkBasis")
    repoKind = _kg("repoKind")
    mcpCall = _kg("mcpCall")

    # evaluation result
    onTask = _kg("onTask")
    onDataset = _kg("onDataset")
    metricName = _kg("metricName")
    metricValue = _kg("metricValue")
    metricNumber = _kg("metricNumber")
    metricIsPercent = _kg("metricIsPercent")
    metricSpread = _kg("metricSpread")
    paperUrl = _kg("paperUrl")
    modelName = _kg("modelName")

    # record (provenance)
    describes = _kg("describes")
    sourceArchive = _kg("sourceArchive")
    snapshot = _kg("snapshot")
    rowKind = _kg("rowKind")
    attribution = _kg("attribution")
    archiveLicence = _kg("archiveLicence")
    republishedBy = _kg("republishedBy")
    nonAffiliation = _kg("nonAffiliation")
    modificationNote = _kg("modificationNote")
    contentHash = _kg("contentHash")
    sourceFile = _kg("sourceFile")
    ingestedAt = _kg("ingestedAt")
    readAt = _kg("readAt")
    readAtMeaning = _kg("readAtMeaning")
    harvestClaim = _kg("harvestClaim")
    atlasPage = _kg("atlasPage")
    developersPage = _kg("developersPage")
    pointerOnlyForLicence = _kg("pointerOnlyForLicence")
    statusCount = _kg("statusCount")
    status = _kg("status")
    count = _kg("count")
    repoKindSummary = _kg("repoKindSummary")
    sampleCount = _kg("sampleCount")
    ranCount = _kg("ranCount")
    repositoryCount = _kg("repositoryCount")
    harvestedRepository = _kg("harvestedRepository")
    harvestProvenance = _kg("harvestProvenance")
    arxivMetadata = _kg("arxivMetadata")
    extractedResults = _kg("extractedResults")
    pendingLoad = _kg("pendingLoad")

    # Papers-with-Code dumps (kg/ingest/dumps/; graph layout in docs/dumps.md)
    Dump = _kg("Dump")
    DumpEntry = _kg("DumpEntry")
    Area = _kg("Area")
    Collection = _kg("Collection")
    DataLoader = _kg("DataLoader")
    Leaderboard = _kg("Leaderboard")
    dumpKind = _kg("dumpKind")
    dumpName = _kg("dumpName")
    fullName = _kg("fullName")
    introducedYear = _kg("introducedYear")
    introducedDate = _kg("introducedDate")
    sourceUrl = _kg("sourceUrl")
    sourceTitle = _kg("sourceTitle")
    codeSnippet = _kg("codeSnippet")
    paperCount = _kg("paperCount")
    inCollection = _kg("inCollection")
    parentCollection = _kg("parentCollection")
    area = _kg("area")
    modality = _kg("modality")
    language = _kg("language")
    variant = _kg("variant")
    usedForTask = _kg("usedForTask")
    dataLoader = _kg("dataLoader")
    subtaskOf = _kg("subtaskOf")
    subdatasetOf = _kg("subdatasetOf")
    inLeaderboard = _kg("inLeaderboard")
    leaderboardMetric = _kg("leaderboardMetric")
    usesAdditionalData = _kg("usesAdditionalData")


class STD:
    """Terms reused from standard vocabularies."""

    type = f"<{RDF_NS}type>"
    JSON = f"<{RDF_NS}JSON>"
    label = f"<{RDFS_NS}label>"
    seeAlso = f"<{RDFS_NS}seeAlso>"
    title = f"<{DCTERMS_NS}title>"
    abstract = f"<{DCTERMS_NS}abstract>"
    issued = f"<{DCTERMS_NS}issued>"
    creator = f"<{DCTERMS_NS}creator>"
    license = f"<{DCTERMS_NS}license>"
    foaf_name = f"<{FOAF_NS}name>"
    prov_Entity = f"<{PROV_NS}Entity>"
    codeRepository = f"<{SCHEMA_NS}codeRepository>"
    programmingLanguage = f"<{SCHEMA_NS}programmingLanguage>"
    position = f"<{SCHEMA_NS}position>"
    skos_Concept = f"<{SKOS_NS}Concept>"
    prefLabel = f"<{SKOS_NS}prefLabel>"
    definition = f"<{SKOS_NS}definition>"
    altLabel = f"<{SKOS_NS}altLabel>"
    description = f"<{DCTERMS_NS}description>"
    bibliographicCitation = f"<{DCTERMS_NS}bibliographicCitation>"
    references = f"<{DCTERMS_NS}references>"  # a paper's lineage: the papers it builds on
    homepage = f"<{FOAF_NS}homepage>"
    primaryTopic = f"<{FOAF_NS}primaryTopic>"
    wasDerivedFrom = f"<{PROV_NS}wasDerivedFrom>"


class PAPER_TO:
    """What relates a paper to an item, through every path the graph has: one meaning per
    relation (docs/ontology.md, "What a paper works on, uses and is evaluated on").

    SPARQL property paths in N-Triples IRIs; `compact_path` gives the `kg:`-prefixed form
    the named queries (queries/*.rq) spell out, and tests/test_queries.py checks that they
    reach these predicates through these paths only.
    """

    #: A paper works on a task: its record or a dump says so, or it reports a result on it.
    task = f"{KG.hasTask}|({KG.hasResult}/{KG.onTask})"
    #: A paper uses a method: its record says so, or it introduces the method.
    method = f"{KG.usesMethod}|{KG.introducesMethod}"
    #: A paper is evaluated on a dataset: it reports a result on it.
    evaluated_on = f"{KG.hasResult}/{KG.onDataset}"
    #: A paper's datasets: those it introduces and those it is evaluated on.
    dataset = f"{KG.introducesDataset}|({KG.hasResult}/{KG.onDataset})"
    #: A paper's repositories: the repositories of its code links (records, links dump).
    repository = KG.hasRepository
    #: A paper's authors.
    author = STD.creator


def compact_path(path: str) -> str:
    """A property path with its IRIs as prefixed names (`<…#hasTask>` -> `kg:hasTask`).

    >>> compact_path(PAPER_TO.method)
    'kg:usesMethod|kg:introducesMethod'
    """
    out = path
    for full in sorted(set(re.findall(r"<([^<>]+)>", path)), key=len, reverse=True):
        out = out.replace(f"<{full}>", shorten(full) or f"<{full}>")
    return out


class XSD:
    string = f"{XSD_NS}string"
    boolean = f"{XSD_NS}boolean"
    integer = f"{XSD_NS}integer"
    decimal = f"{XSD_NS}decimal"
    double = f"{XSD_NS}double"
    date = f"{XSD_NS}date"
    dateTime = f"{XSD_NS}dateTime"
    anyURI = f"{XSD_NS}anyURI"
