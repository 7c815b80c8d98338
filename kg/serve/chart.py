"""The best-so-far chart of a leaderboard metric: geometry here, SVG in `_chart.svg`.

`best_so_far_chart` turns a section's series (kg.query.leaderboard.Section.history) into
what the template draws: every result as a point with a `<title>` (model, value, date,
paper), the best so far as a step line, each new best labelled with its model, and the
axes. The SVG is written by the Jinja2 template with autoescaping, so a model name or a
title from the data can only ever be text (docs/serve.md says why kg draws its own charts).
It needs no JavaScript, no font or stylesheet from elsewhere, and works offline.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kg.query.leaderboard import Section

WIDTH, HEIGHT = 760, 340
LEFT, RIGHT, TOP, BOTTOM = 60, 20, 34, 42
LABEL_CHARS = 30  # a new best's label is cut to this many characters
MAX_LABELS = 14  # new bests beyond this many are marked, not labelled (the latest ones win)
CHAR_WIDTH = 5.9  # an average character of the 10.5px label font, in user units


@dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    new_best: bool
    tip: str  # the point's <title>
    label: str | None = None  # the model, on a new best
    label_x: float = 0.0
    label_y: float = 0.0
    anchor: str = "start"


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


def _label_spots(
    history: Any, xs: list[float], ys: list[float], sx: Any, sy: Any,
    plot: tuple[float, float, float, float],
) -> dict[int, tuple[str, float, float, str]]:
    """Where each new best's label goes: (text, x, y, anchor), newest first, each tried
    above and below its point at growing distances and left out where it would overlap a
    label already placed (the point keeps its mark and its <title>)."""
    left, top, right, bottom = plot
    placed: list[tuple[float, float, float, float]] = []
    spots: dict[int, tuple[str, float, float, str]] = {}
    bests = [i for i, p in enumerate(history) if p.new_best]
    for i in reversed(bests):
        if len(spots) >= MAX_LABELS:
            break
        text = _cut(history[i].model or "(no model name)")
        px, py = sx(xs[i]), sy(ys[i])
        width = len(text) * CHAR_WIDTH + 2
        anchor = "end" if px > left + (right - left) * 0.55 else "start"
        x0 = px - 6 - width if anchor == "end" else px + 6
        for dy in (-7, 13, -19, 25, -31, 37):
            y = py + dy
            if not top + 9 <= y <= bottom - 3:
                continue
            box = (x0, y - 9, x0 + width, y + 2)
            if all(
                box[2] < o[0] or box[0] > o[2] or box[3] < o[1] or box[1] > o[3] for o in placed
            ):
                placed.append(box)
                spots[i] = (text, px - 6 if anchor == "end" else px + 6, y, anchor)
                break
    return spots


def best_so_far_chart(
    section: Section,
    *,
    title: str | None = None,
    attribution: str | None = None,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> Chart:
    """The chart of `section`'s best so far, in SVG user units."""
    left, top, right, bottom = LEFT, TOP, width - RIGHT, height - BOTTOM
    heading = title or (
        f"{section.metric}: the best result over time"
        if section.direction != "unknown"
        else f"{section.metric}: the results over time (no best: direction unknown)"
    )
    subtitle = section.ranked_by
    history = section.history
    if not history:
        return Chart(
            heading, subtitle, width, height, (), "", (), (), (left, top, right, bottom),
            empty="No result on this metric has both a number and a date: nothing to chart.",
            attribution=attribution,
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

    def sy(y: float) -> float:
        return round(bottom - (y - y0) / (y1 - y0) * (bottom - top), 1)

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
    spots = _label_spots(history, xs, ys, sx, sy, (left, top, right, bottom))
    points = []
    for i, (p, x, y) in enumerate(zip(history, xs, ys, strict=True)):
        tip = f"{p.model or '(no model name)'}: {_value_text(p.value)} ({p.date})"
        if p.title:
            tip += f" · {p.title}"
        if p.new_best:
            tip += " · a new best"
        spot = spots.get(i)
        points.append(
            ChartPoint(sx(x), sy(y), p.new_best, tip, *(spot or (None, 0.0, 0.0, "start")))
        )
    # the step line: the best holds until the next new best, then jumps; it runs to the end
    # (none where the metric's direction is unknown: kg does not guess which value is best)
    bests = [
        (sx(x), sy(float(p.best)))
        for p, x in zip(history, xs, strict=True)
        if p.new_best and p.best is not None
    ]
    path = ""
    if bests:
        path = f"M{bests[0][0]},{bests[0][1]}"
        for bx, by in bests[1:]:
            path += f" H{bx} V{by}"
        path += f" H{sx(xs[-1])}"
    return Chart(
        heading, subtitle, width, height, tuple(points), path, tuple(x_ticks), tuple(y_ticks),
        (left, top, right, bottom), attribution=attribution,
    )
