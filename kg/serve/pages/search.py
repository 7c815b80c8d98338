"""`/search` for browsers: one page of hits (templates/search.html, no script).

`context` gathers what the page shows (the JSON answer carries the same `links`); `render`
fills the template with it: the query; "hits 11–20 of 789"; the class filter with the number
of hits of each class (`classes`: each with its count, its link, and whether it is the one
shown); each hit with its class label, its title linked to its entity page, its score, the
paper details (year, tasks, code) and its snippet with the matched words marked; links to
the previous and next pages (`links`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from kg.rdf.results import Paged
from kg.search import CLASSES
from kg.serve.linked_data import local_href
from kg.serve.render import render as render_template


def search_href(query: str, type_: str | None, page: int, limit: int) -> str:
    """The `/search` address of one page (the default page and limit left out)."""
    params: list[tuple[str, str]] = [("q", query)]
    if type_:
        params.append(("type", type_))
    if page != 1:
        params.append(("page", str(page)))
    if limit != 10:
        params.append(("limit", str(limit)))
    return "/search?" + urlencode(params)


def context(
    query: str,
    type_: str | None,
    results: Paged,
    hits: Sequence[Mapping[str, object]],
    base: str,
) -> dict[str, Any]:
    """What the page shows, as data (hits as `StoreSearch.described` gives them)."""
    limit = results.limit
    shown = []
    for hit in hits:
        iri = str(hit["iri"])
        details = []
        if hit.get("type") == "paper":
            tasks = ", ".join(str(t) for t in hit.get("tasks") or [])  # type: ignore[attr-defined]
            details = [str(hit.get("year") or ""), tasks, "has code" if hit.get("has_code") else ""]
        shown.append({
            **hit,
            "href": local_href(iri, base),
            "details": [d for d in details if d],
        })
    classes = [
        {"type": None, "count": sum(results.counts.values()), "selected": type_ is None,
         "href": search_href(query, None, 1, limit)}
    ] + [
        {"type": kind, "count": results.counts.get(kind, 0), "selected": kind == type_,
         "href": search_href(query, kind, 1, limit)}
        for kind in CLASSES if results.counts.get(kind) or kind == type_
    ]
    links = {
        "self": search_href(query, type_, results.page, limit),
        "previous": search_href(query, type_, results.page - 1, limit)
        if results.has_previous else None,
        "next": search_href(query, type_, results.page + 1, limit) if results.has_next else None,
    }
    return {
        "query": query,
        "type": type_,
        "page": results.page,
        "pages": results.pages,
        "limit": limit,
        "total": results.total,
        "first": results.first,
        "last": results.first + len(hits) - 1 if hits else 0,
        "classes": classes,
        "hits": shown,
        "links": links,
    }


def render(page: Mapping[str, Any], sources: Sequence[Mapping[str, Any]] = ()) -> str:
    """The hits page (templates/search.html; `sources`: the footer's, see
    kg.serve.pages.provenance.sources)."""
    return render_template(
        "search.html",
        title=page["query"],
        search_query=page["query"],
        search_type=page["type"],
        page=page,
        hits=[hit_context(h) for h in page["hits"]],
        sources=list(sources),
    )


def hit_context(hit: Mapping[str, Any]) -> dict[str, Any]:
    """One hit as the template shows it: a link only to this server's entity pages."""
    iri = str(hit["iri"])
    return {
        "type": str(hit["type"]),
        "item": {"href": hit["href"], "label": str(hit["label"]) or iri, "iri": iri},
        "score": float(hit["score"]),
        "match": str(hit.get("match") or "text"),
        "meta": list(hit["details"]),
        "snippet": str(hit.get("snippet") or ""),
        "marks": list(hit.get("marks") or []),
    }
