"""A leaderboard as one table: a row per model and paper, every metric of the board a column.

kg.query.leaderboard ranks each metric apart (a `Section` per metric); this module lays the
same entries side by side, as Papers with Code showed a benchmark. A row is one table row
of the source: the results that share a paper (or a paper page), a model name and a date,
one per metric. Rows are sorted by one metric in that metric's ranking (the section's own
order: best first in its direction), rows without a value on it last, and can be filtered:
code available, flagged (doubtful) results hidden, results with extra training data hidden.

The default sort metric is the one most rows report (the first such in the board's order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kg.query.flags import Flag
from kg.query.leaderboard import Code, Entry, Leaderboard, Section


@dataclass(frozen=True)
class Row:
    """One model of one paper on the board, with its entry on each metric it reports."""

    model: str | None
    paper: str | None
    paper_url: str | None
    title: str | None
    date: str | None
    cells: Mapping[str, Entry]  # metric -> entry
    code: tuple[Code, ...] = ()

    @property
    def flags(self) -> tuple[Flag, ...]:
        """The flags of its entries, each once."""
        return tuple(dict.fromkeys(f for e in self.cells.values() for f in e.flags))

    @property
    def extra(self) -> bool | None:
        """Whether the source says the row used extra training data (None: it says nothing)."""
        said = [e.extra for e in self.cells.values() if e.extra is not None]
        return any(said) if said else None


@dataclass(frozen=True)
class Filters:
    """What the table leaves out: rows with no code, flagged rows, rows with extra data."""

    code: bool = False  # keep only rows whose paper has code
    hide_flagged: bool = False
    hide_extra: bool = False

    def keeps(self, row: Row) -> bool:
        if self.code and not row.code:
            return False
        if self.hide_flagged and row.flags:
            return False
        return not (self.hide_extra and row.extra)


def rows(board: Leaderboard) -> list[Row]:
    """The board's entries as rows: one per (paper or page, model, date), a column per metric.
    A row that would get a second value on one metric starts a row of its own."""
    found: list[tuple[tuple[str, str, str], dict[str, Entry]]] = []
    open_rows: dict[tuple[str, str, str], list[dict[str, Entry]]] = {}
    for section in board.sections:
        for e in section.entries:
            key = (e.paper or e.paper_url or "", e.model or "", e.date or "")
            cells = next((c for c in open_rows.get(key, []) if section.metric not in c), None)
            if cells is None:
                cells = {}
                open_rows.setdefault(key, []).append(cells)
                found.append((key, cells))
            cells[section.metric] = e
    out = []
    for _, cells in found:
        first = next(iter(cells.values()))
        out.append(
            Row(
                model=first.model,
                paper=first.paper,
                paper_url=first.paper_url,
                title=first.title,
                date=first.date,
                cells=cells,
                code=board.code.get(first.paper or "", ()),
            )
        )
    return out


def default_metric(board: Leaderboard) -> Section | None:
    """The metric most rows report (the first such in the board's order); None if none."""
    if not board.sections:
        return None
    return max(board.sections, key=lambda s: len({e.result for e in s.entries}))


def sort_rows(found: Sequence[Row], section: Section) -> list[Row]:
    """The rows in `section`'s ranking (its entries' order); rows without a value on its
    metric last, by model name."""
    place = {e.result: i for i, e in enumerate(section.entries)}
    last = len(place)

    def key(row: Row) -> tuple[int, str, str]:
        entry = row.cells.get(section.metric)
        at = place.get(entry.result, last) if entry is not None else last
        return (at, row.model or "", row.paper or row.paper_url or "")

    return sorted(found, key=key)


def says_extra(found: Sequence[Row]) -> bool:
    """Whether the source says, for any row, if it used extra training data."""
    return any(row.extra is not None for row in found)
