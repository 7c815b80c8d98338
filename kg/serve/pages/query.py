"""The query pages: a named query's answer as a page (`/queries/NAME` opened in a
browser: the rows as a table, each IRI linked like the entity pages link it, and a download
link per format), the list of named queries (`/queries`), and the query editor (`/query`,
YASGUI with the named queries as examples)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kg.errors import KgError
from kg.query.named import NamedQuery, bind, with_values
from kg.rdf.results import AskResult, GraphResult, SelectResult
from kg.rdf.sparql_scan import scan
from kg.rdf.vocab import QUERY_PREFIXES
from kg.resources import static_dir
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



def shape_form(sparql: str) -> str | None:
    """SELECT, ASK, CONSTRUCT or DESCRIBE: what the page offers to download it as."""
    try:
        return scan(sparql).form
    except KgError:
        return None


def listed(queries: Mapping[str, NamedQuery]) -> list[dict[str, Any]]:
    """The named queries as `/queries` lists them: each linked with its examples bound."""
    return [
        {
            "name": q.name,
            "summary": q.summary,
            "href": f"/queries/{q.name}"
            + query_string({p.name: p.example for p in q.params if p.example}),
            "params": [{"name": p.name, "kind": p.describe()} for p in q.params],
        }
        for q in queries.values()
    ]


def editor(queries: Mapping[str, NamedQuery], base: str, public_base: str | None) -> str:
    """The query editor's page: static/index.html with the named queries (their examples
    bound) as its examples, the prefixes, and where entity links lead."""
    template = (static_dir() / "index.html").read_text(encoding="utf-8")
    examples = []
    for q in queries.values():
        try:
            bound = bind(q, {p.name: p.example for p in q.params}, base)
            text = with_values(q.sparql, bound)
        except KgError:
            text = q.sparql
        examples.append({**q.as_json(), "form": shape_form(q.sparql), "query": text.strip() + "\n"})
    data = json.dumps(
        {
            "examples": examples,
            "prefixes": QUERY_PREFIXES,
            "base": base,
            "publicBase": public_base,
        },
        ensure_ascii=True,
    )
    # Inside <script type="application/json"> only "</" could end the block early.
    data = data.replace("</", "<\\/").replace("<!--", "<\\!--")
    return template.replace("{{EXAMPLES_JSON}}", data)
