"""The front page (`/`, templates/home.html): where a reader starts browsing.

It shows what the graph holds (counts of the main classes, the sources with their snapshot
dates and licences), the newest new bests (the site feed's latest entries, kg.serve.pages.feeds),
the most-used benchmarks (leaderboards by their number of results), and the areas, each
with its tasks (most leaderboards first) and its most-used benchmarks: from `/` a reader
reaches any leaderboard through its area and task, or the busiest ones directly.

`context` runs the page's queries in the worker pool at once and shapes their rows; the
server keeps the rendered page while the store stays the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from kg.query.feeds import Feed
from kg.serve.linked_data import Description, Labeller, local_href
from kg.serve.pages.provenance import store_sources
from kg.serve.pages.rows import KG_NS, PREFIXES, int_of, text_of

KG = KG_NS
#: The classes counted on the page, in the order shown, with their plural names.
COUNTED = (
    ("Paper", "papers"),
    ("Task", "tasks"),
    ("Dataset", "datasets"),
    ("Method", "methods"),
    ("Leaderboard", "leaderboards"),
    ("EvaluationResult", "results"),
    ("Repository", "code repositories"),
    ("Area", "areas"),
)
#: Leaderboards read by their number of results (the most-used benchmarks and each area's).
TOP_BOARDS = 1000
#: The most-used benchmarks shown across the store, and per area.
SHOWN_BOARDS = 12
AREA_BOARDS = 3
#: Tasks shown per area (the area's page lists all of them).
AREA_TASKS = 8
#: New bests shown (the site feed has them all).
NEW_BESTS = 8
#: The group of the tasks in no area (its "all tasks" link is `/tasks#other`).
OTHER = {"href": None, "label": "Tasks in no area", "iri": "", "short": None}


def counts_query() -> str:
    values = " ".join(f"kg:{name}" for name, _ in COUNTED)
    return (
        PREFIXES
        + f"SELECT ?class (COUNT(?s) AS ?n) WHERE {{ VALUES ?class {{ {values} }} ?s a ?class }} "
        "GROUP BY ?class"
    )


def areas_query() -> str:
    """Each task with its area (unbound for a task in none) and how many leaderboards it
    has."""
    return (
        PREFIXES
        + """SELECT ?area (MIN(STR(?al)) AS ?alabel) ?task (MIN(STR(?tl)) AS ?tlabel)
       (COUNT(DISTINCT ?lb) AS ?boards) WHERE {
  ?task a kg:Task . OPTIONAL { ?task rdfs:label ?tl }
  OPTIONAL { ?task kg:area ?area . OPTIONAL { ?area rdfs:label ?al } }
  OPTIONAL { ?lb kg:onTask ?task ; a kg:Leaderboard }
} GROUP BY ?area ?task"""
    )


def boards_query(limit: int = TOP_BOARDS) -> str:
    """The leaderboards with the most results, with their task and dataset and labels."""
    return (
        PREFIXES
        + f"""SELECT ?lb ?task ?dataset ?n (MIN(STR(?tl)) AS ?tlabel) (MIN(STR(?dl)) AS ?dlabel)
WHERE {{
  {{ SELECT ?lb (COUNT(?r) AS ?n) WHERE {{ ?r kg:inLeaderboard ?lb }}
     GROUP BY ?lb ORDER BY DESC(?n) ?lb LIMIT {limit} }}
  ?lb kg:onTask ?task ; kg:onDataset ?dataset .
  OPTIONAL {{ ?task rdfs:label ?tl }} OPTIONAL {{ ?dataset rdfs:label ?dl }}
}} GROUP BY ?lb ?task ?dataset ?n ORDER BY DESC(?n) ?lb"""
    )


def counts(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{name, n}] in `COUNTED`'s order (a class the store lacks counts 0)."""
    found = {r["class"].value.removeprefix(KG): int_of(r, "n") for r in rows if "class" in r}
    return [{"name": plural, "n": found.get(name, 0)} for name, plural in COUNTED]


