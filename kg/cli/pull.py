"""pull: keep the store current from a live source (docs/live.md)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from kg.cli.app import command, err, out, state
from kg.errors import RecordError, UsageError

if TYPE_CHECKING:
    from kg import PullReport

SOURCES = ("pwc",)


@command(rich_help_panel="Build")
def pull(
    source: Annotated[
        str, typer.Argument(help="The source: pwc, the relaunched Papers with Code API.")
    ] = "pwc",
    base_url: Annotated[
        str, typer.Option(help="The API's base URL (another compatible API, or a test's).")
    ] = "https://paperswithcode.co/api/v1",
    since: Annotated[
        str | None,
        typer.Option(
            help="Read papers published from this date (YYYY-MM-DD); default: the cursor "
            "less --recent-days, or every date on a first run."
        ),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Read papers published up to this date; default: today.")
    ] = None,
    recent_days: Annotated[
        int,
        typer.Option(min=0, help="Days before the cursor read again, where late changes show."),
    ] = 30,
    max_requests: Annotated[
        int | None,
        typer.Option(min=1, help="Stop after this many requests (the cursor stays; rerun)."),
    ] = None,
    rate: Annotated[
        float, typer.Option(min=0.0, help="Most requests a second (0: no limit, for tests).")
    ] = 1.0,
    backoff: Annotated[
        float,
        typer.Option(min=0.0, help="Seconds before the first retry of a failed request (doubled "
                     "each time)."),
    ] = 2.0,
    licence: Annotated[
        str | None,
        typer.Option(help="Licence IRI of the API's data (default: CC BY-SA 4.0)."),
    ] = None,
    attribution: Annotated[
        str | None,
        typer.Option(help="Attribution page of the API's data (default: the site's home page)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary.")] = False,
) -> None:
    """Bring the store up to date from a live API: papers, repositories, tasks, methods,
    areas, then benchmarks and results, incrementally (docs/live.md).

    Each page is committed before the next is asked for; the cursor moves when the run
    completes, so a run stopped at any moment resumes where it was. Exit code 1 if a source
    failed repeatedly or an entry was rejected.
    """
    if source not in SOURCES:
        raise UsageError(
            f"unknown source {source!r}; use one of: {', '.join(SOURCES)}", parameter="source"
        )

    def on_error(error: RecordError) -> None:
        err.print(f"[red]rejected[/] {escape(str(error))}", highlight=False, markup=True)

    graph = state.graph(write=True)
    report = graph.pull(
        base_url=base_url,
        since=since,
        until=until,
        recent_days=recent_days,
        max_requests=max_requests,
        rate=rate,
        backoff=backoff,
        licence=licence,
        attribution=attribution,
        on_error=on_error,
    )
    if as_json:
        out.print_json(json.dumps(report.as_dict()))
    elif not quiet:
        print_summary(report)
    if report.ingest.rejected:
        raise typer.Exit(1)


def print_summary(report: PullReport) -> None:
    ingest = report.ingest
    listed = ", ".join(f"{n:,} {kind}s" for kind, n in sorted(report.listed.items())) or "none"
    fetched = ", ".join(f"{n:,} {kind}s" for kind, n in sorted(report.fetched.items())) or "none"
    out.print(
        f"{report.requests:,} requests to {report.base_url} ({report.retries} retried); "
        f"listed {listed}; read in full {fetched}, {report.evaluations:,} results; "
        f"[green]{ingest.added:,} added[/], {ingest.updated:,} updated, "
        f"{ingest.unchanged:,} unchanged, {ingest.rejected:,} rejected; {report.seconds:.1f} s",
        highlight=False,
    )
    if report.missing:
        out.print(f"{len(report.missing)} not found (404), skipped", highlight=False)
    if ingest.unknown_keys:
        names = ", ".join(sorted(ingest.unknown_keys)[:10])
        out.print(f"fields outside the API's known contract: {names}", highlight=False)
    if report.truncated:
        out.print(f"over the API's page cap: {'; '.join(report.truncated)}", highlight=False)
    if report.stopped:
        out.print(f"[yellow]stopped[/]: {escape(report.stopped)}", highlight=False)
    else:
        out.print(f"cursor: {report.cursor}", highlight=False)
