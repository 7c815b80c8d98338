"""What an entity page tells a reader, above its property table.

A paper's page: its bibliographic data, authors, tasks and methods (linked to their pages
here), its repositories with the official and framework flags and the execution status of
the harvested samples, its leaderboard results with its rank on each leaderboard, its
similar papers with the shared items that explain each (kg.graph.similarity, the JSON of
`/similar`), and its provenance (which record or dump said it, licence and attribution).
A method, task, dataset, author or repository page: its papers, newest first, paged, with
the count.

The functions here build query text (IRIs through `sparql_term`, so a path cannot inject
SPARQL) and shape the rows into the context of templates/paper.html (and of the papers
list the item pages share); the server runs the queries in its worker pool, and
kg.serve.pages renders the templates.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kg.errors import KgError
from kg.rdf.results import AskResult, Term, decimal_value
from kg.rdf.vocab import PAPER_TO
from kg.serve.linked_data import Description, Labeller, Value, local_href, page_context
from kg.serve.pages import provenance as origins
from kg.serve.pages.provenance import provenance, sources
from kg.serve.pages.rows import (
    DC,
    KG_NS,
    PREFIXES,
    RDFS,
    int_of,
    iri_term,
    kind_of,
    lower_is_better,
    sample,
    text_of,
    typed,
)

MAX_REPOSITORIES = 60
MAX_RESULTS = 200
MAX_SAMPLES = 500
SIMILAR_TOP = 10
SIMILAR_EXPLAIN = 4
#: Suggested links on a paper page (kg.graph.suggest; the JSON of `/suggest`).
SUGGEST_TOP = 8

# --- paper queries --------------------------------------------------------------------------


def paper_queries(iri: str) -> dict[str, str]:
    """The SELECT queries behind a paper's sections, by section name."""
    p = iri_term(iri)
    return {
        "biblio": PREFIXES
        + f"""SELECT ?p ?o WHERE {{
  VALUES ?p {{ dcterms:title dcterms:issued kg:arxivId kg:pwcSlug dcterms:abstract
              rdfs:seeAlso kg:abstractPage kg:pdfPage kg:venue kg:conference kg:proceeding }}
  {p} ?p ?o }} LIMIT 50""",
        "authors": PREFIXES
        + f"""SELECT ?author (MIN(?n) AS ?name) (MIN(?pos) AS ?position) WHERE {{
  {p} dcterms:creator ?author .
  OPTIONAL {{ ?author foaf:name ?n }}
  OPTIONAL {{ {p} kg:authorship ?ship . ?ship kg:author ?author ; kg:position ?pos }}
}} GROUP BY ?author ORDER BY ?position ?name LIMIT 200""",
        "topics": PREFIXES
        + f"""SELECT ?role ?item (MIN(?l) AS ?label) WHERE {{
  {{ {p} {PAPER_TO.task} ?item BIND("task" AS ?role) }}
  UNION {{ {p} kg:introducesMethod ?item BIND("introduces" AS ?role) }}
  UNION {{ {p} kg:usesMethod ?item BIND("method" AS ?role) }}
  UNION {{ {p} kg:introducesDataset ?item BIND("dataset" AS ?role) }}
  OPTIONAL {{ ?item rdfs:label ?l }}
}} GROUP BY ?role ?item ORDER BY ?role ?label LIMIT 500""",
        "code": PREFIXES
        + f"""SELECT ?repo (MIN(?u) AS ?url) (MAX(?off) AS ?official) (MIN(?fw) AS ?framework)
WHERE {{
  {p} kg:codeLink ?c . ?c kg:repository ?repo .
  OPTIONAL {{ ?c kg:linkedUrl ?u }} OPTIONAL {{ ?c kg:isOfficial ?off }}
  OPTIONAL {{ ?c kg:framework ?fw }}
}} GROUP BY ?repo ORDER BY DESC(?official) ?repo LIMIT {MAX_REPOSITORIES + 1}""",
        # One row per harvested sample; those with no repository get a row of their own.
        "samples": PREFIXES
        + f"""SELECT ?sample (MIN(?r) AS ?repo) (MIN(?st) AS ?status) (MIN(?lv) AS ?level)
       (MIN(?en) AS ?entry) (MIN(?fp) AS ?path) (MIN(?fu) AS ?file) (MIN(?li) AS ?licence)
WHERE {{
  {p} kg:hasSample ?sample .
  OPTIONAL {{ ?sample kg:repository ?r }} OPTIONAL {{ ?sample kg:executionStatus ?st }}
  OPTIONAL {{ ?sample kg:verificationLevel ?lv }} OPTIONAL {{ ?sample kg:entry ?en }}
  OPTIONAL {{ ?sample kg:filePath ?fp }} OPTIONAL {{ ?sample kg:fileUrl ?fu }}
  OPTIONAL {{ ?sample kg:licenceName ?li }}
}} GROUP BY ?sample ORDER BY ?repo ?path ?entry LIMIT {MAX_SAMPLES}""",
        "code_count": PREFIXES
        + f"SELECT (COUNT(DISTINCT ?repo) AS ?n) WHERE {{ {p} kg:hasRepository ?repo }}",
        # Each result's own triples, pivoted in Python (faster than an OPTIONAL per field).
        # The default graph is the merge, each triple once: no GRAPH ?g needed.
        "results": PREFIXES
        + f"""SELECT DISTINCT ?result ?p ?o WHERE {{
  {p} kg:hasResult ?result . ?result ?p ?o }} LIMIT {MAX_RESULTS * 12}""",
        # For each leaderboard the paper is on, and each metric there: the entries, and
        # each entry's highest and lowest number (add_ranks places the paper's own).
        # Each entry is read once per leaderboard, not once per result of the paper.
        "ranks": PREFIXES
        + f"""SELECT ?lb ?metric (COUNT(?other) AS ?entries) (GROUP_CONCAT(STR(?hi)) AS ?highs)
       (GROUP_CONCAT(STR(?lo)) AS ?lows) WHERE {{
  {{ SELECT ?lb ?metric ?other (MAX(?on) AS ?hi) (MIN(?on) AS ?lo) WHERE {{
    {{ SELECT DISTINCT ?lb WHERE {{ {p} kg:hasResult ?r . ?r kg:inLeaderboard ?lb }} }}
    ?other kg:inLeaderboard ?lb ; kg:metricName ?metric ; kg:metricNumber ?on
  }} GROUP BY ?lb ?metric ?other }}
}} GROUP BY ?lb ?metric""",
        "labels": PREFIXES
        + f"""SELECT ?x (MIN(?l) AS ?label) WHERE {{
  {{ SELECT DISTINCT ?x WHERE {{ {p} kg:hasResult ?r . ?r kg:onTask|kg:onDataset ?x }} }}
  ?x rdfs:label ?l }} GROUP BY ?x""",
    }


