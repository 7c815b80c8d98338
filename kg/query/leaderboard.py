"""Leaderboards: a task's results on a dataset, ranked per metric, and the best result over time.

A leaderboard is read with four named queries (`queries/leaderboard-*.rq`): its results,
the code of its papers, its source (label, dump, snapshot, licence, attribution) and the
flags on its doubtful results (kg.query.flags). `build` turns their rows into a
`Leaderboard`, one `Section` per metric:

* the entries ranked best first, by the metric's direction (kg.query.directions): lowest
  first where lower is better, else highest first. Equal values share a rank (1, 2, 2, 4),
  the earlier paper first; values that are not numbers ("-", "N/A") come last, unranked.
  A metric kg cannot place is ranked highest first and says so (`direction == "unknown"`).
* the best-so-far series (`history`): every result with a number and a date (its table
  row's `paper_date`) is a point, oldest first; on one date the best value first in the
  metric's direction, then by model name, then result IRI, so only a model's best value of
  the day can set a best. `best` is the best value so far at that point, and a point that
  beats every earlier one (strictly) is a new best. On a metric of unknown direction there
  is no best: `best` is None and no point is a new best (kg claims none it cannot tell).

The CLI (`kg leaderboard`) runs the queries on the store (`load`); the server runs the same
query texts (`leaderboard_queries`) in its worker pool and calls `build` on the rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from kg.errors import NotFoundError, Param, ParameterError
from kg.ingest.identity import Iris
from kg.query.directions import Direction, metric_direction
from kg.query.flags import FLAGS as FLAGS
from kg.query.flags import Flag, by_result
from kg.query.named import bind, load_queries, with_values
from kg.rdf.results import SelectResult, Term, decimal_value
from kg.rdf.store import GraphStore

RESULTS, CODE, SOURCE = "leaderboard-results", "leaderboard-code", "leaderboard-source"
QUERY_NAMES = (RESULTS, CODE, SOURCE, FLAGS)


@dataclass(frozen=True)
class Entry:
    """One result on one metric: the value as published and what kg parsed of it."""

    result: str
    metric: str
    value: str
    number: Decimal | None
    percent: bool
    spread: Decimal | None
    model: str | None
    paper: str | None
    title: str | None
    date: str | None  # yyyy-mm-dd: the paper's date as the table row gives it
    paper_url: str | None
    rank: int | None = None
    flags: tuple[Flag, ...] = ()  # why the result is doubtful, if it is (kg.query.flags)
    extra: bool | None = None  # used extra training data, where the source says (else None)

    def as_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "model": self.model,
            "value": self.value,
            "number": json_number(self.number),
            "percent": self.percent,
            "spread": json_number(self.spread),
            "paper": self.paper or self.paper_url,
            "title": self.title,
            "date": self.date,
            "result": self.result,
            "flags": [f.as_json() for f in self.flags],
        }


@dataclass(frozen=True)
class Code:
    """A repository linked to a paper on the board, with the samples kg harvested from it."""

    repo: str
    url: str | None
    official: bool
    framework: str | None
    samples: tuple[tuple[str, int], ...] = ()  # (execution status, count)

    def as_json(self) -> dict[str, Any]:
        return {
            "repository": self.repo,
            "url": self.url,
            "official": self.official,
            "framework": self.framework,
            "samples": dict(self.samples),
        }


@dataclass(frozen=True)
class Point:
    """One dated result on the best-so-far chart."""

    date: str
    value: Decimal
    best: Decimal | None  # None where the metric's direction is unknown
    new_best: bool
    model: str | None
    paper: str | None
    title: str | None
    result: str

    def as_json(self) -> dict[str, Any]:
        """The `--history` / `history.json` object: date, value, model, paper, best."""
        return {
            "date": self.date,
            "value": json_number(self.value),
            "model": self.model,
            "paper": self.paper,
            "best": json_number(self.best),
        }


@dataclass(frozen=True)
class Section:
    """One metric of a leaderboard: its entries ranked, and the best result over time."""

    metric: str
    direction: Direction
    entries: tuple[Entry, ...]
    history: tuple[Point, ...]

    @property
    def ranked_by(self) -> str:
        """How the section is ordered, in words (the page and the CLI show it)."""
        if self.direction == "lower":
            return "lower is better: lowest first"
        if self.direction == "higher":
            return "higher is better: highest first"
        return "direction unknown: kg cannot tell from the name; listed highest first"

    @property
    def undated(self) -> int:
        """Results with a number but no date: ranked, but not on the chart."""
        return sum(1 for e in self.entries if e.number is not None and e.date is None)

    def as_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "direction": self.direction,
            "entries": [e.as_json() for e in self.entries],
        }


@dataclass(frozen=True)
class Source:
    """The dump a leaderboard's table came from, with the licence and attribution it needs."""

    dump: str | None
    archive: str | None
    snapshot: str | None
    licence: str | None
    attribution: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "dump": self.dump,
            "archive": self.archive,
            "snapshot": self.snapshot,
            "licence": self.licence,
            "attribution": self.attribution,
        }


