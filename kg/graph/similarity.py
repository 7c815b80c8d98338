"""Explained paper similarity: which papers are closest to this one, and why.

Papers are compared by the items they share (methods, repositories, tasks, authors,
datasets; see kg.graph.incidence). Six metrics, all over the same shared items:

* ``idf`` (the default): each item weighs idf², idf = log(1 + (N - n + 0.5) / (n + 0.5)) for
  an item on n of N papers (the always-positive BM25 form), so rarer items weigh more. With
  D the weight of the shared items and a paper's mass the weight of all its items, the score
  of paper p for query paper q is D / (mass(q)^3/4 · mass(p)^1/4): the weighted geometric
  mean of the share of q's weight that p has (weight 3/4) and the share of p's weight that
  q has (weight 1/4). Sharing Adam, Dropout or Softmax, which most papers use, adds almost
  nothing; sharing a rare method, an author or a repository adds a lot; and a paper with
  many items of its own is penalised only mildly (its mass to the power 1/4).
* ``idf-cosine``: the same weights, D / sqrt(mass(q) · mass(p)) (the cosine of the idf
  vectors): the default until blind judgements showed it ranks below ``idf``
  (docs/similarity.md), because it penalises papers with more items as much as it rewards
  what they share.
* ``jaccard``: shared / union.
* ``overlap``: shared / the smaller paper's item count.
* ``cosine``: shared / sqrt(|A| · |B|).
* ``adamic-adar``: the sum over shared items of 1 / log(papers with the item).

Each result carries the shared items that explain it, ranked by their weight in the score.

Ranking is exact without scoring every paper (`SimilarityIndex`, docs/similarity.md):
items are visited rarest first, and papers that share only the remaining common items are
skipped once a bound shows they cannot reach a score k papers are known to reach, so the
posting list of an item on 40 % of the archive is rarely read. Papers are banded by mass so
that heavy ones are searched with a tighter bound. `top_all` runs the same algorithm for
blocks of papers with sparse matrix products.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from kg.errors import NotFoundError, UsageError
from kg.graph.incidence import Incidence, labels, load_incidence
from kg.graph.relations import (
    ALL,
    DEFAULT_BY,
    DEFAULT_METRIC,
    METRIC_NAMES,
    RELATIONS,
    fallback_label,
    relation_names,
)
from kg.query.resolve import resolve
from kg.rdf.store import GraphStore

Array = np.ndarray
# Scores are rounded so that equal scores computed in different orders tie exactly, and
# ties are then broken by paper IRI.
_DECIMALS = 12
# Bounds are compared with a little slack so that rounding never prunes a paper that ties.
_SLACK = 1e-9
_TINY = 1e-12


# --- metrics ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A similarity over shared items.

    Each item has a weight (1 for the counting metrics). For papers q and p, D is the sum of
    the weights of the items they share and a paper's mass is the sum over its own items
    (for counting metrics: its item count). `score(D, q mass, p mass)` grows with D.
    `bound(W, q mass, L)` is the highest score any paper of mass at least L (L may be 0)
    can reach with q when what it shares with q is a subset of q's items weighing W;
    `SimilarityIndex` prunes with it, so its results are exact as long as the bound is.
    """

    name: str
    summary: str
    weights: Callable[[Array, int], Array]  # (papers per item, paper count) -> weight
    score: Callable[[Array, Array, Array], Array]  # D, q mass, p mass
    bound: Callable[[Array, Array, float], Array]  # subset weight, q mass, least p mass
    #: Bumped whenever the weights or the score change, so that an index persisted by an
    #: earlier version (kg.graph.cache) is never read as this one.
    version: int = 1


def _ones(df: Array, n: int) -> Array:
    return np.ones(len(df))


def bm25_idf(df: Array, n: int) -> Array:
    """log(1 + (N - n + 0.5) / (n + 0.5)): large for rare items, near 0 for ubiquitous ones."""
    df = np.asarray(df, dtype=np.float64)
    return np.asarray(np.log1p((n - df + 0.5) / (df + 0.5)))


def _idf_squared(df: Array, n: int) -> Array:
    # A paper's vector holds idf per item, so a shared item adds idf² to the dot product.
    return np.asarray(bm25_idf(df, n) ** 2)


def _adamic_adar(df: Array, n: int) -> Array:
    df = np.asarray(df, dtype=np.float64)
    out = np.zeros(len(df))
    shared = df >= 2  # an item of one paper is never shared: weight 0 instead of 1/log 1
    out[shared] = 1.0 / np.log(df[shared])
    return out


def _jaccard(d: Array, qm: Array, pm: Array) -> Array:
    return np.asarray(d / (qm + pm - d))


def _overlap(d: Array, qm: Array, pm: Array) -> Array:
    return np.asarray(d / np.minimum(qm, pm))


def _sum(d: Array, qm: Array, pm: Array) -> Array:
    return np.asarray(d, dtype=np.float64)