def boards(view: Labeller, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaderboards, most results first: {leaderboard, task, dataset, n}."""
    out = []
    for r in rows:
        task, dataset = r["task"].value, r["dataset"].value
        out.append(
            {
                "leaderboard": view.link(r["lb"].value),
                "task": view.link(task, text_of(r, "tlabel") or None),
                "dataset": view.link(dataset, text_of(r, "dlabel") or None),
                "n": int_of(r, "n"),
            }
        )
    return out


def areas(
    view: Labeller,
    rows: Sequence[dict[str, Any]],
    top: Sequence[dict[str, Any]],
    shown: int | None = AREA_TASKS,
) -> list[dict[str, Any]]:
    """The areas, most tasks first, each with its tasks (most leaderboards first, then by
    name; the first `shown`, or all), how many it has, and its most-used benchmarks among
    `top`; the tasks in no area last, as an area with no IRI (`OTHER`)."""
    by_area: dict[str, dict[str, Any]] = {}
    area_of: dict[str, list[str]] = {}
    for r in rows:
        iri = r["area"].value if "area" in r else ""
        area = by_area.setdefault(
            iri,
            {
                "area": view.link(iri, text_of(r, "alabel") or None) if iri else dict(OTHER),
                "id": iri.rstrip("/").rsplit("/", 1)[-1] if iri else "other",
                "tasks": [],
            },
        )
        if "task" in r:
            task = r["task"].value
            area["tasks"].append(
                {"item": view.link(task, text_of(r, "tlabel") or None), "n": int_of(r, "boards")}
            )
            area_of.setdefault(task, []).append(iri)
    for area in by_area.values():
        area["tasks"].sort(key=lambda t: (-t["n"], (t["item"]["label"] or "").casefold()))
        area["task_count"] = len(area["tasks"])
        area["boards"] = []
    for board in top:
        for iri in area_of.get(board["task"]["iri"], []):
            its = by_area[iri]["boards"]
            if len(its) < AREA_BOARDS:
                its.append(board)
    for area in by_area.values():
        area["tasks"] = area["tasks"][:shown]
    return sorted(
        by_area.values(),
        key=lambda a: (
            not a["area"]["iri"],
            -a["task_count"],
            (a["area"]["label"] or a["area"]["iri"]).casefold(),
        ),
    )


def new_bests(found: Feed | None, base: str, n: int = NEW_BESTS) -> list[dict[str, Any]]:
    """The site feed's newest entries, as the page lists them."""
    if found is None:
        return []
    out = []
    for e in found.entries[:n]:
        entry = e.entry
        out.append(
            {
                "date": e.date or "",
                "model": entry.model or "(no model name)",
                "value": entry.value,
                "metric": e.metric,
                "board": {"href": local_href(e.board, base), "label": e.label, "iri": e.board},
                "section": e.section,
                "paper": {
                    "href": local_href(entry.paper, base) if entry.paper else entry.paper_url,
                    "label": entry.title or entry.paper or entry.paper_url,
                    "iri": entry.paper,
                }
                if entry.paper or entry.paper_url
                else None,
            }
        )
    return out


async def tasks_context(pool: Any, base: str) -> dict[str, Any]:
    """`/tasks`: every task, by area, each with its number of leaderboards."""
    view = Labeller(Description(base), base)
    found, footer = await asyncio.gather(
        pool.result(areas_query()), store_sources(pool, base)
    )
    return {
        "title": "tasks by area",
        "kind": "tasks",
        "areas": areas(view, found.term_rows(), (), shown=None),
        "sources": footer,
    }


async def context(
    pool: Any, base: str, feed: Any, timeout: float | None = None
) -> dict[str, Any]:
    """What the page shows (`feed`: an awaitable of the site feed, or of None; `timeout`:
    its queries' seconds instead of the pool's, for the warm-up)."""
    view = Labeller(Description(base), base)
    found_counts, found_areas, found_boards, footer, site_feed = await asyncio.gather(
        pool.result(counts_query(), timeout=timeout),
        pool.result(areas_query(), timeout=timeout),
        pool.result(boards_query(), timeout=timeout),
        store_sources(pool, base, timeout),
        feed,
    )
    top = boards(view, found_boards.term_rows())
    return {
        "title": "a knowledge graph of machine-learning research",
        "kind": "home",
        "counts": counts(found_counts.term_rows()),
        "areas": areas(view, found_areas.term_rows(), top),
        "boards": top[:SHOWN_BOARDS],
        "new_bests": new_bests(site_feed, base),
        "sources": footer,
        "feeds": [{"title": "kg: new bests on every leaderboard", "href": "/feeds/sota.atom"}],
    }
