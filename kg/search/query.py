"""Search query text -> a tantivy query, and ranked hits with snippets.

The query language is small and never fails on odd input:

- words: every word must match (in the name, other names or the abstract/description);
- `"a phrase"`: the words in that order;
- `transf*`: any word starting with `transf` (two characters at least);
- anything else (punctuation, operators of other engines) separates words.

Matching is case- and accent-insensitive; the abstract/description and a copy of the name
are stemmed (English), so `transformers` finds `transformer`. Scoring is BM25 per field,
weighted: a name match outweighs another-name match, which outweighs an abstract match;
a query equal to an entity's whole name (normalised) ranks that entity first.

User text is only ever turned into term, phrase and regex queries built here (the regex from
letters and digits alone): no query syntax of tantivy's is exposed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg.errors import UsageError
from kg.search.index import PLAIN, STEM, Index, analyzers, normalise

#: Field weights (BM25 scores are multiplied by these).
WEIGHTS = {"label": 4.0, "label_stem": 1.5, "alt": 2.0, "body": 1.0}
EXACT_BOOST = 40.0
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
        }


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

    def build(self, text: str, type_: str | None = None) -> Any:
        """The tantivy query for `text`; None when it has no word to look for."""
        t, schema = self.t, self.index.schema
        must = []
        for clause in clauses(text):
            if clause.kind == "prefix":
                stem = normalise(clause.text).replace(" ", "")
                pattern = re.escape(stem) + ".*"
                fields = [
                    t.Query.boost_query(t.Query.regex_query(schema, name, pattern), WEIGHTS[name])
                    for name in ("label", "alt", "body")
                ]
            else:
                plain = self._tokens(PLAIN, clause.text)
                fields = self._fields(plain, self._tokens(STEM, clause.text),
                                      clause.kind == "phrase")
            if fields:
                must.append((t.Occur.Must, t.Query.boolean_query(
                    [(t.Occur.Should, q) for q in fields])))
        if not must:
            return None
        whole = normalise(text.replace("*", " ").replace('"', " "))
        if whole:
            exact = t.Query.term_query(schema, "exact", whole, index_option="basic")
            must.append((t.Occur.Should, t.Query.boost_query(exact, EXACT_BOOST)))
        if type_ is not None:  # a filter that adds nothing to the score (see `_best`)
            of_type = t.Query.term_query(schema, "type", type_)
            must.append((t.Occur.Must, t.Query.const_score_query(of_type, 0.0)))
        else:  # never the state document
            must.append((t.Occur.MustNot, t.Query.term_query(schema, "type", "_state")))
        return t.Query.boolean_query(must)

    def search(
        self,
        text: str,
        *,
        type_: str | None = None,
        limit: int = 10,
        snippets: bool = True,
        empty_ok: bool = False,
    ) -> list[Hit]:
        """The best `limit` hits. A search with no word to look for (`!!`) is an error, or
        no hits with `empty_ok` (inside SPARQL, where the text is data)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise UsageError(f"the number of hits must be between 1 and {MAX_LIMIT}, not {limit}")
        query = self.build(text)
        if query is None:
            if empty_ok:
                return []
            raise UsageError(f"the search {text[:80]!r} has no words to look for")
        searcher = self.index.searcher()
        query, found = self._best(searcher, query, text, type_, limit)
        if not found:
            return []
        generators: dict[str, Any] = {}

        def generator(name: str) -> Any:  # made only when needed: each costs a query pass
            if name not in generators:
                gen = self.t.SnippetGenerator.create(searcher, query, self.index.schema, name)
                gen.set_max_num_chars(180)
                generators[name] = gen
            return generators[name]

        hits = []
        for score, doc in found:
            hit = Hit(doc["key"][0], doc["type"][0], (doc["label"] or [""])[0], float(score))
            if snippets:
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
            hits.append(hit)
        return hits


    def _best(
        self, searcher: Any, query: Any, text: str, type_: str | None, limit: int
    ) -> tuple[Any, list[tuple[float, Any]]]:
        """The best `limit` hits of `type_` (any class if None) as (score, stored document),
        and the query that found them (for the snippets).

        With a class, the best hits of all classes come first: a query of alternatives alone
        lets tantivy skip whole blocks that cannot reach the top, and adding the class as a
        required clause takes that away (5x slower on 576,261 papers). When enough of those
        have the class, its best `limit` are exactly its first `limit` among them (the class
        filter adds nothing to a score), else the filtered query runs."""
        if type_ is not None and limit <= _PREFILTER_MAX:
            wide = searcher.search(query, limit * _WIDEN, count=False).hits
            typed = []
            for score, address in wide:  # best first: a document is read only until enough
                doc = searcher.doc(address)
                if doc["type"][0] == type_:
                    typed.append((float(score), doc))
                    if len(typed) == limit:
                        return query, typed
            if len(wide) < limit * _WIDEN:  # every match was seen
                return query, typed
        if type_ is not None:
            query = self.build(text, type_)
        found = searcher.search(query, limit, count=False).hits
        return query, [(float(score), searcher.doc(address)) for score, address in found]


def _char_marks(fragment: str, ranges: list[Any]) -> tuple[str, list[tuple[int, int]]]:
    """tantivy's highlight ranges are byte offsets into the UTF-8 fragment: as characters."""
    raw = fragment.encode("utf-8")
    out = []
    for r in ranges:
        start, end = r.start, r.end
        out.append((len(raw[:start].decode("utf-8", "ignore")),
                    len(raw[:end].decode("utf-8", "ignore"))))
    return fragment, out