_RESULT_FIELDS = {
    KG_NS + "inLeaderboard": "lb",
    KG_NS + "onTask": "task",
    KG_NS + "onDataset": "dataset",
    KG_NS + "metricName": "metric",
    KG_NS + "metricValue": "value",
    KG_NS + "metricNumber": "num",
    KG_NS + "modelName": "model",
}


def result_rows(triples: Sequence[Mapping[str, Term]]) -> list[dict[str, Term]]:
    """The `results` query's triples as one row per result (metric and value required)."""
    by: dict[str, dict[str, Term]] = {}
    for t in triples:
        key = _RESULT_FIELDS.get(t["p"].value)
        if key is not None:
            by.setdefault(t["result"].value, {"result": t["result"]}).setdefault(key, t["o"])
    rows = [r for r in by.values() if "metric" in r and "value" in r]
    return sorted(
        rows, key=lambda r: (text_of(r, "task"), text_of(r, "dataset"), text_of(r, "metric"))
    )[:MAX_RESULTS]


@dataclass(frozen=True)
class Board:
    """The entries for one metric on one leaderboard: how many, and their numbers (an
    entry's highest and lowest, sorted, to count the entries above and below a value)."""

    entries: int
    highs: list[Decimal]
    lows: list[Decimal]

    def place(self, number: str) -> tuple[int, int, int]:
        """(entries, above, below) for a value: the entries with a number above it, below it.

        >>> numbers = [Decimal(n) for n in (1, 2, 2, 5)]
        >>> Board(4, numbers, numbers).place("2"), Board(4, numbers, numbers).place("-")
        ((4, 1, 1), (4, 0, 0))
        """
        value = decimal_value(number)
        if value is None:  # SPARQL's comparison would be an error: counted neither way
            return self.entries, 0, 0
        above = len(self.highs) - bisect.bisect_right(self.highs, value)
        return self.entries, above, bisect.bisect_left(self.lows, value)


