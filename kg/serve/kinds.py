"""The pages of the things papers are about: task, dataset, method, collection, area, author,
repository, and the sources (a dump snapshot, a record's graph).

Each kind has a builder: it runs the kind's SELECT queries in the worker pool at once and
shapes their rows into the context of the kind's template (`templates/<kind>.html`). IRIs
enter query text only through `sparql_term` (kg.serve.story._iri), so a path cannot inject
SPARQL.

How an item reaches its papers is defined once, in `kg.graph.relations.RELATIONS` (the paths
`kg similar` and `kg project` use: a task's papers are those that name it and those with a
result on it); `papers_path` below is the only place the pages read it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal
from typing import Any

from kg.graph.relations import RELATIONS
from kg.ingest.identity import possibly_same_dataset
from kg.query.directions import metric_direction
from kg.rdf.results import Term
from kg.rdf.vocab import STD
from kg.serve import story
from kg.serve.linked_data import Labeller
from kg.serve.story import PREFIXES, int_of, lower_is_better, rows_of, text_of

KG = story.KG_NS
TOP = 25
MAX_BENCHMARK_ROWS = 50_000
MAX_LIST = 500

Rows = list[dict[str, Term]]
Builder = Callable[[Any, Labeller, int], Awaitable[dict[str, Any]]]


def iri_term(iri: str) -> str:
    return story.iri_term(iri)


def papers_path(kind: str) -> str:
    """The property path from a paper to an item of `kind` (every path the graph has)."""
    path = story.papers_path(kind)
    assert path is not None, kind
    return path


async def gather(pool: Any, queries: Mapping[str, str]) -> dict[str, Rows]:
    """Run named SELECT queries in the pool at once; their rows by name."""
    names = list(queries)
    found = await asyncio.gather(*(pool.result(queries[n]) for n in names))
    return {n: rows_of(r) for n, r in zip(names, found, strict=True)}


# --- shared pieces --------------------------------------------------------------------------


def facts_query(iri: str, properties: str) -> str:
    """The entity's values of `properties` (prefixed names), with the labels of IRIs."""
    return (
        PREFIXES
        + f"""SELECT ?p ?o (MIN(?l) AS ?label) WHERE {{
  VALUES ?p {{ {properties} }} {iri_term(iri)} ?p ?o .
  OPTIONAL {{ ?o rdfs:label ?l }}
}} GROUP BY ?p ?o LIMIT 500"""
    )


def facts(view: Labeller, rows: Rows) -> dict[str, list[Term]]:
    """The facts query's rows by property IRI (object labels recorded in the view)."""
    by: dict[str, list[Term]] = {}
    for r in rows:
        o = r["o"]
        if o.kind == "uri" and "label" in r:
            view.label(o.value, r["label"].value)
        by.setdefault(r["p"].value, []).append(o)
    return by


def first(found: Mapping[str, list[Term]], prop: str) -> str | None:
    values = found.get(prop) or []
    return values[0].value if values else None


def links(view: Labeller, found: Mapping[str, list[Term]], prop: str) -> list[dict[str, Any]]:
    return [view.value(t) for t in found.get(prop, [])]


def counted_query(select_item: str, where: str, *, limit: int = TOP) -> str:
    """Items with a count, most first: `where` binds ?item and what ?n counts (?paper)."""
    return (
        PREFIXES
        + f"""SELECT ?item (MIN(?l) AS ?label) (COUNT(DISTINCT {select_item}) AS ?n) WHERE {{
  {where}
  OPTIONAL {{ ?item rdfs:label ?l }}
}} GROUP BY ?item ORDER BY DESC(?n) ?label ?item LIMIT {limit}"""
    )


def counted(view: Labeller, rows: Rows) -> list[dict[str, Any]]:
    return [
        {"item": view.link(r["item"].value, text_of(r, "label") or None), "n": int_of(r, "n")}
        for r in rows
        if "item" in r
    ]


