"""`/search` for browsers: the hits as a small page (no script), and the search form that the
query page and every entity page carry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kg.search.query import mark
from kg.serve.linked_data import _STYLE, _esc, local_href, search_form

_EXTRA_STYLE = """
form.kg-search{display:inline-flex;gap:.3rem;margin-left:1rem}
form.kg-search input[type=search]{width:18rem;padding:.15rem .4rem}
ol.hits li{margin:.7rem 0}.hits .t{color:#5b6570;font-size:12px;text-transform:uppercase;
margin-right:.4rem}.hits .s{color:#444;font-size:14px}mark{background:#fff2a8}
"""


def render(query: str, type_: str | None, hits: Sequence[Mapping[str, object]], base: str) -> str:
    """The hits page. Every value is escaped; links go only to this server's entity pages."""
    items = []
    for hit in hits:
        iri = str(hit["iri"])
        href = local_href(iri, base)
        label = _esc(str(hit["label"]) or iri)
        title = f'<a href="{_esc(href)}" title="{_esc(iri)}">{label}</a>' if href else label
        meta = ""
        if hit.get("type") == "paper":
            tasks = ", ".join(str(t) for t in hit.get("tasks") or [])  # type: ignore[attr-defined]
            bits = [str(hit.get("year") or ""), tasks, "has code" if hit.get("has_code") else ""]
            meta = " · ".join(_esc(b) for b in bits if b)
        marks = hit.get("marks") or []
        snippet = mark(str(hit.get("snippet") or ""), marks, "<mark>", "</mark>", _esc)  # type: ignore[arg-type]
        items.append(
            f'<li><span class="t">{_esc(str(hit["type"]))}</span>{title}'
            f' <span class="dt">{float(hit["score"]):.2f}</span>'  # type: ignore[arg-type]
            + (f'<div class="meta">{meta}</div>' if meta else "")
            + (f'<div class="s">{snippet}</div>' if snippet else "")
            + "</li>"
        )
    found = f"{len(hits)} hit{'s' if len(hits) != 1 else ''}" if hits else "no hits"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>{_esc(query)} · kg search</title>",
            f"<style>{_STYLE}{_EXTRA_STYLE}</style></head><body>",
            f'<header><a href="/">kg</a> · search {search_form(query, type_)}</header>',
            f'<h1>{_esc(query)}</h1><p class="meta" id="kg-found">{found}'
            + (f" among {_esc(type_)}s" if type_ else "")
            + "</p>",
            f'<ol class="hits">{"".join(items)}</ol>',
            "</body></html>\n",
        ]
    )
