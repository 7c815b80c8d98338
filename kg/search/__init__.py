"""Full-text search joined to the graph (docs/search.md).

An index beside the store (`kg.search.index`), built from it and kept in step by ingest
(`kg.search.maintain`), searched with a small safe query language (`kg.search.query`), and
joined to SPARQL through a SERVICE-style block rewritten into VALUES (`kg.search.sparql`).
tantivy is imported only inside the functions that need it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kg.errors import UsageError
from kg.rdf.results import Term
from kg.rdf.store import GraphStore
from kg.search.documents import CLASSES, paper_details
from kg.search.maintain import Upkeep, open_index, rebuild
from kg.search.query import Hit, Searcher

__all__ = [
    "CLASSES",
    "Hit",
    "Searcher",
    "StoreSearch",
    "Upkeep", "open_index", "paper_details", "rebuild"]


class StoreSearch:
    """Search over one store: its index opened (or rebuilt, when stale) on first use."""

    def __init__(self, store: GraphStore, store_path: Path | None, *, quiet: bool = False) -> None:
        self.store = store
        self.store_path = store_path
        self.quiet = quiet
        self._searcher: Searcher | None = None

    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = Searcher(open_index(self.store, self.store_path, quiet=self.quiet))
        return self._searcher

    def refresh(self) -> None:
        """See what writers committed since (another process's ingest)."""
        if self._searcher is not None:
            self._searcher.index.refresh()

    def search(self, text: str, type_: str | None = None, limit: int = 10) -> list[Hit]:
        if type_ is not None and type_ not in CLASSES:
            raise UsageError(f"unknown type {type_!r}; use one of: {', '.join(CLASSES)}")
        return self.searcher().search(text, type_=type_, limit=limit)

    def expand(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> str:
        """SPARQL with its kg search blocks replaced by their hits (kg.search.sparql)."""
        from kg.search.sparql import expand

        return expand(
            sparql, lambda q, t, n: self.searcher().search(q, type_=t, limit=n, snippets=False),
            bindings,
        )

    def described(self, hits: list[Hit]) -> list[dict[str, object]]:
        """Hits as JSON objects; papers with their year, tasks and whether they have code."""
        details = paper_details(self.store, [h.iri for h in hits if h.type == "paper"])
        return [{**h.as_json(), **details.get(h.iri, {})} for h in hits]
