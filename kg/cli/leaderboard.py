"""`kg leaderboard`: a task's leaderboard on a dataset, ranked per metric, and its best so far."""

from __future__ import annotations

import csv
import io
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from kg.cli.app import command, emit, emit_json, out, state
from kg.errors import UsageError

if TYPE_CHECKING:
    from rich.table import Table

    from kg import Leaderboard
    from kg import LeaderboardPoint as Point
    from kg import LeaderboardSection as Section

FORMATS = ("table", "tsv", "csv", "json")
CHART_WIDTH, CHART_HEIGHT = 64, 14


def _code_cell(board: Leaderboard, paper: str | None) -> str:
    codes = board.code.get(paper or "", ())
    if not codes:
        return ""
    first = codes[0]
    name = (first.url or first.repo).removeprefix("https://").removeprefix("github.com/")
    flags = [f for f in ("official" if first.official else "", first.framework or "") if f]
    more = f" +{len(codes) - 1}" if len(codes) > 1 else ""
    return name + (f" ({', '.join(flags)})" if flags else "") + more


def section_table(board: Leaderboard, section: Section, width: int | None = None) -> Table:
    """The ranking as a table that fits `width` (default: the terminal's): no name broken
    inside a word, empty columns dropped, the width to model, value and paper first; the
    code column goes first when the screen is too narrow for all."""
    from kg.cli.output import fitted_table

    flagged = sum(1 for e in section.entries if e.flags)
    caption = f"{len(section.entries)} results; {section.ranked_by}"
    if flagged:
        caption += f"; {flagged} flagged as doubtful (reasons: --format json)"
    headers = ["rank", "model", "value", "date", "paper", "code", "flags"]
    rows = [
        [
            str(e.rank) if e.rank is not None else "-",
            e.model or "",
            e.value,
            e.date or "",
            e.title or e.paper_url or "",
            _code_cell(board, e.paper),
            ", ".join(f.label for f in e.flags),
        ]
        for e in section.entries
    ]
    return fitted_table(
        headers, rows, width or out.size.width, priority=[1, 2, 4],
        wrap=frozenset({1}), droppable=[6, 5], right=frozenset({0}), caps={1: 34, 4: 48},
        title=f"{board.label}: {section.metric}", caption=caption,
    )


def history_table(section: Section, width: int | None = None) -> Table:
    """The best so far, oldest first, as a table that fits `width` (see `section_table`)."""
    from kg.cli.output import fitted_table

    headers = ["date", "value", "best", "model", "paper"]
    rows = [
        [p.date, str(p.value), "-" if p.best is None else f"{p.best}{' *' if p.new_best else ''}",
         p.model or "", p.title or ""]
        for p in section.history
    ]
    return fitted_table(
        headers, rows, width or out.size.width, priority=[3, 1, 4], wrap=frozenset({3}),
        caps={3: 34},
        title=f"{section.metric}: the best so far ({section.ranked_by})",
        caption=(
            "* a new best"
            if section.direction != "unknown"
            else "direction unknown: kg cannot tell which value is best, so it marks no best"
        ),
    )


def step_chart(
    section: Section, width: int = CHART_WIDTH, height: int = CHART_HEIGHT, color: bool = True
) -> str:
    """The best so far as a step line over the results' points, drawn in the terminal."""
    import numpy as np
    from uniplot import plot_to_string

    points: list[Point] = list(section.history)
    if not points:
        return f"(no dated result on {section.metric}: nothing to chart)"
    dates = np.array([p.date for p in points], dtype="datetime64[D]")
    values = np.array([float(p.value) for p in points])
    if section.direction == "unknown":
        chart: str = plot_to_string(
            [values],
            [dates],
            lines=[False],
            legend_labels=["result"],
            title=f"{section.metric}: direction unknown, no best so far",
            width=width,
            height=height,
            color=color,
        )
        return chart
    # a step line: the best holds until the next new best, then jumps
    assert points[0].best is not None
    step_x, step_y = [dates[0]], [float(points[0].best)]
    for d, p in zip(dates[1:], points[1:], strict=True):
        if p.new_best:
            step_x += [d, d]
            step_y += [step_y[-1], float(p.best or 0)]
    step_x.append(dates[-1])
    step_y.append(step_y[-1])
    chart = plot_to_string(
        [values, np.array(step_y)],
        [dates, np.array(step_x, dtype="datetime64[D]")],
        lines=[False, True],
        legend_labels=["result", "best so far"],
        title=f"{section.metric}: the best so far",
        width=width,
        height=height,
        color=color,
    )
    return chart


