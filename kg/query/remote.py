"""A client for remote SPARQL 1.1 Protocol endpoints (Oxigraph, QLever, Virtuoso, GraphDB …).

The query goes out as an HTML form POST (`query=…`), which every SPARQL 1.1 server accepts.
The Accept header follows the query form, read by kg's SPARQL tokeniser: result formats
first for SELECT and ASK, RDF formats first for CONSTRUCT and DESCRIBE (Virtuoso honours
the order, so a results-first header gets s/p/o bindings back for a CONSTRUCT). The answer
is read by its content type, not by guessing: SPARQL JSON or XML results; N-Triples,
Turtle, RDF/XML, JSON-LD, N-Quads or TriG graphs; and s/p/o bindings for a CONSTRUCT from a
server that sends those anyway. Every way a remote call can fail ends in one
`EndpointError` (or `QueryTimeoutError`) that says what the server said, shortened, and
what to check, never in an empty result that looks like an answer.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from typing import Any

import httpx

from kg.errors import EndpointError, KgError, QueryTimeoutError, UsageError
from kg.rdf.engine import parse_to_ntriples
from kg.rdf.formats import find_rdf_format, find_results_format
from kg.rdf.query_text import with_declarations
from kg.rdf.results import AskResult, GraphResult, QueryResult, Row, SelectResult, Term
from kg.rdf.sparql_scan import scan

#: What kg reads for SELECT and ASK, best first.
RESULTS_ACCEPT = (
    "application/sparql-results+json, application/sparql-results+xml;q=0.9, "
    "application/json;q=0.5"
)
#: What kg reads for CONSTRUCT and DESCRIBE, best first.
GRAPH_ACCEPT = (
    "application/n-triples, text/turtle;q=0.9, application/rdf+xml;q=0.8, "
    "application/ld+json;q=0.7, application/n-quads;q=0.6, application/trig;q=0.6, "
    "text/plain;q=0.5"
)
#: For text whose form cannot be read: everything, results first.
ACCEPT = (
    "application/sparql-results+json, application/sparql-results+xml;q=0.9, "
    "application/n-triples;q=0.9, text/turtle;q=0.8, application/rdf+xml;q=0.5"
)
_TAGS = re.compile(r"<[^>]+>")
_MESSAGE_CHARS = 300


def _server_message(response: httpx.Response) -> str:
    """The server's own words about an error, shortened to one line."""
    text = response.text
    if "html" in response.headers.get("content-type", ""):
        text = html.unescape(_TAGS.sub(" ", text))
    text = " ".join(text.split())
    # Virtuoso repeats the whole query after its message: the user has it already.
    text = text.split(" SPARQL query: ", 1)[0]
    if len(text) > _MESSAGE_CHARS:
        text = text[:_MESSAGE_CHARS] + "…"
    return text or response.reason_phrase


def _term(obj: Any, url: str) -> Term:
    if not isinstance(obj, dict) or "type" not in obj or "value" not in obj:
        raise EndpointError(f"{url} sent a malformed SPARQL JSON term: {str(obj)[:80]}")
    return Term.from_json(obj)


def parse_sparql_json(body: bytes, url: str = "the endpoint") -> SelectResult | AskResult:
    """SPARQL 1.1 Query Results JSON as a kg result."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        tail = body[-200:].decode("utf-8", "replace").strip()
        raise EndpointError(
            f"{url} sent SPARQL JSON that does not parse ({exc}); the body ends with "
            f"{tail[-120:]!r}. A server that hits its own time limit after it started "
            "answering cuts the body short like this: raise its timeout or narrow the query"
        ) from None
    if not isinstance(data, dict) or "head" not in data:
        raise EndpointError(f"{url} sent JSON that is not a SPARQL result (no 'head')")
    if "boolean" in data:
        return AskResult(bool(data["boolean"]))
    head = data["head"]
    variables = head.get("vars", []) if isinstance(head, dict) else []
    bindings = data.get("results", {}).get("bindings")
    if not isinstance(variables, list) or not isinstance(bindings, list):
        raise EndpointError(f"{url} sent a SPARQL JSON result without vars or bindings")
    rows: list[Row] = []
    for binding in bindings:
        if not isinstance(binding, dict):
            raise EndpointError(f"{url} sent a malformed SPARQL JSON row")
        rows.append(tuple(_term(binding[v], url) if v in binding else None for v in variables))
    return SelectResult([str(v) for v in variables], rows)


_XML_NS = "{http://www.w3.org/2005/sparql-results#}"


def parse_sparql_xml(body: bytes, url: str = "the endpoint") -> SelectResult | AskResult:
    """SPARQL 1.1 Query Results XML as a kg result."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        raise EndpointError(
            f"{url} sent SPARQL XML that does not parse ({exc}). A server that hits its own "
            "time limit after it started answering cuts the body short like this"
        ) from None
    boolean = root.find(f"{_XML_NS}boolean")
    if boolean is not None:
        return AskResult((boolean.text or "").strip() == "true")
    head = root.find(f"{_XML_NS}head")
    results = root.find(f"{_XML_NS}results")
    if head is None or results is None:
        raise EndpointError(f"{url} sent XML that is not a SPARQL result (no head or results)")
    variables = [v.get("name", "") for v in head.findall(f"{_XML_NS}variable")]
    rows: list[Row] = []
    for result in results.findall(f"{_XML_NS}result"):
        cells: dict[str, Term] = {}
        for binding in result.findall(f"{_XML_NS}binding"):
            node = next(iter(binding), None)
            if node is None:
                raise EndpointError(f"{url} sent a SPARQL XML binding without a value")
            kind = node.tag.removeprefix(_XML_NS)
            text = node.text or ""
            if kind == "literal":
                lang = node.get("{http://www.w3.org/XML/1998/namespace}lang")
                cells[binding.get("name", "")] = Term("literal", text, node.get("datatype"), lang)
            elif kind in ("uri", "bnode"):
                cells[binding.get("name", "")] = Term(kind, text)  # type: ignore[arg-type]
            else:
                raise EndpointError(f"{url} sent a SPARQL XML term of unknown kind {kind!r}")
        rows.append(tuple(cells.get(v) for v in variables))
    return SelectResult(variables, rows)


