"""The pages of the things papers are about: task, dataset, method, collection, area, author,
repository, and the sources (a dump snapshot, a record's graph).

Each kind has a builder: it runs the kind's SELECT queries in the worker pool at once and
shapes their rows into the context of the kind's template (`templates/<kind>.html`). IRIs
enter query text only through `sparql_term` (kg.serve.pages.rows.iri_term), so a path cannot
inject SPARQL. The lists they share (an item's papers, counted items) are kg.serve.pages.lists.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from kg.ingest.identity import possibly_same_dataset
from kg.query.directions import metric_direction
from kg.rdf.results import decimal_value
from kg.rdf.vocab import STD
from kg.serve.linked_data import Labeller
from kg.serve.pages import provenance
from kg.serve.pages.lists import (
    MAX_LIST,
    Rows,
    counted,
    counted_papers,
    counted_query,
    facts,
    facts_query,
    first,
    gather,
    introducing_query,
    labelled,
    labelled_query,
    links,
    paper_links,
    shared,
)
from kg.serve.pages.lists import (
    papers as item_papers,
)
from kg.serve.pages.provenance import sources
from kg.serve.pages.rows import (
    DC,
    KG_NS,
    PAGE_SIZE,
    PREFIXES,
    RDF_TYPE,
    RDFS,
    int_of,
    iri_term,
    lower_is_better,
    paging,
    sample,
    text_of,
)

KG = KG_NS
MAX_BENCHMARK_ROWS = 50_000
#: Samples listed on a repository's page.
MAX_SAMPLES = 500

Builder = Callable[[Any, Labeller, int], Awaitable[dict[str, Any]]]


# --- benchmarks: leaderboards with their best result ---------------------------------------


def benchmarks_query(iri: str, on: str) -> str:
    """Every numbered result on the leaderboards of a task (`on` = kg:onTask) or a dataset
    (kg:onDataset), with the leaderboard's other side, model, value and paper."""
    other = "kg:onDataset" if on == "kg:onTask" else "kg:onTask"
    return (
        PREFIXES
        + f"""SELECT ?lb ?other ?metric ?num ?value ?model ?paper WHERE {{
  ?lb {on} {iri_term(iri)} ; {other} ?other .
  ?r kg:inLeaderboard ?lb ; kg:metricName ?metric .
  OPTIONAL {{ ?r kg:metricNumber ?num }} OPTIONAL {{ ?r kg:metricValue ?value }}
  OPTIONAL {{ ?r kg:modelName ?model }} OPTIONAL {{ ?paper kg:hasResult ?r }}
}} LIMIT {MAX_BENCHMARK_ROWS}"""
    )


def benchmark_labels_query(iri: str, on: str) -> str:
    """Labels of the other side of the leaderboards, and titles and dates of their papers."""
    other = "kg:onDataset" if on == "kg:onTask" else "kg:onTask"
    return (
        PREFIXES
        + f"""SELECT ?x (MIN(?l) AS ?label) (MIN(?d) AS ?date) WHERE {{
  {{ SELECT DISTINCT ?x WHERE {{
    {{ ?lb {on} {iri_term(iri)} ; {other} ?x }}
    UNION {{ ?lb {on} {iri_term(iri)} . ?r kg:inLeaderboard ?lb . ?x kg:hasResult ?r }}
  }} }}
  OPTIONAL {{ ?x rdfs:label|dcterms:title ?l }} OPTIONAL {{ ?x dcterms:issued ?d }}
}} GROUP BY ?x"""
    )


