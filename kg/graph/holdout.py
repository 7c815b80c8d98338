"""Held-out links for measuring link prediction honestly: every path to a hidden link is hidden.

A paper reaches an item through statements (kg.rdf.vocab.PAPER_TO): a direct one
(`kg:hasTask`, `kg:usesMethod`, `kg:hasRepository`, …) or one of its results, which names
a task and a dataset at once. `Evidence` reads those statements as *units*, each with the
links it gives. Holding out the link (paper, item) removes every unit of the paper that
gives it: a held-out paper–task link takes the paper's results on that task's leaderboards
with it (and what else those results said, such as their datasets), or the answer would
leak through them.

`split` holds out a share of each relation's links at random (seeded), and `ranks` ranks
every candidate item of the relation for each held-out (paper, ?) pair in the *filtered*
setting: the paper's other true items are left out of the ranking. Ties count half
(the mean of the optimistic and the pessimistic rank), so a model that scores everything
alike ranks the answer in the middle, not first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kg.graph.incidence import Incidence
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG, STD

#: The statements that give a paper its items, each a unit: (relation, SPARQL pattern
#: binding ?paper ?item). Their union is PAPER_TO's paths (tests/test_suggest.py checks it).
DIRECT: tuple[tuple[str, str], ...] = (
    ("methods", f"?paper {KG.usesMethod} ?item"),
    ("methods", f"?paper {KG.introducesMethod} ?item"),
    ("repositories", f"?paper {KG.hasRepository} ?item"),
    ("tasks", f"?paper {KG.hasTask} ?item"),
    ("authors", f"?paper {STD.creator} ?item"),
    ("datasets", f"?paper {KG.introducesDataset} ?item"),
)
#: A result is one unit that gives a task and a dataset.
RESULTS = (
    f"SELECT ?paper ?result ?task ?dataset WHERE {{ ?paper {KG.hasResult} ?result . "
    f"OPTIONAL {{ ?result {KG.onTask} ?task . FILTER(isIRI(?task)) }} "
    f"OPTIONAL {{ ?result {KG.onDataset} ?dataset . FILTER(isIRI(?dataset)) }} }}"
)
#: The relations whose held-out links are measured (authors are not suggested).
MEASURED = ("tasks", "datasets", "methods")
#: The relations a result gives links of. Every other relation's links are one statement of
#: DIRECT each, the incidence's own: those units are the incidence's links, not read again
#: (the authors' statements are most of a store's links).
RESULT_RELATIONS = ("tasks", "datasets")


@dataclass
class Evidence:
    """The units behind an incidence matrix: which statement gives which link."""

    full: Incidence
    unit_paper: np.ndarray  # per unit, its paper's row
    link_unit: np.ndarray  # per (unit, link) entry, the unit
    link_column: np.ndarray  # … and the item's column in `full`

    @classmethod
    def read(cls, store: GraphStore, full: Incidence) -> Evidence:
        """The units of the store, over the rows and columns of `full` (all relations)."""
        # a relation no result gives: each of `full`'s links is its own unit
        alone = [
            links_of(full, r)
            for r in dict.fromkeys(r for r, _ in DIRECT)
            if r in full.relations and r not in RESULT_RELATIONS
        ]
        first = sum(len(rows) for rows, _ in alone)
        rows = {p: i for i, p in enumerate(full.papers)}
        columns = {
            (r, full.items[c]): int(c)
            for r in RESULT_RELATIONS
            if r in full.relations
            for c in relation_columns(full, r)
        }
        unit_paper: list[int] = []
        link_unit: list[int] = []
        link_column: list[int] = []

        def add(paper: str | None, links: Sequence[tuple[str, str | None]]) -> None:
            row = rows.get(paper or "")
            found = [columns.get((rel, item)) for rel, item in links if item is not None]
            cols = [c for c in found if c is not None]
            if row is None or not cols:
                return
            unit = first + len(unit_paper)
            unit_paper.append(row)
            for c in cols:
                link_unit.append(unit)
                link_column.append(c)

        for relation, pattern in DIRECT:
            if relation not in full.relations or relation not in RESULT_RELATIONS:
                continue
            query = f"SELECT DISTINCT ?paper ?item WHERE {{ {pattern} . FILTER(isIRI(?item)) }}"
            for paper, item in store.select_values(query):
                add(paper, [(relation, item)])
        for paper, _result, task, dataset in store.select_values(RESULTS):
            add(paper, [("tasks", task), ("datasets", dataset)])
        pieces = [rows for rows, _ in alone]
        return cls(
            full,
            np.concatenate([*pieces, np.asarray(unit_paper, dtype=np.int64)]),
            np.concatenate(
                [np.arange(first, dtype=np.int64), np.asarray(link_unit, dtype=np.int64)]
            ),
            np.concatenate(
                [*(cols for _, cols in alone), np.asarray(link_column, dtype=np.int64)]
            ),
        )

    def incidence(self, kept_units: np.ndarray | None = None) -> Incidence:
        """The matrix the kept units give (all units: `full`'s), with `full`'s rows and
        columns, so that a row or column means the same paper or item in both."""
        keep = (
            np.ones(len(self.link_unit), dtype=bool)
            if kept_units is None
            else kept_units[self.link_unit]
        )
        full = self.full
        return Incidence.from_arrays(
            list(full.papers),
            list(full.items),
            full.item_relation,
            full.relations,
            self.unit_paper[self.link_unit[keep]],
            self.link_column[keep],
        )

    def hide(self, links: tuple[np.ndarray, np.ndarray], kept: np.ndarray) -> np.ndarray:
        """`kept` (a unit mask) without every unit that gives one of the (row, column) links."""
        out = kept.copy()
        width = np.int64(max(1, self.full.shape[1]))
        wanted = np.asarray(links[0], dtype=np.int64) * width + np.asarray(links[1])
        given = self.unit_paper[self.link_unit] * width + self.link_column
        out[self.link_unit[np.isin(given, wanted)]] = False
        return out


@dataclass
class Split:
    """Training units, and the held-out links of each measured relation."""

    evidence: Evidence
    kept: np.ndarray  # unit mask: what a model may learn from
    held_out: dict[str, tuple[np.ndarray, np.ndarray]]  # relation -> (rows, columns)

    def train(self) -> Incidence:
        return self.evidence.incidence(self.kept)


def links_of(inc: Incidence, relation: str) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) links of one relation, in row then column order."""
    coo = inc.matrix.tocoo()
    mine = inc.item_relation[coo.col] == inc.relations.index(relation)
    rows, cols = coo.row[mine].astype(np.int64), coo.col[mine].astype(np.int64)
    order = np.lexsort((cols, rows))
    return rows[order], cols[order]


def split(
    evidence: Evidence,
    *,
    share: float = 0.1,
    seed: int = 0,
    relations: Sequence[str] = MEASURED,
    kept: np.ndarray | None = None,
    most: int | Mapping[str, int] | None = None,
) -> Split:
    """Hold out `share` of each relation's links (among those `kept` gives), at most `most`
    of them (a number, or one per relation), at random with `seed`, and hide every unit
    that gives a held-out link."""
    rng = np.random.default_rng(seed)
    kept = np.ones(len(evidence.unit_paper), dtype=bool) if kept is None else kept
    current = evidence.incidence(kept)
    held: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    remaining = kept
    for relation in relations:
        if relation not in current.relations:
            continue
        rows, cols = links_of(current, relation)
        count = round(share * len(rows))
        cap = most.get(relation) if isinstance(most, Mapping) else most
        if cap is not None:
            count = min(count, cap)
        if count == 0:
            continue
        chosen = np.sort(rng.choice(len(rows), size=count, replace=False))
        held[relation] = (rows[chosen], cols[chosen])
        remaining = evidence.hide(held[relation], remaining)
    return Split(evidence, remaining, held)


# --- ranking ----------------------------------------------------------------------------------

#: Scores for a block of paper rows over the relation's columns: (rows, columns) -> matrix.
Scorer = Callable[[np.ndarray, np.ndarray], np.ndarray]


def filtered_ranks(
    truth: sp.csr_matrix,
    columns: np.ndarray,
    held: tuple[np.ndarray, np.ndarray],
    scores_of: Scorer,
    block: int = 256,
) -> np.ndarray:
    """The filtered rank of each held-out link among the relation's `columns`.

    `truth` is the full matrix (all true links); for the pair (paper, ?) the paper's other
    true items are removed from the candidates, and ties count half.
    """
    rows, cols = held
    position = np.full(truth.shape[1], -1, dtype=np.int64)
    position[columns] = np.arange(len(columns))
    ranks = np.zeros(len(rows))
    papers = np.unique(rows)
    for start in range(0, len(papers), block):
        group = papers[start : start + block]
        scores = np.asarray(scores_of(group, columns), dtype=np.float64)
        links = np.flatnonzero(np.isin(rows, group))
        ranks[links] = block_ranks(
            scores, truth[group][:, columns], np.searchsorted(group, rows[links]),
            position[cols[links]],
        )
    return ranks


def block_ranks(
    scores: np.ndarray, true: sp.spmatrix, at: np.ndarray, targets: np.ndarray
) -> np.ndarray:
    """The filtered ranks of some held-out links of a block of papers: link n is the item
    `targets[n]` (a column of `scores`) of the paper `at[n]` (a row of `scores`); `true`
    (rows × columns) holds every true link, which is no candidate but the target itself.
    Ties count half."""
    out = np.zeros(len(at))
    true = true.toarray() > 0 if sp.issparse(true) else np.asarray(true, dtype=bool)
    step = max(1, 2_000_000 // max(1, scores.shape[1]))  # a few MB of comparisons at a time
    for start in range(0, len(at), step):
        i, target = at[start : start + step], targets[start : start + step]
        row = scores[i]
        value = row[np.arange(len(i)), target][:, None]
        candidates = ~true[i]  # the target is true: it is neither above nor beside itself
        greater = np.count_nonzero((row > value) & candidates, axis=1)
        equal = np.count_nonzero((row == value) & candidates, axis=1)
        out[start : start + step] = 1 + greater + equal / 2
    return out


def metrics(ranks: np.ndarray) -> dict[str, float]:
    """Filtered MRR and Hits@1/3/10 of some ranks."""
    if len(ranks) == 0:
        return {"links": 0, "mrr": 0.0, "hits@1": 0.0, "hits@3": 0.0, "hits@10": 0.0}
    return {
        "links": len(ranks),
        "mrr": round(float(np.mean(1.0 / ranks)), 4),
        "hits@1": round(float(np.mean(ranks <= 1)), 4),
        "hits@3": round(float(np.mean(ranks <= 3)), 4),
        "hits@10": round(float(np.mean(ranks <= 10)), 4),
    }


def relation_columns(inc: Incidence, relation: str) -> np.ndarray:
    return np.flatnonzero(inc.item_relation == inc.relations.index(relation))


def evaluate(
    split_: Split, scorers: Mapping[str, Scorer]
) -> dict[str, dict[str, float]]:
    """Filtered metrics per held-out relation, each scored by `scorers[relation]`."""
    full = split_.evidence.full
    out: dict[str, dict[str, float]] = {}
    for relation, held in split_.held_out.items():
        if relation not in scorers:
            continue
        ranks = filtered_ranks(
            full.matrix, relation_columns(full, relation), held, scorers[relation]
        )
        out[relation] = metrics(ranks)
    return out

