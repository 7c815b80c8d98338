"""Leaderboard pages: `/leaderboard/{task}/{dataset}`, its chart and its history.

* `/leaderboard/{task}/{dataset}`: one table, a row per model and paper and a column per
  metric (kg.query.board_table), sorted by any metric in its direction (`?sort=`, links in
  the column heads; default the metric most rows report) and filtered (`?code=1`,
  `?hide_flagged=1`, `?hide_extra=1`), all server-side; a best-so-far chart per metric
  drawn in the page as SVG (kg.serve.chart, `_chart.svg`); the snapshot date and the
  licence and attribution of the table. Asked for RDF (Accept or `?format=`),
  the same path answers the leaderboard's statements, as every entity does.
* `…/chart.svg?metric=…`: the chart alone, for embedding elsewhere, attribution inside.
* `…/history.json?metric=…`: the series behind the chart (the objects of `kg leaderboard
  --history --format json`).
* `…/result/{id}`: a result of a row that names no paper, as an entity page.

The rows come from the four named queries of kg.query.leaderboard, run in the worker pool
at once; `build` ranks them exactly as `kg leaderboard` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kg.errors import NotFoundError, ParameterError
from kg.library.results import json_text
from kg.query.board_table import Filters, default_metric, rows, says_extra, sort_rows
from kg.query.leaderboard import (
    CODE,
    FLAGS,
    RESULTS,
    SOURCE,
    Leaderboard,
    Section,
    Source,
    build,
    leaderboard_queries,
)
from kg.query.named import sparql_term
from kg.rdf.results import SelectResult, Term
from kg.serve import conneg
from kg.serve.chart import best_so_far_chart
from kg.serve.linked_data import iri_for_path, local_href
from kg.serve.pages.respond import NOSNIFF, SVG_CSP, StoreVersionCache, html_response
from kg.serve.pages.rows import text_of
from kg.serve.pool import QueryPool
from kg.serve.render import attribution_name, licence_name, render

#: A request handler: the server's own `entity` answers a leaderboard's RDF forms.
Handler = Callable[[Request], Awaitable[Response]]

_TAILS = ("chart.svg", "history.json")
CHART_WIDTH = 940  # the page's column, and chart.svg's: one layout, the same labels


def split_path(raw_path: str) -> tuple[str, str, str | None]:
    """(task key, dataset key, tail) of a raw `/leaderboard/…` path, still percent-encoded;
    the tail is `chart.svg`, `history.json`, `result/<id>` or None.

    >>> split_path("/leaderboard/image-classification/imagenet/chart.svg")
    ('image-classification', 'imagenet', 'chart.svg')
    >>> split_path("/leaderboard/t/semeval-2018/general/result/0a1b")
    ('t', 'semeval-2018/general', 'result/0a1b')
    """
    parts = raw_path.strip("/").split("/")[1:]
    tail: str | None = None
    if parts and parts[-1] in _TAILS:
        tail = parts.pop()
    elif len(parts) >= 4 and parts[-2] == "result":
        tail = "result/" + parts.pop()
        parts.pop()
    if len(parts) < 2 or len(parts) > 3 or not all(parts):
        raise NotFoundError(
            f"{raw_path} names no leaderboard: use /leaderboard/<task>/<dataset>"
        )
    return parts[0], "/".join(parts[1:]), tail


def _bindings(base: str, task_key: str, dataset_key: str) -> dict[str, Term]:
    terms = {
        "task": Term("uri", f"{base}task/{task_key}"),
        "dataset": Term("uri", f"{base}dataset/{dataset_key}"),
    }
    for term in terms.values():
        try:
            sparql_term(term)
        except ParameterError:
            raise NotFoundError(f"{term.value} is no IRI kg could hold") from None
    return terms


def labels_query(bindings: dict[str, Term]) -> str:
    """The names of the leaderboard's task and dataset (`which` is "task" or "dataset")."""
    task, dataset = sparql_term(bindings["task"]), sparql_term(bindings["dataset"])
    return (
        "SELECT ?which (MIN(STR(?l)) AS ?label) WHERE { "
        f'VALUES (?which ?x) {{ ("task" {task}) ("dataset" {dataset}) }} '
        "?x <http://www.w3.org/2000/01/rdf-schema#label> ?l } GROUP BY ?which"
    )