async def shared(
    pool: Any,
    view: Labeller,
    *,
    relation: str,
    item: str,
    other: str,
    labels: tuple[str, ...] = (STD.label,),
) -> list[dict[str, Any]]:
    """The `other` items on `item`'s papers (not `item` itself), counted, most first (as
    `counted`; a label is the first of `labels` an item has, ending with rdfs:label): from
    the matrix kept beside the store (kg.graph.lists.shared_items), else by SPARQL."""
    found = await story.listed(
        pool, "shared_items", relation=relation, item=item, other=other, top=TOP, labels=labels
    )
    if found is None:
        t = iri_term(item)
        where = f"?paper {RELATIONS[relation].path} {t} . ?paper {RELATIONS[other].path} ?item ."
        if relation == other:
            where += f" FILTER(?item != {t})"
        where += "".join(f" OPTIONAL {{ ?item {p} ?l }}" for p in labels if p != STD.label)
        return counted(view, rows_of(await pool.result(counted_query("?paper", where))))
    return [
        {"item": view.link(r["item"], r["label"] or None), "n": int(r["n"])} for r in found["items"]
    ]


async def counted_papers(
    pool: Any, view: Labeller, where: str, *, relation: str, limit: int = MAX_LIST
) -> list[dict[str, Any]]:
    """The items `where` binds (?item), each with how many papers reach it through
    `relation`'s path, most first (as `counted`): counted in the matrix kept beside the
    store (kg.graph.lists.counted_items), else by SPARQL."""
    kind = RELATIONS[relation].item_type.lower()
    found = await story.listed(
        pool,
        "counted_items",
        relation=relation,
        items=PREFIXES
        + f"""SELECT ?item (MIN(?l) AS ?label) WHERE {{
  {where}
  OPTIONAL {{ ?item rdfs:label ?l }}
}} GROUP BY ?item""",
        top=limit,
    )
    if found is None:
        query = counted_query(
            "?paper", f"{where} OPTIONAL {{ ?paper {papers_path(kind)} ?item }}", limit=limit
        )
        return counted(view, rows_of(await pool.result(query)))
    return [
        {"item": view.link(r["item"], r["label"] or None), "n": int(r["n"])} for r in found["items"]
    ]


def labelled_query(where: str, *, order: str = "?label", limit: int = MAX_LIST) -> str:
    """Items ?item with their label, for lists (`where` binds ?item)."""
    return (
        PREFIXES
        + f"""SELECT ?item (MIN(?l) AS ?label) WHERE {{
  {where}
  OPTIONAL {{ ?item rdfs:label ?l }}
}} GROUP BY ?item ORDER BY {order} LIMIT {limit}"""
    )


def labelled(view: Labeller, rows: Rows) -> list[dict[str, Any]]:
    return [view.link(r["item"].value, text_of(r, "label") or None) for r in rows if "item" in r]


def introducing_query(iri: str, prop: str) -> str:
    """The papers that introduce the item (kg:introducesMethod or kg:introducesDataset)."""
    return (
        PREFIXES
        + f"""SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) WHERE {{
  ?paper {prop} {iri_term(iri)} .
  OPTIONAL {{ ?paper dcterms:title ?t }} OPTIONAL {{ ?paper dcterms:issued ?d }}
}} GROUP BY ?paper ORDER BY ?date LIMIT 10"""
    )


def paper_links(view: Labeller, rows: Rows) -> list[dict[str, Any]]:
    return [
        {
            "paper": view.link(r["paper"].value, text_of(r, "title") or None),
            "date": text_of(r, "date"),
        }
        for r in rows
        if "paper" in r
    ]


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


def _decimal(text: str) -> Decimal | None:
    return story.as_number(text)


def benchmarks(view: Labeller, rows: Rows, labels: Rows) -> list[dict[str, Any]]:
    """One row per leaderboard and metric: its results counted, and the best one now (the
    highest value unless the metric's name says lower is better: kg.serve.story's rule)."""
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
        number = _decimal(text_of(r, "num"))
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
        story.papers(pool, view, "task", number),
        shared(pool, view, relation="tasks", item=iri, other="methods"),
    )
    f = facts(view, found["facts"])
    return {
        "description": first(f, story.DC + "description"),
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
                "loaders": story.PREFIXES
                + f"""SELECT ?loader (MIN(?u) AS ?url) (MIN(?r) AS ?repo)
       (GROUP_CONCAT(DISTINCT ?fw; separator=", ") AS ?frameworks) WHERE {{
  {d} kg:dataLoader ?loader . OPTIONAL {{ ?loader kg:linkedUrl ?u }}
  OPTIONAL {{ ?loader kg:repository ?r }} OPTIONAL {{ ?loader kg:framework ?fw }}
}} GROUP BY ?loader LIMIT 50""",
            },
        ),
        story.papers(pool, view, "dataset", number),
    )
    f = facts(view, found["facts"])
    alike = await possibly_same(pool, view, iri, first(f, story.RDFS + "label"))
    return {
        "alike": alike,
        "full_name": first(f, KG + "fullName"),
        "description": first(f, story.DC + "description"),
        "homepage": links(view, f, "http://xmlns.com/foaf/0.1/homepage"),
        "elsewhere": links(view, f, story.RDFS + "seeAlso"),
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
        story.papers(pool, view, "method", number),
    )
    f = facts(view, found["facts"])
    return {
        "full_name": first(f, KG + "fullName"),
        "description": first(f, story.DC + "description"),
        "introduced_year": first(f, KG + "introducedYear"),
        "source": {"url": first(f, KG + "sourceUrl"), "title": first(f, KG + "sourceTitle")},
        "code_snippet": first(f, KG + "codeSnippet"),
        "dump_count": first(f, KG + "paperCount"),
        "collections": links(view, f, KG + "inCollection"),
        "elsewhere": links(view, f, story.RDFS + "seeAlso"),
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
        "description": first(f, story.DC + "description"),
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
        "description": first(f, story.DC + "description"),
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
        story.papers(pool, view, "author", number),
    )
    return {"coauthors": coauthors, "tasks": tasks, "papers": papers}