@dataclass(frozen=True)
class Leaderboard:
    iri: str
    task: str
    dataset: str
    label: str
    sections: tuple[Section, ...]
    code: Mapping[str, tuple[Code, ...]] = field(default_factory=dict)  # by paper IRI
    sources: tuple[Source, ...] = ()

    def section(self, metric: str) -> Section:
        """The section of `metric` (ignoring case, spacing and punctuation: the resolver's
        `match_metric`), or an UnknownNameError with the nearest of the board's metrics."""
        from kg.query.resolve import match_metric

        names = [s.metric for s in self.sections]
        name = match_metric(metric, names, where=f" of {self.label}", parameter=Param("metric"))
        return next(s for s in self.sections if s.metric == name)

    def __repr__(self) -> str:
        lines = [f"Leaderboard({self.label!r} <{self.iri}>: {len(self.sections)} metrics)"]
        for s in self.sections:
            best = s.entries[0] if s.entries else None
            top = f"; best {best.value} by {best.model}" if best is not None else ""
            lines.append(f"  {s.metric}: {len(s.entries)} results, {s.ranked_by}{top}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "leaderboard": self.iri,
            "label": self.label,
            "task": self.task,
            "dataset": self.dataset,
            "sources": [s.as_json() for s in self.sources],
            "sections": [s.as_json() for s in self.sections],
            "code": {p: [c.as_json() for c in codes] for p, codes in self.code.items()},
        }


def json_number(value: Decimal | None) -> int | float | None:
    """A decimal as a JSON number: an integer when it is whole, else a float; None when no
    float holds it (beyond ±1.8e308: the value as published is still the entry's `value`).

    >>> json_number(Decimal("88.5")), json_number(Decimal("12")), json_number(Decimal("1e309"))
    (88.5, 12, None)
    """
    if value is None or not value.is_finite():
        return None
    if abs(value) < 10**15 and value == value.to_integral_value():
        return int(value)
    number = float(value)
    return number if math.isfinite(number) else None


# --- the queries ----------------------------------------------------------------------------


def leaderboard_bindings(task: str, dataset: str, base_iri: str) -> dict[str, Term]:
    """The task and dataset (slugs, local keys or IRIs) as the queries' bound terms."""
    query = load_queries()[RESULTS]
    return bind(query, {"task": task, "dataset": dataset}, base_iri)


def leaderboard_queries(bindings: Mapping[str, Term]) -> dict[str, str]:
    """The four queries' texts with the task and dataset bound (VALUES blocks)."""
    queries = load_queries()
    return {name: with_values(queries[name].sparql, bindings) for name in QUERY_NAMES}


def leaderboard_iri(bindings: Mapping[str, Term], base_iri: str) -> str:
    return Iris(base_iri).leaderboard(bindings["task"].value, bindings["dataset"].value)