def benchmarks(view: Labeller, rows: Rows, labels: Rows) -> list[dict[str, Any]]:
    """One row per leaderboard and metric: its results counted, and the best one now (the
    highest value unless the metric's name says lower is better: rows.lower_is_better)."""
    dates: dict[str, str] = {}
    for r in labels:
        if "label" in r:
            view.label(r["x"].value, r["label"].value)
        if "date" in r:
            dates[r["x"].value] = r["date"].value
    boards: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["lb"].value, text_of(r, "metric"))
        board = boards.setdefault(
            key,
            {
                "leaderboard": view.link(r["lb"].value),
                "other": view.link(r["other"].value),
                "metric": key[1],
                "count": 0,
                "best": None,
                "_best": None,
            },
        )
        board["count"] += 1
        number = decimal_value(text_of(r, "num"))
        if number is None or metric_direction(key[1]) == "unknown":
            continue  # no best where kg cannot tell which way the metric improves
        lower = lower_is_better(key[1])
        best = board["_best"]
        if best is None or (number < best if lower else number > best):
            paper = r.get("paper")
            board["_best"] = number
            board["best"] = {
                "value": text_of(r, "value") or text_of(r, "num"),
                "model": text_of(r, "model"),
                "paper": view.link(paper.value) if paper is not None else None,
                "date": dates.get(paper.value, "") if paper is not None else "",
            }
    out = sorted(
        boards.values(),
        key=lambda b: (-b["count"], str(b["other"]["label"] or b["other"]["iri"]), b["metric"]),
    )
    for b in out:
        del b["_best"]
    return out


# --- the kinds ------------------------------------------------------------------------------


async def task_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    t = iri_term(iri)
    found, papers, methods = await asyncio.gather(
        gather(
            pool,
            {
                "facts": facts_query(
                    iri, "rdfs:label dcterms:description kg:area kg:subtaskOf skos:altLabel"
                ),
                "subtasks": labelled_query(f"?item kg:subtaskOf {t}"),
                "datasets": labelled_query(f"?item kg:usedForTask {t}"),
                "benchmarks": benchmarks_query(iri, "kg:onTask"),
                "labels": benchmark_labels_query(iri, "kg:onTask"),
            },
        ),
        item_papers(pool, view, "task", number),
        shared(pool, view, relation="tasks", item=iri, other="methods"),
    )
    f = facts(view, found["facts"])
    return {
        "description": first(f, DC + "description"),
        "area": links(view, f, KG + "area"),
        "parent": links(view, f, KG + "subtaskOf"),
        "synonyms": [t.value for t in f.get("http://www.w3.org/2004/02/skos/core#altLabel", [])],
        "subtasks": labelled(view, found["subtasks"]),
        "datasets": labelled(view, found["datasets"]),
        "benchmarks": benchmarks(view, found["benchmarks"], found["labels"]),
        "methods": methods,
        "papers": papers,
    }


async def possibly_same(pool: Any, view: Labeller, iri: str, label: str | None) -> list[Any]:
    """The datasets whose name may name this one (kg.ingest.identity.possibly_same_dataset:
    "Oxford 102 Flowers" and "Flowers-102"), read among those whose label has its longest
    word."""
    words = sorted({w for w in re.findall(r"[a-z]+", (label or "").lower()) if len(w) >= 3},
                   key=len)[-2:]  # one of the two longest is in the other name
    if not label or not words:
        return []
    has = " || ".join(f'CONTAINS(LCASE(STR(?l)), "{w}")' for w in words)
    rows = await gather(
        pool,
        {
            "alike": PREFIXES
            + f"""SELECT ?x ?l WHERE {{ ?x a kg:Dataset ; rdfs:label ?l
  FILTER(?x != {iri_term(iri)} && ({has})) }} LIMIT 500"""
        },
    )
    same = [r for r in rows["alike"] if possibly_same_dataset(label, r["l"].value)]
    for r in same:
        view.label(r["x"].value, r["l"].value)
    return [view.link(r["x"].value) for r in same]


