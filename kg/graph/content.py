"""What a paper's own text says about its items: the names of tasks, datasets and methods
that its title or abstract contains.

A held-out paper–method link is almost always the one link its method has (the paper that
introduces it), so no vote over the incidence can reach it: the link structure knows
nothing of the method once the link is hidden. The paper's text often does ("AdaBelief
Optimizer: …" introduces *Adabelief*). This module scores that evidence:

* the **words** of a text are those of the search index's whole-name matching
  (kg.search.index.normalise: lower-cased, accents off, split at anything not a letter or
  a digit), without a plural `s` (`Networks` and `network` match; a stemmer would
  make `transformed` a `Transformer`), so a match is a match of whole words,
  case-insensitive;
* a name's **words** leave out English stopwords (`stopwords.txt`, the Glasgow list
  scikit-learn ships: `of`, `and`, `to` name nothing); a token under three characters (`I`
  of `I-BERT`, `3` of `Deep Voice 3`) never matches alone but still counts in the name's
  length, so `I-BERT` matched by `bert` is a name matched in part; a short token that is
  no stopword is also joined to its neighbours (`tokens`: `bp_transformer`, `k_net`), and
  the joined token matches where the text has the two together;
* a word's weight is its rarity over all papers' texts (BM25's idf), so a name of rare
  words ("Adabelief") says much and one of common words ("Dense Connections") little;
* for one name with words W (weights w; no stopword of three letters or more, no joined
  token), L those of three characters or more (and its joined tokens), S ⊆ W its words
  that are no stopword, and the paper's words P: a name counts only where a word of L
  stands in the text (a short token or a stopword never matches alone), and then
  m = Σ w over S ∩ P (a short token such as `3d` beside a matched word adds its weight)
  and t = Σ w over W; the name's score is m² / t (= m · m/t: the matched weight times the
  share of the name matched, so a whole name beats a part of it, and a long rare name
  matched whole beats a short common one). An item's score is its best name's;
* a **reason** ("its abstract has 'adabelief' of …") never cites a stopword or a short
  token: a name that stands whole in the text is named whole; a part match cites its
  *distinctive* words, those of L that no more than 1 % of the names of its kind (tasks,
  datasets or methods) contain (`network`, `learning`, `segmentation` are in more; in a
  small graph a word must also be in at least `COMMON_FLOOR` names to be that common), and
  only a part match with no distinctive word cites the common words it has;
* a method's or a dataset's name is a proper name (`PROPER`): matched in part, it is cited
  only when one of its distinctive words stands in the text. A method's (`HELD`) scores
  only then too, or where the name stands whole ("Network On Network" is not named by
  `network`); a name with a short stopword stands whole as a phrase (`phrases_of`:
  "Transformer in Transformer", whose words apart are in most texts). A dataset's part
  match on its common words alone still adds to the score, with no reason: `atari` tells
  the Atari games from the other datasets for a paper on Atari, and the votes tell the
  games apart (without it the held-out datasets' MRR fell from 0.5084 to 0.5072 on the
  README store; the methods' precision@5, judged blind, fell when theirs counted). A
  task's name is a phrase of the field's common words ("3D Object Detection"), so its part
  matches are cited whatever their words: held to distinctive words, the held-out tasks
  lost a twentieth of their MRR.

`ContentIndex` holds the names and the word weights (no link), and scores any rows of a
papers × words matrix built by `paper_words`; kg.graph.suggest blends the score with its
votes (weight tuned per relation on a validation split, 0 where text does not help).
`explain` turns a match into the reason shown with a suggestion ("its title names 'Adam'").
"""

from __future__ import annotations

import functools
import itertools
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import numpy as np
import scipy.sparse as sp

from kg.graph.incidence import Incidence
from kg.graph.relations import RELATIONS
from kg.graph.scoring import bm25_idf
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG, STD
from kg.search.index import normalised_words

