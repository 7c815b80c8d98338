"""The similarity index: the k papers closest to one, exactly, without scoring them all.

Items are visited rarest first, and papers that share only the remaining common items are
skipped once a bound (kg.graph.scoring) shows they cannot reach a score k papers are known
to reach, so the posting list of an item on 40 % of the archive is rarely read. Papers are
banded by mass so that heavy ones are searched with a tighter bound. `top_all` runs the
same algorithm for blocks of papers with sparse matrix products (docs/similarity.md).
Pure numbers over an incidence matrix (kg.graph.incidence): no store access here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from kg.errors import NotFoundError, UsageError
from kg.graph.incidence import Incidence
from kg.graph.relations import DEFAULT_METRIC, fallback_label
from kg.graph.scoring import METRICS, Metric, metric_named

Array = np.ndarray
# Scores are rounded so that equal scores computed in different orders tie exactly, and
# ties are then broken by paper IRI.
SCORE_DECIMALS = 12
# Bounds are compared with a little slack so that rounding never prunes a paper that ties.
_SLACK = 1e-9
_TINY = 1e-12


# --- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SharedItem:
    """One item two papers share, with its part in their score."""

    iri: str
    relation: str  # "methods", "authors", ...
    papers: int  # how many papers have it
    weight: float  # its term in the score's shared sum
    label: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri,
            "label": self.label or fallback_label(self.iri),
            "relation": self.relation,
            "papers": self.papers,
            "weight": round(self.weight, 6),
        }


@dataclass(frozen=True)
class Match:
    """A similar paper: its score and the shared items that explain it, heaviest first."""

    paper: str
    score: float
    shared: tuple[SharedItem, ...]
    label: str | None = None

    def __repr__(self) -> str:
        title = self.label or fallback_label(self.paper)
        return f"Match({self.score:.4f} {title!r} <{self.paper}>, {len(self.shared)} shared)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "title": self.label or fallback_label(self.paper),
            "score": self.score,
            "shared_count": len(self.shared),
            "shared": [s.as_dict() for s in self.shared],
        }


# --- the index ----------------------------------------------------------------------------


def _expand(starts: Array, lengths: Array) -> tuple[Array, Array]:
    """Concatenated ranges starts[i] .. starts[i] + lengths[i], and the range of each."""
    lengths = lengths.astype(np.int64)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    first = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    offsets = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(
        starts.astype(np.int64) - first, lengths
    )
    return offsets, owner


Found = tuple[Array, Array, Array]  # (block row, paper, score)


def _merge_top(parts: list[Found], k: int) -> Found:
    """The best k (row, paper, score) entries of each row among `parts`."""
    rows = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    if len(rows) == 0:
        return rows, rows.copy(), np.zeros(0)
    papers = np.concatenate([p[1] for p in parts])
    scores = np.concatenate([p[2] for p in parts])
    keep = _first_k_per_row(rows, papers, scores, k)
    return rows[keep], papers[keep], scores[keep]


def _kth_scores(best: Found, block: int, k: int) -> Array:
    """Per row, the k-th best score of `best` (as `_merge_top` orders it), or 0."""
    rows, _, scores = best
    out = np.zeros(block)
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows)
    kth = rank == k - 1
    out[rows[kth]] = scores[kth]
    return out


def _kept_indptr(indptr: Array, keep: Array) -> Array:
    """The row pointers of a CSR matrix after dropping the entries where `keep` is False."""
    kept = np.concatenate(([0], np.cumsum(keep)))
    return np.asarray(kept[indptr], dtype=indptr.dtype)


def _first_k_per_row(rows: Array, cols: Array, scores: Array, k: int) -> Array:
    """Indices of the best k entries of each row: score descending, then column ascending."""
    order = np.lexsort((cols, -scores, rows))
    sorted_rows = rows[order]
    starts = np.searchsorted(sorted_rows, sorted_rows, side="left")
    rank = np.arange(len(order)) - starts
    return np.asarray(order[rank < k])


@dataclass(frozen=True)
class _Band:
    """Papers whose mass is at least `least_mass`, with posting lists over them only."""

    least_mass: float
    papers: Array  # the band's papers (rows of the incidence), ascending
    postings: sp.csr_matrix  # items × band papers
    df: Array  # papers of the band per item


@dataclass
class SimilarityIndex:
    """Top-k similar papers over an incidence matrix, for one metric."""

    incidence: Incidence
    metric: Metric = field(default_factory=lambda: METRICS[DEFAULT_METRIC])
    #: Postings read per row to seed the k-th-score threshold (a tuning knob, not a limit).
    seed_postings: int = 300
    #: Posting entries read per sparse product (bounds the memory of one step).
    max_work: int = 4_000_000
    #: Rows whose visited posting lists hold more entries than this are scored densely;
    #: None means an eighth of the papers.
    dense_work: int | None = None
    #: Papers are split into this many bands by mass, each with its own posting lists:
    #: a heavy paper needs more shared weight to score high, so its band is searched with a
    #: tighter bound (length filtering). 1 turns it off.
    mass_bands: int = 4

    def __post_init__(self) -> None:
        inc = self.incidence
        self.n_papers, self.n_items = inc.shape
        self.df = inc.item_papers
        self.weight = np.asarray(self.metric.weights(self.df, self.n_papers), dtype=np.float64)
        self.mass = np.asarray(inc.matrix @ self.weight).ravel()
        self.postings: sp.csr_matrix = inc.transposed
        self._dense_cutoff = self.dense_work or max(1, self.n_papers // 8)
        self._bands = self._split_by_mass()

    def _split_by_mass(self) -> list[_Band]:
        """The papers in bands by mass, each band with posting lists over its own papers."""
        mass, postings = self.mass, self.postings
        present = mass > 0
        if not present.any() or self.mass_bands <= 1:
            papers = np.arange(self.n_papers)
            return [_Band(0.0, papers, postings, self.df.astype(np.float64))]
        fractions = np.linspace(0, 1, self.mass_bands + 1)[1:-1]
        cuts = np.unique(np.quantile(mass[present], fractions))
        band = np.searchsorted(cuts, mass, side="right")
        owner = band[postings.indices]
        out = []
        for b in range(len(cuts) + 1):
            papers = np.flatnonzero((band == b) & present)
            if len(papers) == 0:
                continue
            local = np.zeros(self.n_papers, dtype=np.int32)
            local[papers] = np.arange(len(papers), dtype=np.int32)
            keep = owner == b
            part = sp.csr_matrix(
                (
                    postings.data[keep],
                    local[postings.indices[keep]],
                    _kept_indptr(postings.indptr, keep),
                ),
                shape=(self.n_items, len(papers)),
            )
            df = np.diff(part.indptr).astype(np.float64)
            out.append(_Band(float(mass[papers].min()), papers, part, df))
        return out

    @classmethod
    def build(cls, incidence: Incidence, metric: str = DEFAULT_METRIC) -> SimilarityIndex:
        return cls(incidence, metric_named(metric))

    # -- persistence (kg.graph.cache keeps the arrays beside the store) ---------------------
    def state(self) -> dict[str, Array]:
        """The arrays that `restore` needs to rebuild this index without recomputing it."""
        out: dict[str, Array] = {
            "df": self.df,
            "weight": self.weight,
            "mass": self.mass,
            "postings_indptr": self.postings.indptr,
            "postings_indices": self.postings.indices,
            "band_least": np.array([b.least_mass for b in self._bands], dtype=np.float64),
        }
        for i, band in enumerate(self._bands):
            out[f"band{i}_papers"] = band.papers
            out[f"band{i}_indptr"] = band.postings.indptr
            out[f"band{i}_indices"] = band.postings.indices
        return out

    @classmethod
    def restore(
        cls, incidence: Incidence, metric: Metric, state: Mapping[str, Array]
    ) -> SimilarityIndex:
        """An index from `state()`'s arrays over the same incidence (no recomputation)."""
        index = cls.__new__(cls)
        index.incidence = incidence
        index.metric = metric
        for name in ("seed_postings", "max_work", "dense_work", "mass_bands"):
            setattr(index, name, cls.__dataclass_fields__[name].default)
        index.n_papers, index.n_items = incidence.shape
        index.df = np.asarray(state["df"])  # a bincount of every link, 0.2 s at archive size
        index.weight = np.asarray(state["weight"])
        # Arrays written by another version of the metric (or for other links) are refused,
        # so the caller rebuilds: the weights are cheap to recompute from the counts.
        if len(index.df) != index.n_items or not np.allclose(
            index.weight, metric.weights(index.df, index.n_papers), rtol=1e-12, atol=0.0
        ):
            raise ValueError(f"the persisted {metric.name} index does not match this version")
        index.mass = np.asarray(state["mass"])
        # The posting lists hold every link once, as the incidence does: they share its
        # array of ones (46 MB at archive size, 0.1-0.2 s to fill), and the bands share one
        # as long as their largest (scipy copies a view of under half an array).
        links = incidence.matrix.data
        band_links = [state[f"band{i}_indices"] for i in range(len(state["band_least"]))]
        band_ones = np.ones(max(map(len, band_links), default=0), dtype=np.float64)

        def csr(indptr: Array, indices: Array, columns: int) -> sp.csr_matrix:
            data = links if len(indices) == len(links) else band_ones[: len(indices)]
            return sp.csr_matrix((data, indices, indptr), shape=(index.n_items, columns))

        index.postings = csr(state["postings_indptr"], state["postings_indices"], index.n_papers)
        index._dense_cutoff = max(1, index.n_papers // 8)
        bands = []
        for i, least in enumerate(np.asarray(state["band_least"]).tolist()):
            papers = np.asarray(state[f"band{i}_papers"])
            part = csr(state[f"band{i}_indptr"], state[f"band{i}_indices"], len(papers))
            bands.append(_Band(float(least), papers, part, np.diff(part.indptr).astype(np.float64)))
        index._bands = bands
        return index

    # -- pairs -----------------------------------------------------------------------------
    def _row(self, paper: int | str) -> int:
        if isinstance(paper, str):
            row = self.incidence.row(paper)
            if row is None:
                raise NotFoundError(f"{paper} has no {self._what()} in the store")
            return row
        if not 0 <= paper < self.n_papers:
            raise NotFoundError(f"no paper row {paper}")
        return int(paper)

    def _what(self) -> str:
        return " or ".join(self.incidence.relations)

    def score(self, a: int | str, b: int | str) -> float:
        """The similarity of two papers."""
        ra, rb = self._row(a), self._row(b)
        shared = np.intersect1d(
            self.incidence.items_of(ra), self.incidence.items_of(rb), assume_unique=True
        )
        d = np.array([self.weight[shared].sum()])
        value = self.metric.score(d, self.mass[[ra]], self.mass[[rb]])
        return float(np.round(value[0], SCORE_DECIMALS)) if len(shared) else 0.0

    def shared(self, a: int | str, b: int | str) -> list[SharedItem]:
        """What two papers share, heaviest first (then rarest, then by IRI)."""
        inc = self.incidence
        ra, rb = self._row(a), self._row(b)
        cols = np.intersect1d(inc.items_of(ra), inc.items_of(rb), assume_unique=True)
        ordered = sorted(
            (int(c) for c in cols),
            key=lambda c: (-self.weight[c], self.df[c], inc.items[c]),
        )
        return [
            SharedItem(inc.items[c], inc.relation_of(c), int(self.df[c]), float(self.weight[c]))
            for c in ordered
        ]

    # -- ranking ---------------------------------------------------------------------------
    def top(self, paper: int | str, k: int = 10) -> list[Match]:
        """The k papers most similar to `paper`, best first, each with its shared items."""
        row = self._row(paper)
        neighbours, scores = self.top_rows(np.array([row]), k)
        return [
            Match(self.incidence.papers[p], float(s), tuple(self.shared(row, int(p))))
            for p, s in zip(neighbours[0], scores[0], strict=True)
            if p >= 0
        ]

    def top_all(self, k: int = 10, chunk: int = 512) -> Iterator[tuple[Array, Array, Array]]:
        """Top-k for every paper, `chunk` papers at a time: (rows, neighbours, scores).

        `neighbours` is rows × k paper indices, -1 where a paper has fewer than k papers
        sharing anything with it; `scores` holds 0 there.
        """
        for start in range(0, self.n_papers, chunk):
            rows = np.arange(start, min(start + chunk, self.n_papers))
            neighbours, scores = self.top_rows(rows, k)
            yield rows, neighbours, scores

    def top_rows(self, rows: Array, k: int) -> tuple[Array, Array]:
        """Exact top-k for a block of papers (see the module docstring for the method)."""
        if k < 1:
            raise UsageError("{parameter} must be at least 1", parameter="top")
        rows = np.asarray(rows, dtype=np.int64)
        block = len(rows)
        neighbours = np.full((block, k), -1, dtype=np.int64)
        scores = np.zeros((block, k))
        if block == 0:
            return neighbours, scores
        r, p, s = self._candidates(rows, k)
        best = _first_k_per_row(r, p, s, k)
        r, p, s = r[best], p[best], s[best]
        slot = np.arange(len(r)) - np.searchsorted(r, r, side="left")
        neighbours[r, slot] = p
        scores[r, slot] = s
        return neighbours, scores

    def _candidates(self, rows: Array, k: int) -> tuple[Array, Array, Array]:
        """(block row, paper, exact score) for every paper that may be in a row's top k."""
        metric, weight, df, mass = self.metric, self.weight, self.df, self.mass
        block = len(rows)
        query = self.incidence.matrix[rows]
        qptr = query.indptr.astype(np.int64)
        qlen = np.diff(qptr)
        qrow = np.repeat(np.arange(block), qlen)
        qitems = query.indices.astype(np.int64)
        # Sorted keys of (row, item): membership tests for exact scoring.
        qkeys = qrow * self.n_items + qitems
        qweights = weight[qitems]
        qm = mass[rows]

        # Each row's items, rarest first, and the weight of the items from each one on.
        order = np.lexsort((qitems, df[qitems], qrow))
        items, w = qitems[order], weight[qitems[order]]
        row_end = np.repeat(qptr[1:], qlen)
        suffix_w = np.cumsum(w[::-1])[::-1]
        suffix_w = suffix_w - np.append(suffix_w, 0.0)[row_end]
        theta = self._threshold(rows, k, qrow, qptr, items, w, qm)

        def plan(band: _Band, theta: Array) -> tuple[Array, Array, Array, Array]:
            """Which items to visit for the band's papers, and what is left unvisited.

            Items are visited rarest first while a paper of the band that shares only the
            items left could still reach the threshold; the band's papers that share a
            visited item then hold all of the band's top k. The threshold is compared with
            slack, so that rounding never prunes a paper that ties.
            """
            floor = theta * (1 - _SLACK) - _TINY
            visit = metric.bound(suffix_w, qm[qrow], band.least_mass) >= floor[qrow]
            visited = np.bincount(qrow[visit], minlength=block)
            rest_w = np.zeros(block)
            left = visited < qlen
            rest_w[left] = suffix_w[(qptr[:-1] + visited)[left]]
            work = np.bincount(qrow[visit], weights=band.df[items[visit]], minlength=block)
            return visit, rest_w, work, floor

        # A row that must visit most of the archive is cheaper to score densely.
        total_work = sum((plan(band, theta)[2] for band in self._bands), np.zeros(block))
        dense = total_work >= self._dense_cutoff
        found = [self._dense_row(int(r), int(rows[r]), k) for r in np.flatnonzero(dense)]
        best = _merge_top(found, k)
        for band in self._bands:
            visit, rest_w, work, floor = plan(band, theta)
            visit &= ~dense[qrow]
            work[dense] = 0
            for group in self._groups(work):
                mask = visit & (qrow >= group[0]) & (qrow <= group[-1])
                if not mask.any():
                    continue
                query = sp.csr_matrix((w[mask], (qrow[mask], items[mask])), (block, self.n_items))
                partial = (query @ band.postings).tocsr()
                found = [
                    best,
                    self._survivors(partial, band, rows, rest_w, floor, qm, qkeys, qweights),
                ]
                best = _merge_top(found, k)
            # The k best so far are a threshold for the bands still to come.
            theta = np.maximum(theta, _kth_scores(best, block, k))
        return best

    def _dense_row(self, r: int, row: int, k: int) -> tuple[Array, Array, Array]:
        """Every paper's exact score against one paper, from a dense accumulator."""
        postings, weight = self.postings, self.weight
        total = np.zeros(self.n_papers)
        for item in self.incidence.items_of(row):
            # A posting list holds each paper once, so fancy-index += is exact here.
            papers_of = postings.indices[postings.indptr[item] : postings.indptr[item + 1]]
            total[papers_of] += weight[item]
        total[row] = 0.0
        papers = np.flatnonzero(total)
        score = np.round(
            self.metric.score(total[papers], self.mass[[row]], self.mass[papers]), SCORE_DECIMALS
        )
        n = len(papers)
        if n > k:  # keep the k best and whatever ties the k-th
            kth = np.partition(score, n - k)[n - k]
            keep = score >= kth
            papers, score = papers[keep], score[keep]
        positive = score > 0
        return np.full(int(positive.sum()), r), papers[positive], score[positive]

    def _threshold(
        self, rows: Array, k: int, qrow: Array, qptr: Array, items: Array, w: Array, qm: Array
    ) -> Array:
        """Per row, a score that k papers are known to reach (0 if not known).

        From the first `seed_postings` papers of the rarest items: the weight of the items a
        paper is seen with there is part of what it shares, so its score is at least
        `score(that weight)`, and the k-th best of those is a valid threshold.
        """
        block = len(rows)
        df = self.df
        cum_df = np.cumsum(df[items])
        row_start = np.repeat(qptr[:-1], np.diff(qptr))
        df_before = cum_df - df[items] - np.append(0, cum_df)[row_start]
        take = np.clip(self.seed_postings - df_before, 0, df[items])
        postings = self.postings
        offsets, owner = _expand(postings.indptr[items], take)
        theta = np.zeros(block)
        if len(offsets) == 0:
            return theta
        keys = qrow[owner] * self.n_papers + postings.indices[offsets]
        unique_keys, inverse = np.unique(keys, return_inverse=True)
        partial = np.bincount(inverse, weights=w[owner])
        pr, pp = unique_keys // self.n_papers, unique_keys % self.n_papers
        lower = self.metric.score(partial, qm[pr], self.mass[pp])
        lower[pp == rows[pr]] = -1.0
        ranked = _first_k_per_row(pr, pp, lower, k)
        ranked_rows = pr[ranked]
        kth = ranked[np.arange(len(ranked)) - np.searchsorted(ranked_rows, ranked_rows) == k - 1]
        theta[pr[kth]] = np.maximum(lower[kth], 0.0)
        return theta

    def _groups(self, work: Array) -> Iterator[Array]:
        """Block rows in runs whose posting work stays under `max_work` (at least one row)."""
        start, total = 0, 0.0
        for i, amount in enumerate(work):
            if i > start and total + amount > self.max_work:
                yield np.arange(start, i)
                start, total = i, 0.0
            total += amount
        if start < len(work):
            yield np.arange(start, len(work))

    def _survivors(
        self,
        partial: sp.csr_matrix,
        band: _Band,
        rows: Array,
        rest_w: Array,
        floor: Array,
        qm: Array,
        qkeys: Array,
        qweights: Array,
    ) -> tuple[Array, Array, Array]:
        """Exact scores of the papers in `partial` whose upper bound reaches the threshold.

        `partial` holds, per block row and paper of the band, the weight shared over the
        visited items; the upper bound assumes the paper also shares every unvisited item it
        can hold.
        """
        metric, mass = self.metric, self.mass
        per_row = np.diff(partial.indptr)
        cp, cd = band.papers[partial.indices], partial.data
        pm = mass[cp]
        upper = metric.score(
            cd + np.minimum(np.repeat(rest_w, per_row), pm - cd), np.repeat(qm, per_row), pm
        )
        keep = np.flatnonzero(upper >= np.repeat(floor, per_row))
        cr = np.searchsorted(partial.indptr, keep, side="right") - 1
        cp = cp[keep].astype(np.int64)
        not_self = cp != rows[cr]
        cr, cp = cr[not_self], cp[not_self]
        exact = self._pair_sums(cr, cp, qkeys, qweights)
        score = np.round(metric.score(exact, qm[cr], mass[cp]), SCORE_DECIMALS)
        # Below the threshold cannot be in the top k: k papers are known to reach it.
        wanted = (score > 0) & (score >= floor[cr])
        return cr[wanted], cp[wanted], score[wanted]

    def _pair_sums(self, rows: Array, papers: Array, qkeys: Array, qweights: Array) -> Array:
        """For each (block row, paper): the sum of weights of the items they share."""
        out = np.zeros(len(rows))
        if len(rows) == 0 or len(qkeys) == 0:
            return out
        matrix = self.incidence.matrix
        lengths = matrix.indptr[papers + 1] - matrix.indptr[papers]
        # In slices of about `max_work` expanded entries, to bound memory.
        cumulative = np.cumsum(lengths)
        start = 0
        while start < len(rows):
            before = int(cumulative[start - 1]) if start else 0
            end = int(np.searchsorted(cumulative, before + self.max_work, side="right"))
            end = max(end, start + 1)
            part = slice(start, end)
            offsets, owner = _expand(matrix.indptr[papers[part]], lengths[part])
            keys = rows[part][owner] * self.n_items + matrix.indices[offsets]
            pos = np.minimum(np.searchsorted(qkeys, keys), len(qkeys) - 1)
            hit = qkeys[pos] == keys
            out[part] = np.bincount(owner[hit], weights=qweights[pos[hit]], minlength=end - start)
            start = end
        return out

