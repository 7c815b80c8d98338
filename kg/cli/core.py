"""ingest, stats, sparql and validate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from kg.cli.app import (
    EndpointTimeout,
    EndpointUrl,
    MaxMemory,
    ResultFormat,
    command,
    err,
    memory_limited,
    out,
    state,
)
from kg.config import BATCH_QUADS, MAX_ARRAY_ITEMS
from kg.errors import RecordError, UsageError
from kg.library.results import json_text

if TYPE_CHECKING:
    from kg import IngestReport

# Each command imports the library modules it runs, so that `kg --help` stays quick.


def read_query_text(query: str) -> str:
    """QUERY as given: the text, `@file.rq`, or `-` for standard input."""
    if query == "-":
        return sys.stdin.read()
    if query.startswith("@"):
        path = Path(query[1:])
        if not path.is_file():
            raise UsageError(f"{path}: no such query file")
        return path.read_text(encoding="utf-8")
    return query


@command(rich_help_panel="Build")
def ingest(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files (.json, .jsonl, .ndjson, .gz), directories, or - for stdin."),
    ],
    strict: Annotated[
        bool, typer.Option(help="Stop at the first bad record and write nothing.")
    ] = False,
    kind: Annotated[
        str | None, typer.Option(help="Input kind, instead of detecting it from content.")
    ] = None,
    snapshot: Annotated[
        str | None,
        typer.Option(
            help="Snapshot date (YYYY-MM-DD) of the dumps read; default: their kg fetch "
            "manifest's, else their gzip header date."
        ),
    ] = None,
    licence: Annotated[
        str | None,
        typer.Option(
            help="Licence IRI of the dumps read (default: their kg fetch manifest's; CC BY-SA "
            "4.0 for Papers with Code's own dump files; none for others)."
        ),
    ] = None,
    attribution: Annotated[
        str | None,
        typer.Option(help="Attribution page (URL) of the dumps read, kept with the licence."),
    ] = None,
    batch_size: Annotated[
        int,
        typer.Option(
            min=1,
            help=f"Records per write batch at most (a batch also closes at {BATCH_QUADS:,} quads).",
        ),
    ] = 20_000,
    max_items: Annotated[
        int,
        typer.Option(
            min=1,
            help="Most items in any one array of a record (authors, links, samples, results); "
            "a record over it is rejected.",
        ),
    ] = MAX_ARRAY_ITEMS,
    compact: Annotated[
        bool,
        typer.Option(
            help="Compact the store afterwards when that pays: a store of over 512 MiB that "
            "the ingest grew by a quarter (its pages then read several times faster; the full "
            "archive's store also shrinks, 16.9 -> 9.9 GiB, in 3 minutes)."
        ),
    ] = True,
    first_load: Annotated[
        bool | None,
        typer.Option(
            "--first-load/--in-batches",
            help="Into an empty store: one bulk load, stored whole at its end or not at all "
            "(0.61x the time for the whole archive, more memory, a larger store), or "
            "batch by batch, as into any store (readers see each batch as it lands, a crash "
            "keeps the batches written). Default: one load for inputs of 256 MiB or more.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar or summary.")
    ] = False,
) -> None:
    """Load paper records (and Papers-with-Code dumps) into the store.

    Identical records are skipped, changed ones replace their earlier version whole, and a
    bad record is reported (file, record, field) without stopping the others.
    Exit code 1 if any record was rejected.
    """
    from kg.cli.progress import ingest_progress, shows_progress

    def on_error(error: RecordError) -> None:
        err.print(f"[red]rejected[/] {escape(str(error))}", highlight=False, markup=True)

    graph = state.graph(write=True)
    show = shows_progress(quiet=quiet, as_json=as_json)
    with ingest_progress(show, from_stdin="-" in paths) as on_progress:
        report = graph.ingest(
            paths,
            batch_size=batch_size,
            strict=strict,
            kind=kind,
            snapshot=snapshot,
            max_items=max_items,
            licence=licence,
            attribution=attribution,
            on_error=on_error,
            on_progress=on_progress,
            compact=compact,
            compact_in_spare_time=state.owns_process,
            first_load=first_load,
        )
    store_quads = len(graph) if report.store_quads is None else report.store_quads
    if as_json:
        data = report.as_dict()
        data["store_quads"] = store_quads
        out.print_json(json_text(data))
    elif not quiet:
        print_summary(report, store_quads)
    if report.rejected:
        raise typer.Exit(1)


def print_summary(report: IngestReport, store_quads: int) -> None:
    rate = report.read / report.seconds if report.seconds else 0.0
    rejected = f"{report.rejected:,} rejected"
    if report.rejected:
        rejected = f"[red]{rejected}[/]"
    out.print(
        f"[bold]{report.read:,}[/] records read from {report.files} file(s), "
        f"{report.graphs:,} graphs: "
        f"[green]{report.added:,} added[/], {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged, "
        f"{rejected}; "
        f"{report.quads:,} quads written, the store holds {store_quads:,}; "
        f"{report.seconds:.2f} s ({rate:,.0f} records/s)",
        highlight=False,
    )
    if report.unknown_keys:
        top = escape(", ".join(f"{k} ×{n}" for k, n in report.unknown_keys.most_common(5)))
        out.print(
            f"ignored {sum(report.unknown_keys.values()):,} unknown keys ({top})", highlight=False
        )
    if report.compaction is not None:
        done = report.compaction
        out.print(
            f"compacted the store: {done.bytes_before / 1_048_576:,.1f} MB → "
            f"{done.bytes_after / 1_048_576:,.1f} MB on disk in {done.seconds:.2f} s",
            highlight=False,
        )
    for entry in report.entries_not_mapped:
        out.print(f"entry not mapped: {escape(entry)}", highlight=False)
    if report.not_mapped:
        out.print(
            f"not mapped: {sum(report.not_mapped.values()):,} values "
            "(where, why, how many; --json lists all):",
            highlight=False,
        )
        for key, n in report.not_mapped.most_common(10):
            out.print(f"  {escape(key)} ×{n:,}", highlight=False)


@command(rich_help_panel="Build")
def compact(
    into: Annotated[
        Path, typer.Argument(help="A new directory for the compact copy of the store.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Write a compact copy of the store: about a third smaller than `kg ingest` left it.

    The store is dumped and bulk-loaded in one go into INTO, which appears only whole; the
    store itself is only read, and its readers are undisturbed. Safe to kill. Point
    `--store` at the copy afterwards (or move it into place while nothing has the store open).
    """
    done = state.graph(write=True).compact(into)
    if as_json:
        out.print_json(json_text(done.as_dict()))
        return
    out.print(
        f"compact copy in {escape(str(into))}: {done.bytes_before / 1_048_576:,.1f} MB → "
        f"{done.bytes_after / 1_048_576:,.1f} MB on disk in {done.seconds:.2f} s",
        highlight=False,
    )


