"""`kg.open` and `KnowledgeGraph`: one front door for Python scripts (docs/python.md).

Each method is what one CLI command does, with the same defaults and the same name
resolution (kg.query.resolve: a slug, a name or label in any case, an arXiv id, an IRI); the
CLI is a thin layer over these methods. Results are plain dataclasses; errors are kg's
domain errors (kg.errors). Nothing heavy is imported until a method needs it, so
`import kg` stays quick.

The examples run as doctests on the README's store (`kg ingest examples/`: the two seed
papers, the methods dump and the 2020 evaluation tables), opened as `g`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kg.errors import UsageError
from kg.library.base import DEFAULT_TOP, ParamValue, param_text
from kg.library.exports import Exports
from kg.library.loading import Loading
from kg.library.results import SearchHit, SearchPage, SparqlResult
from kg.library.views import COMMUNITY_BY, PROJECTION_BY, GraphViews

if TYPE_CHECKING:
    from kg.query.leaderboard import Leaderboard
    from kg.query.named import NamedQuery
    from kg.query.resolve import Thing
    from kg.query.stats import Stats
    from kg.rdf.results import AskResult, GraphResult, QueryResult, SelectStream

__all__ = ["COMMUNITY_BY", "DEFAULT_TOP", "PROJECTION_BY", "KnowledgeGraph", "ParamValue", "open"]


def open(
    path: str | os.PathLike[str] | None = None,
    *,
    read_only: bool = True,
    memory: bool = False,
    base_iri: str | None = None,
) -> KnowledgeGraph:
    """Open the store at `path` (default: `$KG_STORE`, else `kg-store`, as the CLI).

    Read-only by default: a snapshot, safe beside a running ingest. `read_only=False` opens
    it for writing (creating it if need be) for `ingest`; `memory=True` gives a throwaway
    in-memory store instead, writable. `base_iri` is the base of kg's IRIs (default:
    `$KG_BASE_IRI`, else https://w3id.org/kg/id/). A missing store raises StoreMissingError.

    >>> with kg.open(store_path) as graph:
    ...     graph.resolve("paper", "2004.11207").key
    'self-attention-attribution-interpreting'
    """
    graph = KnowledgeGraph(path, read_only=read_only, memory=memory, base_iri=base_iri)
    graph.store  # noqa: B018 - open it now: a missing store fails here, not later
    return graph


class KnowledgeGraph(GraphViews, Exports, Loading):
    """A kg store: query it, search it, rank similar papers, draw projections, read
    leaderboards, export it, ingest into it. A context manager: `with kg.open() as g: ...`
    closes the store at the end.

    `kg.open` opens the store at once; a `KnowledgeGraph` made directly (same arguments)
    opens it on first use, so that a command that turns out not to need it never opens it.
    """

    def stats(self) -> Stats:
        """What the store holds: quads, distinct triples, named graphs, entities per class
        (`kg stats`).

        >>> s = g.stats()
        >>> s.classes["kg:Paper"], s.record_graphs
        (5502, 2)
        """
        from kg.query.stats import compute

        return compute(self.store, self.base_iri)

    def resolve(self, kind: str, name: str) -> Thing:
        """The one thing of `kind` (paper, task, dataset, method, author, area, repository,
        venue) that `name` names: an IRI, a slug, a name or label in any case, an arXiv id.
        Raises UnknownNameError with the nearest names, AmbiguousNameError with the
        candidates.

        >>> g.resolve("paper", "attention is not only a weight: analyzing transformers "
        ...           "with vector norms").key
        'attention-module-is-not-only-a-weight'
        >>> g.resolve("paper", "2004.11207v1").label
        'Self-Attention Attribution: Interpreting Information Interactions Inside Transformer'
        """
        from kg.query.resolve import resolve

        return resolve(self.store, kind, name, self.base_iri, parameter=kind)

    def near(self, text: str, *, n: int = 5) -> list[Thing]:
        """The datasets, tasks, methods and areas whose name looks most like `text`, closest
        first: what `kg search` offers ("did you mean") when a query finds nothing.

        >>> [t.label for t in g.near("imagenett")][:1]
        ['ImageNet']
        """
        import difflib

        from kg.query.resolve import near

        wanted = " ".join(text.split()).casefold()
        found = [t for kind in NEAR_KINDS for t in near(self.store, kind, text, self.base_iri)]

        def likeness(t: Thing) -> float:
            words = [t.key.casefold(), (t.label or "").casefold()]
            return max(difflib.SequenceMatcher(None, wanted, w).ratio() for w in words)

        return sorted(found, key=lambda t: -likeness(t))[:n]

    # --- SPARQL and named queries -----------------------------------------------------------


    def stream(
        self, text: str, *, limit: int | None = None
    ) -> SelectStream | AskResult | GraphResult:
        """Run SPARQL and return the engine's own result, a SELECT's rows read as they come
        (kg's writers print from it). kg search blocks are evaluated first (docs/search.md).
        Most scripts want `sparql` or `iter_sparql`.

        >>> g.stream("SELECT ?p WHERE { ?p a kg:Paper }", limit=2).variables
        ['p']
        """
        import itertools

        from kg.rdf.results import SelectStream

        result = self.store.stream(self._searcher().expand(text))
        if limit is not None and isinstance(result, SelectStream):
            result.rows = itertools.islice(result.rows, limit)
        return result

    def sparql(self, text: str) -> SparqlResult:
        """Run SPARQL on the store (`kg sparql`): the default graph is the merge of all
        graphs, each fact once; kg's usual prefixes (kg:, dcterms:, …) need no PREFIX line.

        >>> rows = g.sparql('''SELECT ?title WHERE {
        ...     ?p kg:arxivId "2004.10102" ; dcterms:title ?title }''')
        >>> rows[0]["title"]
        'Attention is Not Only a Weight: Analyzing Transformers with Vector Norms'
        >>> bool(g.sparql("ASK { ?p kg:arxivId '2004.11207' }"))
        True
        """
        return _collected(self.stream(text))

    def iter_sparql(self, text: str) -> Iterator[dict[str, object]]:
        """A SELECT's rows one by one as the engine yields them, for results too large to
        hold (the rows as `sparql` gives them).

        >>> rows = g.iter_sparql("SELECT ?m WHERE { ?m a kg:Method }")
        >>> sum(1 for _ in rows)
        1925
        """
        return _dicts(self.stream(text))

    def _named(self, name: str | NamedQuery) -> NamedQuery:
        if isinstance(name, str):
            from kg.query.named import find_query

            return find_query(name)
        return name

    def prepare(self, name: str | NamedQuery, /, **params: ParamValue) -> str:
        """The SPARQL of the named query `name` (queries/*.rq) with `params` bound as
        VALUES, names resolved to IRIs as `query` does (`kg query --show-sparql`).

        >>> print(g.prepare("papers-by-author", author="Goro Kobayashi").splitlines()[-1])
        ORDER BY DESC(?date) ?paper
        """
        from kg.query.binding import bind_resolved
        from kg.query.named import with_values

        named = self._named(name)
        values = {k: param_text(v) for k, v in params.items()}
        bindings = bind_resolved(_Lookups(self), named, values, self.base_iri)
        return with_values(named.sparql, bindings)

    def query(self, name: str | NamedQuery, /, **params: ParamValue) -> SparqlResult:
        """Run the named query `name` with `params` (`kg query NAME --param k=v`). A
        parameter that names a thing takes a slug, a name in any case, an arXiv id or an IRI.

        >>> rows = g.query("papers-by-author", author="Goro Kobayashi")
        >>> [r["title"] for r in rows]
        ['Attention is Not Only a Weight: Analyzing Transformers with Vector Norms']
        """
        return self.sparql(self.prepare(name, **params))

    def iter_query(
        self, name: str | NamedQuery, /, **params: ParamValue
    ) -> Iterator[dict[str, object]]:
        """`query`'s rows one by one, for large results.

        >>> next(g.iter_query("papers-by-author", author="Goro Kobayashi"))["paper"]
        'https://w3id.org/kg/id/paper/attention-module-is-not-only-a-weight'
        """
        return self.iter_sparql(self.prepare(name, **params))

    # --- search -------------------------------------------------------------------------

    def search(
        self, text: str, *, type: str | None = None, top: int = DEFAULT_TOP, page: int = 1
    ) -> SearchPage:
        """Full-text search (`kg search`): titles, abstracts, names, identifiers; best first.
        `type` keeps one class (paper, method, task, dataset, area, collection, author,
        repository); `top` hits per page; `page` counts from 1.

        >>> hit = g.search("attention is not only a weight", type="paper")[0]
        >>> hit.label, hit.year
        ('Attention is Not Only a Weight: Analyzing Transformers with Vector Norms', 2020)
        """
        found = self._searcher()
        results = found.find(text, type, page=page, limit=top)
        hits = found.described(results.hits)
        return SearchPage(
            query=text,
            type=type,
            page=results.page,
            limit=results.limit,
            total=results.total,
            counts=dict(results.counts),
            hits=tuple(SearchHit.from_json(h) for h in hits),
        )

    def reindex(self) -> int:
        """Rebuild the search index from the store (`kg search --reindex`); the number of
        entities indexed.

        >>> with kg.open(memory=True) as scratch:
        ...     _ = scratch.ingest([seeds])
        ...     scratch.reindex()
        37
        """
        from kg.search import rebuild

        _, n = rebuild(self.store, self.path)
        self._search = None
        return n

    # --- leaderboards -------------------------------------------------------------------

    def leaderboard(self, task: str, dataset: str, *, metric: str | None = None) -> Leaderboard:
        """A task's leaderboard on a dataset (`kg leaderboard`), each metric's results
        ranked best first with the best result over time; `metric` keeps one metric.
        Task and dataset are slugs, names in any case, keys or IRIs.

        >>> board = g.leaderboard("Image Classification", "imagenet", metric="top 1 accuracy")
        >>> best = board.sections[0].entries[0]
        >>> board.sections[0].metric, best.rank
        ('Top 1 Accuracy', 1)
        """
        from dataclasses import replace

        from kg.query.leaderboard import load, metric_param

        wanted = metric_param(metric)
        board = load(self.store, task, dataset, self.base_iri)
        if wanted is None:
            return board
        return replace(board, sections=(board.section(wanted),))



# --- helpers --------------------------------------------------------------------------------

#: The kinds `near` looks among (names a search is likely to misspell).
NEAR_KINDS = ("dataset", "task", "method", "area")


class _Lookups:
    """The store as the name resolver's source, opened only if a name is looked up (a
    query's text can be prepared without a store)."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph

    def query(self, sparql: str) -> QueryResult:
        return self.graph.store.query(sparql)



def _dicts(result: SelectStream | AskResult | GraphResult) -> Iterator[dict[str, object]]:
    from kg.rdf.results import SelectStream

    if not isinstance(result, SelectStream):
        raise UsageError("iter_sparql and iter_query read a SELECT's rows; use sparql or query "
                         "for ASK, CONSTRUCT and DESCRIBE")
    names = result.variables
    for row in result.rows:
        yield {v: t.python() for v, t in zip(names, row, strict=True) if t is not None}


def _collected(result: SelectStream | AskResult | GraphResult) -> SparqlResult:
    from kg.rdf.results import AskResult, SelectStream

    if isinstance(result, SelectStream):
        return SparqlResult("SELECT", tuple(result.variables), tuple(_dicts(result)))
    if isinstance(result, AskResult):
        return SparqlResult("ASK", boolean=result.value)
    return SparqlResult("CONSTRUCT", ntriples=result.ntriples)

