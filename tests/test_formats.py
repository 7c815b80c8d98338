"""The one format registry (kg.rdf.formats): every reader of formats agrees with it."""

from __future__ import annotations

import io
import json
import pickle

import pyoxigraph as ox
import pytest

from kg.errors import UsageError
from kg.rdf import formats
from kg.rdf.engine import rdf_format as oxigraph_format
from kg.rdf.engine import serialize_results
from kg.rdf.results import SelectResult, Term
from kg.rdf.store import GraphStore
from kg.serve import conneg


@pytest.mark.parametrize("fmt", formats.RDF_FORMATS, ids=lambda f: f.name)
def test_every_rdf_format_is_one_oxigraph_knows(fmt: formats.Format) -> None:
    native = oxigraph_format(fmt.name)
    assert native.media_type == fmt.media_type
    assert native.file_extension == fmt.extension
    assert native.supports_datasets or not fmt.dataset  # kg writes JSON-LD as one graph
    assert fmt.w3c.startswith(formats.W3C_FORMATS)


@pytest.mark.parametrize("fmt", formats.RESULTS_FORMATS, ids=lambda f: f.name)
def test_every_results_format_is_one_oxigraph_knows(fmt: formats.Format) -> None:
    native = ox.QueryResultsFormat.from_media_type(fmt.media_type)
    assert native is not None and native.file_extension == fmt.extension


def test_each_name_alias_extension_and_media_type_finds_its_format() -> None:
    for fmt in formats.RDF_FORMATS:
        for key in fmt.names():
            found = formats.find_rdf_format(key.upper())
            assert found is not None
            # a key two formats share (application/json) belongs to the earlier one
            assert found == fmt or key in found.names()
    assert formats.rdf_format("text/turtle; charset=utf-8").name == "turtle"
    assert formats.rdf_format(".nq").name == "nquads"
    assert formats.results_format("xml").name == "xml"
    assert formats.rdf_format("xml").name == "rdfxml"


def test_unknown_and_read_only_formats_are_usage_errors_listing_the_choices() -> None:
    with pytest.raises(UsageError, match="unknown RDF format 'yaml'; use one of: turtle"):
        formats.rdf_format("yaml")
    with pytest.raises(UsageError, match="unknown export format 'n3'; use one of: turtle"):
        formats.rdf_format("n3", writable=True)
    with pytest.raises(UsageError, match="unknown results format 'docx'"):
        formats.results_format("docx")


def test_content_negotiation_offers_come_from_the_registry() -> None:
    assert [o.media_type for o in conneg.RESULT_OFFERS] == [
        f.media_type for f in formats.RESULTS_FORMATS
    ]
    assert conneg.by_format_name("ttl", conneg.GRAPH_OFFERS) == "text/turtle"
    assert conneg.by_format_name("json", conneg.GRAPH_OFFERS) == "application/ld+json"
    assert conneg.by_format_name("json", conneg.RESULT_OFFERS) == conneg.JSON
    assert conneg.by_format_name("srx", conneg.RESULT_OFFERS) == conneg.XML
    assert conneg.by_format_name("rdf+xml", conneg.GRAPH_OFFERS) == "application/rdf+xml"
    assert conneg.by_format_name("html", conneg.PAGE_OFFERS) == conneg.HTML
    assert conneg.by_format_name("docx", conneg.RESULT_OFFERS) is None


RESULT_QUERIES = [
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o",
    "SELECT ?paper ?date WHERE { ?paper a <https://w3id.org/kg/ontology#Paper> "
    "OPTIONAL { ?paper <http://purl.org/dc/terms/date> ?date } } ORDER BY ?paper",
    "ASK { ?s ?p ?o }",
    "ASK { <urn:nothing> ?p ?o }",
]


@pytest.mark.parametrize("fmt", formats.RESULTS_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("sparql", RESULT_QUERIES)
def test_results_written_by_the_cli_are_the_bytes_the_server_streams(
    seed_store: GraphStore, fmt: formats.Format, sparql: str
) -> None:
    """One results writer: kg's results (from the store, a remote endpoint or a --limit)
    are serialised by Oxigraph itself, byte for byte what a query streams natively."""
    native = io.BytesIO()
    seed_store.query_into(sparql, native, results_type=fmt.media_type, graph_type="text/turtle")
    assert serialize_results(seed_store.query(sparql), fmt.name) == native.getvalue()


def test_awkward_terms_survive_the_results_writer() -> None:
    tab = Term("literal", "a\tb\n\"c\" \\u0022", lang="en")
    typed = Term("literal", "3", datatype="http://www.w3.org/2001/XMLSchema#integer")
    result = SelectResult(["x", "y"], [(tab, None), (Term("bnode", "b0"), typed)])
    back = json.loads(serialize_results(result, "json"))
    assert back["results"]["bindings"][0] == {
        "x": {"type": "literal", "value": "a\tb\n\"c\" \\u0022", "xml:lang": "en"}
    }
    assert back["results"]["bindings"][1]["y"]["datatype"].endswith("#integer")
    assert serialize_results(SelectResult([], []), "csv") == b"\r\n"


def test_terms_pickle_as_their_fields() -> None:
    """Query results cross the server's worker pipes pickled (Term.__reduce__)."""
    terms = [
        Term("uri", "https://w3id.org/kg/id/paper/x"),
        Term("literal", "7.5", "http://www.w3.org/2001/XMLSchema#decimal"),
        Term("literal", "Aufmerksamkeit", lang="de"),
        Term("bnode", "b0"),
        Term("triple", "<a> <b> <c>"),
    ]
    result = SelectResult(["t", "u"], [(t, None) for t in terms])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(result, protocol))
        assert back == result
        assert [(t.kind, t.value, t.datatype, t.lang) for t, _ in back.rows] == [
            (t.kind, t.value, t.datatype, t.lang) for t in terms
        ]
