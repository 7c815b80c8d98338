"""fetch: the Papers-with-Code archive's files, downloaded (no store involved)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kg.cli.app import command, err, out

ARCHIVE_DEFAULT = "pwc-archive"
BASE_URL_DEFAULT = "https://huggingface.co/datasets/pwc-archive/files/resolve/main/"


@command(rich_help_panel="Build")
def fetch(
    archive: Annotated[
        str,
        typer.Argument(help="The archive (pwc-archive: Papers with Code's last snapshot)."),
    ] = ARCHIVE_DEFAULT,
    into: Annotated[
        Path, typer.Option(help="The folder the files go into.", show_default=True)
    ] = Path("data/pwc-archive"),
    base_url: Annotated[
        str,
        typer.Option(
            help="The folder URL the file names are appended to: the Hub (default), a mirror, "
            "or a local folder (a path or file:// URL)."
        ),
    ] = BASE_URL_DEFAULT,
    only: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated files to fetch: papers, links, methods, datasets, "
            "evaluation-tables (default: all)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar or summary.")
    ] = False,
) -> None:
    """Download the archive's dump files, then `kg ingest` the folder.

    An interrupted file resumes where it stopped (HTTP Range); each file is checked against
    the size and SHA-256 the host states, renamed to its final name only when whole, and
    written with a manifest (URL, size, SHA-256, dates, licence, attribution) that kg ingest
    uses for provenance. Files already complete are skipped. Exit code 1 if any file failed.
    """
    from kg.cli.progress import download_progress, shows_progress
    from kg.library.archive import fetch_archive

    keys = [k.strip() for k in only.split(",") if k.strip()] if only else None
    show = shows_progress(quiet=quiet, as_json=as_json)
    with download_progress(show) as on_progress:
        report = fetch_archive(
            archive, into=into, base_url=base_url, only=keys, on_progress=on_progress
        )
    for failure in report.failures:
        err.print(f"[bold red]error:[/] {escape(str(failure))}", highlight=False, markup=True)
    if as_json:
        out.print_json(json.dumps(report.as_dict()))
    elif not quiet:
        for f in report.files:
            err.print(
                f"{f.status:>8}  {escape(f.name)}  {f.size:,} bytes  sha256 {f.sha256[:12]}…"
                + ("  (checked against the host)" if f.verified_by_host else ""),
                highlight=False,
            )
        err.print(f"into {escape(str(report.into))}; next: kg ingest {escape(str(report.into))}",
                  highlight=False)
    if report.failures:
        raise typer.Exit(1)
