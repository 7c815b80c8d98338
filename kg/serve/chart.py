"""The best-so-far chart of a leaderboard metric: geometry here, SVG in `_chart.svg`.

`best_so_far_chart` turns a section's series (kg.query.leaderboard.Section.history) into
what the template draws: every result as a point with a `<title>` (model, value, date,
paper) linked to its paper's page, the best so far as a step line, every new best labelled
with its model (labels in rows on the free side of the line, each joined to its point by a
leader line: none overlaps another label or the line), and the axes with their titles and
the metric's unit. The page and `chart.svg` draw the same `Chart`. The SVG is written by
the Jinja2 template with autoescaping, so a model name or a title from the data can only
ever be text (docs/serve.md says why kg draws its own charts).
It needs no JavaScript, no font or stylesheet from elsewhere, and works offline.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kg.query.leaderboard import Section, best_so_far

WIDTH, HEIGHT = 760, 340
LEFT, RIGHT, TOP, BOTTOM = 68, 20, 34, 58
LABEL_CHARS = 30  # a new best's label is cut to this many characters
#: The largest value the chart draws: beyond it (up to 1.8e308 a float still holds it, but a
#: span or a tick step would not) a result is left out of the chart and stays in the table.
DRAWABLE = Decimal("1e300")
CHAR_WIDTH = 6.2  # an average character of the 11px label font, in user units (generous)
ROW_HEIGHT = 14  # a row of labels
LEADER_GAP = 3  # between a leader line and its label's text
LABEL_GAP = 6  # between two labels on one row
DATA_HEIGHT = 240  # the plot's values; the labels' rows come on top (or below, lower is better)


@dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    new_best: bool
    tip: str  # the point's <title>
    href: str | None = None  # its paper's page
    label: Label | None = None  # the model, on a new best


@dataclass(frozen=True)
class Tick:
    at: float
    text: str


@dataclass(frozen=True)
class Chart:
    title: str
    subtitle: str
    width: int
    height: int
    points: tuple[ChartPoint, ...]
    step: str  # the SVG path of the best so far
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    plot: tuple[float, float, float, float]  # left, top, right, bottom
    empty: str | None = None  # why there is nothing to draw
    x_title: str = "date of the paper"
    y_title: str = ""
    data: tuple[float, float] = (0.0, 0.0)  # the values' band: top, bottom (grid lines)
    attribution: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _days(date: str) -> float:
    return float(dt.date.fromisoformat(date).toordinal())


def _nice_step(span: float, count: int) -> float:
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * magnitude:
            return m * magnitude
    return 10 * magnitude


def _fmt(value: float) -> str:
    """A tick's number, short: 88.5, 1,200, 66M, 1.5B.

    >>> _fmt(88.5), _fmt(1200.0), _fmt(66_000_000.0), _fmt(1.5e9), _fmt(0.0001)
    ('88.5', '1,200', '66M', '1.5B', '0.0001')
    """
    for size, suffix in ((1e9, "B"), (1e6, "M")):
        if abs(value) >= size:
            return f"{value / size:.4g}{suffix}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.6g}"


def _value_text(value: Decimal) -> str:
    return format(value.normalize(), "f") if value == value.to_integral_value() else str(value)


def _cut(text: str, n: int = LABEL_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


@dataclass(frozen=True)
class Label:
    """A new best's label: the text, where it sits, and its leader line to the point."""

    text: str
    x: float
    y: float  # the text's baseline
    anchor: str  # "start" (the text runs right of the leader) or "end" (left of it)
    leader: tuple[float, float, float, float]  # x1, y1, x2, y2


