"""The page of an entity (`/paper/…`, `/task/…`, `/graph/record/…`): its kind from the IRI
(and the entity's type), that kind's sources gathered in the worker pool at once, and its
template rendered with the context. Asked for RDF (Accept or `?format=`), the same path
answers the entity's statements (kg.serve.linked_data).

`answer` is the route's handler: it reads the entity's description (`describe`) and, for
a paper, hands it to the paper's page (kg.serve.pages.paper.page), which gathers its own
sources meanwhile, in the same round of the workers; `entity_page` makes the other kinds'.
Every page also gets its `sources` (kg.serve.pages.provenance: the records and dumps that
state it) for the footer, and the description's statements.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from kg.errors import NotFoundError, UsageError
from kg.export.rdfio import graph_text
from kg.rdf.formats import rdf_format
from kg.rdf.results import AskResult, GraphResult, SelectResult
from kg.serve import conneg, linked_data
from kg.serve.linked_data import Description, Labeller, page_context
from kg.serve.pages import items, paper, provenance
from kg.serve.pages.feeds import feed_href
from kg.serve.pages.respond import html_response
from kg.serve.pages.rows import kind_of, page_number, typed
from kg.serve.render import render

#: Page kinds with a template of their own, by the first segment of the IRI's path.
TEMPLATES = {
    "paper": "paper.html",
    **{kind: f"{kind}.html" for kind in items.BUILDERS},
}


#: Page kinds drawn from a whole source, made once a store version (`answer`'s `keep`): a
#: dump's page counts its entries (585,000 for the archive's papers: 246 ms each time).
KEPT_KINDS = frozenset({"dump"})

Keep = Callable[[str, str, Callable[[], Awaitable[str]]], Awaitable[str]]


async def answer(request: Request, pool: Any, base: str, keep: Keep | None = None) -> Response:
    """GET of an entity's path: its page for a browser, else its statements as RDF. With
    `keep` (the server's pages of one store version), the pages of `KEPT_KINDS` are made
    once a store version."""
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    iri = linked_data.iri_for_path(raw_path.decode("latin-1"), base)
    if iri is None:
        raise NotFoundError(f"{request.url.path} names nothing here")
    formats = request.query_params.getlist("format")
    media_type = conneg.choose(formats, request.headers.get("accept"), conneg.PAGE_OFFERS)
    if media_type is None:
        return PlainTextResponse(
            f"an entity is offered as {conneg.offered(conneg.PAGE_OFFERS)}\n", status_code=406
        )
    html = media_type == conneg.HTML
    if not html:
        ntriples = await statements(pool, iri)
        return Response(
            graph_text(ntriples, rdf_format(media_type).name),
            media_type=conneg.content_type(media_type),
            headers={"Vary": "Accept"},
        )
    kind = kind_of(iri, base)
    if keep is not None and kind in KEPT_KINDS:
        number = _page(request)

        async def make() -> str:
            desc = await describe(pool, iri, linked_data.INCOMING_HTML_LIMIT)
            return await entity_page(pool, desc, base, number=number)

        return html_response(await keep(kind, f"{iri} {number}", make))
    # The description, and (for a paper) the paper's sources meanwhile: the workers that
    # would wait for the description run the paper's queries (one round trip less).
    reading = asyncio.ensure_future(describe(pool, iri, linked_data.INCOMING_HTML_LIMIT))
    try:
        context = None
        if kind == "paper":
            context = await paper.page(pool, iri, base, reading)
        desc = await reading
    finally:
        if not reading.done():
            reading.cancel()
    if context is not None:
        context["kind"] = "paper"
        return html_response(render("paper.html", context))
    return html_response(await entity_page(pool, desc, base, number=_page(request)))


def _page(request: Request) -> int:
    """The `page` parameter's number (0 when absent)."""
    pages = request.query_params.getlist("page")
    if len(pages) > 1:
        raise UsageError(f"give the 'page' parameter once, not {len(pages)} times")
    return page_number(pages[0] if pages else None)


async def describe(pool: Any, iri: str, cap: int) -> Description:
    """The entity's description for its page: its statements (or a graph's contents, with
    their labels) and those pointing at it, up to `cap` (NotFoundError: none at all)."""
    graph, outgoing, incoming = await asyncio.gather(
        pool.result(linked_data.is_graph_query(iri)),
        pool.result(linked_data.outgoing_query(iri)),
        pool.result(linked_data.incoming_query(iri, labels=True, limit=cap + 1)),
    )
    is_graph = isinstance(graph, AskResult) and graph.value
    if is_graph:
        outgoing = await pool.result(linked_data.graph_rows_query(iri))
        incoming = SelectResult(["s", "p"], [])
    assert isinstance(outgoing, SelectResult) and isinstance(incoming, SelectResult)
    desc = linked_data.describe(iri, outgoing, incoming, cap + 1)
    if desc.empty:
        raise NotFoundError(f"the graph holds nothing about {iri}")
    desc.is_graph = is_graph
    return desc


async def statements(pool: Any, iri: str) -> str:
    """The entity's statements as sorted N-Triples (a graph's: its contents)."""
    cap = linked_data.INCOMING_RDF_LIMIT
    graph, outgoing, incoming = await asyncio.gather(
        pool.result(linked_data.is_graph_query(iri)),
        pool.result(linked_data.outgoing_query(iri)),
        pool.result(linked_data.incoming_query(iri, labels=False, limit=cap + 1)),
    )
    if isinstance(graph, AskResult) and graph.value:
        contents = await pool.result(linked_data.graph_contents_query(iri))
        assert isinstance(contents, GraphResult)
        return "".join(sorted(contents.ntriples.splitlines(keepends=True)))
    assert isinstance(outgoing, SelectResult) and isinstance(incoming, SelectResult)
    desc = linked_data.describe(iri, outgoing, incoming, cap + 1)
    if desc.empty:
        raise NotFoundError(f"the graph holds nothing about {iri}")
    return desc.ntriples()


async def entity_page(pool: Any, desc: Description, base: str, *, number: int = 0) -> str:
    """The page for a described entity (a named graph's page when it names a graph)."""
    is_graph = desc.is_graph
    view = Labeller(desc, base)
    context: dict[str, Any] = page_context(desc, view, is_graph=is_graph)
    iri = desc.iri
    kind = kind_of(iri, base)
    template = "entity.html"
    if is_graph:
        context.update(await items.build("graph", pool, view, number))
        template = "graph.html"
    elif kind == "paper" and typed(view, "Paper"):
        found = await paper.paper_story(pool, iri, base)
        context.update(paper.paper_context(view, found), folded=True)
        template = "paper.html"
    elif kind in items.BUILDERS:
        if kind in items.OWN_SOURCES:
            built = await items.build(kind, pool, view, number)
        else:  # the footer's sources beside the kind's queries, not after them
            built, footer = await asyncio.gather(
                items.build(kind, pool, view, number), provenance.entity_sources(pool, view)
            )
            built["sources"] = footer
        context.update(built, folded=True)
        template = TEMPLATES[kind]
        href = feed_href(iri, base) if kind in ("task", "dataset") else None
        if href:  # its new bests as an Atom feed (kg.serve.pages.feeds)
            context["feeds"] = [{"title": f"New bests on {context['title']}", "href": href}]
    if "sources" not in context:
        context["sources"] = await provenance.entity_sources(pool, view)
    context["kind"] = kind or "entity"
    return render(template, context)