def resolve_board(store: GraphStore, task: str, dataset: str, base_iri: str) -> dict[str, Term]:
    """The task and dataset as a user names them (slug, name or label in any case, key or
    IRI: kg.query.resolve), as the queries' bound terms; a miss says what is near."""
    from kg.query.resolve import resolve

    task_iri = resolve(store, "task", task, base_iri, parameter="task").iri
    dataset_iri = resolve(store, "dataset", dataset, base_iri, parameter="dataset").iri
    return leaderboard_bindings(task_iri, dataset_iri, base_iri)


def load(store: GraphStore, task: str, dataset: str, base_iri: str) -> Leaderboard:
    """The leaderboard of `task` on `dataset` (named as `resolve_board` takes them)."""
    bindings = resolve_board(store, task, dataset, base_iri)
    rows = {}
    for name, sparql in leaderboard_queries(bindings).items():
        result = store.query(sparql)
        assert isinstance(result, SelectResult)
        rows[name] = result
    return build(bindings, base_iri, rows[RESULTS], rows[CODE], rows[SOURCE], rows[FLAGS])


# --- from rows to a leaderboard -------------------------------------------------------------


def _cell(row: Mapping[str, Term], name: str) -> str | None:
    term = row.get(name)
    return term.value if term is not None else None


def _local(iri: str, base_iri: str, kind: str) -> str:
    return iri.removeprefix(f"{base_iri}{kind}/")


def entry_of(row: Mapping[str, Term], flagged: Mapping[str, tuple[Flag, ...]]) -> Entry:
    """One row of `leaderboard-results` as an entry, with the flags of its result."""
    result = row["result"].value
    return Entry(
        result=result,
        metric=" ".join(row["metric"].value.split()),
        value=row["value"].value,
        number=decimal_value(_cell(row, "number")),
        percent=_cell(row, "percent") in ("true", "1"),
        spread=decimal_value(_cell(row, "spread")),
        model=_cell(row, "model"),
        paper=_cell(row, "paper"),
        title=_cell(row, "title"),
        date=(_cell(row, "date") or "")[:10] or None,
        paper_url=_cell(row, "paper_url"),
        flags=flagged.get(result, ()),
        extra={"true": True, "1": True, "false": False, "0": False}.get(_cell(row, "extra") or ""),
    )


def build(
    bindings: Mapping[str, Term],
    base_iri: str,
    results: SelectResult,
    code: SelectResult,
    source: SelectResult,
    flags: SelectResult | None = None,
) -> Leaderboard:
    """The leaderboard from the rows of its queries (NotFoundError if it has none)."""
    task, dataset = bindings["task"].value, bindings["dataset"].value
    source_rows = source.term_rows()
    flagged = by_result(flags) if flags is not None else {}
    entries: dict[str, list[Entry]] = {}
    for row in results.term_rows():
        entry = entry_of(row, flagged)
        entries.setdefault(entry.metric, []).append(entry)
    task_key, dataset_key = _local(task, base_iri, "task"), _local(dataset, base_iri, "dataset")
    if not entries and not source_rows:
        raise NotFoundError(
            f"no leaderboard for task {task_key!r} on dataset {dataset_key!r}: "
            "no result names both (check the slugs: `kg query leaderboard-results --describe`)"
        )
    sections = [section(metric, found) for metric, found in entries.items()]
    listed = [m for r in source_rows for m in (_cell(r, "metrics") or "").split(" | ") if m]
    order = {m.lower(): i for i, m in enumerate(dict.fromkeys(listed))}
    # the table's own metrics first, the most reported first; then any others
    sections.sort(key=lambda s: (s.metric.lower() not in order, -len(s.entries), s.metric))
    labels = [_cell(r, "label") for r in source_rows]
    label = next((lb.split(" | ")[0] for lb in labels if lb), f"{task_key} on {dataset_key}")
    return Leaderboard(
        iri=leaderboard_iri(bindings, base_iri),
        task=task,
        dataset=dataset,
        label=label,
        sections=tuple(sections),
        code=_code(code),
        sources=tuple(
            Source(
                dump=_cell(r, "dump"),
                archive=_cell(r, "archive"),
                snapshot=_cell(r, "snapshot"),
                licence=_cell(r, "licence"),
                attribution=_cell(r, "attribution"),
            )
            for r in source_rows
            if _cell(r, "dump")
        ),
    )