def _label_rows(
    texts: list[str], xs: list[float], left: float, right: float, prefer: str = "start"
) -> tuple[list[tuple[int, str]], int]:
    """Each label's row (0: next to the line) and anchor, so that no two labels overlap
    and no leader line (vertical, from a point to its label's row) crosses a label.

    Labels are placed in the order given, each in the first row where it fits: its span
    clear of the row's labels, its leader clear of the labels of the rows it crosses, and
    its span clear of the leaders that cross its row. A label runs on the `prefer` side of
    its leader ("start": right of it), or on the other where that side has no room. Also
    returns how many labels found no clear row (put on a new top row, over a leader).
    """
    forced = 0
    placed: list[tuple[int, float, float, float]] = []  # row, x0, x1, leader x
    out: list[tuple[int, str]] = []
    for text, px in zip(texts, xs, strict=True):
        width = len(text) * CHAR_WIDTH
        spans = []
        if px + LEADER_GAP + width <= right:
            spans.append(("start", px + LEADER_GAP - 1, px + LEADER_GAP + width))
        if px - LEADER_GAP - width >= left:
            spans.append(("end", px - LEADER_GAP - width, px - LEADER_GAP + 1))
        if prefer == "end":
            spans.reverse()
        if not spans:  # wider than either side: the side with more room
            room_right = right - px
            spans.append(
                ("start", px + LEADER_GAP - 1, px + LEADER_GAP + width)
                if room_right >= px - left
                else ("end", px - LEADER_GAP - width, px - LEADER_GAP + 1)
            )
        row = 0
        while row <= len(texts):  # a row above every label placed is clear but of leaders
            fit = None
            for anchor, x0, x1 in spans:
                clear = all(
                    (r != row or x1 + LABEL_GAP < a or x0 - LABEL_GAP > b)  # the same row
                    and (r >= row or not a - 2 <= px <= b + 2)  # my leader crosses row r
                    and (r <= row or not x0 - 2 <= lx <= x1 + 2)  # its leader crosses mine
                    for r, a, b, lx in placed
                )
                if clear:
                    fit = (anchor, x0, x1)
                    break
            if fit is not None:
                break
            row += 1
        else:  # no row is clear: the top one, over the leaders it must cross
            row = 1 + max((r for r, *_ in placed), default=-1)
            fit = spans[0]
            forced += 1
        placed.append((row, fit[1], fit[2], px))
        out.append((row, fit[0]))
    return out, forced


def _place_labels(
    texts: list[str], xs: list[float], left: float, right: float
) -> list[tuple[int, str]]:
    """Each label's (row, anchor): of the placements `_label_rows` finds taking the labels
    newest first or oldest first, each running right or left of its leader by preference,
    the one with no label forced over a leader and the fewest rows."""
    best: tuple[tuple[int, int], list[tuple[int, str]]] | None = None
    for newest_first in (True, False):
        order = sorted(range(len(xs)), key=lambda k: (-xs[k] if newest_first else xs[k], k))
        for prefer in ("start", "end"):
            rows, forced = _label_rows(
                [texts[k] for k in order], [xs[k] for k in order], left, right, prefer
            )
            placed = [(0, "start")] * len(xs)
            for n, k in enumerate(order):
                placed[k] = rows[n]
            score = (forced, 1 + max((r for r, _ in rows), default=-1))
            if best is None or score < best[0]:
                best = (score, placed)
    return best[1] if best is not None else []


