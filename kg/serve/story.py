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

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from kg.graph.relations import RELATIONS
from kg.query.directions import metric_direction
from kg.query.named import sparql_term
from kg.rdf.results import AskResult, SelectResult, Term
from kg.rdf.vocab import PAPER_TO
from kg.serve.linked_data import Labeller, Value, local_href

KG_NS = "https://w3id.org/kg/ontology#"
PAGE_SIZE = 50
MAX_REPOSITORIES = 60
MAX_RESULTS = 200
MAX_SAMPLES = 500
SIMILAR_TOP = 10
SIMILAR_EXPLAIN = 4
#: Suggested links on a paper page (kg.graph.suggest; the JSON of `/suggest`).
SUGGEST_TOP = 8
#: The prefixes the page queries use.
PREFIXES = (
    "PREFIX kg: <https://w3id.org/kg/ontology#>\n"
    "PREFIX dcterms: <http://purl.org/dc/terms/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    "PREFIX foaf: <http://xmlns.com/foaf/0.1/>\n"
    "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
    "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
    "PREFIX schema: <https://schema.org/>\n"
    "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
)
#: Entity kinds whose pages list papers, and the relation that reaches them from a paper.
PAPER_LISTS = {
    "method": "methods",
    "task": "tasks",
    "dataset": "datasets",
    "author": "authors",
    "repository": "repositories",
}


def lower_is_better(metric: str) -> bool:
    """Whether a leaderboard metric ranks its lowest value first: the direction rule of
    kg.query.directions (a metric it cannot place ranks highest first, as before).

    >>> lower_is_better("Top 1 Accuracy"), lower_is_better("MAE"), lower_is_better("FID")
    (False, True, True)
    """
    return metric_direction(metric) == "lower"


def iri_term(iri: str) -> str:
    """An IRI as query text (checked by sparql_term: a path cannot inject SPARQL)."""
    return sparql_term(Term("uri", iri))


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
        "provenance": provenance_query(iri),
    }


def provenance_query(iri: str, *, graph: bool = False) -> str:
    """The graphs that state something about the entity, each with the record or dump it
    came from: file, archive, snapshot date, licence, attribution, republisher, ingest time.
    (The source footer of every page, and a paper's provenance section.)"""
    p = iri_term(iri)
    graphs = (
        f"VALUES ?graph {{ {p} }}"
        if graph
        else f"""{{ SELECT DISTINCT ?graph WHERE {{
    {{ GRAPH ?graph {{ {p} ?pp ?oo }} }} UNION {{ GRAPH ?graph {{ ?ss ?pp {p} }} }}
  }} LIMIT 60 }}"""
    )
    return (
        PREFIXES
        + f"""SELECT ?graph ?kind ?origin (MIN(?f) AS ?file) (MIN(?a) AS ?archive)
       (MIN(?sn) AS ?snapshot) (MIN(?lic) AS ?licence)
       (MIN(COALESCE(?gatt, ?att)) AS ?attribution)
       (MIN(?rep) AS ?republished) (MIN(?at) AS ?ingested) WHERE {{
  {graphs}
  OPTIONAL {{ ?graph prov:wasDerivedFrom ?dump }}
  BIND(COALESCE(?dump, ?graph) AS ?origin)
  BIND(IF(BOUND(?dump), "dump", "record") AS ?kind)
  FILTER EXISTS {{ ?origin a ?class VALUES ?class {{ kg:Record kg:Dump }} }}
  OPTIONAL {{ ?origin kg:sourceFile ?f }} OPTIONAL {{ ?origin kg:sourceArchive ?a }}
  OPTIONAL {{ ?origin kg:snapshot ?sn }} OPTIONAL {{ ?origin dcterms:license ?lic }}
  OPTIONAL {{ ?origin kg:attribution ?att }} OPTIONAL {{ ?graph kg:attribution ?gatt }}
  OPTIONAL {{ ?graph kg:republishedBy ?rep }}
  OPTIONAL {{ ?origin kg:ingestedAt ?at }}
}} GROUP BY ?graph ?kind ?origin ORDER BY ?kind ?graph LIMIT 100"""
    )



