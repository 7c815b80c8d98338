"""The lists pages share: an item's papers (a method's, task's, dataset's, author's,
repository's), newest first, paged, with the count; the items on an item's papers, counted;
labelled lists; an entity's facts. From the matrix kept beside the store (kg.graph.lists,
run in a worker) where it is kept, else by SPARQL.

How an item reaches its papers is defined once, in `kg.graph.relations.RELATIONS` (the paths
`kg similar` and `kg project` use: a task's papers are those that name it and those with a
result on it); `papers_path` below is the only place the pages read it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from kg.errors import KgError
from kg.graph.relations import RELATIONS
from kg.rdf.results import Term
from kg.rdf.vocab import STD
from kg.serve.linked_data import Labeller
from kg.serve.pages.rows import PAGE_SIZE, PREFIXES, int_of, iri_term, paging, text_of

TOP = 25
MAX_LIST = 500

Rows = list[dict[str, Term]]

#: Entity kinds whose pages list papers, and the relation that reaches them from a paper.
PAPER_LISTS = {
    "method": "methods",
    "task": "tasks",
    "dataset": "datasets",
    "author": "authors",
    "repository": "repositories",
}


def papers_path(kind: str) -> str:
    """The property path from a paper to an item of `kind` (every path the graph has)."""
    return RELATIONS[PAPER_LISTS[kind]].path


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


def papers_context(view: Labeller, count: Any, papers: Any, number: int) -> dict[str, Any]:
    """An item's papers: this page of them, the count, and where the page is."""
    counted = count.term_rows()
    total = int_of(counted[0], "n") if counted else 0
    rows = papers.term_rows()
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


async def listed(pool: Any, name: str, **kwargs: Any) -> Any:
    """A list of kg.graph.lists from the matrix kept beside the store, run in a worker; None
    when it is not kept or the worker fails (the page then runs its SPARQL). The first list
    of a store version also makes the papers' order (two scans of the store: 1.5-3.4 s of
    CPU at 57,626 papers), so it gets the similarity lookup's time limit, not a query's: a
    worker killed at the query's limit would leave the next list to start it again."""
    from kg.serve.similar import GRAPH_TIMEOUT

    try:
        return await pool.graph(name, GRAPH_TIMEOUT, **kwargs)
    except KgError:
        return None


async def papers(pool: Any, view: Labeller, kind: str, number: int) -> dict[str, Any]:
    """An item's papers (through the relation of its kind), this page of them and the count:
    from the matrix kept beside the store (kg.graph.lists), else by SPARQL."""
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


# --- lists of items ----------------------------------------------------------------------


async def gather(pool: Any, queries: Mapping[str, str]) -> dict[str, Rows]:
    """Run named SELECT queries in the pool at once; their rows by name."""
    names = list(queries)
    found = await asyncio.gather(*(pool.result(queries[n]) for n in names))
    return {n: r.term_rows() for n, r in zip(names, found, strict=True)}


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
    found = await listed(
        pool, "shared_items", relation=relation, item=item, other=other, top=TOP, labels=labels
    )
    if found is None:
        t = iri_term(item)
        where = f"?paper {RELATIONS[relation].path} {t} . ?paper {RELATIONS[other].path} ?item ."
        if relation == other:
            where += f" FILTER(?item != {t})"
        where += "".join(f" OPTIONAL {{ ?item {p} ?l }}" for p in labels if p != STD.label)
        return counted(view, (await pool.result(counted_query("?paper", where))).term_rows())
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
    found = await listed(
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
        return counted(view, (await pool.result(query)).term_rows())
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