Array = np.ndarray
#: Bumped when the index's meaning changes, so a persisted one of an older kg is rebuilt.
VERSION = 3
#: A word in more than this share of the names of its kind is not cited when a rarer is ...
COMMON_SHARE = 0.01
#: ... when it is also in at least this many of them (a small graph keeps its words).
COMMON_FLOOR = 3
#: Tokens shorter than this are no evidence (`I`, `3`, `v2`).
MIN_LETTERS = 3
#: The kinds whose names are proper names: a part match counts only on a distinctive word.
PROPER = ("datasets", "methods")
#: The kinds whose names matched in part score only on a distinctive word (a dataset's
#: common words still score: `atari` tells the Atari games from the other datasets).
HELD = ("methods",)
#: The relations whose items are named in texts (a repository or an author is not).
NAMED = ("tasks", "datasets", "methods")
#: The paper's text fields, in the order reasons name them.
FIELDS = ("title", "abstract")
_FIELD_PREDICATES = {"title": STD.title, "abstract": STD.abstract}
#: The item's names: what it is called, never what it says or links to.
_NAME_PREDICATES = (STD.label, KG.fullName)
_DUPLICATE_SUFFIX = re.compile(r"-\d+$")
_BATCH = 500


@functools.cache
def stopwords() -> frozenset[str]:
    """The English stopwords (`stopwords.txt`), as written and folded."""
    text = files("kg.graph").joinpath("stopwords.txt").read_text(encoding="utf-8")
    listed = {w for line in text.splitlines() if (w := line.split("#")[0].strip())}
    return frozenset(listed | {fold(w) for w in listed})


def fold(word: str) -> str:
    """A word without its plural `s` (`networks` -> `network`; not `loss`, `analysis`):
    lighter than a stemmer, which makes `transformed` a `transformer`.

    >>> [fold(w) for w in ("networks", "loss", "analysis", "gans", "bus")]
    ['network', 'loss', 'analysis', 'gan', 'bus']
    """
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[tuple[str, str]]:
    """(folded word, word as written, lower-cased) of a text, in order.

    >>> words("Adam's I-BERT, Dense Connections")  # doctest: +NORMALIZE_WHITESPACE
    [('adam', 'adam'), ('s', 's'), ('i', 'i'), ('bert', 'bert'), ('dense', 'dense'),
     ('connection', 'connections')]
    """
    return [(fold(w), w) for w in normalised_words(text)]


Phrases = Mapping[str, Sequence[tuple[str, ...]]]


def tokens(text: str, phrases: Phrases | None = None) -> list[tuple[str, str]]:
    """The words of a text (`words`), and each short token that is no stopword joined to
    its neighbours (`bp` of `BP-Transformer` -> `bp_transformer`, written `bp-transformer`):
    a short token alone is no evidence, but stands for something beside its neighbour.
    With `phrases` (their words by their first word), each phrase that stands in the text
    too, its words joined by spaces (`transformer in transformer`): a name whose stopword
    is part of it stands whole only as a phrase.

    >>> [s for s, _ in tokens("BP-Transformer and K-Net")]  # doctest: +NORMALIZE_WHITESPACE
    ['bp', 'transformer', 'and', 'k', 'net', 'bp_transformer', 'k_net']
    """
    found = words(text)
    stop = stopwords()
    joined = []
    for (a, wa), (b, wb) in itertools.pairwise(found):
        if (len(a) < MIN_LETTERS or len(b) < MIN_LETTERS) and a not in stop and b not in stop:
            joined.append((fold(f"{a}_{b}"), f"{wa}-{wb}"))
    if phrases:
        plain = [s for s, _ in found]
        for at, first in enumerate(plain):
            for phrase in phrases.get(first, ()):
                if tuple(plain[at : at + len(phrase)]) == phrase:
                    written = " ".join(w for _, w in found[at : at + len(phrase)])
                    joined.append((" ".join(phrase), written))
    return found + joined


def phrases_of(names: Iterable[str]) -> dict[str, list[tuple[str, ...]]]:
    """The phrases of the names that have a short stopword (`in` of `Transformer in
    Transformer`, `to` of `Sequence to Sequence`) and a word (`4D A*` names nothing), by
    their first word: such a name's words apart are in most texts, so it stands whole only
    as a phrase."""
    stop = stopwords()
    out: dict[str, list[tuple[str, ...]]] = {}
    for name in names:
        phrase = tuple(s for s, _ in words(name))
        short_stop = any(len(w) < MIN_LETTERS and w in stop for w in phrase)
        a_word = any(len(w) >= MIN_LETTERS and w not in stop for w in phrase)  # else no name
        if short_stop and a_word and phrase not in out.get(phrase[0], []):
            out.setdefault(phrase[0], []).append(phrase)
    return out


