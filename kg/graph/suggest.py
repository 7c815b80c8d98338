"""Suggested links: the tasks, datasets, methods and repositories a paper most likely lacks.

Two explainable votes, blended, over the paper × item incidence (kg.graph.incidence), and
the evidence of the paper's own text (kg.graph.content):

* **similar papers** (paper kNN): the paper's k nearest papers by kg's explained similarity
  (kg.graph.similarity, metric ``idf``) vote for their items, each with its similarity;
  the vote is the similarity-weighted share of neighbours that have the item.
* **co-occurring items** (item co-occurrence): each item j the paper has votes for item i
  with how often they appear together, c(j, i) / (n_j^(1-d) · n_i^d) (d = 0: the share of
  j's papers that have i; d = 1/2: the cosine), the votes weighted by j's idf (a rare
  item says more than Adam does).
* **its text names it**: the item's name (label, full name or slug) in the paper's title or
  abstract, whole words, weighted by their rarity over all papers' texts (kg.graph.content).
  A held-out paper–method link is almost always its method's only link, which no vote over
  the incidence can reach; the paper's title often names the method.

score = blend · similar-paper vote + (1 - blend) · co-occurrence vote
        + popularity · (papers with the item / papers with the most popular one)
        + text · (the content score of the item's best name)

The popularity term is a small prior that orders items no vote reaches. Existing links are
never suggested. Each suggestion carries its reasons: the similar papers that have the
item, the paper's items that co-occur with it most, and where its text names the item.

The few settings (k, blend, d, popularity, text) are tuned per relation by `train` on a
validation split of the store's own links (kg.graph.holdout, hiding every path to a held-out
link). kg.graph.cache keeps the tuned model beside the store, and it goes stale with it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from kg.errors import UsageError
from kg.graph.content import ContentIndex, Match, read_texts
from kg.graph.holdout import Evidence, block_ranks, metrics, relation_columns, split
from kg.graph.incidence import Incidence, labels
from kg.graph.relations import RELATIONS, SUGGEST_KINDS, fallback_label
from kg.graph.scoring import bm25_idf, metric_named
from kg.graph.similarity import resolve_paper
from kg.graph.similarity_index import SimilarityIndex
from kg.ingest.identity import possibly_same_dataset
from kg.rdf.store import GraphStore

Array = np.ndarray
#: Bumped when the model's meaning changes, so a persisted model of an older kg is retrained.
VERSION = 2
_DECIMALS = 12
#: `Votes.reach` keeps the co-occurrence row of at most this many items, those whose papers
#: hold over HEAVY_LINKS links: at the whole archive the 100 items reach 28 % of all links,
#: and a paper's reach reads 135x fewer (2.9 M to 21,000 at the median), for at most 52 MB
#: (6.45 M counts) a process.
HEAVY_ITEMS = 100
HEAVY_LINKS = 50_000


@dataclass(frozen=True)
class Settings:
    """The hyperparameters of one relation's suggestions."""

    neighbours: int = 20
    blend: float = 0.5
    damping: float = 0.5
    popularity: float = 0.01
    text: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


#: The configurations `train` tries per relation (its trial budget: their number).
GRID: tuple[Settings, ...] = tuple(
    Settings(k, b) for k, b in itertools.product((10, 40), (0.25, 0.5, 0.75))
)
#: The weights of the text's evidence `train` tries per relation, once the votes' settings are
#: chosen (0: the text does not help; more trials on top of GRID's).
TEXT_WEIGHTS: tuple[float, ...] = (0.0, 0.003, 0.006, 0.01, 0.02, 0.03, 0.06, 0.1, 0.2, 0.3)
DEFAULT = Settings()


def relation_of_kind(kind: str) -> str:
    """`task` -> `tasks`: the relation a --kind names."""
    key = kind.strip().lower()
    if key not in SUGGEST_KINDS:
        raise UsageError(
            "{parameter} " + f"{kind[:40]!r} is not a kind; use one of: {', '.join(SUGGEST_KINDS)}",
            parameter="kind",
        )
    return SUGGEST_KINDS[key]