def _code(result: SelectResult) -> dict[str, tuple[Code, ...]]:
    """Each paper's code: official first, then the code its paper mentions, then the rest
    in the order its source lists them (`schema:position`), then by repository."""
    by: dict[str, list[tuple[tuple[Any, ...], Code]]] = {}
    for row in result.term_rows():
        pairs = []
        for pair in (_cell(row, "samples") or "").split():
            status, _, count = pair.rpartition(":")
            if status and count.isdigit():
                pairs.append((status, int(count)))
        code = Code(
            repo=row["repo"].value,
            url=_cell(row, "url"),
            official=_cell(row, "official") in ("true", "1"),
            framework=_cell(row, "framework"),
            samples=tuple(sorted(pairs)),
        )
        place = decimal_value(_cell(row, "position"))
        mentioned = _cell(row, "mentioned") in ("true", "1")
        key = (not code.official, not mentioned, place is None, place or 0, code.repo)
        by.setdefault(row["paper"].value, []).append((key, code))
    return {paper: tuple(c for _, c in sorted(codes)) for paper, codes in by.items()}


def section(metric: str, entries: Sequence[Entry]) -> Section:
    """One metric's entries ranked by its direction, with its best-so-far series."""
    direction = metric_direction(metric)
    ranked = rank(entries, direction)
    return Section(metric, direction, tuple(ranked), tuple(best_so_far(ranked, direction)))


def _better(a: Decimal, b: Decimal, direction: Direction) -> bool:
    return a < b if direction == "lower" else a > b


def rank(entries: Sequence[Entry], direction: Direction) -> list[Entry]:
    """Best first; equal values share a rank, the earlier paper first; no number, last."""
    sign = 1 if direction == "lower" else -1

    def key(e: Entry) -> tuple[Any, ...]:
        assert e.number is not None
        return (sign * e.number, e.date or "9999", e.model or "", e.result)

    numbered = sorted((e for e in entries if e.number is not None), key=key)
    rest = sorted((e for e in entries if e.number is None), key=lambda e: (e.model or "", e.result))
    out: list[Entry] = []
    for i, e in enumerate(numbered):
        same = out and out[-1].number == e.number
        out.append(_with_rank(e, out[-1].rank if same else i + 1))
    return out + rest


def _with_rank(e: Entry, rank: int | None) -> Entry:
    return replace(e, rank=rank)


def history_key(e: Entry, direction: Direction) -> tuple[Any, ...]:
    """The one order of a history: by date; on one date best first in the metric's direction
    (highest first where it is unknown), then by model name, then result IRI."""
    assert e.number is not None
    sign = 1 if direction == "lower" else -1
    return (e.date, sign * e.number, e.model or "", e.result)


def best_so_far(entries: Sequence[Entry], direction: Direction) -> list[Point]:
    """The chart's series: each dated, numbered result in `history_key` order, with the best
    so far (none where the direction is unknown)."""
    dated = sorted(
        (e for e in entries if e.number is not None and e.date),
        key=lambda e: history_key(e, direction),
    )
    points: list[Point] = []
    best: Decimal | None = None
    for e in dated:
        assert e.number is not None and e.date is not None
        new = direction != "unknown" and (best is None or _better(e.number, best, direction))
        if new:
            best = e.number
        points.append(
            Point(
                date=e.date,
                value=e.number,
                best=best,
                new_best=new,
                model=e.model,
                paper=e.paper or e.paper_url,
                title=e.title,
                result=e.result,
            )
        )
    return points


def metric_param(value: str | None) -> str | None:
    """A --metric / ?metric= value, checked: None when not given."""
    if value is None:
        return None
    if not value.strip():
        raise ParameterError("metric is empty: give a metric name, such as 'Top 1 Accuracy'")
    return value