def slug_name(iri: str) -> str:
    """The words of an IRI's last segment: `…/method/gbo-1` -> `gbo`."""
    slug = iri.rstrip("/").rsplit("/", 1)[-1]
    return _DUPLICATE_SUFFIX.sub("", slug).replace("-", " ").replace("_", " ")


def _values(iris: Sequence[str]) -> Iterable[str]:
    for start in range(0, len(iris), _BATCH):
        yield " ".join(f"<{iri}>" for iri in iris[start : start + _BATCH])


def read_texts(store: GraphStore, papers: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """Each paper's title(s) and abstract(s), by field, read from the store."""
    out: dict[str, dict[str, list[str]]] = {}
    for values in _values(list(papers)):
        for name, predicate in _FIELD_PREDICATES.items():
            query = (
                f"SELECT DISTINCT ?p ?text WHERE {{ VALUES ?p {{ {values} }} "
                f"?p {predicate} ?text }}"
            )
            for paper, text in store.select_values(query):
                if paper and text:
                    out.setdefault(paper, {}).setdefault(name, []).append(text)
    return out


def stream_all_texts(store: GraphStore) -> Iterator[tuple[str, str]]:
    """Every paper's title(s) and abstract(s), as (paper, text) pairs, nothing held but the
    papers' IRIs: one query for the papers, one per field (a field's query that also asks
    for the class took twice as long)."""
    papers = {p for (p,) in store.select_values(f"SELECT ?p WHERE {{ ?p a {KG.Paper} }}")}
    for predicate in _FIELD_PREDICATES.values():
        query = f"SELECT ?p ?text WHERE {{ ?p {predicate} ?text }}"
        for paper, text in store.select_values(query):
            if paper is not None and paper in papers and text:
                yield paper, text


def _add_names(out: dict[str, list[str]], rows: Iterable[tuple[str | None, ...]]) -> None:
    """Append each (item, name) row's name to a wanted item's names, once."""
    for item, name in rows:
        if item in out and name and name not in out[item]:
            out[item].append(name)


def read_names(store: GraphStore, items: Sequence[str]) -> dict[str, list[str]]:
    """Each item's names: its label(s) and full name(s), then its slug. One query per
    name predicate and item class (a VALUES list of thousands of IRIs is much slower)."""
    out: dict[str, list[str]] = {item: [] for item in items}
    classes = " ".join(getattr(KG, RELATIONS[r].item_type) for r in NAMED)
    for predicate in _NAME_PREDICATES:
        query = (
            f"SELECT DISTINCT ?x ?name WHERE {{ VALUES ?class {{ {classes} }} "
            f"?x a ?class ; {predicate} ?name FILTER(isLiteral(?name)) }}"
        )
        _add_names(out, store.select_values(query))
    untyped = [item for item, names in out.items() if not names]
    predicates = " ".join(_NAME_PREDICATES)
    for values in _values(untyped):  # an item without a class (rare): by its IRI
        query = (
            f"SELECT DISTINCT ?x ?name WHERE {{ VALUES ?x {{ {values} }} "
            f"VALUES ?p {{ {predicates} }} ?x ?p ?name FILTER(isLiteral(?name)) }}"
        )
        _add_names(out, store.select_values(query))
    for item, names in out.items():
        names.sort()
        slug = slug_name(item)
        if slug and slug not in names:
            names.append(slug)
    return out


@dataclass(frozen=True)
class Match:
    """Why an item's name counts for a paper: where it stands and which words matched."""

    item: str
    name: str
    field: str  # "title" or "abstract"
    matched: tuple[str, ...]  # the paper's words, as written (lower-cased)
    whole: bool  # the name's words stand in the field together, in order

    @property
    def text(self) -> str:
        where = f"its {self.field}"
        if self.whole:
            return f"{where} names '{self.name}'"
        return f"{where} has {', '.join(repr(w) for w in self.matched)} of '{self.name}'"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "field": self.field,
            "words": list(self.matched),
            "whole": self.whole,
            "text": self.text,
        }