def best_so_far_chart(
    section: Section,
    *,
    title: str | None = None,
    attribution: str | None = None,
    width: int = WIDTH,
    height: int = HEIGHT,
    link: Callable[[str | None], str | None] | None = None,
) -> Chart:
    """The chart of `section`'s best so far, in SVG user units: every new best labelled
    (`_label_rows`: the labels in rows beside the line, each joined to its point by a
    leader line, none overlapping another or the line), each point linked to its paper's
    page (`link` gives the href of a paper IRI), the axes titled with the metric and unit.
    `height` is the least height; the labels' rows make it taller."""
    heading = title or (
        f"{section.metric}: the best result over time"
        if section.direction != "unknown"
        else f"{section.metric}: the results over time (no best: direction unknown)"
    )
    subtitle = section.ranked_by
    history = section.history
    if any(abs(p.value) > DRAWABLE for p in history):
        # the series again over the results the chart can draw, so the step line stays on it
        kept = [e for e in section.entries if e.number is None or abs(e.number) <= DRAWABLE]
        history = tuple(best_so_far(kept, section.direction))
        left_out = len(section.history) - len(history)
        subtitle += (
            f"; {left_out:,} result{'s' if left_out > 1 else ''} beyond ±1e300 "
            "left out of the chart (the table has them)"
        )
    numbered = [e for e in section.entries if e.number is not None]
    unit = " (%)" if numbered and all(e.percent for e in numbered) else ""
    y_title = f"{section.metric}{unit}"
    left, right = LEFT, width - RIGHT
    if not history:
        top, bottom = TOP, height - BOTTOM
        return Chart(
            heading, subtitle, width, height, (), "", (), (), (left, top, right, bottom),
            empty="No result on this metric has both a number and a date: nothing to chart.",
            attribution=attribution, y_title=y_title, data=(top, bottom),
        )
    xs = [_days(p.date) for p in history]
    ys = [float(p.value) for p in history]
    x0, x1 = min(xs), max(xs)
    if x1 - x0 < 60:
        x0, x1 = x0 - 180, x1 + 180
    pad_x = (x1 - x0) * 0.03
    x0, x1 = x0 - pad_x, x1 + pad_x
    y0, y1 = min(ys), max(ys)
    if y1 - y0 < 1e-12:
        y0, y1 = y0 - max(1.0, abs(y0) * 0.05), y1 + max(1.0, abs(y1) * 0.05)
    step_y = _nice_step(y1 - y0, 5)
    y0 = math.floor(y0 / step_y) * step_y
    y1 = math.ceil(y1 / step_y) * step_y

    def sx(x: float) -> float:
        return round(left + (x - x0) / (x1 - x0) * (right - left), 1)

    bests = [i for i, p in enumerate(history) if p.new_best]
    texts = [_cut(history[i].model or "(no model name)") for i in bests]
    placed = _place_labels(texts, [sx(xs[i]) for i in bests], left, right)
    band = (1 + max((r for r, _ in placed), default=-1)) * ROW_HEIGHT + 8
    data_height = max(DATA_HEIGHT, height - TOP - BOTTOM - band)
    below = section.direction == "lower"  # the free side of the line: below it
    data_top = TOP if below else TOP + band
    data_bottom = data_top + data_height
    top, bottom = TOP, data_bottom + (band if below else 0)
    total = bottom + BOTTOM

    def sy(y: float) -> float:
        return round(data_bottom - (y - y0) / (y1 - y0) * data_height, 1)

    y_ticks = []
    tick = y0
    while tick <= y1 + step_y / 1000:
        y_ticks.append(Tick(sy(tick), _fmt(tick)))
        tick += step_y
    first_year = dt.date.fromordinal(int(x0)).year + 1
    last_year = dt.date.fromordinal(int(x1)).year
    years = list(range(first_year, last_year + 1)) or [dt.date.fromordinal(int(x0)).year]
    every = max(1, math.ceil(len(years) / 8))
    x_ticks = [
        Tick(sx(float(dt.date(y, 1, 1).toordinal())), str(y))
        for y in years[::every]
        if x0 <= dt.date(y, 1, 1).toordinal() <= x1
    ]
    labels: dict[int, Label] = {}
    for k, i in enumerate(bests):
        row, anchor = placed[k]
        px, py = sx(xs[i]), sy(ys[i])
        if below:
            base = data_bottom + 8 + ROW_HEIGHT * row + 11
            leader = (px, py + 6, px, base - 9)
        else:
            base = data_top - 8 - ROW_HEIGHT * row
            leader = (px, py - 6, px, base + 2)
        at = px + LEADER_GAP if anchor == "start" else px - LEADER_GAP
        labels[i] = Label(texts[k], at, base, anchor, leader)
    points = []
    for i, (p, x, y) in enumerate(zip(history, xs, ys, strict=True)):
        tip = f"{p.model or '(no model name)'}: {_value_text(p.value)} ({p.date})"
        if p.title:
            tip += f" · {p.title}"
        if p.new_best:
            tip += " · a new best"
        href = link(p.paper) if link is not None else None
        points.append(ChartPoint(sx(x), sy(y), p.new_best, tip, href, labels.get(i)))
    # the step line: the best holds until the next new best, then jumps; it runs to the end
    # (none where the metric's direction is unknown: kg does not guess which value is best)
    steps = [
        (sx(xs[i]), sy(float(best)))
        for i in bests
        if (best := history[i].best) is not None
    ]
    path = ""
    if steps:
        path = f"M{steps[0][0]},{steps[0][1]}"
        for bx, by in steps[1:]:
            path += f" H{bx} V{by}"
        path += f" H{sx(xs[-1])}"
    return Chart(
        heading, subtitle, width, total, tuple(points), path, tuple(x_ticks), tuple(y_ticks),
        (left, top, right, bottom), attribution=attribution, y_title=y_title,
        data=(data_top, data_bottom),
    )