@dataclass(frozen=True)
class _Geometric:
    """D / (q mass^(1 - alpha) · p mass^alpha): the weighted geometric mean of D / q mass (the
    share of the query's weight the paper has) and D / p mass (the share of the paper's
    weight the query has). alpha = 1/2 is the cosine; a smaller alpha penalises a paper's
    own items less."""

    alpha: float

    def score(self, d: Array, qm: Array, pm: Array) -> Array:
        a = self.alpha
        return np.asarray(d / (np.power(qm, 1 - a) * np.power(pm, a)))

    def bound(self, w: Array, qm: Array, least: float) -> Array:
        # D <= W, and p's mass is at least D and at least L: the score is at most
        # min((W / qm)^(1 - alpha), W / (qm^(1 - alpha) L^alpha)).
        a = self.alpha
        w = np.maximum(w, 0.0)
        out = np.power(w / qm, 1 - a)
        if least <= 0:
            return np.asarray(out)
        return np.asarray(np.minimum(out, w / (np.power(qm, 1 - a) * least**a)))


_COSINE = _Geometric(0.5)
#: The default ranking's alpha, chosen by blind judgements (docs/similarity.md).
IDF_ALPHA = 0.25
_IDF = _Geometric(IDF_ALPHA)


def _jaccard_bound(w: Array, qm: Array, least: float) -> Array:
    # c <= W shared and |p| >= max(L, c): c / (|q| + |p| - c) is at most W / |q| when the
    # paper is made of the shared items, else W / (|q| + L - W).
    with np.errstate(divide="ignore", invalid="ignore"):  # the branch np.where drops
        return np.asarray(np.where(w < least, w / (qm + least - w), w / qm))


def _overlap_bound(w: Array, qm: Array, least: float) -> Array:
    # c <= W shared and |p| >= L: c / min(|q|, |p|) <= min(1, W / min(|q|, L)).
    if least <= 0:
        return (np.asarray(w) > 0).astype(np.float64)
    return np.asarray(np.minimum(1.0, w / np.minimum(qm, least)))


def _sum_bound(w: Array, qm: Array, least: float) -> Array:
    return np.asarray(w, dtype=np.float64)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "idf",
            "idf²-weighted shared items / (own mass^3/4 · other's mass^1/4): rare shared "
            "items count most, and other papers' own items cost little",
            _idf_squared,
            _IDF.score,
            _IDF.bound,
            version=2,
        ),
        Metric(
            "idf-cosine",
            "cosine of idf-weighted item vectors (the earlier default; it penalises papers "
            "with many items)",
            _idf_squared,
            _COSINE.score,
            _COSINE.bound,
        ),
        Metric(
            "jaccard",
            "shared items / all items of the two papers",
            _ones,
            _jaccard,
            _jaccard_bound,
        ),
        Metric(
            "overlap",
            "shared items / the smaller paper's items",
            _ones,
            _overlap,
            _overlap_bound,
        ),
        Metric(
            "cosine",
            "shared items / sqrt(product of the papers' item counts)",
            _ones,
            _COSINE.score,
            _COSINE.bound,
        ),
        Metric(
            "adamic-adar",
            "sum over shared items of 1 / log(papers with the item)",
            _adamic_adar,
            _sum,
            _sum_bound,
        ),
    )
}
if tuple(METRICS) != METRIC_NAMES:  # the CLI lists METRIC_NAMES without importing numpy
    raise RuntimeError("kg.graph.relations.METRIC_NAMES must name the metrics of METRICS")


def metric_named(name: str) -> Metric:
    metric = METRICS.get(name.strip().lower())
    if metric is None:
        raise UsageError(f"unknown metric {name!r}; use one of: {', '.join(METRICS)}")
    return metric


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
        return float(np.round(value[0], _DECIMALS)) if len(shared) else 0.0

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
            self.metric.score(total[papers], self.mass[[row]], self.mass[papers]), _DECIMALS
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
        score = np.round(metric.score(exact, qm[cr], mass[cp]), _DECIMALS)
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


# --- papers by name -----------------------------------------------------------------------


def resolve_paper(store: GraphStore, ref: str, base_iri: str) -> str:
    """The IRI of the paper `ref` names: a PwC slug or URL, an arXiv id (with or without
    version or `arXiv:`) or URL, a title in any case, or an IRI (kg.query.resolve).

    Raises UnknownNameError (a NotFoundError) with the nearest papers when nothing matches.
    """
    return resolve(store, "paper", ref, base_iri, parameter="paper").iri


# --- the library entry points -------------------------------------------------------------


@dataclass
class SimilarResult:
    paper: str
    label: str | None
    by: tuple[str, ...]
    metric: str
    item_count: int
    matches: list[Match]

    def __repr__(self) -> str:
        title = self.label or fallback_label(self.paper)
        lines = [
            f"SimilarResult({title!r} <{self.paper}>: {self.item_count} items "
            f"({', '.join(self.by)}), metric {self.metric}, {len(self.matches)} matches)"
        ]
        for rank, m in enumerate(self.matches, start=1):
            shared = ", ".join(s.label or fallback_label(s.iri) for s in m.shared[:3])
            more = ", …" if len(m.shared) > 3 else ""
            title = m.label or fallback_label(m.paper)
            lines.append(f"  {rank:>2}. {m.score:.4f}  {title}  ({shared}{more})")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "title": self.label or fallback_label(self.paper),
            "by": list(self.by),
            "metric": self.metric,
            "items": self.item_count,
            "results": [m.as_dict() for m in self.matches],
        }