class ContentIndex:
    """The names of the items of `NAMED` relations and the weights of their words.

    `columns` are the items' columns in the incidence they were read for; `vocabulary` is
    sorted, so that a text's words find their ids by binary search (no map to build in a
    fresh process).
    """

    def __init__(
        self,
        vocabulary: Array,
        idf: Array,
        names: sp.csr_matrix,
        name_column: Array,
        name_text: Sequence[str],
        items: int,
        distinctive: sp.csr_matrix | None = None,
        name_weight: Array | None = None,
        name_size: Array | None = None,
        gated: Array | None = None,
        scored: sp.csr_matrix | None = None,
        held: Array | None = None,
        phrases: Sequence[str] | None = None,
    ) -> None:
        self.vocabulary = vocabulary  # sorted words (str array)
        self.idf = idf  # per word
        self.names = names  # names × words, 0/1: the words that match alone (L)
        self.name_column = np.asarray(name_column, dtype=np.int64)
        self.name_text = list(name_text)
        self.items = items  # columns of the incidence
        # names × words, 0/1: the words a reason may cite (D ⊆ L)
        self.distinctive = names if distinctive is None else distinctive
        weights = np.asarray(names @ idf).ravel() if name_weight is None else name_weight
        self.name_weight = np.asarray(weights, dtype=np.float64)  # t of each name (W)
        sizes = np.asarray(names.sum(axis=1)).ravel() if name_size is None else name_size
        self.name_size = np.asarray(sizes, dtype=np.float64)  # |W|
        # the names whose part matches are cited only on a distinctive word (not a task's)
        self.gated = self.name_size >= 0 if gated is None else np.asarray(gated, dtype=bool)
        # names × words, 0/1: the words whose weight counts in m (S: L's plain words and the
        # short tokens that are no stopword)
        self.scored = names if scored is None else scored
        self._names_t = names.T.tocsr()  # words × names
        # the names whose part matches score only on a distinctive word (a method's)
        self.held = (
            np.zeros(len(self.name_size), dtype=bool) if held is None else np.asarray(held, bool)
        )
        self._distinct_t = self.distinctive.T.tocsr()  # words × names
        # the names' phrases that `tokens` finds in a text (`transformer in transformer`)
        listed = [str(v) for v in vocabulary if " " in str(v)] if phrases is None else phrases
        self.phrases: dict[str, list[tuple[str, ...]]] = {}
        for phrase in map(str, listed):
            self.phrases.setdefault(phrase.split(" ")[0], []).append(tuple(phrase.split(" ")))
        self._through = (self.scored @ sp.diags(idf)).T.tocsr()  # words × names, weighted

    # -- building ------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        inc: Incidence,
        names: Mapping[str, Sequence[str]],
        texts: Iterable[tuple[str, str]],
    ) -> tuple[ContentIndex, sp.csr_matrix]:
        """From the items' names and every paper's texts, as (paper, text) pairs in any order
        (the word weights: over the papers of `texts`): the index, and the words of each of
        `inc`'s papers (papers × words, 0/1). The texts stream through: only their word ids
        are kept, not the texts (576,261 abstracts are most of a gigabyte as strings)."""
        ids: dict[str, int] = {}  # folded word -> id
        known: dict[str, int] = {}  # word as written -> its folded word's id

        words_by_id: list[str] = []  # id -> folded word

        def word_of(i: int) -> str:
            return words_by_id[i]

        phrases = phrases_of(
            name
            for column, item in enumerate(inc.items)
            if inc.relation_of(column) in HELD
            for name in names.get(item, ())
        )

        def bag(text: Iterable[str]) -> list[int]:
            found = set()
            for w, folded in {(w, f) for t in text for f, w in tokens(t, phrases)}:
                at = known.get(w)
                if at is None:
                    at = ids.get(folded)
                    if at is None:
                        at = ids[folded] = len(ids)
                        words_by_id.append(folded)
                    known[w] = at
                found.add(at)
            return sorted(found)

        row_of: dict[str, int] = {}
        text_rows = array("i")  # (paper row, word id) of every text's every distinct word
        text_words = array("i")
        for paper, text in texts:
            if not paper or not text:
                continue
            found = bag([text])
            text_rows.extend([row_of.setdefault(paper, len(row_of))] * len(found))
            text_words.extend(found)
        stop = stopwords()

        def name_words(name: str) -> list[int]:
            """W: the name's words but its stopwords of three letters or more, and but the
            short tokens a joined token covers (`bp` of `bp_transformer`)."""
            found = bag([name])
            joins = [word_of(i) for i in found if "_" in word_of(i)]  # not a phrase's
            covered = {part for j in joins for part in j.split("_")}
            return [
                i for i in found
                if not (word_of(i) in stop and len(word_of(i)) >= MIN_LETTERS)
                and not (len(word_of(i)) < MIN_LETTERS and word_of(i) in covered)
            ]

        named = [
            (column, name, name_words(name))
            for column, item in enumerate(inc.items)
            if inc.relation_of(column) in NAMED
            for name in names.get(item, ())
        ]
        # a word more than 1 % of the names of its kind contain is cited only for want of one
        kind_names: dict[str, int] = {}
        in_names: dict[tuple[str, int], int] = {}
        for column, _, found in named:
            kind = inc.relation_of(column)
            kind_names[kind] = kind_names.get(kind, 0) + 1
            for i in found:
                in_names[(kind, i)] = in_names.get((kind, i), 0) + 1

        def common(kind: str, i: int) -> bool:
            n = in_names.get((kind, i), 0)
            return n >= COMMON_FLOOR and n > COMMON_SHARE * kind_names[kind]

        kept = []  # (column, name, L, D, W, S)
        for column, name, found in named:
            kind = inc.relation_of(column)
            long = [i for i in found if len(word_of(i)) >= MIN_LETTERS]  # L
            if long:
                distinct = [i for i in long if not common(kind, i)]
                # W and S: the name's plain words (a joined token is evidence, not weight)
                plain = [i for i in bag([name]) if not {"_", " "} & set(word_of(i))]
                weighed = [
                    i for i in plain if not (word_of(i) in stop and len(word_of(i)) >= MIN_LETTERS)
                ]
                scored = [i for i in plain if word_of(i) not in stop]
                kept.append((column, name, long, distinct, weighed, scored))
        # sorted words, so that a fresh process finds a word's id by binary search
        vocabulary = np.array(list(ids), dtype=str)
        order = np.argsort(vocabulary, kind="stable")
        vocabulary = vocabulary[order]
        remap = np.empty(len(order), dtype=np.int64)
        remap[order] = np.arange(len(order))

        def matrix(bags: Sequence[Sequence[int]]) -> sp.csr_matrix:
            indptr = np.zeros(len(bags) + 1, dtype=np.int64)
            np.cumsum([len(b) for b in bags], out=indptr[1:])
            indices = (
                remap[np.concatenate([np.asarray(b, dtype=np.int64) for b in bags])]
                if bags
                else np.zeros(0, dtype=np.int64)
            )
            out = sp.csr_matrix(
                (np.ones(len(indices)), indices, indptr), shape=(len(bags), len(vocabulary))
            )
            out.sort_indices()
            return out

        papers = len(row_of)
        rows = np.frombuffer(text_rows, dtype=np.int32) if text_rows else np.zeros(0, np.int32)
        cols = np.frombuffer(text_words, dtype=np.int32) if text_words else np.zeros(0, np.int32)
        in_texts = sp.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (rows, remap[cols])),
            shape=(papers + 1, len(vocabulary)),  # a last, empty row: the papers with no text
        )
        del text_rows, text_words, rows, cols
        in_texts.sum_duplicates()  # a word of a paper's title and abstract: once
        in_texts.sort_indices()
        in_texts.data[:] = 1.0
        df = np.bincount(in_texts.indices, minlength=len(vocabulary)).astype(np.float64)
        idf = bm25_idf(df, max(1, papers))
        index = cls(
            vocabulary,
            idf,
            matrix([n[2] for n in kept]),
            np.array([n[0] for n in kept], dtype=np.int64),
            [n[1] for n in kept],
            len(inc.items),
            matrix([n[3] for n in kept]),
            np.array([float(idf[remap[n[4]]].sum()) for n in kept], dtype=np.float64),
            np.array([len(n[4]) for n in kept], dtype=np.float64),
            np.array([inc.relation_of(n[0]) in PROPER for n in kept], dtype=bool),
            matrix([n[5] for n in kept]),
            np.array([inc.relation_of(n[0]) in HELD for n in kept], dtype=bool),
            [" ".join(x) for found in phrases.values() for x in found],
        )
        take = np.fromiter((row_of.get(p, papers) for p in inc.papers), dtype=np.int64,
                           count=len(inc.papers))
        return index, in_texts[take]

    @classmethod
    def read(cls, store: GraphStore, inc: Incidence) -> tuple[ContentIndex, sp.csr_matrix]:
        """The index of `inc`'s items' names, and the words of each of `inc`'s papers (a
        papers × words matrix), read from the store."""
        wanted = [item for c, item in enumerate(inc.items) if inc.relation_of(c) in NAMED]
        return cls.build(inc, read_names(store, wanted), stream_all_texts(store))

    def state(self) -> dict[str, Array]:
        return {
            "vocabulary": self.vocabulary,
            "idf": self.idf,
            "indptr": self.names.indptr,
            "indices": self.names.indices,
            "name_column": self.name_column,
            "name_text": np.array(self.name_text, dtype=str),
            "distinctive_indptr": self.distinctive.indptr,
            "distinctive_indices": self.distinctive.indices,
            "name_weight": self.name_weight,
            "name_size": self.name_size,
            "gated": self.gated,
            "scored_indptr": self.scored.indptr,
            "scored_indices": self.scored.indices,
            "held": self.held,
            "phrases": np.array(
                [" ".join(x) for found in self.phrases.values() for x in found], dtype=str
            ),
            "items": np.array([self.items]),
            "version": np.array([VERSION]),
        }

    @classmethod
    def restore(cls, state: Mapping[str, Array]) -> ContentIndex:
        if int(state["version"][0]) != VERSION:
            raise ValueError("a content index of another version")
        vocabulary = state["vocabulary"]
        indptr, indices = state["indptr"], state["indices"]
        shape = (len(indptr) - 1, len(vocabulary))
        names = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=shape)
        d_indptr, d_indices = state["distinctive_indptr"], state["distinctive_indices"]
        distinctive = sp.csr_matrix((np.ones(len(d_indices)), d_indices, d_indptr), shape=shape)
        s_indptr, s_indices = state["scored_indptr"], state["scored_indices"]
        scored = sp.csr_matrix((np.ones(len(s_indices)), s_indices, s_indptr), shape=shape)
        return cls(
            vocabulary,
            state["idf"],
            names,
            state["name_column"],
            [str(x) for x in state["name_text"]],
            int(state["items"][0]),
            distinctive,
            state["name_weight"],
            state["name_size"],
            state["gated"],
            scored,
            state["held"],
            [str(x) for x in state["phrases"]],
        )

    # -- scoring -------------------------------------------------------------------------
    def paper_words(self, texts: Sequence[Mapping[str, Sequence[str]]]) -> sp.csr_matrix:
        """A papers × words 0/1 matrix of some papers' texts (each: field -> texts);
        words no index name or paper has are left out (they match nothing)."""
        indptr = [0]
        indices: list[int] = []
        for fields in texts:
            found = np.asarray(
                sorted({s for t in _all(fields) for s, _ in tokens(t, self.phrases)}), dtype=str
            )
            ids = self._ids(found)
            indices.extend(ids.tolist())
            indptr.append(len(indices))
        return sp.csr_matrix(
            (np.ones(len(indices)), np.asarray(indices, dtype=np.int64), np.asarray(indptr)),
            shape=(len(texts), len(self.vocabulary)),
        )

    def _ids(self, found: Array) -> Array:
        if not len(self.vocabulary) or not len(found):
            return np.zeros(0, dtype=np.int64)
        at = np.searchsorted(self.vocabulary, found)
        at = np.minimum(at, len(self.vocabulary) - 1)
        return np.unique(at[self.vocabulary[at] == found]).astype(np.int64)

    def scores(self, paper_words: sp.csr_matrix, columns: Array) -> Array:
        """rows × `columns`: each item's best name's m² / t for each row's words (a name
        with no word of L in the row's words scores 0)."""
        columns = np.asarray(columns, dtype=np.int64)
        out = np.zeros((paper_words.shape[0], len(columns)))
        position = np.full(self.items, -1, dtype=np.int64)
        position[columns] = np.arange(len(columns))
        at = position[self.name_column]
        wanted = np.flatnonzero(at >= 0)  # the names of `columns`' items only
        if not len(wanted) or not paper_words.nnz:
            return out
        matched = (paper_words @ self._through[:, wanted]).tocsr()  # rows × names: m
        # a name counts where a word of L stands in the text (never on a short token alone)
        counted = (paper_words @ self._names_t[:, wanted]).tocoo()
        cited = (paper_words @ self._distinct_t[:, wanted]).tocsr()
        held = self.held[wanted[counted.col]]
        whole = counted.data >= self.name_size[wanted[counted.col]]
        ok = ~held | whole
        gate = cited.astype(bool) + sp.csr_matrix(
            (np.ones(int(ok.sum()), dtype=bool), (counted.row[ok], counted.col[ok])),
            shape=counted.shape,
        )
        matched = matched.multiply(gate.astype(bool)).tocoo()
        if matched.nnz:
            names = wanted[matched.col]
            t = np.maximum(self.name_weight[names], 1e-12)
            value = matched.data * matched.data / t
            np.maximum.at(out, (matched.row, at[names]), value)
        return out

    def name_score(self, n: int, present: Array) -> float:
        """Name `n`'s score (m² / t) for a paper whose word ids are `present`."""
        long = self.names.indices[self.names.indptr[n] : self.names.indptr[n + 1]]
        found = np.intersect1d(long, present)
        if not len(found):
            return 0.0
        span = slice(self.distinctive.indptr[n], self.distinctive.indptr[n + 1])
        cited = np.intersect1d(self.distinctive.indices[span], present)
        if self.held[n] and not len(cited) and len(found) < self.name_size[n]:
            return 0.0
        span = slice(self.scored.indptr[n], self.scored.indptr[n + 1])
        m = float(self.idf[np.intersect1d(self.scored.indices[span], present)].sum())
        return m * m / max(float(self.name_weight[n]), 1e-12)

    # -- reasons -------------------------------------------------------------------------
    def explain(
        self, items: Sequence[str], columns: Sequence[int], fields: Mapping[str, Sequence[str]]
    ) -> dict[int, Match]:
        """For each column, the best-scoring name's match in one field of the paper's texts
        (the title first when both tie); columns no name of which matches are left out."""
        wanted = set(columns)
        by_field = {f: [w for t in fields.get(f, ()) for w in tokens(t)] for f in FIELDS}
        plain = {f: [s for t in fields.get(f, ()) for s, _ in words(t)] for f in FIELDS}
        out: dict[int, tuple[float, int, Match]] = {}
        for n in np.flatnonzero(np.isin(self.name_column, list(wanted))).tolist():
            column = int(self.name_column[n])
            name_ids = self.names.indices[self.names.indptr[n] : self.names.indptr[n + 1]]
            name_words = set(self.vocabulary[name_ids].tolist())  # L
            cited = self.distinctive.indices[
                self.distinctive.indptr[n] : self.distinctive.indptr[n + 1]
            ]
            distinct = set(self.vocabulary[cited].tolist())  # D
            total = max(float(self.name_weight[n]), 1e-12)
            sequence = [s for s, _ in words(self.name_text[n])]
            for rank, field in enumerate(FIELDS):
                present = [(s, w) for s, w in by_field[field] if s in name_words]
                folded = {s for s, _ in present}
                if not folded:
                    continue
                whole = _contains(plain[field], sequence)
                every = len(folded) >= self.name_size[n]  # each word of the name, apart
                if not whole and not every:
                    if folded & distinct:  # a part match cites its distinctive words
                        present = [(s, w) for s, w in present if s in distinct]
                    elif self.gated[n]:  # a proper name's common words alone: no reason
                        continue
                    # a task's part match of common words only cites them (never a stopword
                    # or a short token)
                m = float(self.idf[self._ids(np.asarray(sorted(folded), dtype=str))].sum())
                value = m * m / total
                first: dict[str, str] = {}
                for s, w in present:
                    first.setdefault(s, w)
                shown = tuple(first.values())
                match = Match(items[column], self.name_text[n], field, shown, whole)
                best = out.get(column)
                if best is None or (value, -rank) > (best[0], -best[1]):
                    out[column] = (value, rank, match)
        return {c: m for c, (_, _, m) in out.items()}


def _contains(text: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether `phrase` stands in `text` as consecutive words.

    >>> _contains(["a", "transformer", "in", "transformer"], ["transformer", "in"])
    True
    >>> _contains(["in", "transformer"], ["transformer", "in"])
    False
    """
    n = len(phrase)
    return n > 0 and any(
        list(text[i : i + n]) == list(phrase) for i in range(len(text) - n + 1)
    )


def _all(fields: Mapping[str, Sequence[str]]) -> Iterable[str]:
    for field in FIELDS:
        yield from fields.get(field, ())