def _rows(board: Leaderboard, sections: list[Section], history: bool) -> list[list[object]]:
    """The header and rows of the CSV and TSV output."""
    if history:
        rows: list[list[object]] = [
            ["metric", "date", "value", "model", "paper", "best", "new_best"]
        ]
        for s in sections:
            for p in s.history:
                rows.append(
                    [s.metric, p.date, p.value, p.model or "", p.paper or "", p.best, p.new_best]
                )
        return rows
    rows = [
        ["metric", "direction", "rank", "model", "value", "number", "spread", "paper",
         "title", "date", "code", "flags"]
    ]
    for s in sections:
        for e in s.entries:
            rows.append(
                [
                    s.metric, s.direction, e.rank if e.rank is not None else "", e.model or "",
                    e.value, "" if e.number is None else e.number,
                    "" if e.spread is None else e.spread, e.paper or e.paper_url or "",
                    e.title or "", e.date or "", _code_cell(board, e.paper),
                    " | ".join(f"{f.kind}: {f.reason}" for f in e.flags),
                ]
            )
    return rows


def _csv(board: Leaderboard, sections: list[Section], history: bool) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(_rows(board, sections, history))
    return out.getvalue()


def _tsv(board: Leaderboard, sections: list[Section], history: bool) -> str:
    """Tab-separated values: a tab or line break inside a cell becomes a space."""
    return "".join(
        "\t".join(" ".join(str(c).split("\t")).replace("\n", " ") for c in row) + "\n"
        for row in _rows(board, sections, history)
    )


@command("leaderboard", rich_help_panel="Query")
def leaderboard_command(
    task: Annotated[
        str, typer.Argument(help="The task: a slug, a name in any case, a key or an IRI.")
    ],
    dataset: Annotated[
        str, typer.Argument(help="The dataset: a slug, a name in any case, a key or an IRI.")
    ],
    metric: Annotated[
        str | None,
        typer.Option(help="Only this metric (default: every metric of the leaderboard).",
                     show_default=False),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help="table|tsv|csv|json (default: a table on a "
                     "terminal, tsv through a pipe).", show_default=False),
    ] = "",
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="The best result over time instead of the ranking: each dated result, oldest "
            "first, with the best so far (JSON: a list of {date, value, model, paper, best}).",
        ),
    ] = False,
    chart: Annotated[
        bool | None,
        typer.Option(
            "--chart/--no-chart",
            help="Draw the best so far as a step chart (default: on a terminal, with --format "
            "table).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """A task's leaderboard on a dataset: each metric's results ranked best first.

    The direction of each metric (lower or higher is better) comes from its name
    (docs/leaderboards.md); a metric kg cannot place says so. A doubtful result (no paper,
    a model twice, a value out of range, mixed scales, dated before its dataset) is
    flagged, with the reason in CSV and JSON. Examples:

      kg leaderboard image-classification imagenet --metric "Top 1 Accuracy"

      kg leaderboard "Image Classification" ImageNet --metric "top 1 accuracy"

      kg leaderboard image-classification imagenet --metric "Top 1 Accuracy" --history -f json
    """
    fmt = fmt or ("table" if out.is_terminal else "tsv")
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt} is not one of: {', '.join(FORMATS)}")
    board = state.graph().leaderboard(task, dataset, metric=metric)
    if metric is not None:
        sections = list(board.sections)  # the one asked for
    elif history and fmt == "json":
        sections = [board.sections[0]]  # one series: the leaderboard's first metric
        others = ", ".join(repr(s.metric) for s in board.sections[1:])
        if others:
            print(
                f"(the history of {sections[0].metric!r}; --metric picks another: {others})",
                file=sys.stderr,
            )
    else:
        sections = list(board.sections)
    if fmt == "json":
        if history:
            emit_json([p.as_json() for p in sections[0].history])
        else:
            data = board.as_json()
            data["sections"] = [s.as_json() for s in sections]
            emit_json(data)
        return
    if fmt == "csv":
        emit(_csv(board, sections, history))
        return
    if fmt == "tsv":
        emit(_tsv(board, sections, history))
        return
    draw = sys.stdout.isatty() if chart is None else chart
    for s in sections:
        emit(history_table(s) if history else section_table(board, s))
        if draw:
            emit(step_chart(s, color=sys.stdout.isatty()))