def with_labels(store: GraphStore | None, matches: Sequence[Match]) -> list[Match]:
    """The matches with paper titles and item labels filled in from the store."""
    names = labels(store, [m.paper for m in matches] + [s.iri for m in matches for s in m.shared])
    return [
        Match(
            m.paper,
            m.score,
            tuple(
                SharedItem(s.iri, s.relation, s.papers, s.weight, names[s.iri]) for s in m.shared
            ),
            names[m.paper],
        )
        for m in matches
    ]


def similar(
    store: GraphStore,
    paper: str,
    *,
    base_iri: str,
    by: str | Sequence[str] = DEFAULT_BY,
    metric: str = DEFAULT_METRIC,
    top: int = 10,
    incidence: Incidence | None = None,
    index: SimilarityIndex | None = None,
) -> SimilarResult:
    """The `top` papers most similar to `paper`, explained.

    Reads the relations from the store unless given an `incidence`, or an `index` of `by`
    and `metric` (`kg.graph.cache.similarity_index` keeps one beside the store).
    """
    chosen = metric_named(metric)
    relations = relation_names(by)
    if top < 1:
        raise UsageError("{parameter} must be at least 1", parameter="top")
    iri = resolve_paper(store, paper, base_iri)
    if index is None:
        inc_ = incidence if incidence is not None else load_incidence(store, relations)
        index = SimilarityIndex(inc_, chosen)
    inc = index.incidence
    row = inc.row(iri)
    matches = [] if row is None else index.top(row, top)
    item_count = 0 if row is None else int(inc.paper_items[row])
    title = labels(store, [iri])[iri]
    return SimilarResult(
        iri, title, relations, chosen.name, item_count, with_labels(store, matches)
    )


# --- what two papers share ----------------------------------------------------------------


@dataclass
class SharedRelation:
    relation: str
    count_a: int
    count_b: int
    items: list[SharedItem]

    @property
    def jaccard(self) -> float:
        union = self.count_a + self.count_b - len(self.items)
        return round(len(self.items) / union, _DECIMALS) if union else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "a": self.count_a,
            "b": self.count_b,
            "shared": len(self.items),
            "jaccard": self.jaccard,
            "items": [i.as_dict() for i in self.items],
        }


@dataclass
class SharedResult:
    a: str
    b: str
    label_a: str
    label_b: str
    relations: list[SharedRelation]

    def __repr__(self) -> str:
        lines = [f"SharedResult({self.label_a!r} <{self.a}> and {self.label_b!r} <{self.b}>)"]
        for r in self.relations:
            items = ", ".join(i.label or fallback_label(i.iri) for i in r.items[:5])
            more = ", …" if len(r.items) > 5 else ""
            lines.append(
                f"  {r.relation}: {len(r.items)} shared of {r.count_a} and {r.count_b}"
                + (f" ({items}{more})" if items else "")
            )
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": {"paper": self.a, "title": self.label_a},
            "b": {"paper": self.b, "title": self.label_b},
            "relations": [r.as_dict() for r in self.relations],
        }


def _count(store: GraphStore, paper: str, path: str) -> int:
    rows = list(
        store.select_values(
            f"SELECT (COUNT(DISTINCT ?i) AS ?n) WHERE {{ <{paper}> {path} ?i . FILTER(isIRI(?i)) }}"
        )
    )
    return int(rows[0][0] or 0) if rows else 0


def shared(
    store: GraphStore, a: str, b: str, *, base_iri: str, by: str | Sequence[str] = ALL
) -> SharedResult:
    """Everything two papers share, per relation, rarest items first.

    Reads only what concerns the two papers, so it is fast on any store size.
    """
    first, second = resolve_paper(store, a, base_iri), resolve_paper(store, b, base_iri)
    out: list[SharedRelation] = []
    for name in relation_names(by):
        path = RELATIONS[name].path
        query = (
            "SELECT ?i (COUNT(DISTINCT ?other) AS ?n) WHERE { "
            f"{{ SELECT DISTINCT ?i WHERE {{ <{first}> {path} ?i . <{second}> {path} ?i . "
            "FILTER(isIRI(?i)) } } "
            f"?other {path} ?i }} GROUP BY ?i"
        )
        found = [(i, int(n or 0)) for i, n in store.select_values(query) if i is not None]
        found.sort(key=lambda item: (item[1], item[0]))
        items = [SharedItem(i, name, n, 1.0) for i, n in found]
        out.append(
            SharedRelation(name, _count(store, first, path), _count(store, second, path), items)
        )
    names = labels(store, [first, second, *(i.iri for r in out for i in r.items)])
    for rel in out:
        rel.items = [
            SharedItem(i.iri, i.relation, i.papers, i.weight, names[i.iri]) for i in rel.items
        ]
    return SharedResult(first, second, names[first], names[second], out)
