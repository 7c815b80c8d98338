"""Full-text search joined to the graph (docs/search.md).

An index beside the store (`kg.search.index`), built from it and kept in step by ingest
(`kg.search.maintain`), searched with a small safe query language (`kg.search.query`), and
joined to SPARQL through a SERVICE-style block rewritten into VALUES (`kg.search.sparql`).
tantivy is imported only inside the functions that need it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from kg.errors import UsageError
from kg.rdf.results import SelectResult, Term
from kg.rdf.store import GraphStore
from kg.search.documents import CLASSES, details_query, with_details
from kg.search.index import IndexLock, index_path
from kg.search.maintain import Upkeep, open_index, rebuild
from kg.search.query import Hit, Results, Searcher

__all__ = [
    "CLASSES",
    "Hit",
    "Results",
    "Searcher",
    "StoreSearch",
    "Upkeep",
    "details_query",
    "open_index",
    "rebuild",
    "with_details",
]


class StoreSearch:
    """Search over one store: its index opened (or rebuilt, when stale) on first use.

    `store` is the store, or a function that opens one (a server opens a snapshot only to
    rebuild). Safe to share between threads: one search or refresh runs at a time.
    """

    def __init__(
        self,
        store: GraphStore | Callable[[], GraphStore],
        store_path: Path | None,
        *,
        quiet: bool = False,
    ) -> None:
        self._store = store
        self.store_path = store_path
        self.quiet = quiet
        self._searcher: Searcher | None = None
        self._lock = threading.RLock()
        self._checked = 0.0
        self._identity: tuple[int, int] | None = None

    def _open(self) -> Searcher:
        store = self._store
        if isinstance(store, GraphStore):
            index = open_index(store, self.store_path, quiet=self.quiet)
        else:
            opened: list[GraphStore] = []

            def factory() -> GraphStore:
                opened.append(store())
                return opened[-1]

            try:
                index = open_index(factory, self.store_path, quiet=self.quiet)
            finally:
                for s in opened:
                    s.close()
        self._identity = self._dir_identity()
        return Searcher(index)

    def _dir_identity(self) -> tuple[int, int] | None:
        if self.store_path is None:
            return None
        try:
            st = index_path(self.store_path).stat()
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def searcher(self) -> Searcher:
        with self._lock:
            if self._searcher is None:
                self._searcher = self._open()
            return self._searcher

    def refresh(self, every: float = 0.0) -> None:
        """See what writers committed since; reopen a swapped-in index, rebuild a stale one.
        With `every`, at most that often (seconds)."""
        with self._lock:
            now = time.monotonic()
            if self._searcher is None or now - self._checked < every:
                return
            self._checked = now
            index = self._searcher.index
            index.refresh()
            if self.store_path is None:
                return
            lock = IndexLock(self.store_path)
            if self._dir_identity() != self._identity or not index.is_current(lock):
                self._searcher = self._open()

    def search(
        self,
        text: str,
        type_: str | None = None,
        limit: int = 10,
        *,
        snippets: bool = True,
        empty_ok: bool = False,
    ) -> list[Hit]:
        """The best `limit` hits (the first page, not counted)."""
        return self.find(
            text, type_, limit=limit, snippets=snippets, counts=False, empty_ok=empty_ok
        ).hits

    def find(
        self,
        text: str,
        type_: str | None = None,
        *,
        page: int = 1,
        limit: int = 10,
        snippets: bool = True,
        counts: bool = True,
        empty_ok: bool = False,
    ) -> Results:
        """One page of hits with the number of hits in all and per class: the one search
        front (`search` is its first page), over the ranking of kg.search.query.Searcher,
        which takes the same arguments."""
        if type_ is not None and type_ not in CLASSES:
            raise UsageError(
                f"{{parameter}} {type_[:40]!r} is not a class; use one of: {', '.join(CLASSES)}",
                parameter="type",
            )
        searcher = self.searcher()
        with self._lock:
            return searcher.find(
                text, type_, page=page, limit=limit, snippets=snippets, counts=counts,
                empty_ok=empty_ok,
            )

    def expand(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> str:
        """SPARQL with its kg search blocks replaced by their hits (kg.search.sparql)."""
        from kg.search.sparql import expand

        return expand(
            sparql,
            lambda q, t, n: self.search(q, t, n, snippets=False, empty_ok=True),
            bindings,
        )

    def described(self, hits: list[Hit]) -> list[dict[str, object]]:
        """Hits as JSON objects; papers with their year, tasks and whether they have code."""
        store = self._store
        papers = [h.iri for h in hits if h.type == "paper"]
        if not papers:
            return [h.as_json() for h in hits]
        opened = store if isinstance(store, GraphStore) else store()
        try:
            rows = opened.query(details_query(papers))
        finally:
            if opened is not store:
                opened.close()
        assert isinstance(rows, SelectResult)
        return with_details(hits, rows)
