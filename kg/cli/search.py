"""`kg search`: full-text search over the store's index (docs/search.md)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from kg.cli.app import command, emit_json, err, out, state
from kg.errors import UsageError


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
    if query is None and not reindex:
        raise UsageError("give a QUERY to search for (or --reindex to rebuild the index)")

    graph = state.graph()
    if reindex:
        n = graph.reindex()
        if query is None:
            err.print(f"search index rebuilt: {n:,} entities", highlight=False)
            return
    assert query is not None
    results = graph.search(query, type=type_, top=limit, page=page)
    if as_json:
        emit_json(results.as_dict())
        return
    if not results.total:
        close = graph.near(query)
        hint = "; did you mean: " + ", ".join(
            f"{t.label or t.key} ({t.kind})" for t in close
        ) + "?" if close else ""
        err.print(f"no hits{hint}", highlight=False, markup=False)
        return
    counts = " · ".join(f"{kind} {n:,}" for kind, n in results.counts.items())
    if not results.hits:
        err.print(f"no hits on page {page}: {results.total:,} hits make {results.pages:,} "
                  f"page{'s' if results.pages != 1 else ''} of {limit}", highlight=False)
        return
    last = results.first + len(results.hits) - 1
    err.print(f"hits {results.first:,}–{last:,} of {results.total:,}"
              + (f" {type_}s" if type_ else "") + f"  ({counts})", highlight=False)
    for rank, hit in enumerate(results.hits, results.first):
        extra = ""
        if hit.type == "paper":
            bits = [str(hit.year or "n.d."), ", ".join(hit.tasks), "code" if hit.has_code else ""]
            extra = " · ".join(b for b in bits if b)
        head = (f"[cyan]{hit.type:<10}[/] [bold]{escape(hit.label)}[/]  [dim]{hit.score}[/]"
                + (f"  {escape(extra)}" if extra else ""))
        snippet = " ".join(hit.marked("[bold yellow]", "[/]", escape).split())
        if out.is_terminal:
            _hit_on_screen(rank, head, f"[dim]{escape(hit.iri)}[/]", snippet)
            continue
        out.print(f"[bold]{rank:>3}[/] {head}", highlight=False)
        out.print(f"      [dim]{escape(hit.iri)}[/]", highlight=False)
        if snippet:
            out.print(f"      {snippet}", highlight=False)
    if results.has_next or results.has_previous:
        moves = [f"--page {results.page - 1} for the previous"] if results.has_previous else []
        moves += [f"--page {results.page + 1} for the next"] if results.has_next else []
        err.print(f"page {results.page:,} of {results.pages:,}: " + ", ".join(moves),
                  highlight=False)


def _hit_on_screen(rank: int, *lines: str) -> None:
    """A hit on a terminal: its lines (rich markup) beside its rank, wrapped at spaces to
    the screen's width, a word too long for a line ending in "…" (never split)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True, min_width=3)
    grid.add_column(overflow="ellipsis")
    for i, line in enumerate(x for x in lines if x):
        grid.add_row(Text.from_markup(f"[bold]{rank}[/]" if i == 0 else ""),
                     Text.from_markup(line, overflow="ellipsis"))
    out.print(grid, highlight=False, soft_wrap=False)