class Votes:
    """The two votes and the prior over one incidence matrix (what a model learns from),
    and the items' names (`content`) with, when training, every paper's words (`words`,
    rows of the incidence; a suggestion reads its one paper's text instead)."""

    def __init__(
        self,
        index: SimilarityIndex,
        content: ContentIndex | None = None,
        words: sp.csr_matrix | None = None,
    ) -> None:
        self.index = index
        self.content = content
        self.words = words
        inc = index.incidence
        self.incidence = inc
        self.matrix: sp.csr_matrix = inc.matrix
        self.df = np.asarray(inc.item_papers, dtype=np.float64)
        self.idf = bm25_idf(self.df, max(1, inc.shape[0]))
        self._cooccurrence: dict[bytes, sp.csr_matrix] = {}
        self._heavy: Array | None = None
        self._heavy_rows: dict[int, tuple[Array, Array]] = {}

    def neighbours(self, rows: Array, k: int, chunk: int = 512) -> tuple[Array, Array]:
        """The k most similar papers of each row (-1 where fewer) and their similarity,
        `chunk` rows at a time (exact either way; the search's working memory grows with
        the rows asked at once, as `SimilarityIndex.top_all`'s)."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) <= chunk:
            return self.index.top_rows(rows, k)
        parts = [self.index.top_rows(rows[i : i + chunk], k) for i in range(0, len(rows), chunk)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def paper_vote(self, neighbours: Array, sims: Array, k: int, columns: Array) -> Array:
        """Similarity-weighted share of each row's k nearest papers that have each item."""
        nb, s = neighbours[:, :k], sims[:, :k]
        valid = nb >= 0
        rows = np.repeat(np.arange(len(nb)), valid.sum(axis=1))
        weights = sp.csr_matrix(
            (s[valid], (rows, nb[valid])), shape=(len(nb), self.matrix.shape[0])
        )
        # the neighbours' rows, then the columns: no cut of the whole matrix for one paper
        votes = (weights @ self.matrix)[:, np.asarray(columns, dtype=np.int64)].toarray()
        total = s.sum(axis=1, keepdims=True)
        return np.asarray(np.divide(votes, total, out=np.zeros_like(votes), where=total > 0))

    def cooccurrence(self, columns: Array) -> sp.csr_matrix:
        """items × `columns`: how many papers have both (c(j, i)), counted once. Sparse: a
        paper adds its items × its items of `columns`, whereas the papers that share an
        item with a row are most of the store when the item is Adam."""
        key = np.asarray(columns, dtype=np.int64).tobytes()
        if key not in self._cooccurrence:
            cut = self.matrix[:, np.asarray(columns, dtype=np.int64)]  # papers × columns
            self._cooccurrence[key] = (cut.T.tocsr() @ self.matrix).T.tocsr()
        return self._cooccurrence[key]

    def item_vote(
        self,
        rows: Array,
        columns: Array,
        damping: float,
        reach: tuple[Array, Array] | None = None,
    ) -> Array:
        """idf-weighted mean over each row's items j of c(j, i) / (n_j^(1-d) n_i^d).
        `reach` is `self.reach(rows, damping)` when the caller already has it (a paper's
        suggestions: one pass for every relation); without it, the rows go through
        `cooccurrence` (many rows at once)."""
        if reach is None:
            own = self.matrix[np.asarray(rows, dtype=np.int64)]
            scale = self.idf / np.power(np.maximum(self.df, 1.0), 1.0 - damping)
            votes = ((own @ sp.diags(scale)) @ self.cooccurrence(columns)).toarray()
            total = np.asarray(own @ self.idf).reshape(-1, 1)
        else:
            every, total = reach
            votes = every[:, np.asarray(columns, dtype=np.int64)]
        votes /= np.power(np.maximum(self.df, 1.0)[columns], damping)
        return np.asarray(np.divide(votes, total, out=np.zeros_like(votes), where=total > 0))

    def reach(self, rows: Array, damping: float) -> tuple[Array, Array]:
        """What item_vote needs of a few rows whatever the columns: each row's undivided
        votes for every item, and its idf total. Through the papers that share an item with
        the row (its items' posting lists) and their items: no pass over the whole matrix,
        so a paper's suggestions cost what its neighbourhood holds, not the store. An item
        whose papers hold millions of links (Adam) is read from its co-occurrence row, made
        once (`_heavy_row`), instead of through its papers each time."""
        own = self.matrix[np.asarray(rows, dtype=np.int64)]
        scale = self.idf / np.power(np.maximum(self.df, 1.0), 1.0 - damping)
        scaled = (own @ sp.diags(scale)).tocsr()
        heavy = self._heavy_items()[scaled.indices]
        light = scaled.copy()
        light.data[heavy] = 0.0
        light.eliminate_zeros()
        every = ((light @ self.index.postings) @ self.matrix).toarray()  # rows × items
        row_of = np.repeat(np.arange(scaled.shape[0]), np.diff(scaled.indptr))
        for r, j, weight in zip(
            row_of[heavy].tolist(), scaled.indices[heavy].tolist(), scaled.data[heavy].tolist(),
            strict=True,
        ):
            items, counts = self._heavy_row(j)
            every[r, items] += np.multiply(counts, weight, dtype=np.float64)
        return every, np.asarray(own @ self.idf).reshape(-1, 1)

    def _heavy_items(self) -> Array:
        """Which items `reach` reads from a kept co-occurrence row: the HEAVY_ITEMS whose
        papers hold the most links, of those holding over HEAVY_LINKS (a mask over items)."""
        if self._heavy is None:
            per_paper = np.diff(self.matrix.indptr).astype(np.float64)
            links = np.asarray(self.index.postings @ per_paper)  # the items' papers' links
            top = np.argsort(-links, kind="stable")[:HEAVY_ITEMS]
            self._heavy = np.zeros(len(links), dtype=bool)
            self._heavy[top[links[top] > HEAVY_LINKS]] = True
        return self._heavy

    def _heavy_row(self, item: int) -> tuple[Array, Array]:
        """How many papers `item` shares with each item (its row of the co-occurrence
        matrix, c(item, ·)), as (items, counts); made on first use and kept."""
        if item not in self._heavy_rows:
            row = (self.index.postings[item] @ self.matrix).tocsr()
            # counts are whole numbers under 2^24: float32 holds them exactly, in half the memory
            self._heavy_rows[item] = (row.indices.astype(np.int32), row.data.astype(np.float32))
        return self._heavy_rows[item]

    def prior(self, columns: Array) -> Array:
        counts = self.df[columns]
        top = counts.max() if len(counts) else 0.0
        return counts / top if top > 0 else np.zeros(len(columns))

    def text_vote(self, words: sp.csr_matrix | None, columns: Array) -> Array | None:
        """How strongly each row's text names each item (kg.graph.content), or None
        without names or words."""
        if self.content is None or words is None:
            return None
        return self.content.scores(words, columns)

    def words_of(self, rows: Array) -> sp.csr_matrix | None:
        return None if self.words is None else self.words[np.asarray(rows, dtype=np.int64)]

    def scores(self, rows: Array, columns: Array, settings: Settings) -> Array:
        rows = np.asarray(rows, dtype=np.int64)
        nb, sims = self.neighbours(rows, settings.neighbours)
        paper = self.paper_vote(nb, sims, settings.neighbours, columns)
        item = self.item_vote(rows, columns, settings.damping)
        text = self.text_vote(self.words_of(rows), columns) if settings.text else None
        return blend(paper, item, self.prior(columns), settings, text)