class Rendered:
    """What the server made of one leaderboard at one store version: the board, the names
    of its task and dataset, and its page and charts once asked for. A leaderboard changes
    only when the store does, so a warm request renders nothing (the pool's generation
    moves with every new snapshot)."""

    def __init__(self, board: Leaderboard, labels: dict[str, str] | None = None) -> None:
        self.board = board
        self.labels = labels or {}  # "task", "dataset" -> its rdfs:label
        self.outputs: dict[tuple[str, str], str] = {}  # (form, metric) -> body

    def output(self, form: str, metric: str, make: Any) -> str:
        key = (form, metric)
        if key not in self.outputs:
            self.outputs[key] = make()
        return self.outputs[key]


async def fetch(pool: QueryPool, base_iri: str, bindings: dict[str, Term]) -> Rendered:
    """The leaderboard and the names of its task and dataset, its four queries and the
    names' one run in the worker pool at once."""
    texts = leaderboard_queries(bindings)
    names = (RESULTS, CODE, SOURCE, FLAGS)
    *rows, named = await asyncio.gather(
        *(pool.result(texts[n]) for n in names), pool.result(labels_query(bindings))
    )
    results, code, source, flags = rows
    assert isinstance(results, SelectResult) and isinstance(code, SelectResult)
    assert isinstance(source, SelectResult) and isinstance(flags, SelectResult)
    board = build(bindings, base_iri, results, code, source, flags)
    labels = {text_of(r, "which"): text_of(r, "label") for r in named.term_rows()}
    return Rendered(board, {k: v for k, v in labels.items() if v})


async def cached(
    pool: QueryPool, base_iri: str, cache: StoreVersionCache[Rendered], bindings: dict[str, Term]
) -> Rendered:
    key = (pool.generation, bindings["task"].value, bindings["dataset"].value)
    found = cache.get(key)
    if found is None:
        found = await fetch(pool, base_iri, bindings)
        cache.put(key, found)
    return found


def _metric(request: Request, board: Leaderboard) -> Section:
    values = request.query_params.getlist("metric")
    unknown = [k for k in request.query_params if k != "metric"]
    if unknown:
        raise ParameterError(f"unknown parameter {unknown[0]!r}; this path takes metric")
    if len(values) > 1:
        raise ParameterError("parameter 'metric' is given more than once")
    if not values:  # the first metric; a leaderboard with no result charts nothing
        return board.sections[0] if board.sections else Section("no metric", "unknown", (), ())
    return board.section(values[0])


def attribution_line(board: Leaderboard) -> str | None:
    """The licence line a chart carries inside itself."""
    return sources_line(board.sources)


def sources_line(sources: Sequence[Source]) -> str | None:
    """Where data comes from and what its licence asks, in one line (a chart's, a feed's
    `rights`): archive, licence, snapshot and attribution of each source."""
    parts = []
    for s in sources:
        bits = [s.archive or attribution_name(s.attribution) or "source"]
        if s.licence:
            bits.append(licence_name(s.licence))
        if s.snapshot:
            bits.append(f"snapshot {s.snapshot}")
        if s.attribution:
            bits.append(s.attribution)
        parts.append(", ".join(bits))
    return ("Data: " + "; ".join(parts) + " · drawn by kg") if parts else None