def boards(rows: Sequence[Mapping[str, Term]]) -> dict[tuple[str, str], Board]:
    """The `ranks` query's rows as Boards, by (leaderboard IRI, metric name)."""

    def numbers(row: Mapping[str, Term], key: str) -> list[Decimal]:
        found = (decimal_value(text) for text in text_of(row, key).split())
        return sorted(n for n in found if n is not None)

    out = {}
    for r in rows:
        if "lb" in r and "metric" in r:
            highs = numbers(r, "highs")
            # the entries ranked: those with a finite number, as on the leaderboard page
            entries = min(int_of(r, "entries"), len(highs))
            out[(r["lb"].value, r["metric"].value)] = Board(entries, highs, numbers(r, "lows"))
    return out


def add_ranks(results: Sequence[dict[str, Term]], ranks: Sequence[Mapping[str, Term]]) -> None:
    """Give each result with a number its entries, and the entries above and below it, on
    its leaderboard for its metric (as `entries`, `above`, `below` literals, for rank_of).
    A number that is none kg ranks (NaN, ±Infinity: `decimal_value`) gets no rank, as on
    the leaderboard page (kg.query.leaderboard ranks it last, unranked)."""
    by = boards(ranks)
    for r in results:
        if "lb" not in r or "num" not in r or r["num"].kind != "literal":
            continue
        if decimal_value(r["num"].value) is None:
            continue
        board = by.get((r["lb"].value, r["metric"].value))
        if board is not None:
            entries, above, below = board.place(r["num"].value)
            r.update(
                entries=Term("literal", str(entries)),
                above=Term("literal", str(above)),
                below=Term("literal", str(below)),
            )


@dataclass
class PaperStory:
    """The rows behind a paper's sections (query results, and `similar`'s JSON)."""

    rows: dict[str, Any]
    similar: Mapping[str, Any] | None = None
    similar_error: str | None = None
    suggested: Mapping[str, Any] | None = None
    suggested_error: str | None = None


_FACTS = (
    (DC + "issued", "published"),
    (KG_NS + "arxivId", "arXiv"),
    (KG_NS + "venue", "venue"),
    (KG_NS + "conference", "conference"),
    (KG_NS + "proceeding", "proceedings"),
)


def _biblio(view: Labeller, rows: list[dict[str, Term]]) -> dict[str, Any]:
    by: dict[str, list[Term]] = {}
    for row in rows:
        by.setdefault(row["p"].value, []).append(row["o"])
    facts = [(name, view.value(term)) for key, name in _FACTS for term in by.get(key, [])]
    links = [
        view.value(t)
        for k in (RDFS + "seeAlso", KG_NS + "abstractPage", KG_NS + "pdfPage")
        for t in by.get(k, [])
    ]
    abstract = by.get(DC + "abstract", [])
    return {"facts": facts, "links": links, "abstract": abstract[0].value if abstract else None}


def _topics(view: Labeller, rows: list[dict[str, Term]]) -> list[dict[str, Any]]:
    groups: dict[str, list[Value]] = {}
    for r in rows:
        groups.setdefault(text_of(r, "role"), []).append(
            view.link(r["item"].value, text_of(r, "label") or None)
        )
    names = (
        ("task", "Tasks"),
        ("introduces", "Methods introduced"),
        ("method", "Methods used"),
        ("dataset", "Datasets introduced"),
    )
    return [{"title": title, "items": groups[role]} for role, title in names if role in groups]


def _code(
    view: Labeller, rows: list[dict[str, Term]], samples: list[dict[str, Term]], total: int
) -> dict[str, Any] | None:
    """The repositories (official ones first) with their harvested samples; samples that
    name no repository, or one outside the list shown, get rows of their own."""
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for r in samples:
        by_repo.setdefault(text_of(r, "repo"), []).append(sample(r))
    if not rows and not by_repo:
        return None
    shown = rows[:MAX_REPOSITORIES]
    repos = []
    for r in shown:
        repo = r["repo"].value
        repos.append(
            {
                "repo": view.link(repo),
                "url": text_of(r, "url") or None,
                "official": text_of(r, "official") == "true",
                "framework": text_of(r, "framework") or None,
                "samples": by_repo.pop(repo, []),
            }
        )
    for repo, found in sorted(by_repo.items()):
        repos.append(
            {
                "repo": view.link(repo) if repo else None,
                "url": None,
                "official": False,
                "framework": None,
                "samples": found,
            }
        )
    count = max(total, len(rows))
    return {"repositories": repos, "count": count, "shown": len(shown)}


