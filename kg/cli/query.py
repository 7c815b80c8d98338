"""`kg query`: list, describe and run the named queries in queries/*.rq."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kg.cli.app import (
    EndpointTimeout,
    EndpointUrl,
    MaxMemory,
    ResultFormat,
    command,
    emit,
    emit_json,
    memory_limited,
    out,
    state,
)
from kg.errors import UsageError

if TYPE_CHECKING:
    from kg.query.named import NamedQuery

# The command imports the named-query machinery (YAML, the store) when it runs.


def _listing(queries: dict[str, NamedQuery], fmt: str, markdown: bool) -> None:
    from rich.table import Table

    from kg.query.named import markdown_list

    if markdown:
        emit(markdown_list(queries.values()))
    elif fmt == "json":
        emit_json([q.as_json() for q in queries.values()])
    elif fmt == "table":
        table = Table("query", "summary", "parameters", header_style="bold")
        for q in queries.values():
            table.add_row(q.name, q.summary, ", ".join(p.name for p in q.params))
        out.print(table)
    else:
        raise UsageError("--list prints as table or json (or --markdown)")


def _describe(q: NamedQuery) -> None:
    from rich.table import Table

    out.print(f"[bold]{q.name}[/]: {q.summary}", highlight=False)
    out.print(q.description, highlight=False, markup=False)
    if q.params:
        table = Table("parameter", "kind", "example", "description", header_style="bold")
        for p in q.params:
            table.add_row(p.name, p.describe(), p.example, p.description)
        out.print(table)
    out.print(f"example: {q.example}", highlight=False, markup=False)
    out.print(f"file: {q.path}", highlight=False, markup=False)


@command("query", rich_help_panel="Query")
def query_command(
    name: Annotated[
        str | None, typer.Argument(help="The named query to run (see --list).", show_default=False)
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="A parameter as name=value; repeat for each one."),
    ] = None,
    fmt: ResultFormat = "table",
    endpoint: EndpointUrl = None,
    timeout: EndpointTimeout = 60.0,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Print at most this many rows.", show_default=False)
    ] = None,
    max_memory_mb: MaxMemory = None,
    list_queries: Annotated[
        bool, typer.Option("--list", "-l", help="List the named queries and their summaries.")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --list: print the README's Markdown table.")
    ] = False,
    describe: Annotated[
        bool, typer.Option("--describe", help="Explain the query and its parameters; no run.")
    ] = False,
    show_sparql: Annotated[
        bool,
        typer.Option(
            "--show-sparql", help="Print the SPARQL with its parameters bound (VALUES); no run."
        ),
    ] = False,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            envvar="KG_QUERIES_DIR",
            help="The directory of *.rq files (default: kg's queries/).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a named query from queries/*.rq on the store or on a remote endpoint.

    Parameters are bound as RDF terms, never pasted into the query text. Examples:

      kg query --list

      kg query papers-by-author --param "author=Goro Kobayashi" --format csv
    """
    from kg.cli.output import write_result
    from kg.query.named import find_query, load_queries, parse_assignments

    if list_queries or markdown:
        _listing(load_queries(queries), fmt, markdown)
        return
    if name is None:
        raise UsageError("name a query to run, or use --list to see them")
    named = find_query(name, queries)
    if describe:
        _describe(named)
        return
    values = parse_assignments(param or [])
    if endpoint:
        _run_remote(named, values, endpoint, timeout, fmt, limit, show_sparql)
        return
    if show_sparql:
        emit(state.graph().prepare(named, **values))
        return

    def run() -> None:  # in the memory-limited child: the store is opened there
        graph = state.graph()
        result = graph.stream(graph.prepare(named, **values), limit=limit)
        write_result(result, fmt, base_iri=state.base_iri)

    memory_limited(max_memory_mb, run)


def _run_remote(
    named: NamedQuery,
    values: dict[str, str],
    endpoint: str,
    timeout: float,
    fmt: str,
    limit: int | None,
    show_sparql: bool,
) -> None:
    """A named query on another SPARQL endpoint: names looked up there, the query sent."""
    from kg.cli.output import write_result
    from kg.query.binding import bind_resolved
    from kg.query.named import run_remote, with_values
    from kg.query.remote import Endpoint
    from kg.rdf.results import SelectResult

    source = Endpoint(endpoint, timeout=timeout)  # names are looked up there
    bindings = bind_resolved(source, named, values, state.base_iri)
    if show_sparql:
        emit(with_values(named.sparql, bindings))
        return
    result = run_remote(endpoint, named, bindings, timeout=timeout)
    if limit is not None and isinstance(result, SelectResult):
        result.rows = result.rows[:limit]
    write_result(result, fmt, base_iri=state.base_iri)
