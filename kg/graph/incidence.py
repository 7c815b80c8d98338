"""Paper–item relations read from the store as sparse incidence matrices.

A relation links papers to one kind of item: methods, repositories, tasks, authors or
datasets. `load_incidence` reads one or several relations with one SPARQL query each and
returns an `Incidence`: a papers × items 0/1 matrix (scipy CSR) with the IRIs of its rows
and columns. Projections (kg.graph.projections) and similarity (kg.graph.similarity) are
computed on it.

Rows are sorted by paper IRI and columns by relation, then item IRI, so a matrix built from
the same store is the same matrix, and ties broken by index are broken by IRI.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from kg.errors import UsageError
from kg.graph.relations import ALL, RELATIONS, Relation, fallback_label, relation_names
from kg.rdf.store import GraphStore
from kg.rdf.vocab import STD


@dataclass
class Incidence:
    """A papers × items 0/1 matrix with the IRIs of its rows and columns."""

    papers: Sequence[str]
    items: Sequence[str]
    #: For each column, the index of its relation in `relations`.
    item_relation: np.ndarray
    relations: tuple[str, ...]
    #: CSR, float64 ones, indices sorted within each row.
    matrix: sp.csr_matrix
    _paper_rows: dict[str, int] | None = field(default=None, repr=False)
    _item_columns: dict[str, int] | None = field(default=None, repr=False)
    _rows_looked_up: int = field(default=0, repr=False)

    @classmethod
    def from_pairs(
        cls,
        pairs: Mapping[str, Iterable[tuple[str, str]]],
        *,
        papers: Iterable[str] = (),
    ) -> Incidence:
        """Build from (paper IRI, item IRI) pairs per relation; duplicates are merged.

        `papers` adds rows for papers that may have no item (they are kept, empty).
        """
        relations = tuple(pairs)
        paper_ids: dict[str, int] = {p: i for i, p in enumerate(dict.fromkeys(papers))}
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        item_names: list[str] = []
        item_rel: list[np.ndarray] = []
        for r_index, relation in enumerate(relations):
            item_ids: dict[str, int] = {}
            r_rows: list[int] = []
            r_cols: list[int] = []
            for paper, item in pairs[relation]:
                r_rows.append(paper_ids.setdefault(paper, len(paper_ids)))
                r_cols.append(item_ids.setdefault(item, len(item_ids)))
            names = list(item_ids)
            # Columns of a relation sorted by IRI: remap the ids in first-seen order.
            order = sorted(range(len(names)), key=names.__getitem__)
            remap = np.empty(len(names), dtype=np.int64)
            remap[order] = np.arange(len(names)) + len(item_names)
            item_names.extend(names[i] for i in order)
            item_rel.append(np.full(len(names), r_index, dtype=np.int8))
            rows.append(np.asarray(r_rows, dtype=np.int64))
            cols.append(remap[np.asarray(r_cols, dtype=np.int64)])
        paper_names = list(paper_ids)
        order = sorted(range(len(paper_names)), key=paper_names.__getitem__)
        row_remap = np.empty(len(paper_names), dtype=np.int64)
        row_remap[order] = np.arange(len(paper_names))
        all_rows = row_remap[np.concatenate(rows)] if rows else np.zeros(0, np.int64)
        all_cols = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        return cls.from_arrays(
            [paper_names[i] for i in order],
            item_names,
            np.concatenate(item_rel) if item_rel else np.zeros(0, np.int8),
            relations,
            all_rows,
            all_cols,
        )

    @classmethod
    def from_arrays(
        cls,
        papers: list[str],
        items: list[str],
        item_relation: np.ndarray,
        relations: tuple[str, ...],
        rows: np.ndarray,
        cols: np.ndarray,
    ) -> Incidence:
        """Build from index arrays (one entry per link; duplicate links count once)."""
        shape = (len(papers), len(items))
        coo = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
        matrix = coo.tocsr()
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        matrix.sort_indices()
        return cls(papers, items, np.asarray(item_relation, dtype=np.int8), relations, matrix)

    # -- lookups ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.papers), len(self.items))

    def row(self, paper: str) -> int | None:
        """The row of a paper IRI, or None."""
        if self._paper_rows is None:
            self._rows_looked_up += 1
            if self._rows_looked_up == 1:
                # A fresh `kg similar` looks up one paper: a scan of the list takes ms, a
                # map of the archive's papers 0.4 s. A second lookup builds the map.
                try:
                    return self.papers.index(paper)
                except ValueError:
                    return None
            self._paper_rows = dict(zip(self.papers, range(len(self.papers)), strict=True))
        return self._paper_rows.get(paper)

    def column(self, item: str) -> int | None:
        if self._item_columns is None:
            self._item_columns = {p: i for i, p in enumerate(self.items)}
        return self._item_columns.get(item)

    def items_of(self, row: int) -> np.ndarray:
        m = self.matrix
        return np.asarray(m.indices[m.indptr[row] : m.indptr[row + 1]])

    def relation_of(self, column: int) -> str:
        return self.relations[int(self.item_relation[column])]

    @cached_property
    def item_papers(self) -> np.ndarray:
        """How many papers each item is linked to (its document frequency)."""
        return np.bincount(self.matrix.indices, minlength=len(self.items)).astype(np.int64)

    @cached_property
    def paper_items(self) -> np.ndarray:
        """How many items each paper has."""
        return np.asarray(np.diff(self.matrix.indptr), dtype=np.int64)

    @cached_property
    def transposed(self) -> sp.csr_matrix:
        """Items × papers, CSR: each row lists the papers of one item (a posting list)."""
        t = self.matrix.T.tocsr()
        t.sort_indices()
        return t

    def only(self, relations: Sequence[str]) -> Incidence:
        """The columns of some relations only (rows unchanged)."""
        wanted = [self.relations.index(r) for r in relations if r in self.relations]
        missing = [r for r in relations if r not in self.relations]
        if missing:
            raise UsageError(
                f"relation {missing[0]!r} was not loaded; load it with {{parameter}} "
                f"{missing[0]}",
                parameter="by",
            )
        keep = np.flatnonzero(np.isin(self.item_relation, wanted))
        remap = {old: new for new, old in enumerate(wanted)}
        return Incidence(
            self.papers,
            [self.items[i] for i in keep.tolist()],
            np.array([remap[int(r)] for r in self.item_relation[keep]], dtype=np.int8),
            tuple(self.relations[i] for i in wanted),
            self.matrix[:, keep].tocsr(),
        )


# --- reading the store --------------------------------------------------------------------


def relation_query(relation: Relation) -> str:
    """One row per paper, its items space-separated (IRIs hold no spaces).

    Grouping returns each paper IRI once instead of once per link, which is most of the
    cost of reading a large store (string lookups), and DISTINCT merges a link stated in
    several graphs.
    """
    return (
        "SELECT ?paper (GROUP_CONCAT(DISTINCT STR(?item); separator=' ') AS ?items) "
        f"WHERE {{ ?paper {relation.path} ?item . FILTER(isIRI(?item)) }} GROUP BY ?paper"
    )


def relation_pairs(store: GraphStore, relation: str) -> Iterator[tuple[str, str]]:
    """(paper IRI, item IRI) pairs of one relation, read from the store."""
    for paper, items in store.select_values(relation_query(RELATIONS[relation])):
        if paper is None or not items:
            continue
        for item in items.split(" "):
            yield paper, item


def load_incidence(store: GraphStore, by: str | Sequence[str] = ALL) -> Incidence:
    """The incidence matrix of the relations named by `by` (a name, `all` or a list)."""
    names = relation_names(by)
    return Incidence.from_pairs({name: relation_pairs(store, name) for name in names})


LABEL_QUERY = (
    "SELECT ?x ?label WHERE { VALUES ?x { %s } "
    f"{{ ?x {STD.label} ?label }} UNION {{ ?x {STD.foaf_name} ?label }} "
    f"UNION {{ ?x {STD.title} ?label }} }}"
)


def labels(store: GraphStore | None, iris: Iterable[str], batch: int = 500) -> dict[str, str]:
    """A label for each IRI: rdfs:label, foaf:name or dcterms:title (the least if several).

    IRIs with none get their last path segment. Without a store, all do.
    """
    wanted = sorted(set(iris))
    found: dict[str, str] = {}
    if store is not None:
        for start in range(0, len(wanted), batch):
            chunk = wanted[start : start + batch]
            values = " ".join(f"<{iri}>" for iri in chunk)
            for iri, label in store.select_values(LABEL_QUERY % values):
                if iri is None or label is None:
                    continue
                if iri not in found or label < found[iri]:
                    found[iri] = label
    return {iri: found.get(iri) or fallback_label(iri) for iri in wanted}
