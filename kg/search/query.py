"""Search query text -> a tantivy query, and ranked hits with snippets.

The query language is small and never fails on odd input:

- words: every word must match (in the name, other names or the abstract/description);
- `"a phrase"`: the words in that order;
- `transf*`: any word starting with `transf` (two characters at least);
- anything else (punctuation, operators of other engines) separates words.

Matching is case- and accent-insensitive; the abstract/description and a copy of the name
are stemmed (English), so `transformers` finds `transformer`. Scoring is BM25 per field,
weighted: a name match outweighs another-name match, which outweighs an abstract match; a
prefix is scored as its most frequent completions in the names (so `transf*` ranks the short
name `Transformer` above long names that contain `transformers`).

Ranking, in tiers (`Searcher.find`):

1. an identifier (arXiv id, DOI, slug, `owner/name`) that the query is: that entity first;
2. an entity whose whole name equals the query (without `*` and quotes);
3. the rest by relevance, each class's scores divided by its best one, so that classes
   interleave: the best paper for "attention" stands beside the best method, even though a
   method's short name always scores above a paper's long title.

A hit's `score` is that rank as a number: 2 + 1 for an identifier, 1 + relevance for a whole
name, relevance (0-1, 1 for each class's best text match) for the rest.

User text is only ever turned into term, phrase and regex queries built here (the regex from
letters and digits alone): no query syntax of tantivy's is exposed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg.errors import UsageError
from kg.rdf.results import Paged
from kg.search.index import PLAIN, STEM, Index, analyzers, normalise
from kg.search.text import query_ids

#: Field weights (BM25 scores are multiplied by these).
WEIGHTS = {"label": 4.0, "label_stem": 1.5, "alt": 2.0, "body": 1.0}
#: A prefix is scored as this many of its most frequent completions in each name field.
PREFIX_TERMS = 32
#: The rank tiers, added to a hit's score.
ID_TIER, NAME_TIER = 2, 1
MAX_LIMIT = 10_000
#: A search for one class first takes this many times its hits of every class, up to this
#: many hits (see `Searcher._best`).
_WIDEN = 3
_PREFILTER_MAX = 100
_CLAUSE = re.compile(r'"([^"]*)"?|(\S+)')
_PREFIX = re.compile(r"^([^\W_]{2,})\*$")


@dataclass(frozen=True)
class Clause:
    kind: str  # word | phrase | prefix
    text: str


@dataclass
class Hit:
    iri: str
    type: str
    label: str
    score: float
    snippet: str = ""
    marks: list[tuple[int, int]] = field(default_factory=list)  # [start, end) in `snippet`
    match: str = "text"  # identifier | name | text: why it ranks where it does

    def marked(self, left: str = "[", right: str = "]") -> str:
        return mark(self.snippet, self.marks, left, right)

    def as_json(self) -> dict[str, Any]:
        return {
            "iri": self.iri,
            "type": self.type,
            "label": self.label,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "marks": [list(m) for m in self.marks],
            "match": self.match,
        }


@dataclass
class Results(Paged):
    """One page of hits, and how many there are in all and per class."""

    hits: list[Hit]
    total: int
    counts: dict[str, int]
    page: int
    limit: int

    def as_json(
        self, query: str, type_: str | None, hits: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The page as JSON (`hits`: the hits as described, else `Hit.as_json`)."""
        described = hits if hits is not None else [h.as_json() for h in self.hits]
        return {"query": query, "type": type_, **self.page_json(described)}


def mark(
    snippet: str,
    marks: Sequence[Sequence[int]],
    left: str = "[",
    right: str = "]",
    escape: Callable[[str], str] = str,
) -> str:
    """The snippet with each marked range between `left` and `right`, the text escaped.

    >>> mark("deep residual learning", [(5, 13)])
    'deep [residual] learning'
    """
    out, last = [], 0
    for start, end in marks:
        out += [escape(snippet[last:start]), left, escape(snippet[start:end]), right]
        last = end
    out.append(escape(snippet[last:]))
    return "".join(out)


