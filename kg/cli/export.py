"""`kg export` and `kg void`: the graph in every standard RDF format, and its VoID description."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from kg.cli.app import command, err, out, state
from kg.errors import UsageError
from kg.library.results import json_text
from kg.rdf.formats import WRITABLE_RDF, rdf_format
from kg.resources import exports_dir

if TYPE_CHECKING:
    from kg import ExportReport, PushReport

# The commands import the exporter and the store when they run: `kg --help` stays quick.


def _summary(report: ExportReport, where: str) -> str:
    unit = "quads" if WRITABLE_RDF[report.format].dataset else "triples"
    size = f" ({report.bytes / 1e6:,.1f} MB)" if report.bytes else ""
    return (
        f"wrote {report.statements:,} {unit} from {report.graphs:,} graph(s) as "
        f"{report.format} to {where}{size} in {report.seconds:.2f} s"
    )


@command("export", rich_help_panel="Share")
def export_command(
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help=f"One of: {', '.join(WRITABLE_RDF)}."),
    ] = "turtle",
    graph: Annotated[
        str | None,
        typer.Option(
            "--graph",
            "-g",
            help="Export one named graph: an IRI, or a key under the base (graph/entities).",
            show_default=False,
        ),
    ] = None,
    out_path: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            help="The file to write, or - for stdout. Default: exports/kg.<ext> "
            "(exports/kg-<graph>.<ext>, exports/query-<name>.<ext>).",
            show_default=False,
        ),
    ] = None,
    compress: Annotated[
        bool, typer.Option("--gzip", help="Compress with gzip (the bytes stay deterministic).")
    ] = False,
    query: Annotated[
        str | None,
        typer.Option(
            "--query",
            "-q",
            help="Export what a CONSTRUCT query returns: a named query (see kg query --list) "
            "or @file.rq.",
            show_default=False,
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="A --query parameter as name=value; repeatable."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Export the graph as Turtle, JSON-LD, N-Triples, N-Quads, TriG or RDF/XML.

    The same graph always gives the same bytes: sorted, grouped by subject.
    N-Quads and TriG keep the named graphs; the others hold their union, each triple once.
    JSON-LD is compacted against ontology/context.jsonld, one object per entity.
    """
    from kg.cli.progress import shows_progress, working
    from kg.library.named import parse_params

    spec = rdf_format(fmt, writable=True)
    if graph is not None and query is not None:
        raise UsageError("--graph and --query do not combine: a query already picks its triples")
    if param and query is None:
        raise UsageError("--param binds the parameters of --query; give --query NAME too")
    knowledge = state.graph()
    params = parse_params(param or []) if query is not None else None
    show = shows_progress(as_json=as_json)
    target: str | BinaryIO | None = out_path or None
    doing = f"exporting {spec.name}" + (f" to {out_path}" if out_path else "")
    if out_path == "-":
        target, doing = sys.stdout.buffer, f"exporting {spec.name} to stdout"
    with working(doing, show=show):
        report = knowledge.export(
            target, spec.name, graph=graph, query=query, params=params, gzip=compress
        )
    where = "stdout" if out_path == "-" else str(report.path)
    for skipped in report.skipped_graphs:
        err.print(
            f"[yellow]skipped[/] <{skipped}>: an ingest was writing it when the snapshot was taken",
            highlight=False,
        )
    if as_json:
        (err if out_path == "-" else out).print_json(json_text(report.as_dict()))
    else:
        err.print(_summary(report, where), highlight=False)


