"""Full-text search joined to the graph (docs/search.md).

An index beside the store (`kg.search.index`), built from it and kept in step by ingest
(`kg.search.maintain`), searched with a small safe query language (`kg.search.query`), and
joined to SPARQL through a SERVICE-style block rewritten into VALUES (`kg.search.sparql`).
tantivy is imported only inside the functions that need it.
"""

from __future__ import annotations

from kg.search.documents import CLASSES, paper_details
from kg.search.maintain import Upkeep, open_index, rebuild
from kg.search.query import Hit, Searcher

__all__ = ["CLASSES", "Hit", "Searcher", "Upkeep", "open_index", "paper_details", "rebuild"]
