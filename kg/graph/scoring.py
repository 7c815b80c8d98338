"""Similarity metrics: how two papers' shared items become a score, and its bounds.

Six metrics over the items two papers share (kg.graph.similarity's module doc says what
each means); each gives the weight of an item from how many papers have it, the score from
the shared weight and the two papers' masses, and an upper bound on the score a paper can
still reach (what lets kg.graph.similarity_index skip papers). `bm25_idf` is also the
weight the content and suggestion models use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kg.errors import UsageError
from kg.graph.relations import METRIC_NAMES

Array = np.ndarray


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