@command("void", rich_help_panel="Share")
def void_command(
    out_path: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            help="The file to write, or - for stdout. Default: exports/void.ttl.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="turtle, ntriples, rdfxml or jsonld.")
    ] = "turtle",
    dump: Annotated[
        list[str] | None,
        typer.Option(
            "--dump",
            help="A dump URL to list (void:dataDump); repeatable. Default: the kg.* exports "
            "found in exports/, under --dumps-url.",
            show_default=False,
        ),
    ] = None,
    dumps_url: Annotated[
        str | None,
        typer.Option(
            help="Where the exports/ files are published. Default: <base IRI>dumps/.",
            show_default=False,
        ),
    ] = None,
    sparql_endpoint: Annotated[
        str | None,
        typer.Option(
            help="The public SPARQL endpoint URL (void:sparqlEndpoint).", show_default=False
        ),
    ] = None,
) -> None:
    """Describe the dataset in VoID: triples, entities per class, properties, vocabularies,
    example resources, dump locations and licence. Its counts match kg stats."""
    from kg.cli.progress import shows_progress, working
    from kg.library.exports import save

    spec = rdf_format(fmt, writable=True)
    if spec.dataset:
        raise UsageError(f"a VoID description is one graph; --format {spec.name} is for datasets")
    with working("counting classes, properties and vocabularies", show=shows_progress()):
        description = state.graph().void(
            dumps=dump, dumps_url=dumps_url, sparql_endpoint=sparql_endpoint
        )
        data = description.serialize(spec.name)
    if not dump and not description.dumps:
        err.print(
            "[yellow]note:[/] no kg.* exports in exports/, so no void:dataDump; "
            "run kg export first (or give --dump URL)",
            highlight=False,
        )
    if out_path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    path = save(data, out_path or exports_dir() / f"void.{spec.extension}")
    err.print(
        f"wrote the VoID description ({description.triples:,} triples, "
        f"{len(description.classes)} classes, {len(description.properties)} properties) to {path}",
        highlight=False,
    )


@command("push", rich_help_panel="Share")
def push_command(
    endpoint: Annotated[
        str,
        typer.Option(
            "--endpoint",
            "-e",
            help="The SPARQL 1.1 Graph Store Protocol URL (Oxigraph: …/store, Virtuoso: "
            "…/sparql-graph-crud-auth, Fuseki: …/<dataset>/data).",
            show_default=False,
        ),
    ],
    user: Annotated[
        str | None,
        typer.Option(help="User name (HTTP Basic, or Digest where the server asks for it)."),
    ] = None,
    password: Annotated[
        str | None,
        typer.Option(envvar="KG_PUSH_PASSWORD", help="Password for --user (or KG_PUSH_PASSWORD)."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(envvar="KG_PUSH_TOKEN", help="A bearer token (or KG_PUSH_TOKEN)."),
    ] = None,
    chunk_kb: Annotated[
        int, typer.Option(min=1, help="Send each graph in requests of about this many KB.")
    ] = 4096,
    retries: Annotated[
        int, typer.Option(min=0, help="Retries of a failed request, with growing pauses.")
    ] = 5,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds to wait for each request.")] = (
        120.0
    ),
    state_file: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="The file recording which graphs are pushed (default: beside the store, "
            "one per endpoint).",
            show_default=False,
        ),
    ] = None,
    restart: Annotated[
        bool, typer.Option("--restart", help="Forget an earlier push; send every graph again.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Send the store to a SPARQL 1.1 Graph Store Protocol endpoint, graph by graph.

    Each graph replaces the endpoint's graph of the same name (PUT, then POST for the rest of
    a big graph). An interrupted push resumes: run the same command again and the graphs
    already sent, unchanged since, are skipped. Example:

      kg push --endpoint http://127.0.0.1:7878/store
    """
    from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

    from kg.library.exports import push_state_path

    knowledge = state.graph()
    path = state_file or push_state_path(None if state.memory else state.store_path, endpoint)
    show = not quiet and err.is_terminal
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} triples"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not show,
    ) as bar:
        task: TaskID | None = None

        def on_progress(report: PushReport, triples: int) -> None:
            nonlocal task
            if task is None:  # the store is open once the endpoint answered
                task = bar.add_task("pushing", total=len(knowledge))
            bar.update(
                task,
                advance=triples,
                description=f"{report.graphs + report.skipped:,}/{report.total_graphs:,} graphs",
            )

        report = knowledge.push(
            endpoint,
            user=user,
            password=password,
            token=token,
            state_path=path,
            chunk_bytes=chunk_kb * 1024,
            retries=retries,
            timeout=timeout,
            restart=restart,
            on_progress=on_progress,
        )
    skipped = f", {report.skipped:,} unchanged since the last push" if report.skipped else ""
    err.print(
        f"pushed {report.triples:,} triples in {report.graphs:,} graph(s) to {endpoint}"
        f"{skipped} in {report.seconds:.1f} s ({report.requests:,} requests, "
        f"{report.retries:,} retried); progress in {path}",
        highlight=False,
    )
