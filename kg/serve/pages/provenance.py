"""Where a page's data comes from: the records and dumps that state it (file, archive,
snapshot, licence, attribution), for the footer of every page (`_source_license.html`) and
a paper's provenance section. The queries are made and run here, in one place.
"""

from __future__ import annotations

from typing import Any

from kg.rdf.results import Term
from kg.serve.linked_data import Description, Labeller, Value
from kg.serve.pages.rows import PREFIXES, iri_term, text_of


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


def provenance(view: Labeller, rows: list[dict[str, Term]]) -> list[dict[str, Any]]:
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



async def rows(pool: Any, iri: str, *, graph: bool = False) -> list[dict[str, Term]]:
    """The provenance query's rows for an entity (a named graph's own with `graph`), run in
    the worker pool: the one place the pages fetch provenance."""
    return list((await pool.result(provenance_query(iri, graph=graph))).term_rows())


async def entity_sources(pool: Any, view: Labeller) -> list[dict[str, Any]]:
    """The footer's sources of an entity's page: the records and dumps that state it."""
    return sources(view, await rows(pool, view.desc.iri))


async def store_sources(pool: Any, base: str, timeout: float | None = None) -> list[dict[str, Any]]:
    """The footer's sources for a page drawn from the whole store (search, named queries,
    the front page, a miss)."""
    rows = (await pool.result(store_sources_query(), timeout=timeout)).term_rows()
    return sources(Labeller(Description(base), base), rows)
