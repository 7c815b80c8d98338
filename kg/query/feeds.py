"""Feeds of new bests: every result that set a new best on its leaderboard and metric.

A feed covers every leaderboard, one task's or one dataset's. Its rows are those of
`leaderboard-results` and `leaderboard-source` with the task, the dataset or neither bound;
they are cut into leaderboards and built by kg.query.leaderboard.build, so a new best here is
exactly a point the leaderboard's chart marks as one (`Section.history`, `new_best`), with
the same dates, the same ties and the same directions; a metric whose direction kg cannot
tell (kg.query.directions) has no new best, so no entry. Entries are newest first (then by
leaderboard, metric and result IRI, so the order is stable), in pages of PAGE_SIZE.

An entry is known by its result's IRI, which hashes the result's task, dataset, metric,
model and value (kg.ingest.mapping.result_id): a re-ingest gives it the same id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from kg.errors import ParameterError
from kg.query.directions import Direction
from kg.query.leaderboard import (
    RESULTS,
    SOURCE,
    Entry,
    Leaderboard,
    Source,
    build,
    leaderboard_iri,
)
from kg.query.named import bind, load_queries, with_values
from kg.rdf.results import SelectResult, Term
from kg.rdf.store import GraphStore

Scope = Literal["all", "task", "dataset"]
PAGE_SIZE = 50  # entries per page of a feed (RFC 5005 paging links lead to the others)


@dataclass(frozen=True)
class NewBest:
    """A result that beat every earlier one on its leaderboard and metric."""

    board: str  # the leaderboard's IRI
    label: str  # "Image Classification on ImageNet"
    task: str
    dataset: str
    metric: str
    section: int  # the metric's place on the leaderboard page (its anchor is metric-<n>)
    direction: Direction
    entry: Entry
    date: str  # yyyy-mm-dd: the date the chart gives it
    previous: Decimal | None  # the best it beat; None for the first dated result
    sources: tuple[Source, ...]

    @property
    def id(self) -> str:
        """The entry's id: its result's IRI (stable across re-ingests)."""
        return self.entry.result


@dataclass(frozen=True)
class Feed:
    scope: Scope
    about: str | None  # the task's or the dataset's IRI; None for every leaderboard
    entries: tuple[NewBest, ...]  # newest first
    sources: tuple[Source, ...]  # every source of the leaderboards it covers, once each

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.entries) // PAGE_SIZE))

    def page(self, number: int) -> tuple[NewBest, ...]:
        """Page `number` (0 is the newest); a page past the last is a ParameterError."""
        if not 0 <= number < self.pages:
            raise ParameterError(
                f"{{parameter}}={number} is past the last page of this feed "
                f"(0 to {self.pages - 1})",
                parameter="page",
            )
        return self.entries[number * PAGE_SIZE : (number + 1) * PAGE_SIZE]

    @property
    def updated(self) -> str | None:
        """The newest date the feed shows: its newest entry's, or a later snapshot's."""
        dates = [e.date for e in self.entries[:1]]
        dates += [s.snapshot for s in self.sources if s.snapshot]
        return max(dates) if dates else None


def feed_bindings(scope: Scope, about: str | None, base_iri: str) -> dict[str, Term]:
    """The task or the dataset (an IRI, key or slug) bound as the queries take it."""
    if scope == "all":
        return {}
    assert about is not None
    return bind(load_queries()[RESULTS], {scope: about}, base_iri)


def feed_queries(bindings: Mapping[str, Term]) -> dict[str, str]:
    """The texts of the two queries a feed reads, with the task or dataset bound."""
    queries = load_queries()
    return {name: with_values(queries[name].sparql, bindings) for name in (RESULTS, SOURCE)}


def _split(result: SelectResult, key: str) -> dict[str, list[tuple[Term | None, ...]]]:
    at = result.variables.index(key)
    out: dict[str, list[tuple[Term | None, ...]]] = {}
    for row in result.rows:
        term = row[at]
        if term is not None:
            out.setdefault(term.value, []).append(row)
    return out


def boards(base_iri: str, results: SelectResult, source: SelectResult) -> Iterator[Leaderboard]:
    """Every leaderboard the rows of the two queries hold, each built as its page is."""
    board_at = {side: results.variables.index(side) for side in ("task", "dataset")}
    rows_of: dict[tuple[str, str], list[tuple[Term | None, ...]]] = {}
    for row in results.rows:
        on_task, on_dataset = row[board_at["task"]], row[board_at["dataset"]]
        if on_task is not None and on_dataset is not None:
            rows_of.setdefault((on_task.value, on_dataset.value), []).append(row)
    sources = _split(source, "leaderboard")
    empty = SelectResult([], [])
    for (task, dataset), rows in rows_of.items():
        bindings = {"task": Term("uri", task), "dataset": Term("uri", dataset)}
        iri = leaderboard_iri(bindings, base_iri)
        yield build(
            bindings,
            base_iri,
            SelectResult(results.variables, rows),
            empty,
            SelectResult(source.variables, sources.get(iri, [])),
        )


def feed(
    scope: Scope,
    about: str | None,
    base_iri: str,
    results: SelectResult,
    source: SelectResult,
) -> Feed:
    """The feed from the rows of its two queries: each leaderboard built as its page is."""
    entries: list[NewBest] = []
    seen_sources: list[Source] = []
    for board in boards(base_iri, results, source):
        seen_sources += [s for s in board.sources if s not in seen_sources]
        entries += new_bests(board)
    entries.sort(key=lambda e: (e.date, e.label, e.metric, e.id), reverse=True)
    # newest first; on one date the reverse of (label, metric, id), which is stable too
    return Feed(scope, about, tuple(entries), tuple(seen_sources))


def new_bests(board: Leaderboard) -> list[NewBest]:
    """The points of the board's charts that are new bests, with the best each one beat;
    none on a metric of unknown direction (kg claims no best it cannot tell)."""
    found = []
    for i, section in enumerate(board.sections):
        if section.direction == "unknown":
            continue
        by_result = {e.result: e for e in section.entries}
        previous: Decimal | None = None
        for point in section.history:
            if point.new_best:
                found.append(
                    NewBest(
                        board=board.iri,
                        label=board.label,
                        task=board.task,
                        dataset=board.dataset,
                        metric=section.metric,
                        section=i + 1,
                        direction=section.direction,
                        entry=by_result[point.result],
                        date=point.date,
                        previous=previous,
                        sources=board.sources,
                    )
                )
            previous = point.best
    return found


def load(store: GraphStore, scope: Scope, about: str | None, base_iri: str) -> Feed:
    """The feed of new bests on every leaderboard, or a task's or dataset's (named as
    kg.query.resolve takes them)."""
    if scope != "all":
        from kg.query.resolve import resolve

        assert about is not None
        about = resolve(store, scope, about, base_iri, parameter=scope).iri
    texts = feed_queries(feed_bindings(scope, about, base_iri))
    rows = {}
    for name, sparql in texts.items():
        result = store.query(sparql)
        assert isinstance(result, SelectResult)
        rows[name] = result
    return feed(scope, about, base_iri, rows[RESULTS], rows[SOURCE])
