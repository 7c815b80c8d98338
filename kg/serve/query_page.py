"""A named query's answer as a page (`/queries/NAME` opened in a browser): the rows as a
table, each IRI linked like the entity pages link it, and a download link per format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kg.query.named import NamedQuery
from kg.rdf.results import AskResult, GraphResult, SelectResult
from kg.serve import conneg
from kg.serve.linked_data import Description, Labeller
from kg.serve.render import query_string

#: Rows a page shows (the downloads carry all of them).
MAX_ROWS = 1000
_RESULT_NAMES = ("json", "xml", "csv", "tsv")
_GRAPH_NAMES = ("turtle", "ntriples", "jsonld", "rdfxml")


def downloads(path: str, values: Mapping[str, str], graph: bool) -> list[dict[str, str]]:
    """One link per format the endpoint serves the answer in."""
    names = _GRAPH_NAMES if graph else _RESULT_NAMES
    offers = {o.media_type for o in (conneg.GRAPH_OFFERS if graph else conneg.RESULT_OFFERS)}
    out = []
    for name in names:
        media = (
            conneg.by_format_name(name, conneg.GRAPH_OFFERS if graph else conneg.RESULT_OFFERS)
            or name
        )
        if media in offers:
            out.append({"name": name, "href": path + query_string({**values, "format": name})})
    return out


def context(
    named: NamedQuery,
    values: Mapping[str, str],
    form: str | None,
    answer: Any,
    base: str,
    path: str,
) -> dict[str, Any]:
    view = Labeller(Description(base), base)
    graph = isinstance(answer, GraphResult)
    ctx: dict[str, Any] = {
        "title": named.name,
        "name": named.name,
        "summary": named.summary,
        "description": named.description,
        "form": form,
        "values": dict(values),
        "downloads": downloads(path, values, graph),
        "sparql_href": f"{path}/sparql" + query_string(values),
        "variables": [],
        "rows": [],
        "total": 0,
        "boolean": None,
        "triples": None,
        "sources": [],
    }
    if isinstance(answer, SelectResult):
        ctx["variables"] = list(answer.variables)
        ctx["total"] = len(answer.rows)
        ctx["rows"] = [
            [view.value(t) if t is not None else None for t in row]
            for row in answer.rows[:MAX_ROWS]
        ]
    elif isinstance(answer, AskResult):
        ctx["boolean"] = answer.value
    elif graph:
        lines = answer.ntriples.splitlines()
        ctx["total"] = len(lines)
        ctx["triples"] = "\n".join(lines[:MAX_ROWS])
    return ctx