def store_sources_query(limit: int = 50) -> str:
    """The dumps and records of the whole store (the footer of pages drawn from all of it:
    search, named queries), each with its file, snapshot, licence and attribution."""
    return (
        PREFIXES
        + f"""SELECT ?origin (MIN(?f) AS ?file) (MIN(?a) AS ?archive) (MIN(?sn) AS ?snapshot)
       (MIN(?lic) AS ?licence) (MIN(?att) AS ?attribution) WHERE {{
  {{ SELECT ?origin WHERE {{ ?origin a kg:Dump }} LIMIT {limit} }}
  UNION {{ SELECT ?origin WHERE {{ ?origin a kg:Record }} LIMIT {limit} }}
  OPTIONAL {{ ?origin kg:sourceFile ?f }} OPTIONAL {{ ?origin kg:sourceArchive ?a }}
  OPTIONAL {{ ?origin kg:snapshot ?sn }} OPTIONAL {{ ?origin dcterms:license ?lic }}
  OPTIONAL {{ ?origin kg:attribution ?att }}
}} GROUP BY ?origin ORDER BY ?origin"""
    )

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


def as_number(text: str) -> Decimal | None:
    """A numeric literal's value, to compare as SPARQL does (None: NaN, or not a number).

    >>> as_number("78.57"), as_number("1.5E2"), as_number("NaN"), as_number("n/a")
    (Decimal('78.57'), Decimal('1.5E+2'), None, None)
    """
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return None if value.is_nan() else value


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
        value = as_number(number)
        if value is None:  # SPARQL's comparison would be an error: counted neither way
            return self.entries, 0, 0
        above = len(self.highs) - bisect.bisect_right(self.highs, value)
        return self.entries, above, bisect.bisect_left(self.lows, value)


def boards(rows: Sequence[Mapping[str, Term]]) -> dict[tuple[str, str], Board]:
    """The `ranks` query's rows as Boards, by (leaderboard IRI, metric name)."""

    def numbers(row: Mapping[str, Term], key: str) -> list[Decimal]:
        found = (as_number(text) for text in text_of(row, key).split())
        return sorted(n for n in found if n is not None)

    return {
        (r["lb"].value, r["metric"].value): Board(
            int_of(r, "entries"), numbers(r, "highs"), numbers(r, "lows")
        )
        for r in rows
        if "lb" in r and "metric" in r
    }


def add_ranks(results: Sequence[dict[str, Term]], ranks: Sequence[Mapping[str, Term]]) -> None:
    """Give each result with a number its entries, and the entries above and below it, on
    its leaderboard for its metric (as `entries`, `above`, `below` literals, for rank_of)."""
    by = boards(ranks)
    for r in results:
        if "lb" not in r or "num" not in r or r["num"].kind != "literal":
            continue
        board = by.get((r["lb"].value, r["metric"].value))
        if board is not None:
            entries, above, below = board.place(r["num"].value)
            r.update(
                entries=Term("literal", str(entries)),
                above=Term("literal", str(above)),
                below=Term("literal", str(below)),
            )


# --- paper lists (method, task, dataset, author, repository pages) -------------------------


def papers_path(kind: str) -> str | None:
    relation = PAPER_LISTS.get(kind)
    return RELATIONS[relation].path if relation else None


def papers_count_query(iri: str, kind: str) -> str:
    path = papers_path(kind)
    return f"SELECT (COUNT(DISTINCT ?paper) AS ?n) WHERE {{ ?paper {path} {iri_term(iri)} }}"


def papers_page_query(iri: str, kind: str, page: int) -> str:
    return (
        PREFIXES
        + f"""SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) WHERE {{
  ?paper {papers_path(kind)} {iri_term(iri)} .
  OPTIONAL {{ ?paper dcterms:title ?t }} OPTIONAL {{ ?paper dcterms:issued ?d }}
}} GROUP BY ?paper ORDER BY DESC(?date) ?title ?paper
LIMIT {PAGE_SIZE} OFFSET {PAGE_SIZE * page}"""
    )


