"""`/search` for browsers: the hits as a page (templates/search.html, no script)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kg.serve.linked_data import local_href
from kg.serve.render import render as render_template


def hit_context(hit: Mapping[str, Any], base: str) -> dict[str, Any]:
    """One hit as the template shows it: a link only to this server's entity pages."""
    iri = str(hit["iri"])
    meta: list[str] = []
    if hit.get("type") == "paper":
        tasks = ", ".join(str(t) for t in hit.get("tasks") or [])
        bits = [str(hit.get("year") or ""), tasks, "has code" if hit.get("has_code") else ""]
        meta = [b for b in bits if b]
    return {
        "type": str(hit["type"]),
        "item": {"href": local_href(iri, base), "label": str(hit["label"]) or iri, "iri": iri},
        "score": float(hit["score"]),
        "meta": meta,
        "snippet": str(hit.get("snippet") or ""),
        "marks": list(hit.get("marks") or []),
    }


def render(
    query: str,
    type_: str | None,
    hits: Sequence[Mapping[str, Any]],
    base: str,
    sources: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The hits page (`sources`: the footer's, see kg.serve.story.sources)."""
    return render_template(
        "search.html",
        title=query,
        search_query=query,
        search_type=type_,
        hits=[hit_context(h, base) for h in hits],
        sources=list(sources),
    )