def _bindings_as_graph(result: SelectResult, url: str) -> GraphResult:
    """A CONSTRUCT answered as s/p/o bindings (servers that put a results format first in
    their own preference do this) as the graph it stands for."""
    if [v.lower() for v in result.variables] != ["s", "p", "o"]:
        raise EndpointError(
            f"{url} answered a CONSTRUCT/DESCRIBE with a table of "
            f"{', '.join(result.variables) or 'no columns'}, not a graph"
        )
    lines = []
    for row in result.rows:
        if any(t is None for t in row):
            raise EndpointError(f"{url} sent a triple with an unbound part")
        lines.append(" ".join(t.n3() for t in row if t is not None) + " .\n")
    try:
        return GraphResult(parse_to_ntriples("".join(lines).encode("utf-8"), "ntriples"))
    except KgError as exc:
        raise EndpointError(f"{url} sent bindings that are no RDF triples: {exc}") from None


def check_http_url(url: str, what: str, of: str, path: str) -> None:
    """A UsageError unless `url` is an absolute http(s) URL with a host."""
    try:
        parsed = httpx.URL(url) if "://" in url else None
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(
            f"{url!r} is not {what}; give the full http(s) URL {of}, such as "
            f"http://localhost:7878{path}"
        )


@cache
def _client() -> httpx.Client:
    """The process's one HTTP client: its connections are kept for the next query, and
    its TLS context is built once (a client per request spent ~26 ms of CPU on that alone,
    ten times the rest of a small query's round trip)."""
    return httpx.Client(
        headers={"User-Agent": "kg (SPARQL 1.1 Protocol client)"}, follow_redirects=True
    )


class Endpoint:
    """One remote SPARQL endpoint, queried over the SPARQL 1.1 Protocol."""

    def __init__(self, url: str, *, timeout: float = 60.0) -> None:
        check_http_url(url, "an endpoint URL", "of the SPARQL endpoint", "/query")
        if timeout <= 0:
            raise UsageError(
                "{parameter} must be a positive number of seconds", parameter="timeout"
            )
        self.url = url
        self.timeout = timeout

    def query(self, sparql: str) -> QueryResult:
        """Run a query and return its result, or raise EndpointError / QueryTimeoutError.

        The endpoint is told the declarations of kg's prefixes the query uses and does not
        declare (kg's own engine knows them; another does not)."""
        sparql = with_declarations(sparql)
        form = scan(sparql).form
        graph = form in ("CONSTRUCT", "DESCRIBE")
        accept = GRAPH_ACCEPT if graph else RESULTS_ACCEPT if form else ACCEPT
        response = self._post(sparql, accept)
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        results = find_results_format(media_type) if media_type else None
        if results is not None and graph and media_type in results.media_aliases:
            results = None  # application/json or application/xml: RDF, for a graph query
        if results is not None and results.name in ("json", "xml"):
            if results.name == "xml":
                result = parse_sparql_xml(response.content, self.url)
            else:
                result = parse_sparql_json(response.content, self.url)
            if graph and isinstance(result, SelectResult):
                return _bindings_as_graph(result, self.url)
            return result
        rdf = find_rdf_format(media_type) if media_type else None
        if rdf is not None:
            fmt = rdf.name
            try:
                return GraphResult(parse_to_ntriples(response.content, fmt))
            except KgError as exc:
                raise EndpointError(
                    f"{self.url} sent {media_type} that does not parse: {exc}. A server that "
                    "hits its own time limit after it started answering cuts the body short"
                ) from None
        shown = media_type or "no content type"
        raise EndpointError(
            f"{self.url} answered with {shown}, not SPARQL results: is this the SPARQL "
            "endpoint itself (its URL often ends in /sparql or /query)?"
        )

    def _post(self, sparql: str, accept: str) -> httpx.Response:
        try:
            response = _client().post(
                self.url, data={"query": sparql}, headers={"Accept": accept}, timeout=self.timeout
            )
        except httpx.TimeoutException:
            raise QueryTimeoutError(
                f"{self.url} did not answer within {self.timeout:g} s; raise {{parameter}} or "
                "narrow the query",
                parameter="timeout",
            ) from None
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise EndpointError(
                f"cannot reach {self.url}: {reason}. Check the URL and that the endpoint is "
                "running and reachable from here"
            ) from None
        if response.status_code >= 400:
            raise EndpointError(
                f"{self.url} answered HTTP {response.status_code} "
                f"{response.reason_phrase}: {_server_message(response)}"
            )
        return response
