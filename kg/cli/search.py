"""`kg search`: full-text search over the store's index (docs/search.md)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from kg.cli.app import command, emit, err, out, state
from kg.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kg.rdf.results import Term
    from kg.rdf.store import GraphStore
    from kg.search import StoreSearch


def store_search(store: GraphStore | None = None) -> StoreSearch:
    """The search over the CLI's store (its index opened, or rebuilt, on first use)."""
    from kg.search import StoreSearch

    path = None if state.memory else state.store_path
    return StoreSearch(store or state.store(), path)


def expand_search(sparql: str, bindings: Mapping[str, Term] | None = None) -> str:
    """The one place the CLI turns kg search blocks in SPARQL into VALUES (kg sparql and
    kg query). The index is opened only when the query holds such a block."""
    return store_search().expand(sparql, bindings)


@command(rich_help_panel="Query")
def search(
    query: Annotated[
        str | None,
        typer.Argument(help='Words, "a phrase", prefix* (all must match).', show_default=False),
    ] = None,
    type_: Annotated[
        str | None,
        typer.Option(
            "--type",
            "-t",
            help="Only hits of one class: paper|method|task|dataset|area|collection|author|"
            "repository.",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "--top", "-n", min=1, max=10_000, help="Hits per page.")
    ] = 10,
    page: Annotated[int, typer.Option("--page", "-p", min=1, help="Which page of hits.")] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the page as JSON: hits, total, counts per class.")
    ] = False,
    reindex: Annotated[
        bool, typer.Option("--reindex", help="Rebuild the search index from the store first.")
    ] = False,
) -> None:
    """Search titles, abstracts, names, descriptions and identifiers, best match first.

    An arXiv id, DOI, slug or owner/name finds its entity first, then whole-name matches,
    then the rest with the classes interleaved. Papers show their year, tasks and whether
    they have code. Examples:

      kg search "attention is not only a weight"

      kg search 2004.10102

      kg search 'transf*' --type method --limit 5 --page 2 --json
    """
    from kg.search import rebuild
    from kg.search.query import mark

    if query is None and not reindex:
        raise UsageError("give a QUERY to search for (or --reindex to rebuild the index)")

    store = state.store()
    if reindex:
        path = None if state.memory else state.store_path
        _, n = rebuild(store, path)
        if query is None:
            err.print(f"search index rebuilt: {n:,} entities", highlight=False)
            return
    found = store_search(store)
    assert query is not None
    results = found.find(query, type_, page=page, limit=limit)
    hits = found.described(results.hits)
    if as_json:
        emit(json.dumps(results.as_json(query, type_, hits), indent=1, ensure_ascii=False))
        return
    if not results.total:
        err.print("no hits", highlight=False)
        return
    counts = " · ".join(f"{kind} {n:,}" for kind, n in results.counts.items())
    if not hits:
        err.print(f"no hits on page {page}: {results.total:,} hits make {results.pages:,} "
                  f"page{'s' if results.pages != 1 else ''} of {limit}", highlight=False)
        return
    last = results.first + len(hits) - 1
    err.print(f"hits {results.first:,}–{last:,} of {results.total:,}"
              + (f" {type_}s" if type_ else "") + f"  ({counts})", highlight=False)
    for rank, hit in enumerate(hits, results.first):
        extra = ""
        if hit["type"] == "paper":
            tasks = ", ".join(hit.get("tasks") or [])  # type: ignore[arg-type]
            bits = [str(hit.get("year") or "n.d."), tasks, "code" if hit.get("has_code") else ""]
            extra = " · ".join(b for b in bits if b)
        out.print(
            f"[bold]{rank:>3}[/] [cyan]{hit['type']:<10}[/] [bold]{escape(str(hit['label']))}[/]"
            f"  [dim]{hit['score']}[/]" + (f"  {escape(extra)}" if extra else ""),
            highlight=False,
        )
        out.print(f"      [dim]{escape(str(hit['iri']))}[/]", highlight=False)
        marked = mark(str(hit["snippet"]), hit["marks"], "[bold yellow]", "[/]", escape)  # type: ignore[arg-type]
        snippet = " ".join(marked.split())
        if snippet:
            out.print(f"      {snippet}", highlight=False)
    if results.has_next or results.has_previous:
        moves = [f"--page {results.page - 1} for the previous"] if results.has_previous else []
        moves += [f"--page {results.page + 1} for the next"] if results.has_next else []
        err.print(f"page {results.page:,} of {results.pages:,}: " + ", ".join(moves),
                  highlight=False)
