"""The five Papers-with-Code dumps as input kinds of `kg ingest` (docs/dumps.md).

Each dump item maps to one unit of change in its own named graph, a `kg:DumpEntry` that
names the dump it was read from (`prov:wasDerivedFrom` a `kg:Dump`, which says the kind,
file and snapshot). A newer dump replaces, entity by entity, exactly what an older one said.
Papers are named through the run's alias index (`Context.paper`), so a paper known by slug,
by arXiv id and by title is one node (docs/identity.md).

`DUMP_KINDS` lists them; `kg.ingest.ingestor.KINDS` adds them to the record kind. Each kind
has its module (papers, links, methods, datasets, evaluation) over `DumpMapper` (mapper) and
the dumps' provenance (provenance).
"""

from __future__ import annotations

from kg.ingest.dumps.datasets import DatasetMapper, is_datasets
from kg.ingest.dumps.evaluation import EvaluationMapper, is_evaluation, map_evaluation
from kg.ingest.dumps.links import LinkMapper, is_links
from kg.ingest.dumps.mapper import PLACEHOLDER_YEAR, DumpMapper, one
from kg.ingest.dumps.methods import MethodMapper, is_methods
from kg.ingest.dumps.papers import EmbeddedMethodMapper, PaperMapper, is_papers, map_papers
from kg.ingest.dumps.provenance import (
    ARCHIVE,
    DATASETS,
    EVALUATION,
    LINKS,
    METHODS,
    PAPERS,
    PWC_ATTRIBUTION,
    PWC_DUMPS,
    PWC_LICENCE,
    dump_name,
    dump_units,
    entry_provenance,
)
from kg.ingest.units import Kind

__all__ = [
    "ARCHIVE",
    "DATASETS",
    "DUMP_KINDS",
    "EVALUATION",
    "LINKS",
    "METHODS",
    "PAPERS",
    "PLACEHOLDER_YEAR",
    "PWC_ATTRIBUTION",
    "PWC_DUMPS",
    "PWC_LICENCE",
    "DatasetMapper",
    "DumpMapper",
    "EmbeddedMethodMapper",
    "EvaluationMapper",
    "LinkMapper",
    "MethodMapper",
    "PaperMapper",
    "dump_name",
    "dump_units",
    "entry_provenance",
]

# Slug-naming sources first, then records (priority 1), then the tables (kg.ingest.aliases).
DUMP_KINDS = (
    Kind(PAPERS, is_papers, map_papers, 0, dump_units(PAPERS)),
    Kind(LINKS, is_links, one(LinkMapper), 0, dump_units(LINKS)),
    Kind(METHODS, is_methods, one(MethodMapper), 0, dump_units(METHODS)),
    Kind(DATASETS, is_datasets, one(DatasetMapper), 0, dump_units(DATASETS)),
    Kind(EVALUATION, is_evaluation, map_evaluation, 2, dump_units(EVALUATION)),
)
