"""The ontology, shapes and JSON-LD context agree with what the code emits.

kg's namespace is closed: every term is defined once in `kg.rdf.vocab.KG_TERMS`, declared in
`ontology/kg.ttl`, and nothing else in the namespace may appear in mapped data. The SHACL
shapes must accept the graph built from the real seed records and reject broken ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph
import pyshacl
import pytest
import rdflib
from rdflib.collection import Collection
from rdflib.compare import isomorphic
from rdflib.namespace import OWL, RDF, RDFS

from kg.ingest.identity import Iris
from kg.ingest.ingestor import ingest
from kg.ingest.mapping import Context, map_record
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG_NS, KG_TERMS, XSD_NS
from tests import dump_samples

ROOT = Path(__file__).resolve().parents[1]

ONTOLOGY = ROOT / "ontology" / "kg.ttl"
SHAPES = ROOT / "ontology" / "shapes.ttl"
CONTEXT = ROOT / "ontology" / "context.jsonld"
DOC = ROOT / "docs" / "ontology.md"
BASE = "https://w3id.org/kg/id/"
INGESTED_AT = "2026-01-01T00:00:00+00:00"

KG = rdflib.Namespace(KG_NS)
XSD = rdflib.Namespace(XSD_NS)
DCTERMS = rdflib.Namespace("http://purl.org/dc/terms/")
SKOS = rdflib.Namespace("http://www.w3.org/2004/02/skos/core#")
# The store writes this flag in its journal; the mapping never emits it.
STORE_ONLY = {"pendingLoad"}
#: Classes kg does not state in the data (millions of type triples at archive scale): the
#: property that reaches their nodes says what they are.
UNSTATED_CLASSES = {"Authorship", "DumpEntry"}
PROV = rdflib.Namespace("http://www.w3.org/ns/prov#")
FOAF_PRIMARY_TOPIC = rdflib.URIRef("http://xmlns.com/foaf/0.1/primaryTopic")

#: A record that exercises the fields the seeds leave empty (results, introduced methods
#: and datasets, code-link paths, reach statuses, JSON blobs, samples without a hash).
FULL_RECORD: dict[str, Any] = {
    "url": "/paper/a-full-record",
    "title": "A Full Record",
    "abstract": "Exercises every field.",
    "date": "2021-05-01",
    "proceeding": "NeurIPS 2021 12",
    "authors": ["Zoë Ábel", "李 王"],
    "arxiv_id": "2105.00001",
    "url_abs": "https://arxiv.org/abs/2105.00001v1",
    "url_pdf": "https://arxiv.org/pdf/2105.00001v1.pdf",
    "code_links": [
        {
            "repo_url": "https://github.com/Org/Repo/tree/main/sub/dir",
            "is_official": True,
            "mentioned_in_paper": False,
            "mentioned_in_github": 1,
            "framework": "jax",
            "reach": {"status": "ok"},
        }
    ],
    "tasks": [{"task_slug": "image-classification"}],
    "methods": [{"method_name": "Multi-Head Attention"}],
    "methods_introduced": ["New Method", {"url": "https://paperswithcode.com/method/other"}],
    "datasets_introduced": [{"dataset_slug": "new-set", "dataset_name": "NewSet"}],
    "results": [
        {
            "task": "Image Classification",
            "dataset": "ImageNet",
            "model_name": "Big",
            "metrics": {"Top 1 Accuracy": "96.95%", "Params": "-"},
        },
        {"task": "Image Classification", "dataset": "ImageNet", "metric": "FLOPs", "value": 15.8},
    ],
    "arxiv_metadata": {"categories": ["cs.LG"]},
    "syntology_extracted_results": [],
    "source": {"archive": "test", "snapshot": "2025-07-28", "row_kind": "abstracts"},
    "about": {"licence": "CC BY-SA 4.0", "site": "https://example.org"},
    "syntology": {
        "mcp": {"tool": {"arxiv_id": "2105.00001"}},
        "read_at": "2026-09-25T09:33:49+00:00",
        "repos": [
            {"url": "https://github.com/org/repo", "reach": {"status": "gone"}, "provenance": "p"}
        ],
        "summary": {"unverified": 1},
        "by_repo_kind": {"community": {"samples": 1, "ran": 0, "repositories": 1}},
        "repo_kind_vocabulary": {"community": "A community repository"},
        "samples": [
            {
                "entry": "f",
                "repo": "org/repo",
                "repo_kind": "community",
                "path": "a.py",
                "file_url": "https://github.com/org/repo/blob/HEAD/a.py",
                "language": "python",
                "status": "unverified",
                "verification_level": 0,
                "licence": "MIT",
                "behaviour_fingerprint": True,
                "inline_ok": True,
            }
        ],
    },
}


# --- helpers -------------------------------------------------------------------------------


def kg_local(term: rdflib.term.Node) -> str | None:
    text = str(term)
    return (
        text[len(KG_NS) :] if isinstance(term, rdflib.URIRef) and text.startswith(KG_NS) else None
    )


def map_to_nquads(record: dict[str, Any], source_file: str = "") -> str:
    iris = Iris(BASE)
    ctx = Context(iris, source_file=source_file, ingested_at=INGESTED_AT)
    return map_record(record, ctx).nquads(iris.entities_graph())


def union_of(nquads: str, *, skip_graph: str | None = None) -> rdflib.Graph:
    """Every quad's triple in one graph: what the union default graph shows.

    Oxigraph parses the N-Quads (as the store's loader would); rdflib reads the triples.
    """
    quads = pyoxigraph.parse(nquads.encode("utf-8"), format=pyoxigraph.RdfFormat.N_QUADS)
    triples = [q.triple for q in quads if skip_graph is None or q.graph_name.value != skip_graph]
    text = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.N_TRIPLES)
    assert text is not None
    return rdflib.Graph().parse(data=text.decode("utf-8"), format="nt")


def validate(graph: rdflib.Graph, shapes: rdflib.Graph) -> tuple[bool, str]:
    conforms, _, text = pyshacl.validate(graph, shacl_graph=shapes, inference="none")
    return bool(conforms), str(text)


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ontology() -> rdflib.Graph:
    return rdflib.Graph().parse(ONTOLOGY, format="turtle")


@pytest.fixture(scope="module")
def shapes() -> rdflib.Graph:
    return rdflib.Graph().parse(SHAPES, format="turtle")


@pytest.fixture(scope="module")
def context() -> dict[str, Any]:
    document = json.loads(CONTEXT.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    ctx = document["@context"]
    assert isinstance(ctx, dict)
    return ctx


@pytest.fixture(scope="module")
def seed_nquads(seed_paths: list[Path]) -> str:
    """The real seed records (the `seed_paths` fixture of conftest.py), mapped."""
    return "".join(
        map_to_nquads(json.loads(path.read_text(encoding="utf-8")), source_file=path.name)
        for path in seed_paths
    )


@pytest.fixture(scope="module")
def seed_graph(seed_nquads: str) -> rdflib.Graph:
    return union_of(seed_nquads)


@pytest.fixture(scope="module")
def full_graph(seed_nquads: str, tmp_path_factory: pytest.TempPathFactory) -> rdflib.Graph:
    return union_of(
        seed_nquads
        + map_to_nquads(FULL_RECORD, source_file="full.json")
        + dumps_nquads(tmp_path_factory.mktemp("dumps"))
    )


def dumps_nquads(directory: Path) -> str:
    """The five dump kinds (tests/dump_samples.py), ingested as `kg ingest` would."""
    store = GraphStore.memory()
    report = ingest(
        store,
        [str(p) for p in dump_samples.write_all(directory)],
        base_iri=BASE,
        snapshot="2025-07-28",
    )
    assert report.rejected == 0, report.errors
    return "".join(store.quads_nquads())


@pytest.fixture(scope="module")
def declared(ontology: rdflib.Graph) -> dict[str, rdflib.URIRef]:
    """Local name -> OWL kind, for every kg term the ontology declares."""
    kinds = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)
    out: dict[str, rdflib.URIRef] = {}
    for kind in kinds:
        for subject in ontology.subjects(RDF.type, kind):
            local = kg_local(subject)
            if local is not None:
                assert local not in out, f"kg:{local} is declared twice"
                out[local] = kind
    return out


# --- (a) every term declared, with label, comment, domain and range -----------------------


def test_every_vocab_term_is_declared(declared: dict[str, rdflib.URIRef]) -> None:
    missing = sorted(KG_TERMS - declared.keys())
    assert not missing, f"declare these kg.rdf.vocab terms in ontology/kg.ttl: {missing}"


@pytest.mark.parametrize("local", sorted(KG_TERMS))
def test_term_is_documented(
    local: str, ontology: rdflib.Graph, declared: dict[str, rdflib.URIRef]
) -> None:
    term = KG[local]
    for prop in (RDFS.label, RDFS.comment):
        assert ontology.value(term, prop) is not None, f"kg:{local} has no {prop.n3()}"
    if declared.get(local) != OWL.Class:
        assert ontology.value(term, RDFS.domain) is not None, f"kg:{local} has no rdfs:domain"
        assert ontology.value(term, RDFS.range) is not None, f"kg:{local} has no rdfs:range"


def test_declared_domains_and_ranges_are_kg_classes_or_known(
    ontology: rdflib.Graph, declared: dict[str, rdflib.URIRef]
) -> None:
    """A domain or range in kg's namespace must itself be a declared class."""
    for local, kind in declared.items():
        if kind == OWL.Class:
            continue
        for prop in (RDFS.domain, RDFS.range):
            value = ontology.value(KG[local], prop)
            classes = (
                list(Collection(ontology, ontology.value(value, OWL.unionOf)))
                if isinstance(value, rdflib.BNode)
                else [value]
            )
            for cls in classes:
                name = kg_local(cls)
                if name is not None:
                    assert declared.get(name) == OWL.Class, f"kg:{local} {prop.n3()} kg:{name}"


def test_ontology_header(ontology: rdflib.Graph) -> None:
    header = rdflib.URIRef("https://w3id.org/kg/ontology")
    assert (header, RDF.type, OWL.Ontology) in ontology
    for prop in (DCTERMS.title, DCTERMS.description, OWL.versionInfo):
        assert ontology.value(header, prop) is not None
    cc_by = rdflib.URIRef("https://creativecommons.org/licenses/by/4.0/")
    assert (header, DCTERMS.license, cc_by) in ontology


# --- (b) the namespace is closed both ways -------------------------------------------------


def test_vocab_declares_nothing_extra(declared: dict[str, rdflib.URIRef]) -> None:
    extra = sorted(declared.keys() - KG_TERMS)
    assert not extra, f"ontology/kg.ttl declares terms kg.rdf.vocab does not define: {extra}"


def test_ontology_mentions_no_undeclared_kg_term(
    ontology: rdflib.Graph, declared: dict[str, rdflib.URIRef]
) -> None:
    used = {kg_local(n) for triple in ontology for n in triple} - {None}
    unknown = sorted(used - declared.keys())
    assert not unknown, f"kg.ttl mentions undeclared terms: {unknown}"


@pytest.mark.parametrize("which", ["seeds", "full"])
def test_mapping_uses_only_declared_terms(
    which: str,
    seed_graph: rdflib.Graph,
    full_graph: rdflib.Graph,
    declared: dict[str, rdflib.URIRef],
) -> None:
    graph = seed_graph if which == "seeds" else full_graph
    predicates = {kg_local(p) for p in graph.predicates()} - {None}
    types = {kg_local(o) for o in graph.objects(None, RDF.type)} - {None}
    anywhere = {kg_local(n) for triple in graph for n in triple} - {None}
    assert predicates, "the mapping emitted no kg predicate"
    for name, used in (("predicate", predicates), ("rdf:type", types), ("term", anywhere)):
        unknown = sorted(used - declared.keys())
        assert not unknown, f"mapping uses undeclared kg {name}s: {unknown}"
    assert all(declared[t] == OWL.Class for t in types if t), "a property is used as a class"
    assert all(declared[p] != OWL.Class for p in predicates if p), "a class is used as a predicate"


def test_mapping_exercises_every_term(full_graph: rdflib.Graph) -> None:
    """Seeds plus the full record use every term the code defines (except store-only ones, and
    the classes that follow from the property reaching them)."""
    used = {kg_local(n) for triple in full_graph for n in triple} - {None}
    unused = sorted(KG_TERMS - STORE_ONLY - UNSTATED_CLASSES - used)
    assert not unused, f"no mapped data uses {unused}: extend FULL_RECORD or drop the term"


def test_literal_datatypes_match_declared_ranges(
    full_graph: rdflib.Graph, ontology: rdflib.Graph, declared: dict[str, rdflib.URIRef]
) -> None:
    for s, p, o in full_graph:
        local = kg_local(p)
        if local is None:
            continue
        declared_range = ontology.value(p, RDFS.range)
        if declared[local] == OWL.DatatypeProperty:
            assert isinstance(o, rdflib.Literal), f"kg:{local} on {s} has a non-literal {o}"
            assert o.language is None
            emitted = o.datatype or XSD.string
            assert emitted == declared_range, f"kg:{local}: {emitted} is not {declared_range}"
        else:
            assert isinstance(o, rdflib.URIRef), f"kg:{local} on {s} is not an IRI: {o!r}"


def test_the_unstated_classes_follow_from_the_property_that_reaches_them(
    full_graph: rdflib.Graph, ontology: rdflib.Graph
) -> None:
    """Authorships and dump entries carry no rdf:type; the ontology still makes each one an
    instance, so a reasoner (or a query through the property) finds every one."""
    for name in UNSTATED_CLASSES:
        assert not set(full_graph.subjects(RDF.type, KG[name])), f"kg:{name} is stated"
    ships = set(full_graph.objects(None, KG.authorship))
    assert ships and all(set(full_graph.objects(s, KG.author)) for s in ships)
    assert ontology.value(KG.authorship, RDFS.range) == KG.Authorship
    entries = set(full_graph.subjects(PROV.wasDerivedFrom, None))
    dumps = set(full_graph.subjects(RDF.type, KG.Dump))
    assert entries and all(
        set(full_graph.objects(e, PROV.wasDerivedFrom)) <= dumps for e in entries
    )
    (restriction,) = ontology.objects(KG.DumpEntry, OWL.equivalentClass)
    assert ontology.value(restriction, OWL.onProperty) == PROV.wasDerivedFrom
    assert ontology.value(restriction, OWL.someValuesFrom) == KG.Dump
    # each entry graph describes itself in three triples: its topic, its dump, its hash
    for entry in entries:
        said = {p for p, _ in full_graph.predicate_objects(entry)}
        assert said == {FOAF_PRIMARY_TOPIC, PROV.wasDerivedFrom, KG.contentHash}, entry


# --- (c) the files parse; the context covers every term ------------------------------------


def test_shapes_parse_and_target_every_class(
    shapes: rdflib.Graph, declared: dict[str, rdflib.URIRef]
) -> None:
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    targets = {kg_local(o) for o in shapes.objects(None, sh.targetClass)}
    classes = {name for name, kind in declared.items() if kind == OWL.Class}
    # the classes kg does not state in the data are targeted through the property that
    # reaches their nodes, by the shape named after them
    by_property = {
        str(shape).rsplit("#", 1)[-1].removesuffix("Shape")
        for key in (sh.targetSubjectsOf, sh.targetObjectsOf)
        for shape in shapes.subjects(key, None)
    }
    assert by_property == UNSTATED_CLASSES
    assert targets | by_property == classes and not targets & by_property
    used = {kg_local(n) for triple in shapes for n in triple} - {None}
    assert used <= declared.keys(), f"shapes use undeclared terms: {sorted(used - declared.keys())}"


def test_context_has_a_key_for_every_term(context: dict[str, Any]) -> None:
    prefixes = {k: v for k, v in context.items() if isinstance(v, str) and v.endswith(("#", "/"))}
    assert prefixes.get("kg") == KG_NS

    def expand(value: Any) -> str:
        iri = value["@id"] if isinstance(value, dict) else value
        prefix, _, local = iri.partition(":")
        return prefixes[prefix] + local if prefix in prefixes else iri

    by_iri: dict[str, str] = {}
    for key, value in context.items():
        if key.startswith("@") or key in prefixes or value in ("@id", "@type"):
            continue
        iri = expand(value)
        assert iri not in by_iri, f"{key!r} and {by_iri[iri]!r} both map to {iri}"
        by_iri[iri] = key
    missing = sorted(t for t in KG_TERMS if KG_NS + t not in by_iri)
    assert not missing, f"context.jsonld has no key for: {missing}"
    for reused in (
        "http://purl.org/dc/terms/title",
        "http://purl.org/dc/terms/issued",
        "http://purl.org/dc/terms/license",
        "https://schema.org/codeRepository",
        "http://xmlns.com/foaf/0.1/name",
        "http://www.w3.org/2000/01/rdf-schema#label",
    ):
        assert reused in by_iri, f"context.jsonld has no key for {reused}"


def test_context_coercions_match_ranges(
    context: dict[str, Any], ontology: rdflib.Graph, declared: dict[str, rdflib.URIRef]
) -> None:
    for local, kind in declared.items():
        if kind == OWL.Class:
            continue
        entry = context[local]
        rng = ontology.value(KG[local], RDFS.range)
        coerced = entry.get("@type") if isinstance(entry, dict) else None
        if kind == OWL.ObjectProperty:
            assert coerced == "@id", f"{local!r} should be coerced to @id"
        elif rng == XSD.string:
            assert coerced is None, f"{local!r} is a plain string: no @type"
        else:
            prefix, _, name = str(coerced).partition(":")
            assert context[prefix] + name == str(rng), f"{local!r}: {coerced} vs {rng}"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # inside rdflib's JSON-LD parser
def test_compaction_gives_plain_values(full_graph: rdflib.Graph, context: dict[str, Any]) -> None:
    text = full_graph.serialize(format="json-ld", context=context)
    document = json.loads(text)
    document.pop("@context")
    leftovers: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key != "@graph" and (key.startswith("@") or ":" in key):
                    leftovers.add(key)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(document)
    assert not leftovers, f"compaction left expanded keys or values: {sorted(leftovers)}"
    back = rdflib.Graph().parse(data=text, format="json-ld")
    assert isomorphic(back, full_graph)


def test_docs_list_every_term() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = sorted(t for t in KG_TERMS if f"`kg:{t}`" not in text)
    assert not missing, f"docs/ontology.md does not list: {missing}"
    assert "https://w3id.org/kg/id/" in text


# --- (d) SHACL: the seeds conform, broken graphs do not -----------------------------------


def test_seed_union_conforms(seed_graph: rdflib.Graph, shapes: rdflib.Graph) -> None:
    conforms, report = validate(seed_graph, shapes)
    assert conforms, report


def test_full_record_conforms(full_graph: rdflib.Graph, shapes: rdflib.Graph) -> None:
    conforms, report = validate(full_graph, shapes)
    assert conforms, report


def test_record_graphs_alone_do_not_conform(seed_nquads: str, shapes: rdflib.Graph) -> None:
    """Shapes check record triples against entity types: validate the union, not one graph."""
    own = union_of(seed_nquads, skip_graph=Iris(BASE).entities_graph())
    conforms, report = validate(own, shapes)
    assert not conforms
    assert "kg:Author" in report or "Author" in report


def _first(graph: rdflib.Graph, cls: rdflib.URIRef) -> rdflib.URIRef:
    node = next(graph.subjects(RDF.type, cls))
    assert isinstance(node, rdflib.URIRef)
    return node


def _code_link_without_repository(g: rdflib.Graph) -> None:
    g.remove((_first(g, KG.CodeLink), KG.repository, None))


def _issued_as_plain_string(g: rdflib.Graph) -> None:
    g.set((_first(g, KG.Paper), DCTERMS.issued, rdflib.Literal("2020-04-21")))


def _record_without_content_hash(g: rdflib.Graph) -> None:
    g.remove((_first(g, KG.Record), KG.contentHash, None))


def _record_with_two_papers(g: rdflib.Graph) -> None:
    papers = list(g.subjects(RDF.type, KG.Paper))
    record = _first(g, KG.Record)
    for paper in papers:
        g.add((record, KG.describes, paper))


def _position_as_string(g: rdflib.Graph) -> None:
    ship = next(g.objects(None, KG.authorship))  # an authorship is not typed: reach it
    assert isinstance(ship, rdflib.URIRef)
    g.set((ship, KG.position, rdflib.Literal("1")))


def _creator_not_an_author(g: rdflib.Graph) -> None:
    g.add((_first(g, KG.Paper), DCTERMS.creator, rdflib.URIRef(BASE + "method/adam")))


def _blank_code_link(g: rdflib.Graph) -> None:
    node = rdflib.BNode()
    g.add((node, RDF.type, KG.CodeLink))
    g.add((node, KG.repository, next(g.subjects(RDF.type, KG.Repository))))


def _metric_number_as_string(g: rdflib.Graph) -> None:
    g.set((_first(g, KG.EvaluationResult), KG.metricNumber, rdflib.Literal("96.95")))


def _repo_kind_without_definition(g: rdflib.Graph) -> None:
    g.remove((_first(g, KG.RepoKind), SKOS.definition, None))


#: Each breakage, and the path its violation must name.
BREAKAGES = [
    (_code_link_without_repository, "kg:repository"),
    (_issued_as_plain_string, "dcterms:issued"),
    (_record_without_content_hash, "kg:contentHash"),
    (_record_with_two_papers, "kg:describes"),
    (_position_as_string, "kg:position"),
    (_creator_not_an_author, "dcterms:creator"),
    (_blank_code_link, "kg:linkedUrl"),
    (_metric_number_as_string, "kg:metricNumber"),
    (_repo_kind_without_definition, "skos:definition"),
]


@pytest.mark.parametrize(
    ("breakage", "path"), BREAKAGES, ids=[f.__name__.strip("_") for f, _ in BREAKAGES]
)
def test_broken_graph_does_not_conform(
    breakage: Any, path: str, full_graph: rdflib.Graph, shapes: rdflib.Graph
) -> None:
    broken = rdflib.Graph()
    broken += full_graph
    breakage(broken)
    conforms, report = validate(broken, shapes)
    assert not conforms, f"{breakage.__name__} should violate a shape"
    assert f"Result Path: {path}" in report, report


@pytest.mark.parametrize(
    ("breakage", "path"), BREAKAGES, ids=[f.__name__.strip("_") for f, _ in BREAKAGES]
)
def test_compiled_checks_agree_with_pyshacl(
    breakage: Any, path: str, full_graph: rdflib.Graph
) -> None:
    """`kg validate` runs SPARQL compiled from shapes.ttl: it finds what pyshacl finds."""
    from kg.export.validate import validate as compiled
    from kg.export.validate import validate_pyshacl

    broken = rdflib.Graph()
    broken += full_graph
    breakage(broken)
    store = GraphStore.memory()
    store.bulk_load(broken.serialize(format="nt").encode("utf-8"), "ntriples")

    def found(report: Any) -> set[tuple[str, str]]:
        return {
            ("_:" if "://" not in v.focus else v.focus, v.path)  # blank nodes: any label
            for v in report.violations
        }

    ours, reference = compiled(store), validate_pyshacl(store)
    assert not ours.conforms and not reference.conforms
    assert found(ours) == found(reference)
    namespaces = {
        "kg": KG_NS,
        "dcterms": "http://purl.org/dc/terms/",
        "skos": "http://www.w3.org/2004/02/skos/core#",
    }
    prefix, local = path.split(":")
    expected = namespaces[prefix] + local
    assert any(p.lstrip("^") == expected for _, p in found(ours))


def test_compiled_checks_agree_on_the_conforming_graph(full_graph: rdflib.Graph) -> None:
    from kg.export.validate import validate as compiled

    store = GraphStore.memory()
    store.bulk_load(full_graph.serialize(format="nt").encode("utf-8"), "ntriples")
    assert compiled(store).conforms
