"""The HTML page of an entity: which template shows it, and the queries that fill it.

`entity_page` is the one entry point the server calls once it has read the entity's
description: it picks the page kind from the IRI (and the entity's type), runs that kind's
queries in the worker pool (all at once), and renders the kind's template with the context.
Every page also gets its `sources` (the records and dumps that state it: snapshot date,
licence, attribution) for the footer, and the description's statements.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kg.serve import kinds, story
from kg.serve.feeds import feed_href
from kg.serve.linked_data import Description, Labeller, page_context
from kg.serve.render import render

#: Page kinds with a template of their own, by the first segment of the IRI's path.
TEMPLATES = {
    "paper": "paper.html",
    **{kind: f"{kind}.html" for kind in kinds.BUILDERS},
}


async def entity_page(
    pool: Any,
    desc: Description,
    base: str,
    *,
    is_graph: bool = False,
    number: int = 0,
    early: story.PaperStory | None = None,
) -> str:
    """The page for a described entity (a named graph's page when `is_graph`)."""
    view = Labeller(desc, base)
    context: dict[str, Any] = page_context(desc, view, is_graph=is_graph)
    iri = desc.iri
    kind = story.kind_of(iri, base)
    template = "entity.html"
    if is_graph:
        context.update(await kinds.build("graph", pool, view, number))
        template = "graph.html"
    elif kind == "paper" and story.typed(view, "Paper"):
        found = early if early is not None else await story.paper_story(pool, iri, base)
        context.update(story.paper_context(view, found), folded=True)
        template = "paper.html"
    elif kind in kinds.BUILDERS:
        if kind in kinds.OWN_SOURCES:
            built = await kinds.build(kind, pool, view, number)
        else:  # the footer's sources beside the kind's queries, not after them
            built, rows = await asyncio.gather(
                kinds.build(kind, pool, view, number), pool.result(story.provenance_query(iri))
            )
            built["sources"] = story.sources(view, story.rows_of(rows))
        context.update(built, folded=True)
        template = TEMPLATES[kind]
        href = feed_href(iri, base) if kind in ("task", "dataset") else None
        if href:  # its new bests as an Atom feed (kg.serve.feeds)
            context["feeds"] = [{"title": f"New bests on {context['title']}", "href": href}]
    if "sources" not in context:
        rows = await pool.result(story.provenance_query(iri))
        context["sources"] = story.sources(view, story.rows_of(rows))
    context["kind"] = kind or "entity"
    return render(template, context)