def clauses(text: str) -> list[Clause]:
    """The clauses of a query.

    >>> clauses('graph "neural network" transf* -- x')
    [Clause(kind='word', text='graph'), Clause(kind='phrase', text='neural network'), \
Clause(kind='prefix', text='transf'), Clause(kind='word', text='--'), Clause(kind='word', text='x')]
    """
    out = []
    for match in _CLAUSE.finditer(text):
        if match.group(1) is not None:
            if match.group(1).strip():
                out.append(Clause("phrase", match.group(1)))
            continue
        word = match.group(2)
        prefix = _PREFIX.match(word)
        out.append(Clause("prefix", prefix.group(1)) if prefix else Clause("word", word))
    return out


class Searcher:
    """Runs searches on an index (one per index; cheap to keep)."""

    def __init__(self, index: Index) -> None:
        import tantivy

        self.t = tantivy
        self.index = index
        self.analyzers = analyzers()

    def _tokens(self, analyzer: str, text: str) -> list[str]:
        return list(self.analyzers[analyzer].analyze(text))

    def _fields(self, plain: list[str], stem: list[str], phrase: bool) -> list[Any]:
        """One (boosted) query per field for one word or phrase."""
        t, schema = self.t, self.index.schema
        out = []
        for name, tokens in (("label", plain), ("label_stem", stem), ("alt", plain),
                             ("body", stem)):
            if not tokens:
                continue
            if phrase and len(tokens) > 1:
                q = t.Query.phrase_query(schema, name, tokens)
            elif len(tokens) > 1:  # a "word" like `bert-base` is several tokens: all of them
                q = t.Query.boolean_query(
                    [(t.Occur.Must, t.Query.term_query(schema, name, x)) for x in tokens]
                )
            else:
                q = t.Query.term_query(schema, name, tokens[0])
            out.append(t.Query.boost_query(q, WEIGHTS[name]))
        return out

    def _prefix(self, searcher: Any, stem: str) -> list[Any]:
        """A prefix: any word starting with it (a flat score), and its most frequent
        completions in the names, each scored as a word whose weight grows with how common
        it is (BM25's idf divided out: a rare completion is not the likelier meaning), so
        `transf*` ranks the short name `Transformer` first and long titles after."""
        t, schema = self.t, self.index.schema
        pattern = re.escape(stem) + ".*"
        out = [
            t.Query.boost_query(t.Query.regex_query(schema, name, pattern), WEIGHTS[name])
            for name in ("label", "alt", "body")
        ]
        docs = max(1, int(searcher.num_docs))
        for name in ("label", "alt"):
            for term, df in searcher.terms_with_prefix(name, stem, limit=PREFIX_TERMS):
                idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
                weight = WEIGHTS[name] * math.log(1 + df) / max(idf, 0.1)
                out.append(t.Query.boost_query(t.Query.term_query(schema, name, term), weight))
        return out

    def text_query(self, text: str, searcher: Any = None) -> Any:
        """The tantivy query for the words of `text` (any class); None when it has none."""
        t = self.t
        searcher = searcher or self.index.searcher()
        must = []
        for clause in clauses(text):
            if clause.kind == "prefix":
                fields = self._prefix(searcher, normalise(clause.text).replace(" ", ""))
            else:
                plain = self._tokens(PLAIN, clause.text)
                fields = self._fields(plain, self._tokens(STEM, clause.text),
                                      clause.kind == "phrase")
            if fields:
                must.append((t.Occur.Must, t.Query.boolean_query(
                    [(t.Occur.Should, q) for q in fields])))
        return t.Query.boolean_query(must) if must else None

    def _of(self, query: Any, type_: str | None) -> Any:
        """`query` restricted to a class (a filter that adds nothing to the score, see
        `_best`), or to every class (never the state document)."""
        t, schema = self.t, self.index.schema
        if type_ is not None:
            of_type = t.Query.const_score_query(t.Query.term_query(schema, "type", type_), 0.0)
            return t.Query.boolean_query([(t.Occur.Must, query), (t.Occur.Must, of_type)])
        state = t.Query.term_query(schema, "type", "_state")
        return t.Query.boolean_query([(t.Occur.Must, query), (t.Occur.MustNot, state)])

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
        """Page `page` of `limit` hits, ranked in tiers (module doc), with the number of hits
        in all and per class (`counts`; without it, `total` is a lower bound). A search with
        no word or identifier to look for (`!!`) is an error, or no hits with `empty_ok`
        (inside SPARQL, where the text is data)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise UsageError(f"the number of hits must be between 1 and {MAX_LIMIT}, not {limit}")
        if page < 1 or page * limit > MAX_LIMIT:
            raise UsageError(f"page {page} is out of reach: pages go to the first {MAX_LIMIT:,} "
                             f"hits ({MAX_LIMIT // limit:,} pages of {limit})")
        t, schema = self.t, self.index.schema
        searcher = self.index.searcher()
        need = page * limit
        query = self.text_query(text, searcher)
        ids = query_ids(text)
        if query is None and not ids:
            if empty_ok:
                return Results([], 0, {}, page, limit)
            raise UsageError(f"the search {text[:80]!r} has no words to look for")

        # tiers 1 and 2: the identifiers and the whole names the query is
        tiered: dict[str, tuple[int, float, Any, tuple[int, int]]] = {}
        if ids:
            found = searcher.search(self._of(t.Query.term_set_query(schema, "ids", ids), type_),
                                    min(need, 100), count=False).hits
            for _, address in found:
                doc = searcher.doc(address)
                tiered[doc["key"][0]] = (ID_TIER, 0.0, doc, _order(address))
        whole = normalise(text.replace("*", " ").replace('"', " "))
        if whole and query is not None:
            exact = t.Query.boolean_query([
                (t.Occur.Must, t.Query.term_query(schema, "exact", whole, index_option="basic")),
                (t.Occur.Should, query),
            ])
            for score, address in searcher.search(self._of(exact, type_), min(need, 100),
                                                  count=False).hits:
                doc = searcher.doc(address)
                tiered.setdefault(doc["key"][0], (NAME_TIER, float(score), doc, _order(address)))

        # how many in all, per class
        per_class: dict[str, int] = {}
        if counts or type_ is None:
            alternatives = [(t.Occur.Should, q) for q in (query,) if q is not None]
            if ids:
                alternatives.append((t.Occur.Should, t.Query.term_set_query(schema, "ids", ids)))
            per_class = {
                c: int(n) for c, n in searcher.terms_with_prefix(
                    "type", "", filter_query=self._of(t.Query.boolean_query(alternatives), None))
                if n
            }

        # tier 3: the best `need` text hits of each class
        groups: dict[str, list[tuple[float, Any, tuple[int, int]]]] = {}
        if query is not None:
            if type_ is not None:
                groups[type_] = self._best(searcher, query, type_, need)
            else:
                groups = self._by_class(searcher, query, need, per_class)

        # best first; equal scores in the index's order, as tantivy breaks its own ties, so
        # that every page is a slice of one ranking
        ranked: list[tuple[int, float, float, tuple[int, int], str, Any]] = []
        tops = {c: g[0][0] for c, g in groups.items() if g and g[0][0] > 0}
        for key, (tier, score, doc, order) in tiered.items():
            top = tops.get(doc["type"][0])
            relevance = 1.0 if tier == ID_TIER or not top else min(1.0, score / top)
            ranked.append((tier, relevance, score, order, key, doc))
        for kind, group in groups.items():
            for score, doc, order in group:
                key = doc["key"][0]
                if key not in tiered:
                    ranked.append((0, score / tops[kind] if kind in tops else 0.0, score, order,
                                   key, doc))
        ranked.sort(key=lambda r: (-r[0], -r[1], -r[2], r[3]))
        total = per_class.get(type_, 0) if type_ is not None else sum(per_class.values())
        if not counts:
            total = max(total, len(ranked))
        window = ranked[(page - 1) * limit : need]
        hits = [
            Hit(key, doc["type"][0], (doc["label"] or [""])[0], tier + relevance,
                match=("identifier", "name", "text")[2 - tier] if tier else "text")
            for tier, relevance, _, _, key, doc in window
        ]
        if snippets:
            self._snippets(searcher, query, hits, [r[5] for r in window])
        return Results(hits, total, per_class if counts else {}, page, limit)

    def _snippets(self, searcher: Any, query: Any, hits: list[Hit], docs: list[Any]) -> None:
        generators: dict[str, Any] = {}

        def generator(name: str) -> Any:  # made only when needed: each costs a query pass
            if name not in generators:
                gen = self.t.SnippetGenerator.create(searcher, query, self.index.schema, name)
                gen.set_max_num_chars(180)
                generators[name] = gen
            return generators[name]

        for hit, doc in zip(hits, docs, strict=True):
            if query is not None:
                for name in ("body", "label", "alt"):
                    if not doc[name]:
                        continue
                    snippet = generator(name).snippet_from_doc(doc)
                    ranges = snippet.highlighted()
                    if ranges or name == "alt":
                        hit.snippet, hit.marks = _char_marks(snippet.fragment(), ranges)
                        break
            if not hit.snippet:
                hit.snippet = (doc["body"] or doc["label"] or [""])[0][:180]

    def _by_class(
        self, searcher: Any, query: Any, need: int, per_class: dict[str, int]
    ) -> dict[str, list[tuple[float, Any, tuple[int, int]]]]:
        """The best `need` hits of each class that has any, as (score, stored document).

        The best hits of all classes come first (one query tantivy can prune); a class with
        more hits than that list shows it, but fewer there than `need`, gets its own query."""
        wide = []
        if need <= _PREFILTER_MAX:  # else reading 3 x need documents costs more than it saves
            wide = searcher.search(self._of(query, None), need * _WIDEN, count=False).hits
        groups: dict[str, list[tuple[float, Any, tuple[int, int]]]] = {}
        for score, address in wide:
            doc = searcher.doc(address)
            groups.setdefault(doc["type"][0], []).append((float(score), doc, _order(address)))
        if need > _PREFILTER_MAX or len(wide) == need * _WIDEN:  # not every match was seen
            for kind, n in per_class.items():
                if len(groups.get(kind, ())) < min(n, need):
                    found = searcher.search(self._of(query, kind), need, count=False).hits
                    groups[kind] = [(float(s), searcher.doc(a), _order(a)) for s, a in found]
        return groups

    def _best(
        self, searcher: Any, query: Any, type_: str, limit: int
    ) -> list[tuple[float, Any, tuple[int, int]]]:
        """The best `limit` hits of `type_` as (score, stored document).

        The best hits of all classes come first: a query of alternatives alone lets tantivy
        skip whole blocks that cannot reach the top, and adding the class as a required
        clause takes that away (5x slower on 576,261 papers). When enough of those have the
        class, its best `limit` are exactly its first `limit` among them (the class filter
        adds nothing to a score), else the filtered query runs."""
        if limit <= _PREFILTER_MAX:
            wide = searcher.search(self._of(query, None), limit * _WIDEN, count=False).hits
            typed = []
            for score, address in wide:  # best first: a document is read only until enough
                doc = searcher.doc(address)
                if doc["type"][0] == type_:
                    typed.append((float(score), doc, _order(address)))
                    if len(typed) == limit:
                        return typed
            if len(wide) < limit * _WIDEN:  # every match was seen
                return typed
        found = searcher.search(self._of(query, type_), limit, count=False).hits
        return [(float(score), searcher.doc(address), _order(address)) for score, address in found]


def _order(address: Any) -> tuple[int, int]:
    """Where a document is in the index (tantivy's tie-break among equal scores)."""
    return (int(address.segment_ord), int(address.doc))


def _char_marks(fragment: str, ranges: list[Any]) -> tuple[str, list[tuple[int, int]]]:
    """tantivy's highlight ranges are byte offsets into the UTF-8 fragment: as characters."""
    raw = fragment.encode("utf-8")
    out = []
    for r in ranges:
        start, end = r.start, r.end
        out.append((len(raw[:start].decode("utf-8", "ignore")),
                    len(raw[:end].decode("utf-8", "ignore"))))
    return fragment, out