# --- what the pages show -------------------------------------------------------------------


def rows_of(result: Any) -> list[dict[str, Term]]:
    if not isinstance(result, SelectResult):
        return []
    return [
        {v: t for v, t in zip(result.variables, row, strict=True) if t is not None}
        for row in result.rows
    ]


def text_of(row: Mapping[str, Term], key: str) -> str:
    term = row.get(key)
    return term.value if term is not None else ""


def int_of(row: Mapping[str, Term], key: str) -> int:
    text = text_of(row, key)
    return int(text) if text.isdigit() else 0


@dataclass
class PaperStory:
    """The rows behind a paper's sections (query results, and `similar`'s JSON)."""

    rows: dict[str, Any]
    similar: Mapping[str, Any] | None = None
    similar_error: str | None = None
    suggested: Mapping[str, Any] | None = None
    suggested_error: str | None = None


DC, RDFS = "http://purl.org/dc/terms/", "http://www.w3.org/2000/01/rdf-schema#"
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


def sample(r: Mapping[str, Term]) -> dict[str, Any]:
    """A harvested sample as the pages show it (status, level, entry, path, licence)."""
    level = text_of(r, "level")
    return {
        "status": text_of(r, "status") or "unknown",
        "level": int(level) if level.isdigit() else None,
        "entry": text_of(r, "entry") or None,
        "path": text_of(r, "path") or None,
        "file": text_of(r, "file") or None,
        "licence": text_of(r, "licence") or None,
    }


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


def sources(view: Labeller, rows: list[dict[str, Term]]) -> list[dict[str, Any]]:
    """The `sources` of a page's footer (see _source_license.html), one per record or dump,
    from the rows of a provenance query (`paper_queries`' or `sources_query`)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        origin = r.get("origin") or r.get("graph")
        if origin is None:
            continue
        found = out.setdefault(
            origin.value,
            {
                **view.link(origin.value),
                "label": text_of(r, "file") or text_of(r, "archive") or view.short(origin.value),
                "snapshot": text_of(r, "snapshot") or None,
                "licence": text_of(r, "licence") or None,
                "attribution": text_of(r, "attribution") or None,
            },
        )
        for key, name in (
            ("snapshot", "snapshot"),
            ("licence", "licence"),
            ("attribution", "attribution"),
        ):
            if not found[name] and text_of(r, key):
                found[name] = text_of(r, key)
    return list(out.values())


def _provenance(view: Labeller, rows: list[dict[str, Term]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        origin = r.get("origin")
        bits: list[tuple[str, Value]] = []
        if text_of(r, "kind") == "dump" and origin is not None:
            bits.append(("from the dump", view.link(origin.value)))
        for key, name in (("file", "file"), ("archive", "source"), ("snapshot", "snapshot")):
            if text_of(r, key):
                bits.append((name, {"text": text_of(r, key)}))
        for key, name in (
            ("licence", "licence"),
            ("attribution", "attribution"),
            ("republished", "republished by"),
        ):
            if key in r:
                bits.append((name, view.value(r[key])))
        if text_of(r, "ingested"):
            bits.append(("ingested", {"text": text_of(r, "ingested")}))
        out.append({"graph": view.link(r["graph"].value), "bits": bits})
    return out


def paper_context(view: Labeller, story: PaperStory) -> dict[str, Any]:
    """What the paper template shows, from the story's rows."""
    rows = {
        name: result if isinstance(result, list) else rows_of(result)
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
        "provenance": _provenance(view, rows.get("provenance", [])),
        "sources": sources(view, rows.get("provenance", [])),
    }