async def repository_page(pool: Any, view: Labeller, number: int) -> dict[str, Any]:
    iri = view.desc.iri
    r = iri_term(iri)
    found = await gather(
        pool,
        {
            "facts": facts_query(iri, "rdfs:label schema:codeRepository kg:host"),
            "papers": story.PREFIXES
            + f"""SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) (MAX(?off) AS ?official)
       (GROUP_CONCAT(DISTINCT ?fw; separator=", ") AS ?frameworks) WHERE {{
  ?paper kg:codeLink ?c . ?c kg:repository {r} .
  OPTIONAL {{ ?c kg:isOfficial ?off }} OPTIONAL {{ ?c kg:framework ?fw }}
  OPTIONAL {{ ?paper dcterms:title ?t }} OPTIONAL {{ ?paper dcterms:issued ?d }}
}} GROUP BY ?paper ORDER BY DESC(?date) ?title LIMIT {MAX_LIST}""",
            "samples": story.PREFIXES
            + f"""SELECT ?sample (MIN(?p) AS ?paper) (MIN(?st) AS ?status) (MIN(?lv) AS ?level)
       (MIN(?en) AS ?entry) (MIN(?fp) AS ?path) (MIN(?fu) AS ?file) (MIN(?li) AS ?licence)
WHERE {{
  ?sample kg:repository {r} ; a kg:Sample .
  OPTIONAL {{ ?p kg:hasSample ?sample }}
  OPTIONAL {{ ?sample kg:executionStatus ?st }} OPTIONAL {{ ?sample kg:verificationLevel ?lv }}
  OPTIONAL {{ ?sample kg:entry ?en }} OPTIONAL {{ ?sample kg:filePath ?fp }}
  OPTIONAL {{ ?sample kg:fileUrl ?fu }} OPTIONAL {{ ?sample kg:licenceName ?li }}
}} GROUP BY ?sample ORDER BY ?path ?entry LIMIT {story.MAX_SAMPLES}""",
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
                **story.sample(s),
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
    size = story.PAGE_SIZE
    found = await gather(
        pool,
        {
            "facts": facts_query(
                iri,
                "kg:dumpKind kg:dumpName kg:sourceFile kg:sourceArchive kg:snapshot "
                "kg:ingestedAt dcterms:license kg:attribution",
            ),
            "count": story.PREFIXES
            + f"SELECT (COUNT(?entry) AS ?n) WHERE {{ ?entry prov:wasDerivedFrom {d} }}",
            "entries": story.PREFIXES
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
            "paging": story.paging(number, len(entries), total),
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
    found = await gather(
        pool,
        {
            "facts": facts_query(
                iri,
                "rdf:type kg:sourceFile kg:sourceArchive kg:snapshot kg:rowKind kg:readAt "
                "kg:ingestedAt "
                "kg:modificationNote kg:nonAffiliation kg:harvestClaim dcterms:license "
                "kg:attribution kg:republishedBy kg:describes kg:atlasPage kg:developersPage "
                "prov:wasDerivedFrom foaf:primaryTopic",
            ),
            "provenance": story.provenance_query(iri, graph=True),
        },
    )
    f = facts(view, found["facts"])
    record = KG + "Record" in {t.value for t in f.get(story.RDF_TYPE, [])}
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
        "sources": story.sources(view, found["provenance"]),
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
