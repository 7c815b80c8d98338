"""The dumps' names and provenance: which file a dump is, a `kg:Dump` node per file (kind,
name, snapshot, licence, attribution, where it was fetched) and the three triples by which
each entry's graph names the dump it came from (docs/dumps.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from kg.ingest.identity import licence_iri
from kg.ingest.units import Context, Mapped, Triple, content_hash
from kg.rdf.terms import literal, typed
from kg.rdf.vocab import KG, STD, XSD, iri

PAPERS = "papers-with-abstracts"
LINKS = "links-between-papers-and-code"
METHODS = "methods"
DATASETS = "datasets"
EVALUATION = "evaluation-tables"

ARCHIVE = "Papers with Code"
#: What is known of the dumps Papers with Code itself published (by dump name): all its data
#: is CC BY-SA 4.0 ("All data is licenced under CC-BY-SA", paperswithcode-data's README).
#: Files of the same format from elsewhere (the sota-extractor leaderboards: another
#: repository, scraped from external leaderboards) get no licence unless the user names one.
PWC_DUMPS = {PAPERS, LINKS, METHODS, DATASETS, EVALUATION}
PWC_LICENCE = "https://creativecommons.org/licenses/by-sa/4.0/"
PWC_ATTRIBUTION = "https://github.com/paperswithcode/paperswithcode-data"
_LEADING_DATE = re.compile(r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)-\d{1,2}-", re.I)
_TRAILING_DATE = re.compile(r"[-_.](?:19|20)\d{2}(?:[-_.]?\d{2}){0,2}$")


@lru_cache(maxsize=256)  # asked once an item, of a handful of files
def dump_name(source_file: str) -> str:
    """A dump's name: its file name without `.gz`, `.json`, a trailing date and the leading
    month-day of the 2025 archive's files (`jul-28-methods.json.gz`).

    >>> dump_name("evaluation-tables.json.gz"), dump_name("methods-2022-05-20.json")
    ('evaluation-tables', 'methods')
    >>> dump_name("jul-29-papers-with-abstracts.json.gz")
    'papers-with-abstracts'
    """
    name = source_file.removesuffix(".gz")
    for suffix in (".json", ".jsonl", ".ndjson"):
        name = name.removesuffix(suffix)
    name = _TRAILING_DATE.sub("", name) or name
    return _LEADING_DATE.sub("", name) or name


def entry_provenance(graph: str, subject: str, dump: str, unit_hash: str) -> list[Triple]:
    """What a dump entry's graph says of itself: what it is about, which dump it came from,
    and the hash that tells a changed entry from an unchanged one. Three triples, no type: a
    graph derived from a kg:Dump is a kg:DumpEntry by definition (ontology/kg.ttl), and at
    a million entries the two types were 5 % of the archive's stored quads."""
    g = iri(graph)
    return [
        f"{g} {STD.primaryTopic} {iri(subject)}",
        f"{g} {STD.wasDerivedFrom} {iri(dump)}",
        f"{g} {KG.contentHash} {literal(unit_hash)}",
    ]



def dump_units(kind: str) -> Callable[[Context], Iterable[Mapped]]:
    """The unit that describes a dump file itself: its `kg:Dump` node, in its own graph."""

    def units(ctx: Context) -> list[Mapped]:
        name = dump_name(ctx.source_file)
        dump = ctx.iris.dump(name, ctx.snapshot)
        graph = ctx.iris.dump_graph("dump", dump.removeprefix(f"{ctx.iris.base}dump/"))
        # The file name and ingest time are not hashed: the same dump read again, under
        # any name, is unchanged.
        said = {"licence": ctx.licence, "attribution": ctx.attribution}  # a new --licence updates
        if ctx.fetched_from:
            said["fetched_from"] = ctx.fetched_from
        unit_hash = content_hash({"kind": kind, "name": name, "snapshot": ctx.snapshot, **said})
        n = iri(dump)
        triples = [
            *entry_provenance(graph, dump, dump, unit_hash),
            f"{n} {STD.type} {KG.Dump}",
            f"{n} {STD.type} {STD.prov_Entity}",
            f"{n} {KG.dumpKind} {literal(kind)}",
            f"{n} {KG.dumpName} {literal(name)}",
            f"{n} {KG.sourceFile} {literal(ctx.source_file)}",
        ]
        not_mapped = []
        licence, attribution = ctx.licence, ctx.attribution
        if name in PWC_DUMPS:  # the file Papers with Code published under this name
            triples.append(f"{n} {KG.sourceArchive} {literal(ARCHIVE)}")
            licence = licence or PWC_LICENCE
            attribution = attribution or PWC_ATTRIBUTION
        if licence:
            triples.append(f"{n} {STD.license} {iri(licence_iri(licence))}")
        else:
            not_mapped.append(
                f"licence of {ctx.source_file} (unknown: not a dump file Papers with Code "
                "published; give kg ingest --licence IRI --attribution URL)"
            )
        if attribution:
            triples.append(f"{n} {KG.attribution} {iri(attribution)}")
        if ctx.snapshot:
            triples.append(f"{n} {KG.snapshot} {typed(ctx.snapshot, XSD.date)}")
        if ctx.fetched_from:  # where kg fetch downloaded the file (its manifest)
            triples.append(f"{n} {KG.sourceUrl} {iri(ctx.fetched_from)}")
        if ctx.ingested_at:
            triples.append(f"{n} {KG.ingestedAt} {typed(ctx.ingested_at, XSD.dateTime)}")
        return [Mapped(graph, dump, unit_hash, triples, not_mapped=not_mapped)]

    return units
