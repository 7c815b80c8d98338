"""The SPARQL scanner the server uses to refuse updates and SERVICE/LOAD calls before running.

Properties over arbitrary text: whatever sits inside a string literal or a comment is never
read as a keyword; the real query files are classified as pyoxigraph parses them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.query.named import load_query, sparql_term
from kg.rdf.engine import select_variables
from kg.rdf.results import Term
from kg.rdf.sparql_scan import Target, host_allowed, scan, tokens, unescape_codepoints
from kg.search.sparql import SERVICE_IRI, uses_search

QUERY_FILES = sorted(Path("queries").glob("*.rq"))
# Text, often built from the pieces that could fool a scanner, but without `\u` escapes:
# SPARQL processes those before parsing, anywhere (tested apart).
_PIECES = [
    '"',
    "'",
    '"""',
    "\\",
    "#",
    "<",
    ">",
    "{",
    "}",
    " ",
    "\n",
    "SERVICE",
    "service",
    "LOAD",
    "INSERT",
    "FROM",
    "<http://evil.example/>",
    "e:x",
    "?v",
]
free_text = st.one_of(
    st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
).filter(lambda s: "\\u" not in s and "\\U" not in s)


@given(free_text)
def test_nothing_inside_a_string_literal_is_a_keyword(text: str) -> None:
    literal = sparql_term(Term("literal", text))
    shape = scan(f"SELECT ?s WHERE {{ ?s ?p {literal} }}")
    assert shape.form == "SELECT" and not shape.is_update
    assert shape.services == () and shape.loads == () and not shape.has_dataset


@given(free_text.map(lambda s: s.replace("\n", " ").replace("\r", " ")))
def test_nothing_inside_a_comment_is_a_keyword(text: str) -> None:
    shape = scan(f"# {text}\nASK {{ ?s ?p ?o }} # {text}")
    assert shape.form == "ASK" and shape.services == () and not shape.is_update


@given(st.sampled_from(["SERVICE", "service", "SeRvIcE"]), st.booleans())
def test_service_is_found_in_any_case_and_with_silent(keyword: str, silent: bool) -> None:
    silently = "SILENT " if silent else ""
    shape = scan(f"SELECT * {{ {keyword} {silently}<http://a.example/q> {{ ?s ?p ?o }} }}")
    assert shape.services == (Target("http://a.example/q"),)


def test_escaped_keywords_and_iris_count_as_what_they_unescape_to() -> None:
    assert unescape_codepoints("\\U00000053ERVICE") == "SERVICE"
    shape = scan("SELECT * { \\u0053ERVICE <http://a.example/> { } }")
    assert shape.services == (Target("http://a.example/"),)
    hidden = scan("SELECT * { SERVICE <http://evil\\u002Eexample/> { } }")
    # Both readings are kept; the raw one has an odd host, so an allow list refuses it.
    assert Target("http://evil.example/") in hidden.services
    assert not all(host_allowed(t, frozenset({"good.example"})) for t in hidden.services)


def test_updates_and_their_targets() -> None:
    shape = scan("PREFIX d: <http://d.example/>\nLOAD SILENT d:x.ttl INTO GRAPH <g:1> ; DROP ALL")
    assert shape.is_update and shape.form is None
    assert shape.loads == (Target("http://d.example/x.ttl"),)
    assert scan("WITH <g:1> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }").is_update


def test_host_allow_list() -> None:
    allowed = frozenset({"query.wikidata.org"})
    assert host_allowed(Target("https://query.wikidata.org/sparql"), allowed)
    assert not host_allowed(Target("https://query.wikidata.org.evil.example/"), allowed)
    assert not host_allowed(Target("file:///etc/passwd"), frozenset({"*"}))
    assert host_allowed(Target(None), frozenset({"*"}))


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_real_query_files_are_classified_as_pyoxigraph_parses_them(path: Path) -> None:
    query = load_query(path)
    shape = scan(query.sparql)
    projected = select_variables(query.sparql)  # pyoxigraph: a list for SELECT only
    assert (shape.form == "SELECT") == (projected is not None)
    assert shape.form in ("SELECT", "CONSTRUCT", "ASK", "DESCRIBE")
    assert not shape.is_update
    # The only SERVICE a query file may call is kg's own search, which kg evaluates itself.
    searches = (Target(SERVICE_IRI),) if uses_search(query.sparql) else ()
    assert shape.services == searches


def test_tokens_keep_iris_strings_and_names_whole() -> None:
    kinds = [k for k, _ in tokens('<http://x/#a> "b # c" ex:SERVICE ?SERVICE @en-GB 1.5e3')]
    assert kinds == ["iri", "string", "pname", "var", "lang", "number"]
