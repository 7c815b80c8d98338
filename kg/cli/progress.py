"""Progress on the terminal for long commands (rich's progress), never on a pipe.

Progress goes to standard error, and only when it is a terminal and the command prints no
JSON: a pipe, a file or `--json` output get nothing of it. `ingest_progress` shows bytes
read of the input files' total (records when reading stdin), the rate and the time left;
`working` shows what a command does and for how long, from its second second on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

from kg.cli.app import err

if TYPE_CHECKING:
    from kg import IngestReport

#: Seconds a command works before `working` shows anything (KG_PROGRESS_AFTER sets it).
SHOW_AFTER = 2.0


def _show_after() -> float:
    try:
        return max(0.0, float(os.environ.get("KG_PROGRESS_AFTER", SHOW_AFTER)))
    except ValueError:
        return SHOW_AFTER


def shows_progress(*, quiet: bool = False, as_json: bool = False) -> bool:
    """Whether progress may be drawn: a terminal on stderr, and neither --quiet nor --json."""
    return not quiet and not as_json and err.is_terminal


class RecordRateColumn(ProgressColumn):
    """Records per second, where no total is known."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} records/s", style="progress.data.speed")


class IngestProgress:
    """The bar of `kg ingest`: read/total bytes (or records), rate, time left, counts."""

    def __init__(self, progress: Progress, by_bytes: bool) -> None:
        self.progress = progress
        self.by_bytes = by_bytes
        self.task = progress.add_task("reading", total=None)

    def __call__(self, report: IngestReport) -> None:
        counts = f"{report.read:,} records · {report.added:,} new"
        for n, word in (
            (report.updated, "updated"),
            (report.unchanged, "unchanged"),
            (report.rejected, "rejected"),
        ):
            if n:
                counts += f" · {n:,} {word}"
        if self.by_bytes and report.bytes_total is not None:
            self.progress.update(
                self.task,
                completed=report.bytes_read,
                total=report.bytes_total,
                description=counts,
            )
        else:
            self.progress.update(self.task, completed=report.read, description=counts)


@contextmanager
def ingest_progress(show: bool, *, from_stdin: bool) -> Iterator[IngestProgress]:
    """A transient ingest bar on stderr (disabled when `show` is false)."""
    columns: list[ProgressColumn | str]
    if from_stdin:  # no total: records read and their rate
        columns = [SpinnerColumn(), RecordRateColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}")]
    else:
        columns = [
            SpinnerColumn(),
            BarColumn(bar_width=12),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("{task.description}"),
        ]
    with Progress(*columns, console=err, transient=True, disable=not show) as bar:
        yield IngestProgress(bar, by_bytes=not from_stdin)


class Working:
    """What `working` yields: say how far a step has gone, when it knows."""

    def __init__(self, progress: Progress, description: str) -> None:
        self.progress = progress
        self.task = progress.add_task(description, total=None)

    def step(self, description: str) -> None:
        self.progress.update(self.task, description=description)


@contextmanager
def working(description: str, *, show: bool) -> Iterator[Working]:
    """A spinner with `description` and the time elapsed, on stderr once the work has taken
    `SHOW_AFTER` seconds (nothing for quick work, nothing when `show` is false)."""
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not show,
    )
    handle = Working(progress, description)
    timer = threading.Timer(_show_after(), progress.start)
    timer.daemon = True
    if show:
        timer.start()
    try:
        yield handle
    finally:
        timer.cancel()
        if show:
            timer.join()
        progress.stop()


@contextmanager
def download_progress(show: bool) -> Iterator[Callable[[str, int, int | None], None]]:
    """A bar per file on stderr for `kg fetch`: bytes, rate and time left (nothing when
    `show` is false)."""
    columns: list[ProgressColumn | str] = [
        TextColumn("{task.description}"),
        BarColumn(bar_width=20),
        DownloadColumn(),
        TransferSpeedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=err, disable=not show) as bar:
        tasks: dict[str, TaskID] = {}

        def update(name: str, done: int, total: int | None) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done, total=total)

        yield update