async def dataset_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    d = iri_term(iri)
    found, papers = await asyncio.gather(
        gather(
            pool,
            {
                "facts": facts_query(
                    iri,
                    "rdfs:label kg:fullName dcterms:description foaf:homepage rdfs:seeAlso "
                    "kg:introducedDate kg:modality kg:language kg:variant kg:paperCount "
                    "kg:subdatasetOf",
                ),
                "introduced": introducing_query(iri, "kg:introducesDataset"),
                "tasks": labelled_query(
                    f"{{ {d} kg:usedForTask ?item }} "
                    f"UNION {{ ?lb kg:onDataset {d} ; kg:onTask ?item }}"
                ),
                "benchmarks": benchmarks_query(iri, "kg:onDataset"),
                "labels": benchmark_labels_query(iri, "kg:onDataset"),
                "loaders": PREFIXES
                + f"""SELECT ?loader (MIN(?u) AS ?url) (MIN(?r) AS ?repo)
       (GROUP_CONCAT(DISTINCT ?fw; separator=", ") AS ?frameworks) WHERE {{
  {d} kg:dataLoader ?loader . OPTIONAL {{ ?loader kg:linkedUrl ?u }}
  OPTIONAL {{ ?loader kg:repository ?r }} OPTIONAL {{ ?loader kg:framework ?fw }}
}} GROUP BY ?loader LIMIT 50""",
            },
        ),
        item_papers(pool, view, "dataset", number),
    )
    f = facts(view, found["facts"])
    alike = await possibly_same(pool, view, iri, first(f, RDFS + "label"))
    return {
        "alike": alike,
        "full_name": first(f, KG + "fullName"),
        "description": first(f, DC + "description"),
        "homepage": links(view, f, "http://xmlns.com/foaf/0.1/homepage"),
        "elsewhere": links(view, f, RDFS + "seeAlso"),
        "introduced_date": first(f, KG + "introducedDate"),
        "details": [
            (name, [t.value for t in f.get(KG + key, [])])
            for key, name in (
                ("modality", "modalities"),
                ("language", "languages"),
                ("variant", "variants"),
            )
            if f.get(KG + key)
        ],
        "parent": links(view, f, KG + "subdatasetOf"),
        "dump_count": first(f, KG + "paperCount"),
        "introduced": paper_links(view, found["introduced"]),
        "tasks": labelled(view, found["tasks"]),
        "loaders": [
            {
                "url": text_of(r, "url") or None,
                "repo": view.link(r["repo"].value) if "repo" in r else None,
                "frameworks": text_of(r, "frameworks"),
            }
            for r in found["loaders"]
        ],
        "benchmarks": benchmarks(view, found["benchmarks"], found["labels"]),
        "papers": papers,
    }


async def method_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    found, papers = await asyncio.gather(
        gather(
            pool,
            {
                "facts": facts_query(
                    iri,
                    "rdfs:label kg:fullName dcterms:description kg:introducedYear kg:sourceUrl "
                    "kg:sourceTitle kg:codeSnippet kg:paperCount kg:inCollection rdfs:seeAlso",
                ),
                "introduced": introducing_query(iri, "kg:introducesMethod"),
            },
        ),
        item_papers(pool, view, "method", number),
    )
    f = facts(view, found["facts"])
    return {
        "full_name": first(f, KG + "fullName"),
        "description": first(f, DC + "description"),
        "introduced_year": first(f, KG + "introducedYear"),
        "source": {"url": first(f, KG + "sourceUrl"), "title": first(f, KG + "sourceTitle")},
        "code_snippet": first(f, KG + "codeSnippet"),
        "dump_count": first(f, KG + "paperCount"),
        "collections": links(view, f, KG + "inCollection"),
        "elsewhere": links(view, f, RDFS + "seeAlso"),
        "introduced": paper_links(view, found["introduced"]),
        "papers": papers,
    }


async def collection_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    c = iri_term(iri)
    found, methods = await asyncio.gather(
        gather(
            pool,
            {
                "facts": facts_query(
                    iri, "rdfs:label dcterms:description kg:area kg:parentCollection"
                ),
                "children": labelled_query(f"?item kg:parentCollection {c}"),
            },
        ),
        counted_papers(pool, view, f"?item kg:inCollection {c} .", relation="methods"),
    )
    f = facts(view, found["facts"])
    return {
        "description": first(f, DC + "description"),
        "area": links(view, f, KG + "area"),
        "parent": links(view, f, KG + "parentCollection"),
        "children": labelled(view, found["children"]),
        "methods": methods,
    }


async def area_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    a = iri_term(iri)
    found, tasks = await asyncio.gather(
        gather(
            pool,
            {
                "facts": facts_query(iri, "rdfs:label skos:altLabel dcterms:description"),
                "collections": counted_query(
                    "?method",
                    f"?item kg:area {a} ; a kg:Collection . "
                    "OPTIONAL { ?method kg:inCollection ?item }",
                    limit=MAX_LIST,
                ),
            },
        ),
        counted_papers(pool, view, f"?item kg:area {a} ; a kg:Task .", relation="tasks"),
    )
    f = facts(view, found["facts"])
    return {
        "description": first(f, DC + "description"),
        "synonyms": [t.value for t in f.get("http://www.w3.org/2004/02/skos/core#altLabel", [])],
        "tasks": tasks,
        "collections": counted(view, found["collections"]),
    }