def blend(
    paper: Array, item: Array, prior: Array, settings: Settings, text: Array | None = None
) -> Array:
    # in place, in the order of `b·paper + (1 - b)·item + p·prior + t·text`: the same sums
    out = settings.blend * paper
    out += (1.0 - settings.blend) * item
    out += settings.popularity * prior
    if text is not None and settings.text:
        out += settings.text * text
    return np.round(out, _DECIMALS, out=out)


# --- training: tuning the settings on a validation split ----------------------------------


@dataclass
class Trained:
    """What `train` chose per relation, and what it measured doing so."""

    settings: dict[str, Settings]
    validation: dict[str, dict[str, float]] = field(default_factory=dict)
    trials: int = 0
    seconds: float = 0.0

    def for_relation(self, relation: str) -> Settings:
        return self.settings.get(relation, DEFAULT)

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "settings": {r: s.as_dict() for r, s in self.settings.items()},
            "validation": self.validation,
            "trials": self.trials,
            "seconds": round(self.seconds, 3),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trained:
        if data.get("version") != VERSION:
            raise ValueError("a model of another version")
        return cls(
            {r: Settings(**s) for r, s in data["settings"].items()},
            dict(data.get("validation", {})),
            int(data.get("trials", 0)),
            float(data.get("seconds", 0.0)),
        )