def page_params(request: Request, board: Leaderboard) -> tuple[Section | None, Filters]:
    """The page's sort metric (`?sort=`, else the one most rows report) and its filters
    (`?code=1`, `?hide_flagged=1`, `?hide_extra=1`), checked."""
    known = ("format", "sort", *FILTERS)
    extra = [k for k in request.query_params if k not in known]
    if extra:
        raise ParameterError(
            f"unknown parameter {extra[0]!r}; a leaderboard page takes sort (a metric), "
            "code, hide_flagged and hide_extra (1 or 0)"
        )
    for name in ("sort", *FILTERS):
        if len(request.query_params.getlist(name)) > 1:
            raise ParameterError(f"parameter {name!r} is given more than once")
    flags = {}
    for name in FILTERS:
        value = request.query_params.get(name, "0")
        if value not in ("0", "1", "on", ""):
            raise ParameterError(f"parameter {name!r} takes 1 or 0, not {value[:40]!r}")
        flags[name] = value in ("1", "on")
    sort = request.query_params.get("sort")
    section = board.section(sort) if sort else default_metric(board)
    return section, Filters(flags["code"], flags["hide_flagged"], flags["hide_extra"])


#: The page's filters, as query parameters.
FILTERS = ("code", "hide_flagged", "hide_extra")


def _page_query(sort: str | None, filters: Filters) -> str:
    from urllib.parse import urlencode

    params = [("sort", sort)] if sort else []
    params += [(name, "1") for name, on in zip(FILTERS, _filter_values(filters), strict=True) if on]
    return "?" + urlencode(params) if params else "?"


def _filter_values(filters: Filters) -> tuple[bool, bool, bool]:
    return (filters.code, filters.hide_flagged, filters.hide_extra)


def board_chart(board: Leaderboard, section: Section, base: str, *, standalone: bool) -> Any:
    """The chart of one metric, the same for the page and `chart.svg` (the standalone one
    adds its title and attribution): each point links to its paper's page."""

    def link(paper: str | None) -> str | None:
        if not paper:
            return None
        return local_href(paper, base) or paper

    if standalone:
        return best_so_far_chart(
            section,
            title=f"{board.label}: {section.metric}",
            attribution=attribution_line(board),
            width=CHART_WIDTH,
            link=link,
        )
    return best_so_far_chart(section, width=CHART_WIDTH, link=link)