async def author_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    coauthors, tasks, papers = await asyncio.gather(
        shared(
            pool,
            view,
            relation="authors",
            item=iri,
            other="authors",
            labels=(STD.foaf_name, STD.label),
        ),
        shared(pool, view, relation="authors", item=iri, other="tasks"),
        item_papers(pool, view, "author", number),
    )
    return {"coauthors": coauthors, "tasks": tasks, "papers": papers}


async def repository_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    r = iri_term(iri)
    found = await gather(
        pool,
        {
            "facts": facts_query(iri, "rdfs:label schema:codeRepository kg:host"),
            "papers": PREFIXES
            + f"""SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) (MAX(?off) AS ?official)
       (GROUP_CONCAT(DISTINCT ?fw; separator=", ") AS ?frameworks) WHERE {{
  ?paper kg:codeLink ?c . ?c kg:repository {r} .
  OPTIONAL {{ ?c kg:isOfficial ?off }} OPTIONAL {{ ?c kg:framework ?fw }}
  OPTIONAL {{ ?paper dcterms:title ?t }} OPTIONAL {{ ?paper dcterms:issued ?d }}
}} GROUP BY ?paper ORDER BY DESC(?date) ?title LIMIT {MAX_LIST}""",
            "samples": PREFIXES
            + f"""SELECT ?sample (MIN(?p) AS ?paper) (MIN(?st) AS ?status) (MIN(?lv) AS ?level)
       (MIN(?en) AS ?entry) (MIN(?fp) AS ?path) (MIN(?fu) AS ?file) (MIN(?li) AS ?licence)
WHERE {{
  ?sample kg:repository {r} ; a kg:Sample .
  OPTIONAL {{ ?p kg:hasSample ?sample }}
  OPTIONAL {{ ?sample kg:executionStatus ?st }} OPTIONAL {{ ?sample kg:verificationLevel ?lv }}
  OPTIONAL {{ ?sample kg:entry ?en }} OPTIONAL {{ ?sample kg:filePath ?fp }}
  OPTIONAL {{ ?sample kg:fileUrl ?fu }} OPTIONAL {{ ?sample kg:licenceName ?li }}
}} GROUP BY ?sample ORDER BY ?path ?entry LIMIT {MAX_SAMPLES}""",
        },
    )
    f = facts(view, found["facts"])
    return {
        "url": first(f, "https://schema.org/codeRepository"),
        "host": first(f, KG + "host"),
        "papers": [
            {
                "paper": view.link(p["paper"].value, text_of(p, "title") or None),
                "date": text_of(p, "date"),
                "official": text_of(p, "official") == "true",
                "frameworks": text_of(p, "frameworks"),
            }
            for p in found["papers"]
        ],
        "samples": [
            {
                **sample(s),
                "paper": view.link(s["paper"].value) if "paper" in s else None,
            }
            for s in found["samples"]
        ],
    }


_DUMP_FACTS = (
    ("dumpKind", "kind"),
    ("dumpName", "name"),
    ("sourceFile", "file"),
    ("sourceArchive", "source"),
    ("snapshot", "snapshot"),
    ("ingestedAt", "ingested"),
)


