"""The store a `KnowledgeGraph` opens: where it is, opening it on first use, closing it.

`GraphBase` holds what every part of the library's front door shares (the store, the base
IRI, the search beside the store); `KnowledgeGraph` (kg.library.knowledge_graph) puts the
parts together.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Self

from kg.config import BASE_IRI_ENV, DEFAULT_BASE_IRI, DEFAULT_STORE, STORE_ENV, base_iri_of
from kg.errors import StoreError

if TYPE_CHECKING:
    from kg.rdf.store import GraphStore
    from kg.search import StoreSearch

#: How many results `similar`, `search` and `communities` return unless told.
DEFAULT_TOP = 10
ParamValue = str | int | float | bool


class GraphBase:
    """The store of a `KnowledgeGraph`, opened on first use; see KnowledgeGraph."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = True,
        memory: bool = False,
        base_iri: str | None = None,
    ) -> None:
        self.base_iri = base_iri_of(base_iri or os.environ.get(BASE_IRI_ENV) or DEFAULT_BASE_IRI)
        self.path: Path | None = None
        if not memory:
            self.path = Path(path or os.environ.get(STORE_ENV) or DEFAULT_STORE)
        self.read_only = read_only and not memory
        self._store: GraphStore | None = None
        self._search: StoreSearch | None = None

    # --- the store ------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store (and release its snapshot)."""
        if self._store is not None:
            self._store.close()
            self._store = None
            self._search = None

    def __repr__(self) -> str:
        where = "memory" if self.path is None else str(self.path)
        mode = "read-only" if self.read_only else "writable"
        return f"<KnowledgeGraph {where} ({mode})>"

    def __len__(self) -> int:
        """The number of quads the store holds."""
        return self.store.count()

    @property
    def store(self) -> GraphStore:
        """The underlying `GraphStore` (opened on first use), for kg's own tools; its
        interface may change."""
        if self._store is None:
            from kg.rdf.store import GraphStore

            self._store = GraphStore.open(self.path, read_only=self.read_only)
        return self._store

    def _searcher(self) -> StoreSearch:
        if self._search is None:
            from kg.search import StoreSearch

            self._search = StoreSearch(self.store, self.path)
        return self._search

    def _writable(self, doing: str) -> None:
        """Raise StoreError unless the store is open for writing (`doing`: "to ingest")."""
        if self.read_only:
            raise StoreError(
                f"the store at {self.path} is open read-only; open it with "
                f"kg.open(path, read_only=False) {doing}"
            )


def param_text(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