def rank_of(row: Mapping[str, Term]) -> tuple[int, int] | None:
    """(rank, entries) of a result on its leaderboard for its metric, best first."""
    entries = int_of(row, "entries")
    if not entries or "lb" not in row:
        return None
    ahead = (
        int_of(row, "below") if lower_is_better(text_of(row, "metric")) else int_of(row, "above")
    )
    return ahead + 1, entries


def _benchmarks(view: Labeller, rows: list[dict[str, Term]]) -> list[dict[str, Any]]:
    """The paper's results grouped per benchmark (task, dataset) as Papers with Code showed
    them: a row per model, a column per metric (the most reported first), each value with
    its rank on that leaderboard and metric; rows by their rank on the first metric."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        task = r["task"].value if "task" in r else ""
        dataset = r["dataset"].value if "dataset" in r else ""
        group = groups.setdefault(
            (task, dataset),
            {
                "task": view.link(task) if task else None,
                "dataset": view.link(dataset) if dataset else None,
                "board": view.href(r["lb"].value) if "lb" in r else None,
                "metrics": {},
                "rows": [],
            },
        )
        if group["board"] is None and "lb" in r:
            group["board"] = view.href(r["lb"].value)
        metric, model = text_of(r, "metric"), text_of(r, "model")
        group["metrics"][metric] = group["metrics"].get(metric, 0) + 1
        cell = {"value": text_of(r, "value"), "rank": rank_of(r)}
        row = next(
            (x for x in group["rows"] if x["model"] == model and metric not in x["cells"]), None
        )
        if row is None:
            row = {"model": model, "cells": {}}
            group["rows"].append(row)
        row["cells"][metric] = cell
    out = []
    for group in groups.values():
        counts: dict[str, int] = group["metrics"]
        metrics = sorted(counts, key=lambda m: (-counts[m], m))

        def order(row: dict[str, Any], metrics: list[str] = metrics) -> tuple[Any, ...]:
            ranks = [(row["cells"].get(m) or {}).get("rank") for m in metrics]
            return (*(r[0] if r else 10**9 for r in ranks), row["model"])

        out.append(
            {
                **group,
                "metrics": metrics,
                "rows": [
                    {"model": row["model"], "cells": [row["cells"].get(m) for m in metrics]}
                    for row in sorted(group["rows"], key=order)
                ],
                "count": sum(counts.values()),
            }
        )
    return out


def _results(view: Labeller, rows: list[dict[str, Term]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        out.append(
            {
                "task": view.link(r["task"].value) if "task" in r else None,
                "dataset": view.link(r["dataset"].value) if "dataset" in r else None,
                "metric": text_of(r, "metric"),
                "value": text_of(r, "value"),
                "model": text_of(r, "model"),
                "rank": rank_of(r),
            }
        )
    return out


def _similar(view: Labeller, story: PaperStory) -> dict[str, Any]:
    if story.similar_error:
        return {"error": story.similar_error, "results": []}
    data = story.similar or {}
    results = []
    for m in data.get("results", []):
        shared = m.get("shared", [])
        results.append(
            {
                "paper": view.link(m["paper"], m["title"]),
                "score": m["score"],
                "shared": [
                    {
                        "item": view.link(s["iri"], s["label"]),
                        "relation": s["relation"],
                        "papers": s["papers"],
                    }
                    for s in shared[:SIMILAR_EXPLAIN]
                ],
                "more": max(0, len(shared) - SIMILAR_EXPLAIN),
            }
        )
    return {
        "error": None,
        "results": results,
        "by": ", ".join(data.get("by", [])),
        "metric": str(data.get("metric")),
        "href": local_href(view.desc.iri, view.base) and "/similar/" + _paper_key(view),
    }


def _suggested(view: Labeller, story: PaperStory) -> dict[str, Any]:
    if story.suggested_error:
        return {"error": story.suggested_error, "results": []}
    data = story.suggested or {}
    results = []
    for s in data.get("suggestions", []):
        why = s.get("because", {})
        results.append(
            {
                "item": view.link(s["item"], s["label"]),
                "kind": s["kind"],
                "score": s["score"],
                "papers": s["papers"],
                "similar": [
                    {"paper": view.link(p["paper"], p["title"]), "similarity": p["similarity"]}
                    for p in why.get("similar_papers", [])
                ],
                "cooccurring": [
                    {
                        "item": view.link(c["item"], c["label"]),
                        "kind": c["kind"],
                        "together": c["together"],
                        "papers": c["papers"],
                    }
                    for c in why.get("cooccurring", [])
                ],
                "text": [t["text"] for t in why.get("text", [])],
            }
        )
    return {
        "error": None,
        "results": results,
        "href": local_href(view.desc.iri, view.base) and "/suggest/" + _paper_key(view),
    }


def _paper_key(view: Labeller) -> str:
    iri = view.desc.iri
    return iri[len(view.base) :] if iri.startswith(view.base + "paper/") else iri
def paper_context(view: Labeller, story: PaperStory) -> dict[str, Any]:
    """What the paper template shows, from the story's rows."""
    rows = {
        name: result if isinstance(result, list) else result.term_rows()
        for name, result in story.rows.items()
    }
    results = rows.get("results", [])
    shown = {r[k].value for r in results for k in ("task", "dataset") if k in r}
    for r in rows.get("labels", []):  # the labels of the results' tasks and datasets shown
        if r["x"].value in shown:
            view.label(r["x"].value, text_of(r, "label"))
    add_ranks(results, rows.get("ranks", []))
    total = int_of(rows["code_count"][0], "n") if rows.get("code_count") else 0
    authors = rows.get("authors", [])
    return {
        "biblio": _biblio(view, rows.get("biblio", [])),
        "authors": [view.link(r["author"].value, text_of(r, "name") or None) for r in authors],
        "topics": _topics(view, rows.get("topics", [])),
        "code": _code(view, rows.get("code", []), rows.get("samples", []), total),
        "results": _results(view, results),
        "benchmarks": _benchmarks(view, results),
        "similar": _similar(view, story),
        "suggested": _suggested(view, story),
        "provenance": provenance(view, rows.get("provenance", [])),
        "sources": sources(view, rows.get("provenance", [])),
    }