async def dump_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    """A dump snapshot: what it is, what it stated (its entries, a page at a time, in the
    store's order: sorting 12,000 IRIs costs a second), its licence and attribution."""
    iri = view.desc.iri
    d = iri_term(iri)
    size = PAGE_SIZE
    found = await gather(
        pool,
        {
            "facts": facts_query(
                iri,
                "kg:dumpKind kg:dumpName kg:sourceFile kg:sourceArchive kg:snapshot "
                "kg:ingestedAt dcterms:license kg:attribution",
            ),
            "count": PREFIXES
            + f"SELECT (COUNT(?entry) AS ?n) WHERE {{ ?entry prov:wasDerivedFrom {d} }}",
            "entries": PREFIXES
            + f"""SELECT ?entry ?topic (MIN(?l) AS ?label) WHERE {{
  {{ SELECT ?entry ?topic WHERE {{ ?entry prov:wasDerivedFrom {d} ; foaf:primaryTopic ?topic }}
    LIMIT {size} OFFSET {size * number} }}
  OPTIONAL {{ ?topic rdfs:label|dcterms:title ?l }}
}} GROUP BY ?entry ?topic""",
        },
    )
    f = facts(view, found["facts"])
    total = int_of(found["count"][0], "n") if found["count"] else 0
    entries = [
        {
            "topic": view.link(e["topic"].value, text_of(e, "label") or None),
            "entry": view.link(e["entry"].value),
        }
        for e in found["entries"]
    ]
    licence = first(f, "http://purl.org/dc/terms/license")
    attribution = first(f, KG + "attribution")
    source = {
        **view.link(iri),
        "label": first(f, KG + "sourceFile") or view.short(iri),
        "snapshot": first(f, KG + "snapshot"),
        "licence": licence,
        "attribution": attribution,
    }
    name, snapshot = first(f, KG + "dumpName"), first(f, KG + "snapshot")
    return {
        "title": f"{name or view.short(iri)}, snapshot {snapshot or 'undated'}",
        "facts": [(name, first(f, KG + key)) for key, name in _DUMP_FACTS if first(f, KG + key)],
        "licence": licence,
        "attribution": attribution,
        "entries": {
            "total": total,
            "entries": entries,
            "paging": paging(number, len(entries), total),
        },
        "sources": [source],
    }


_RECORD_FACTS = (
    ("sourceFile", "file"),
    ("sourceArchive", "source"),
    ("snapshot", "snapshot"),
    ("rowKind", "row kind"),
    ("readAt", "read at"),
    ("ingestedAt", "ingested"),
    ("modificationNote", "modification"),
    ("nonAffiliation", "affiliation"),
    ("harvestClaim", "harvest claim"),
)


async def graph_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    """A named graph: a record (what it is, its licence and attribution) or a part of a dump
    (the dump it came from), then its statements."""
    iri = view.desc.iri
    found, origins = await asyncio.gather(
        gather(
            pool,
            {
                "facts": facts_query(
                    iri,
                    "rdf:type kg:sourceFile kg:sourceArchive kg:snapshot kg:rowKind kg:readAt "
                    "kg:ingestedAt "
                    "kg:modificationNote kg:nonAffiliation kg:harvestClaim dcterms:license "
                    "kg:attribution kg:republishedBy kg:describes kg:atlasPage "
                    "kg:developersPage prov:wasDerivedFrom foaf:primaryTopic",
                ),
            },
        ),
        provenance.rows(pool, iri, graph=True),
    )
    f = facts(view, found["facts"])
    record = KG + "Record" in {t.value for t in f.get(RDF_TYPE, [])}
    file = first(f, KG + "sourceFile")
    titled = {"title": f"Record {file}"} if record and file else {}
    return {
        **titled,
        "record": record,
        "facts": [(name, first(f, KG + key)) for key, name in _RECORD_FACTS if first(f, KG + key)],
        "licence": first(f, "http://purl.org/dc/terms/license"),
        "attribution": first(f, KG + "attribution"),
        "republished": first(f, KG + "republishedBy"),
        "describes": links(view, f, KG + "describes")
        + links(view, f, "http://xmlns.com/foaf/0.1/primaryTopic"),
        "pages": links(view, f, KG + "atlasPage") + links(view, f, KG + "developersPage"),
        "derived_from": links(view, f, "http://www.w3.org/ns/prov#wasDerivedFrom"),
        "sources": sources(view, origins),
    }


#: Kinds whose builder gives the page's `sources` (the others get the entity's provenance).
OWN_SOURCES = frozenset({"dump"})

BUILDERS: dict[str, Builder] = {
    "task": task_page,
    "dataset": dataset_page,
    "method": method_page,
    "collection": collection_page,
    "area": area_page,
    "author": author_page,
    "repository": repository_page,
    "dump": dump_page,
}


async def build(kind: str, pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    """The context of a page of `kind` ("graph" for a named graph's page)."""
    builder = graph_page if kind == "graph" else BUILDERS[kind]
    return await builder(pool, view, number)