@command(rich_help_panel="Inspect")
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Count what the store holds: entities per class, triples and named graphs."""
    from rich.table import Table

    result = state.graph().stats()
    if as_json:
        out.print_json(json_text(result.as_dict()))
        return
    table = Table("class", "entities", header_style="bold")
    for cls, n in sorted(result.classes.items()):
        table.add_row(cls, f"{n:,}")
    out.print(table)
    out.print(
        f"{result.triples:,} distinct triples in {result.quads:,} quads; "
        f"{result.graphs:,} named graphs ({result.record_graphs:,} records)",
        highlight=False,
    )
    if result.store_version is not None and result.bytes_on_disk is not None:
        out.print(
            f"store version {result.store_version} (kg's mapping and layout); "
            f"{result.bytes_on_disk / 1_048_576:,.1f} MB on disk",
            highlight=False,
        )


@command(rich_help_panel="Query")
def sparql(
    query: Annotated[str, typer.Argument(help="SPARQL text, @file.rq, or - for stdin.")],
    fmt: ResultFormat = "table",
    endpoint: EndpointUrl = None,
    timeout: EndpointTimeout = 60.0,
    max_memory_mb: MaxMemory = None,
) -> None:
    """Run an ad-hoc SPARQL query (the default graph is the merge of all graphs: each fact once)."""
    text = read_query_text(query)
    if endpoint:
        from kg.cli.output import write_result
        from kg.library.remote import RemoteGraph

        result = RemoteGraph(endpoint, timeout=timeout, base_iri=state.base_iri).stream(text)
        write_result(result, fmt, base_iri=state.base_iri)
        return

    def run() -> None:
        from kg.cli.output import write_result

        write_result(state.graph().stream(text), fmt, base_iri=state.base_iri)

    memory_limited(max_memory_mb, run)


@command(rich_help_panel="Inspect")
def validate(
    as_json: Annotated[bool, typer.Option("--json", help="Print violations as JSON.")] = False,
    limit: Annotated[int, typer.Option(help="Show at most this many violations.")] = 50,
) -> None:
    """Check the graph against the SHACL shapes in ontology/shapes.ttl."""
    report = state.graph().validate()
    if as_json:
        out.print_json(
            json_text(
                {
                    "conforms": report.conforms,
                    "violations": [v.__dict__ for v in report.violations],
                }
            )
        )
    else:
        for v in report.violations[:limit]:
            detail = escape(f"{v.focus} {v.path}: {v.message}")
            out.print(f"[red]{v.severity}[/] {detail}", highlight=False)
        verdict = "[green]conforms[/]" if report.conforms else "[red]does not conform[/]"
        out.print(f"{verdict}: {len(report.violations)} violation(s)")
    if not report.conforms:
        raise typer.Exit(1)