def page_context(
    board: Leaderboard,
    base: str,
    sort: Section | None = None,
    filters: Filters | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """What `leaderboard.html` shows: one table (a row per model and paper, a column per
    metric) sorted by `sort` (default: the metric most rows report) and filtered, and one
    chart per metric, the sort metric's first. The task and dataset are linked by their
    `labels` (their keys when they have none)."""
    labels = labels or {}
    filters = filters or Filters()
    sort = sort or default_metric(board)
    here = local_href(board.iri, base) or ""
    attribution = attribution_line(board)
    all_rows = rows(board)
    shown = [r for r in (sort_rows(all_rows, sort) if sort else all_rows) if filters.keeps(r)]
    columns: list[dict[str, Any]] = []
    for i, s in enumerate(board.sections):
        columns.append(
            {
                "section": s,
                "slug": f"metric-{i + 1}",
                "sorted": sort is not None and s.metric == sort.metric,
                "href": _page_query(s.metric, filters),
            }
        )
    table = []
    for r in shown:
        first = next(iter(r.cells.values()))
        sorted_on = r.cells.get(sort.metric) if sort else None
        table.append(
            {
                "row": r,
                "rank": sorted_on.rank if sorted_on is not None else None,
                "paper_href": local_href(r.paper, base) if r.paper else None,
                "result_href": local_href(first.result, base),
                "cells": [r.cells.get(c["section"].metric) for c in columns],
            }
        )
    charts = []
    for c in sorted(columns, key=lambda c: not c["sorted"]):
        sec: Section = c["section"]
        query = "?metric=" + _quote(sec.metric)
        charts.append(
            {
                "section": sec,
                "slug": c["slug"],
                "chart": board_chart(board, sec, base, standalone=False),
                "chart_href": f"{here}/chart.svg{query}",
                "history_href": f"{here}/history.json{query}",
                "flagged": sum(1 for e in sec.entries if e.flags),
            }
        )
    toggles = []
    for name, on, words in zip(
        FILTERS,
        _filter_values(filters),
        ("with code only", "hide flagged results", "hide results with extra training data"),
        strict=True,
    ):
        if name == "hide_extra" and not says_extra(all_rows):
            continue  # the source says nothing of extra training data here
        toggles.append({"name": name, "on": on, "words": words})
    sort_name = sort.metric if sort else None

    def side(iri: str, which: str) -> dict[str, Any]:
        key = iri.removeprefix(base)
        return {
            "href": local_href(iri, base),
            "key": key,
            "label": labels.get(which) or key.removeprefix(f"{which}/"),
        }

    return {
        "title": board.label,
        "kind": "leaderboard",
        "iri": board.iri,
        "board": board,
        "task": side(board.task, "task"),
        "dataset": side(board.dataset, "dataset"),
        "sort": sort,
        "sort_name": sort_name,
        "columns": columns,
        "table": table,
        "total_rows": len(all_rows),
        "flagged_rows": sum(1 for r in all_rows if r.flags),
        "toggles": toggles,
        "filtered": any(_filter_values(filters)),
        "reset_href": _page_query(sort_name, Filters()),
        "charts": charts,
        "feeds": [
            {
                "name": f"the {which}'s",
                "title": f"New bests on {s['label']}",
                "href": f"{s['href']}/sota.atom",
            }
            for which, s in (
                ("task", side(board.task, "task")),
                ("dataset", side(board.dataset, "dataset")),
            )
            if s["href"]
        ],
        "attribution": attribution,
        "sources": [
            {
                "label": s.archive or "dump",
                "href": local_href(s.dump, base) if s.dump else None,
                "snapshot": s.snapshot,
                "licence": s.licence,
                "attribution": s.attribution,
            }
            for s in board.sources
        ],
    }


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def routes(running: Callable[[], QueryPool], base: str, entity: Handler) -> list[Route]:
    """The routes, over the server's running pool (`running()` raises until it is up), its
    base IRI and its entity handler. They take these, not the server: kg.serve.app imports
    this module."""
    cache: StoreVersionCache[Rendered] = StoreVersionCache()

    async def leaderboard(request: Request) -> Response:
        raw = (request.scope.get("raw_path") or request.url.path.encode()).decode("latin-1")
        task_key, dataset_key, tail = split_path(raw)
        # the IRI's own characters: a non-ASCII slug arrives percent-encoded (RFC 3987)
        board_iri = iri_for_path(f"/leaderboard/{task_key}/{dataset_key}", base)
        if board_iri is None:
            raise NotFoundError(f"{request.url.path} names no leaderboard kg could hold")
        task_key, _, dataset_key = board_iri.removeprefix(f"{base}leaderboard/").partition("/")
        if tail is not None and tail.startswith("result/"):
            return await entity(request)  # a result of a row with no paper
        if tail is None:
            formats = request.query_params.getlist("format")
            media = conneg.choose(formats, request.headers.get("accept"), conneg.PAGE_OFFERS)
            if media != conneg.HTML:
                return await entity(request)  # its statements, as RDF (or a 406)
        rendered = await cached(running(), base, cache, _bindings(base, task_key, dataset_key))
        board = rendered.board
        if tail == "history.json":
            section = _metric(request, board)
            body = rendered.output(
                "history",
                section.metric,
                lambda: json_text([p.as_json() for p in section.history]),
            )
            return Response(
                body,
                media_type="application/json",
                headers=NOSNIFF,
            )
        if tail == "chart.svg":
            section = _metric(request, board)

            def svg() -> str:
                chart = board_chart(board, section, base, standalone=True)
                return render("_chart.svg", chart=chart, chart_id="chart", standalone=True)

            return Response(
                rendered.output("chart", section.metric, svg),
                media_type="image/svg+xml",
                headers={"Content-Security-Policy": SVG_CSP, **NOSNIFF},
            )
        sort, filters = page_params(request, board)
        key = f"{sort.metric if sort else ''}\n{_filter_values(filters)}"
        page = rendered.output(
            "page",
            key,
            lambda: render(
                "leaderboard.html", page_context(board, base, sort, filters, rendered.labels)
            ),
        )
        return html_response(page)

    return [Route("/leaderboard/{rest:path}", leaderboard, methods=["GET"])]