def paging(number: int, shown: int, total: int, size: int = PAGE_SIZE) -> dict[str, int]:
    """Where a page of a list is: {number, first, last, total} (first and last 1-based)."""
    return {
        "number": number,
        "first": number * size + 1,
        "last": number * size + shown,
        "total": total,
    }


def papers_context(view: Labeller, count: Any, papers: Any, number: int) -> dict[str, Any]:
    """An item's papers: this page of them, the count, and where the page is."""
    counted = rows_of(count)
    total = int_of(counted[0], "n") if counted else 0
    rows = rows_of(papers)
    return {
        "total": total,
        "papers": [
            {
                "paper": view.link(r["paper"].value, text_of(r, "title") or None),
                "date": text_of(r, "date"),
            }
            for r in rows
        ],
        "paging": paging(number, len(rows), total),
    }


# --- running them ---------------------------------------------------------------------------


def kind_of(iri: str, base: str) -> str | None:
    if not iri.startswith(base):
        return None
    rest = iri[len(base) :]
    head, _, tail = rest.partition("/")
    return head if tail else None


RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def typed(view: Labeller, cls: str) -> bool:
    """Whether the entity is stated to be a kg:`cls` (not a node minted under one)."""
    iri = view.desc.iri
    return any(
        s.value == iri and p.value == RDF_TYPE and o.value == KG_NS + cls
        for s, p, o in view.desc.outgoing
    )


def page_number(value: str | None) -> int:
    from kg.errors import ParameterError

    if value is None:
        return 0
    if not value.isdigit() or int(value) > 1_000_000:
        raise ParameterError(f"page={value[:20]!r} must be a whole number (0 is the first page)")
    return int(value)


def is_paper_query(iri: str) -> str:
    return f"ASK {{ {iri_term(iri)} a <{KG_NS}Paper> }}"


async def paper_story(pool: Any, iri: str, base: str) -> PaperStory:
    """Run a paper's queries and its similarity lookup in the pool, all at once."""
    import asyncio

    from kg.errors import KgError

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
        *(pool.result(queries[n]) for n in names), similar(), suggested()
    )
    data, error = found[-2]
    suggestions, suggestions_error = found[-1]
    results = dict(zip(names, found[:-2], strict=True))
    results["results"] = result_rows(rows_of(results["results"]))
    return PaperStory(results, data, error, suggestions, suggestions_error)


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


async def listed(pool: Any, name: str, **kwargs: Any) -> Any:
    """A list of kg.graph.lists from the matrix kept beside the store, run in a worker; None
    when it is not kept or the worker fails (the page then runs its SPARQL). The first list
    of a store version also makes the papers' order (two scans of the store: 1.5-3.4 s of
    CPU at 57,626 papers), so it gets the similarity lookup's time limit, not a query's: a
    worker killed at the query's limit would leave the next list to start it again."""
    from kg.errors import KgError
    from kg.serve.similar import GRAPH_TIMEOUT

    try:
        return await pool.graph(name, GRAPH_TIMEOUT, **kwargs)
    except KgError:
        return None


async def papers(pool: Any, view: Labeller, kind: str, number: int) -> dict[str, Any]:
    """An item's papers (through the relation of its kind), this page of them and the count:
    from the matrix kept beside the store (kg.graph.lists), else by SPARQL."""
    import asyncio

    iri = view.desc.iri
    found_list = await listed(
        pool,
        "item_papers",
        relation=PAPER_LISTS[kind],
        item=iri,
        offset=PAGE_SIZE * number,
        limit=PAGE_SIZE,
    )
    if found_list is not None:
        total = int(found_list["total"])
        shown = found_list["papers"]
        return {
            "total": total,
            "papers": [
                {"paper": view.link(p["paper"], p["title"] or None), "date": p["date"] or ""}
                for p in shown
            ],
            "paging": paging(number, len(shown), total),
        }
    count, found = await asyncio.gather(
        pool.result(papers_count_query(iri, kind)),
        pool.result(papers_page_query(iri, kind, number)),
    )
    return papers_context(view, count, found, number)