def is_paper_query(iri: str) -> str:
    return f"ASK {{ {iri_term(iri)} a <{KG_NS}Paper> }}"


async def paper_story(pool: Any, iri: str, base: str) -> PaperStory:
    """Run a paper's queries and its similarity lookup in the pool, all at once."""
    queries = paper_queries(iri)
    names = list(queries)

    async def similar() -> tuple[Mapping[str, Any] | None, str | None]:
        try:
            from kg.serve.similar import GRAPH_TIMEOUT

            data = await pool.graph(
                "similar",
                GRAPH_TIMEOUT,
                paper=iri,
                base_iri=base,
                by="all",
                metric="idf",
                top=SIMILAR_TOP,
            )
            return data, None
        except KgError as exc:
            return None, f"Similar papers are not available: {exc}"

    async def suggested() -> tuple[Mapping[str, Any] | None, str | None]:
        try:
            from kg.serve.similar import GRAPH_TIMEOUT

            data = await pool.graph(
                "suggest", GRAPH_TIMEOUT, paper=iri, base_iri=base, kind=None, top=SUGGEST_TOP
            )
            return data, None
        except KgError as exc:
            return None, f"Suggested links are not available: {exc}"

    found = await asyncio.gather(
        *(pool.result(queries[n]) for n in names),
        similar(),
        suggested(),
        origins.rows(pool, iri),
    )
    data, error = found[-3]
    suggestions, suggestions_error = found[-2]
    results = dict(zip(names, found[:-3], strict=True))
    results["provenance"] = found[-1]
    results["results"] = result_rows(results["results"].term_rows())
    return PaperStory(results, data, error, suggestions, suggestions_error)


async def page(
    pool: Any, iri: str, base: str, described: Awaitable[Description]
) -> dict[str, Any] | None:
    """A paper's page context: its story (after one ASK that it is a kg:Paper) gathered
    while the server reads the entity's description (`described`, already running), then
    the two shaped together. None where the IRI names no paper, or a graph: the entity's
    own page then shows it."""
    desc, found = await asyncio.gather(described, early_story(pool, iri, base))
    view = Labeller(desc, base)
    if found is None or desc.is_graph or not typed(view, "Paper"):
        return None
    context: dict[str, Any] = page_context(desc, view)
    context.update(paper_context(view, found), folded=True)
    return context


async def early_story(pool: Any, iri: str, base: str) -> PaperStory | None:
    """A paper's story, started while the server still reads the entity's description:
    the workers that would wait for the description meanwhile run the story's queries.
    None (after one ASK) for an IRI under paper/ that is no kg:Paper."""
    if kind_of(iri, base) != "paper":
        return None
    typed = await pool.result(is_paper_query(iri))
    if not (isinstance(typed, AskResult) and typed.value):
        return None
    return await paper_story(pool, iri, base)


