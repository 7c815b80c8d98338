"""A client for remote SPARQL 1.1 Protocol endpoints (Oxigraph, QLever, Virtuoso, GraphDB …).

The query goes out as an HTML form POST (`query=…`), which every SPARQL 1.1 server accepts.
The answer is read by its content type, not by guessing from the query: SPARQL JSON for
SELECT/ASK, and N-Triples, Turtle or RDF/XML for CONSTRUCT/DESCRIBE. Every way a remote
call can fail ends in one `EndpointError` (or `QueryTimeoutError`) that says what the
server said and what to check, never in an empty result that looks like an answer.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import httpx

from kg.errors import EndpointError, KgError, QueryTimeoutError, UsageError
from kg.rdf.formats import find_rdf_format, results_format
from kg.rdf.results import AskResult, GraphResult, QueryResult, Row, SelectResult, Term
from kg.rdf.store import parse_to_ntriples

#: What kg can read, best first; the server picks what suits the query form.
ACCEPT = (
    "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8, "
    "application/rdf+xml;q=0.5"
)
_JSON_MEDIA_TYPES = (results_format("json").media_type, *results_format("json").media_aliases)
_TAGS = re.compile(r"<[^>]+>")
_MESSAGE_CHARS = 300


def _server_message(response: httpx.Response) -> str:
    """The server's own words about an error, shortened to one line."""
    text = response.text
    if "html" in response.headers.get("content-type", ""):
        text = html.unescape(_TAGS.sub(" ", text))
    text = " ".join(text.split())
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


class Endpoint:
    """One remote SPARQL endpoint, queried over the SPARQL 1.1 Protocol."""

    def __init__(self, url: str, *, timeout: float = 60.0) -> None:
        try:
            parsed = httpx.URL(url) if "://" in url else None
        except httpx.InvalidURL:
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise UsageError(
                f"{url!r} is not an endpoint URL; give the full http(s) URL of the SPARQL "
                "endpoint, such as http://localhost:7878/query"
            )
        if timeout <= 0:
            raise UsageError(
                "{parameter} must be a positive number of seconds", parameter="timeout"
            )
        self.url = url
        self.timeout = timeout

    def query(self, sparql: str) -> QueryResult:
        """Run a query and return its result, or raise EndpointError / QueryTimeoutError."""
        response = self._post(sparql)
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type in _JSON_MEDIA_TYPES:
            return parse_sparql_json(response.content, self.url)
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

    def _post(self, sparql: str) -> httpx.Response:
        try:
            response = httpx.post(
                self.url,
                data={"query": sparql},
                headers={"Accept": ACCEPT, "User-Agent": "kg (SPARQL 1.1 Protocol client)"},
                timeout=self.timeout,
                follow_redirects=True,
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