def votes_of(inc: Incidence, text: Text | None = None) -> Votes:
    """The votes over `inc` (a training graph), with the names and paper words of `text`
    (read from the whole store: they hold no link)."""
    index = SimilarityIndex(inc, metric_named("idf"))
    return Votes(index) if text is None else Votes(index, text[0], text[1])


#: An index of the items' names and every paper's words (rows of the incidence).
Text = tuple[ContentIndex, sp.csr_matrix]


#: The most validation links `train` holds out per relation: enough to choose among the
#: trials (the standard error of an MRR over 2,000 links is about 0.01), and a tuning whose
#: cost does not grow with the store (the README store's relations hold out fewer).
VALIDATION_LINKS = 2_000
#: … and at most this many scores (links × candidates) a trial: a relation of as many items
#: as papers (repositories: 33,937 at generator scale 0.1, 589 links then) would cost 2,000
#: rankings of them all a trial. (The README store's 1,356 repository links × 10,313
#: repositories are under it.)
VALIDATION_CELLS = 20_000_000
#: The most scores (rows × candidates) `tune` holds at once per vote: 16 MB each.
_CELLS = 2_000_000


def tune(
    evidence: Evidence,
    *,
    kept: Array | None = None,
    seed: int = 0,
    grid: Sequence[Settings] = GRID,
    text: Text | None = None,
    text_weights: Sequence[float] = TEXT_WEIGHTS,
    relations: Sequence[str] = ("tasks", "datasets", "methods", "repositories"),
    most: int | None = VALIDATION_LINKS,
    cells: int | None = VALIDATION_CELLS,
) -> Trained:
    """Try each of `grid` on a validation split of the links `kept` gives (all by default;
    at most `most` links held out per relation, and `cells` scores of candidates), and keep
    the best filtered MRR per relation (ties: the earlier setting); then, with `text`, each
    of `text_weights` with the chosen setting, the same way. The papers are scored a block
    at a time, so that the scores held at once do not grow with the store."""
    started = time.process_time()
    caps: dict[str, int] = {}
    for relation in relations:
        if relation in evidence.full.relations:
            candidates = max(1, len(relation_columns(evidence.full, relation)))
            limits = [most, None if cells is None else max(1, cells // candidates)]
            if any(x is not None for x in limits):
                caps[relation] = min(x for x in limits if x is not None)
    valid = split(evidence, seed=seed, kept=kept, relations=relations, most=caps)
    votes = votes_of(valid.train(), text)
    truth = evidence.full.matrix
    ks = sorted({s.neighbours for s in grid})
    chosen: dict[str, Settings] = {}
    measured: dict[str, dict[str, float]] = {}
    count = len(grid)
    for relation, held in valid.held_out.items():
        columns = relation_columns(evidence.full, relation)
        position = np.full(truth.shape[1], -1, dtype=np.int64)
        position[columns] = np.arange(len(columns))
        rows = np.unique(held[0])
        nb, sims = votes.neighbours(rows, max(ks))
        prior = votes.prior(columns)
        step = max(1, _CELLS // max(1, len(columns)))

        def measure(
            trials: Sequence[Settings],
            columns: Array = columns,
            position: Array = position,
            rows: Array = rows,
            held: tuple[Array, Array] = held,
            nb: Array = nb,
            sims: Array = sims,
            prior: Array = prior,
            step: int = step,
        ) -> list[dict[str, float]]:
            ranks = np.zeros((len(trials), len(held[0])))
            for start in range(0, len(rows), step):
                block = slice(start, start + step)
                group = rows[block]
                paper = {
                    k: votes.paper_vote(nb[block], sims[block], k, columns)
                    for k in {t.neighbours for t in trials}
                }
                item = {d: votes.item_vote(group, columns, d) for d in {t.damping for t in trials}}
                named = votes.text_vote(votes.words_of(group), columns)
                links = np.flatnonzero(np.isin(held[0], group))
                true = truth[group][:, columns].toarray() > 0
                at = np.searchsorted(group, held[0][links])
                targets = position[held[1][links]]
                for n, t in enumerate(trials):
                    scores = blend(paper[t.neighbours], item[t.damping], prior, t, named)
                    ranks[n, links] = block_ranks(scores, true, at, targets)
            return [metrics(r) for r in ranks]

        best: tuple[float, Settings, dict[str, float]] | None = None
        trials = [*grid]
        for settings, result in zip(trials, measure(trials), strict=True):
            if best is None or result["mrr"] > best[0]:
                best = (result["mrr"], settings, result)
        assert best is not None
        if votes.content is not None and votes.words is not None:  # then the text's weight
            base = best[1]
            more = [replace(base, text=w) for w in text_weights if w != base.text]
            for settings, result in zip(more, measure(more), strict=True):
                if result["mrr"] > best[0]:
                    best = (result["mrr"], settings, result)
            trials += more
        chosen[relation], measured[relation] = best[1], best[2]
        count = max(count, len(trials))
    return Trained(chosen, measured, count, time.process_time() - started)


def read_text(store: GraphStore, full: Incidence) -> Text:
    """The items' names and every paper's words, read from the store (no link)."""
    return ContentIndex.read(store, full)


def train(
    store: GraphStore, full: Incidence, *, seed: int = 0, text: Text | None = None
) -> Trained:
    """Tune the settings on a validation split of the store's links (with the evidence of
    the papers' texts: `text`, read from the store when not given)."""
    text = read_text(store, full) if text is None else text
    return tune(Evidence.read(store, full), seed=seed, text=text)


# --- suggestions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """A store's votes (over its similarity index) with the trained settings."""

    votes: Votes
    trained: Trained


@dataclass(frozen=True)
class Suggestion:
    item: str
    relation: str
    score: float
    papers: int  # papers that have the item
    similar_papers: tuple[tuple[str, float], ...]  # (paper, similarity), most similar first
    cooccurring: tuple[tuple[str, str, int, int], ...]  # (item, relation, together, papers)
    label: str | None = None
    named: Match | None = None  # where the paper's text names the item


@dataclass
class SuggestResult:
    paper: str
    label: str | None
    kinds: tuple[str, ...]
    item_count: int
    suggestions: list[Suggestion]
    names: dict[str, str]
    settings: dict[str, Settings]

    def as_dict(self) -> dict[str, Any]:
        def name(iri: str) -> str:
            return self.names.get(iri) or fallback_label(iri)

        return {
            "paper": self.paper,
            "title": self.label or fallback_label(self.paper),
            "kinds": list(self.kinds),
            "items": self.item_count,
            "settings": {r: s.as_dict() for r, s in self.settings.items()},
            "suggestions": [
                {
                    "item": s.item,
                    "label": name(s.item),
                    "kind": _kind_of(s.relation),
                    "score": s.score,
                    "papers": s.papers,
                    "because": {
                        "similar_papers": [
                            {"paper": p, "title": name(p), "similarity": round(sim, 6)}
                            for p, sim in s.similar_papers
                        ],
                        "cooccurring": [
                            {
                                "item": j,
                                "label": name(j),
                                "kind": _kind_of(rel),
                                "together": together,
                                "papers": n,
                            }
                            for j, rel, together, n in s.cooccurring
                        ],
                        "text": [] if s.named is None else [s.named.as_dict()],
                    },
                }
                for s in self.suggestions
            ],
        }


def _kind_of(relation: str) -> str:
    return RELATIONS[relation].item_type.lower()


#: What is suggested without a kind: a repository belongs to its own paper, so another
#: paper's repository is suggested only when asked for (--kind repository).
DEFAULT_RELATIONS = ("tasks", "datasets", "methods")
#: Reasons shown per suggestion, of each sort.
REASONS = 3


def suggest(
    store: GraphStore,
    paper: str,
    *,
    base_iri: str,
    model: Model,
    kind: str | None = None,
    top: int = 10,
) -> SuggestResult:
    """The `top` links `paper` most likely lacks (of one `kind`, or of every kind), each
    with its score and reasons. `model` comes from kg.graph.cache.suggest_model(store)."""
    if top < 1:
        raise UsageError("{parameter} must be at least 1", parameter="top")
    relations = (
        (relation_of_kind(kind),)
        if kind
        else tuple(r for r in DEFAULT_RELATIONS if r in model.votes.incidence.relations)
    )
    iri = resolve_paper(store, paper, base_iri)
    votes = model.votes
    inc = votes.incidence
    row = inc.row(iri)
    found: list[tuple[float, int, str]] = []
    neighbours: dict[str, tuple[Array, Array]] = {}
    relations = tuple(r for r in relations if r in inc.relations)
    reaches: dict[float, tuple[Array, Array]] = {}
    if row is not None and relations:  # one neighbour search serves every relation
        most = max(model.trained.for_relation(r).neighbours for r in relations)
        nearest, similarity = votes.neighbours(np.array([row]), most)
    # the paper's own text, read once, when a relation weighs it
    reads = [r for r in relations if model.trained.for_relation(r).text]
    fields = read_texts(store, [iri]).get(iri, {}) if reads and votes.content else {}
    words = votes.content.paper_words([fields]) if reads and votes.content else None
    for relation in relations:
        settings = model.trained.for_relation(relation)
        columns = relation_columns(inc, relation)
        text = votes.text_vote(words, columns)
        if row is None:
            none = np.zeros((1, len(columns)))
            scores = blend(none, none, votes.prior(columns), settings, text)[0]
        else:
            nb, sims = nearest[:, : settings.neighbours], similarity[:, : settings.neighbours]
            if settings.damping not in reaches:
                reaches[settings.damping] = votes.reach(np.array([row]), settings.damping)
            scores = blend(
                votes.paper_vote(nb, sims, settings.neighbours, columns),
                votes.item_vote(
                    np.array([row]), columns, settings.damping, reaches[settings.damping]
                ),
                votes.prior(columns),
                settings,
                text,
            )[0]
            neighbours[relation] = (nb[0], sims[0])
            scores[np.isin(columns, inc.items_of(row))] = -np.inf
            if relation == "datasets":
                _drop_possibly_same(store, inc, row, columns, scores, top)
        order = np.lexsort((columns, -scores))[:top]
        found.extend(
            (float(scores[i]), int(columns[i]), relation)
            for i in order
            if np.isfinite(scores[i]) and scores[i] > 0
        )
    found.sort(key=lambda f: (-f[0], inc.items[f[1]]))
    chosen = found[:top]
    together = _together(votes, row, [column for _, column, _ in chosen])
    named = (
        votes.content.explain(inc.items, [c for _, c, r in chosen if r in reads], fields)
        if votes.content is not None and fields
        else {}
    )
    suggestions = [
        replace(
            _explain(votes, row, column, relation, score, neighbours.get(relation), together[i]),
            named=named.get(column),
        )
        for i, (score, column, relation) in enumerate(chosen)
    ]
    names = labels(
        store,
        [iri]
        + [s.item for s in suggestions]
        + [p for s in suggestions for p, _ in s.similar_papers]
        + [j for s in suggestions for j, *_ in s.cooccurring],
    )
    return SuggestResult(
        iri,
        names[iri],
        tuple(_kind_of(r) for r in relations),
        0 if row is None else int(inc.paper_items[row]),
        suggestions,
        names,
        {r: model.trained.for_relation(r) for r in relations},
    )


def _drop_possibly_same(
    store: GraphStore, inc: Incidence, row: int, columns: Array, scores: Array, top: int
) -> None:
    """No dataset the paper may already have under another name: the best candidates that
    kg.ingest.identity.possibly_same_dataset finds the same as one of the paper's datasets
    ("Oxford 102 Flowers" beside "Flowers-102") are left out (their score made -inf)."""
    own = [int(c) for c in np.intersect1d(columns, inc.items_of(row))]
    if not own:
        return
    best = [int(i) for i in np.argsort(-scores, kind="stable")[: top * 3] if np.isfinite(scores[i])]
    names = labels(store, [inc.items[c] for c in own] + [inc.items[columns[i]] for i in best])
    mine = [names[inc.items[c]] for c in own]
    for i in best:
        if any(possibly_same_dataset(names[inc.items[columns[i]]], m) for m in mine):
            scores[i] = -np.inf


def _together(votes: Votes, row: int | None, columns: list[int]) -> list[Array | None]:
    """For each column, the papers it shares with each of the row's items (one product for
    all the suggestions, not one each)."""
    if row is None or not columns:
        return [None] * len(columns)
    postings = votes.index.postings  # items × papers
    own = votes.incidence.items_of(row)
    counts = np.asarray((postings[own] @ postings[np.asarray(columns)].T).todense())
    return [counts[:, i] for i in range(len(columns))]


def _explain(
    votes: Votes,
    row: int | None,
    column: int,
    relation: str,
    score: float,
    neighbours: tuple[Array, Array] | None,
    together: Array | None = None,
) -> Suggestion:
    inc = votes.incidence
    papers = int(votes.df[column])
    if row is None or neighbours is None:
        return Suggestion(inc.items[column], relation, score, papers, (), ())
    nb, sims = neighbours
    postings = votes.index.postings  # items × papers
    # each neighbour's own items, not the item's papers (Adam's are most of the store)
    having = [
        (inc.papers[p], float(s))
        for p, s in zip(nb.tolist(), sims.tolist(), strict=True)
        if p >= 0 and column in inc.items_of(p)
    ][:REASONS]
    own = inc.items_of(row)
    if together is None:
        together = np.asarray((postings[own] @ postings[column].T).todense()).ravel()
    weight = votes.idf[own] * together / np.maximum(votes.df[own], 1.0)
    order = [i for i in np.lexsort((own, -weight)) if together[i] > 0][:REASONS]
    cooccurring = tuple(
        (inc.items[int(own[i])], inc.relation_of(int(own[i])), int(together[i]),
         int(votes.df[own[i]]))
        for i in order
    )
    return Suggestion(inc.items[column], relation, score, papers, tuple(having), cooccurring)
