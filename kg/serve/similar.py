"""Similarity as a service: `/similar/{paper}`, `/shared/{a}/{b}` and `/suggest/{paper}`.

They answer the JSON of `kg similar --json`, `kg shared --json` and `kg suggest --json`,
computed in a query
worker by the same library calls (kg.graph.similarity), so the two always agree. A worker
keeps the loaded index in memory (kg.graph.cache): a warm call only ranks. The first call
on a store whose cache is missing or stale reads every link, which takes minutes at archive
size, so it gets `GRAPH_TIMEOUT` rather than the query timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kg.errors import ParameterError
from kg.graph.relations import (
    DEFAULT_BY,
    DEFAULT_METRIC,
    METRIC_NAMES,
    SUGGEST_KINDS,
    relation_names,
)
from kg.serve.pool import QueryPool
from kg.serve.render import JsonResponse

#: Seconds the first similarity call may take to build the index from the store.
GRAPH_TIMEOUT = 900.0
MAX_TOP = 1000
_PARAMS = {"by", "metric", "top"}


def _paper(request: Request, name: str) -> str:
    return unquote(str(request.path_params[name])).strip()


def _options(request: Request, allowed: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in allowed:
            raise ParameterError(
                f"unknown parameter {key!r}; this path takes {', '.join(sorted(allowed))}"
            )
        if key in out:
            raise ParameterError(f"parameter {key!r} is given more than once")
        out[key] = value
    return out


def similar_options(params: dict[str, str]) -> dict[str, Any]:
    """by, metric and top from query parameters, checked and worded as parameters."""
    by = params.get("by", DEFAULT_BY)
    relation_names(by)  # raises naming the relation and the choices
    metric = params.get("metric", DEFAULT_METRIC).strip().lower()
    if metric not in METRIC_NAMES:
        raise ParameterError(f"metric={metric!r} is unknown; use one of: {', '.join(METRIC_NAMES)}")
    text = params.get("top", "10").strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_TOP:
        raise ParameterError(f"top={text!r} must be a whole number from 1 to {MAX_TOP}")
    return {"by": by, "metric": metric, "top": int(text)}


def suggest_options(params: dict[str, str]) -> dict[str, Any]:
    """kind and top from query parameters, checked and worded as parameters."""
    kind = params.get("kind")
    if kind is not None:
        kind = kind.strip().lower()
        if kind not in SUGGEST_KINDS:
            raise ParameterError(
                f"kind={kind[:40]!r} is unknown; use one of: {', '.join(SUGGEST_KINDS)}"
            )
    text = params.get("top", "10").strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_TOP:
        raise ParameterError(f"top={text[:20]!r} must be a whole number from 1 to {MAX_TOP}")
    return {"kind": kind, "top": int(text)}


def routes(running: Callable[[], QueryPool], base_iri: str) -> list[Route]:
    """The routes, over the server's running pool (`running()` raises until it is up) and
    its base IRI. They take these, not the server: kg.serve.app imports this module."""

    async def similar(request: Request) -> Response:
        options = similar_options(_options(request, _PARAMS))
        data = await running().graph(
            "similar",
            GRAPH_TIMEOUT,
            paper=_paper(request, "paper"),
            base_iri=base_iri,
            **options,
        )
        return JsonResponse(data)

    async def shared(request: Request) -> Response:
        by = _options(request, {"by"}).get("by", "all")
        relation_names(by)
        data = await running().graph(
            "shared",
            GRAPH_TIMEOUT,
            a=_paper(request, "a"),
            b=_paper(request, "b"),
            base_iri=base_iri,
            by=by,
        )
        return JsonResponse(data)

    async def suggest(request: Request) -> Response:
        options = suggest_options(_options(request, {"kind", "top"}))
        data = await running().graph(
            "suggest",
            GRAPH_TIMEOUT,
            paper=_paper(request, "paper"),
            base_iri=base_iri,
            **options,
        )
        return JsonResponse(data)

    return [
        Route("/similar/{paper:path}", similar, methods=["GET"]),
        Route("/suggest/{paper:path}", suggest, methods=["GET"]),
        Route("/shared/{a}/{b:path}", shared, methods=["GET"]),
    ]
