"""project, similar, shared and communities: the graph views of the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kg.cli.app import command, emit, emit_json, err, state
from kg.errors import UsageError
from kg.graph.relations import (
    BY_CHOICES,
    DEFAULT_BY,
    DEFAULT_METRIC,
    KINDS,
    METRIC_NAMES,
    RELATIONS,
    SUGGEST_KINDS,
    fallback_label,
    graph_format,
    projection_kind,
)
from kg.library.views import COMMUNITY_BY
from kg.resources import exports_dir

if TYPE_CHECKING:
    from kg import SharedItem

# The commands import kg.graph's numeric modules (numpy, scipy, networkx) when they run,
# so that the rest of the CLI starts without them.

PANEL = "Graph"
BY_HELP = f"Compare by: {', '.join(BY_CHOICES)}, or several, comma-separated."
KIND_HELP = (
    f"One of: {', '.join(KINDS)} (aliases: coauthorship, method-cooccurrence, repository-couse)."
)


def _dump(data: Any) -> None:
    emit_json(data)


def _fitted(lines: list[str], indent: str) -> str:
    """`lines` as they are through a pipe; on a terminal, each wrapped at spaces to its
    width, later lines of one indented (kg.cli.output.wrapped: no word split)."""
    from kg.cli.app import out
    from kg.cli.output import wrapped

    if not out.is_terminal:
        return "\n".join(lines)
    return "\n".join(wrapped(line, out.size.width, indent) for line in lines)


def _item_text(item: SharedItem) -> str:
    kind = RELATIONS[item.relation].item_type.lower()
    label = item.label or fallback_label(item.iri)
    return f"{label} ({kind}, {item.papers:,} paper{'s' if item.papers != 1 else ''})"


@command("similar", rich_help_panel=PANEL)
def similar_command(
    paper: Annotated[
        str, typer.Argument(help="A Papers-with-Code slug, an arXiv id (any version) or an IRI.")
    ],
    by: Annotated[str, typer.Option("--by", help=BY_HELP)] = DEFAULT_BY,
    metric: Annotated[
        str, typer.Option("--metric", "-m", help=f"One of: {', '.join(METRIC_NAMES)}.")
    ] = DEFAULT_METRIC,
    top: Annotated[int, typer.Option("--top", "-k", help="How many papers.")] = 10,
    explain: Annotated[
        int, typer.Option(help="Shared items to show per paper (all of them with --json).")
    ] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """The papers closest to PAPER, each with its score and the shared items behind it.

    The default metric, idf, weighs a shared item by how rare it is (idf²).
    The score is the weight shared over (PAPER's weight)^3/4 times
    (the other paper's weight)^1/4: sharing an author or a rare method
    counts far more than sharing Adam or Dropout, and a paper with many
    items of its own is penalised only a little (docs/similarity.md).
    """
    result = state.graph().similar(paper, by=by, metric=metric, top=top)
    if as_json:
        _dump(result.as_dict())
        return
    n = len(result.matches)
    lines = [
        f"{result.label} <{result.paper}>",
        f"{result.item_count:,} item{'s' if result.item_count != 1 else ''} "
        f"({', '.join(result.by)}); metric {result.metric}; "
        f"{n} similar paper{'s' if n != 1 else ''}",
    ]
    if result.item_count == 0:
        lines.append(
            f"it has no {' or '.join(result.by)} in the store, so nothing to compare it by"
        )
    for rank, match in enumerate(result.matches, start=1):
        lines.append(f"{rank:>3}. {match.score:.4f}  {match.label}  <{match.paper}>")
        shown = ", ".join(_item_text(s) for s in match.shared[:explain])
        more = len(match.shared) - explain
        tail = f", … (+{more})" if more > 0 else ""
        lines.append(f"       {len(match.shared)} shared: {shown}{tail}")
    emit(_fitted(lines, indent=" " * 7))


@command("suggest", rich_help_panel=PANEL)
def suggest_command(
    paper: Annotated[
        str | None,
        typer.Argument(help="A slug, an arXiv id (any version), a title or an IRI."),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option("--kind", help=f"Only links to one kind: {', '.join(SUGGEST_KINDS)}."),
    ] = None,
    top: Annotated[int, typer.Option("--top", "-k", help="How many suggestions.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    train: Annotated[
        bool,
        typer.Option(
            "--train",
            help="Train the model now and keep it beside the store (then PAPER is optional), "
            "so that `kg serve`'s pages and the MCP tool show suggestions without training.",
        ),
    ] = False,
) -> None:
    """The links PAPER most likely lacks (tasks, datasets, methods, repositories), each with
    its score and reasons: the similar papers that have it, PAPER's items that co-occur
    with it, and where PAPER's title or abstract names it. Never a link PAPER already has
    (docs/similarity.md, "Suggested links").

    The first call on a store tunes the model on the store's own links and keeps it
    beside the store, like the similarity index. `kg serve` and the MCP tool train it
    themselves only on a small store: train a large one ahead with `kg suggest --train`.
    """
    if paper is None and not train:
        raise UsageError("give a PAPER to suggest links for, or --train to train the model")
    graph = state.graph()
    if train:
        kept = graph.suggestions_trained()
        if not kept:
            err.print("training the suggestion model on the store's links (once; kept beside it)")
        trained = graph.train_suggestions()
        if paper is None:
            summary = {"kept": True, "trained_now": not kept, **trained.as_dict()}
            if as_json:
                _dump(summary)
            else:
                emit(
                    ("trained" if not kept else "already trained")
                    + f": the suggestion model of the store ({trained.trials} trials a relation, "
                    f"{trained.seconds:.1f} s of CPU), kept beside it"
                )
            return
    assert paper is not None
    result = graph.suggest(paper, kind=kind, top=top)
    data = result.as_dict()
    if as_json:
        _dump(data)
        return
    n = len(data["suggestions"])
    lines = [
        f"{data['title']} <{data['paper']}>",
        f"{data['items']:,} item{'s' if data['items'] != 1 else ''}; "
        f"{n} suggested link{'s' if n != 1 else ''} ({', '.join(data['kinds'])})",
    ]
    for rank, s in enumerate(data["suggestions"], start=1):
        lines.append(
            f"{rank:>3}. {s['score']:.4f}  {s['kind']}: {s['label']}  <{s['item']}>  "
            f"({s['papers']:,} paper{'s' if s['papers'] != 1 else ''})"
        )
        why = s["because"]
        if why["similar_papers"]:
            shown = "; ".join(
                f"{p['title']} ({p['similarity']:.3f})" for p in why["similar_papers"]
            )
            lines.append(f"       similar papers that have it: {shown}")
        if why["cooccurring"]:
            shown = "; ".join(
                f"{c['label']} ({c['kind']}, {c['together']} of its {c['papers']} papers)"
                for c in why["cooccurring"]
            )
            lines.append(f"       co-occurs with its: {shown}")
        for named in why["text"]:
            lines.append(f"       {named['text']}")
        if not why["similar_papers"] and not why["cooccurring"] and not why["text"]:
            lines.append("       popular: nothing else to go by")
    emit("\n".join(lines))


@command("shared", rich_help_panel=PANEL)
def shared_command(
    a: Annotated[str, typer.Argument(help="A paper: slug, arXiv id or IRI.")],
    b: Annotated[str, typer.Argument(help="Another paper.")],
    by: Annotated[str, typer.Option("--by", help=BY_HELP)] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Everything two papers share: methods, repositories, tasks, authors, datasets."""
    result = state.graph().shared(a, b, by=by)
    if as_json:
        _dump(result.as_dict())
        return
    lines = [f"A: {result.label_a} <{result.a}>", f"B: {result.label_b} <{result.b}>"]
    for rel in result.relations:
        lines.append(
            f"{rel.relation}: {len(rel.items)} shared of {rel.count_a} and {rel.count_b} "
            f"(Jaccard {rel.jaccard:.4f})"
        )
        lines.extend(f"  {_item_text(item)}" for item in rel.items)
    emit("\n".join(lines))


def _default_out(kind: str, by: str) -> Path:
    suffix = f"-by-{by.replace(',', '-')}" if kind == "paper-paper" else ""
    return exports_dir() / f"{kind}{suffix}.graphml"


@command("project", rich_help_panel=PANEL)
def project_command(
    kind: Annotated[str, typer.Argument(help=KIND_HELP)],
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The file: .graphml, .gexf or .json (node-link). Default: exports/KIND.graphml.",
            show_default=False,
        ),
    ] = None,
    by: Annotated[
        str,
        typer.Option("--by", help=f"For paper-paper: {BY_HELP} The default links papers by "
                     "their topics, as kg communities does."),
    ] = COMMUNITY_BY,  # the library's default
    min_weight: Annotated[
        int, typer.Option(help="Keep projected edges of at least this weight.")
    ] = 1,
    max_share: Annotated[
        float | None,
        typer.Option(
            help="Leave out items linked to more than this fraction of the papers "
            "(e.g. 0.05 drops Adam-like items) before projecting.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Write a bipartite graph or a one-mode projection for NetworkX, Gephi or Cytoscape.

    Nodes are keyed by IRI and carry iri, type and label; projected edges carry weight
    (shared items, or shared papers).
    """
    spec = projection_kind(kind)
    path = out_path if out_path is not None else _default_out(spec.name, by)
    if path.is_dir():
        raise UsageError(f"--out {path} is a directory; give a file name ending in .graphml")
    fmt = graph_format(path)
    from kg.cli.progress import shows_progress, working
    from kg.library.views import write_graph

    with working(f"projecting {spec.name}", show=shows_progress(as_json=as_json)) as progress:
        graph = state.graph().projection(
            spec.name, by=by, min_weight=min_weight, max_share=max_share
        )
        progress.step(
            f"writing {graph.number_of_nodes():,} nodes and {graph.number_of_edges():,} edges "
            f"to {path}"
        )
        write_graph(graph, path)
    summary = {
        "kind": spec.name,
        "file": str(path),
        "format": fmt,
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
    }
    if as_json:
        _dump(summary)
    else:
        err.print(
            f"wrote {path} ({fmt}): {spec.name}, {summary['nodes']:,} nodes, "
            f"{summary['edges']:,} edges",
            highlight=False,
            markup=False,
        )


@command("communities", rich_help_panel=PANEL)
def communities_command(
    kind: Annotated[str, typer.Argument(help="A one-mode kind: " + KIND_HELP)],
    top: Annotated[int, typer.Option("--top", "-n", help="How many communities to show.")] = 10,
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help=f"For paper-paper: {BY_HELP} The default links papers by their topics: most "
            "papers share no method with any other, and each would be a community of one.",
        ),
    ] = COMMUNITY_BY,  # the library's default
    name_by: Annotated[
        str, typer.Option(help="Relations that name communities (comma-separated).")
    ] = "methods,tasks",
    seed: Annotated[int, typer.Option(help="Louvain's random seed (same seed, same split).")] = 0,
    resolution: Annotated[
        float, typer.Option(help="Louvain resolution: above 1 gives smaller communities.")
    ] = 1.0,
    min_weight: Annotated[int, typer.Option(help="Keep edges of at least this weight.")] = 1,
    max_share: Annotated[
        float | None,
        typer.Option(
            help="Leave out items linked to more than this fraction of the papers.",
            show_default=False,
        ),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            help="A NetworkX dispatch backend (graphblas, cugraph) for the analytics.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Louvain communities of a projection, named by their most characteristic items.

    An item characterises a community when its share among the community's papers most
    exceeds its share among all papers (lift), counting items that at least two papers
    and a tenth of the community have.
    """
    from kg.cli.progress import shows_progress, working

    with working("reading the relations", show=shows_progress(as_json=as_json)) as progress:
        found = state.graph().communities(
            kind,
            by=by,
            name_by=name_by,
            top=top,
            seed=seed,
            resolution=resolution,
            min_weight=min_weight,
            max_share=max_share,
            backend=backend,
            on_step=progress.step,
        )
    if as_json:
        _dump(found.as_dict())
        return
    lines = [
        f"{found.kind}: {found.nodes:,} nodes, {found.edges:,} edges, "
        f"{found.components:,} connected component(s), {found.communities:,} communities "
        f"({found.single_member_communities:,} of one member; Louvain, seed {seed})"
    ]
    for c in found.top:
        name = c.name or "(no characteristic items)"
        papers = f"{c.papers:,} paper{'s' if c.papers != 1 else ''}"
        lines.append(f"{c.rank:>3}. {c.size:,} members, {papers}: {name}")
        lines.append("       central: " + ", ".join(m.label for m in c.central))
    emit("\n".join(lines))
