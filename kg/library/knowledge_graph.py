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
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from kg.config import (
    BASE_IRI_ENV,
    DEFAULT_BASE_IRI,
    DEFAULT_STORE,
    MAX_ARRAY_ITEMS,
    STORE_ENV,
    base_iri_of,
)
from kg.errors import StoreError, StoreMissingError, UsageError
from kg.graph.relations import ALL, DEFAULT_BY, DEFAULT_METRIC, PAPER_LINKS_BY
from kg.library.results import (
    Communities,
    Community,
    CommunityMember,
    CommunityTerm,
    SearchHit,
    SearchPage,
    SparqlResult,
)

if TYPE_CHECKING:
    import networkx as nx

    from kg.errors import RecordError
    from kg.export.exporter import ExportReport
    from kg.graph.similarity import SharedResult, SimilarResult
    from kg.graph.suggest import SuggestResult, Trained
    from kg.ingest.ingestor import IngestReport
    from kg.query.leaderboard import Leaderboard
    from kg.query.named import NamedQuery
    from kg.query.resolve import Thing
    from kg.query.stats import Stats
    from kg.rdf.results import AskResult, GraphResult, QueryResult, SelectStream
    from kg.rdf.store import Compaction, GraphStore
    from kg.search import StoreSearch
    from kg.sources.pwc_api import PullReport

#: What `projection` and `communities` of paper-paper link papers by unless told (`--by`):
#: one default for both.
PROJECTION_BY = COMMUNITY_BY = PAPER_LINKS_BY
#: How many results `similar`, `search` and `communities` return unless told.
DEFAULT_TOP = 10
ParamValue = str | int | float | bool


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


class KnowledgeGraph:
    """A kg store: query it, search it, rank similar papers, draw projections, read
    leaderboards, export it, ingest into it. A context manager: `with kg.open() as g: ...`
    closes the store at the end.

    `kg.open` opens the store at once; a `KnowledgeGraph` made directly (same arguments)
    opens it on first use, so that a command that turns out not to need it never opens it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = True,
        memory: bool = False,
        base_iri: str | None = None,
    ) -> None:
        self.base_iri = base_iri_of(base_iri or os.environ.get(BASE_IRI_ENV) or DEFAULT_BASE_IRI)
        self.path: Path | None = None
        if not memory:
            self.path = Path(path or os.environ.get(STORE_ENV) or DEFAULT_STORE)
        self.read_only = read_only and not memory
        self._store: GraphStore | None = None
        self._search: StoreSearch | None = None

    # --- the store ------------------------------------------------------------------------

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store (and release its snapshot)."""
        if self._store is not None:
            self._store.close()
            self._store = None
            self._search = None

    def __repr__(self) -> str:
        where = "memory" if self.path is None else str(self.path)
        mode = "read-only" if self.read_only else "writable"
        return f"<KnowledgeGraph {where} ({mode})>"

    def __len__(self) -> int:
        """The number of quads the store holds."""
        return self.store.count()

    @property
    def store(self) -> GraphStore:
        """The underlying `GraphStore` (opened on first use), for kg's own tools; its
        interface may change."""
        if self._store is None:
            from kg.rdf.store import GraphStore

            self._store = GraphStore.open(self.path, read_only=self.read_only)
        return self._store

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

    def _searcher(self) -> StoreSearch:
        if self._search is None:
            from kg.search import StoreSearch

            self._search = StoreSearch(self.store, self.path)
        return self._search

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
        values = {k: _param_text(v) for k, v in params.items()}
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

    # --- graph views --------------------------------------------------------------------

    def similar(
        self,
        paper: str,
        *,
        by: str = DEFAULT_BY,
        metric: str = DEFAULT_METRIC,
        top: int = DEFAULT_TOP,
    ) -> SimilarResult:
        """The `top` papers closest to `paper` (`kg similar`), each with its score and the
        shared items behind it. `by`: methods, repositories, tasks, authors, datasets, all,
        or several comma-separated; `metric`: idf (default), idf-cosine, jaccard, overlap,
        cosine, adamic-adar (docs/similarity.md). The index is kept beside the store.

        >>> result = g.similar("attention-module-is-not-only-a-weight", top=3)
        >>> [m.label for m in result.matches][:1]
        ['Self-Attention Attribution: Interpreting Information Interactions Inside Transformer']
        """
        from kg.graph.cache import similarity_index
        from kg.graph.similarity import resolve_paper, similar

        resolve_paper(self.store, paper, self.base_iri)  # an unknown paper fails first
        index = similarity_index(self.store, by, metric)
        return similar(
            self.store, paper, base_iri=self.base_iri, by=by, metric=metric, top=top,
            index=index,
        )

    def shared(self, a: str, b: str, *, by: str = ALL) -> SharedResult:
        """Everything papers `a` and `b` share (`kg shared`), per relation, rarest first.

        >>> both = g.shared("2004.10102", "2004.11207", by="tasks")
        >>> [i.label for r in both.relations for i in r.items]
        []
        >>> len(g.shared("2004.10102", "2004.11207", by="methods").relations[0].items)
        19
        """
        from kg.graph.similarity import shared

        return shared(self.store, a, b, base_iri=self.base_iri, by=by)

    def suggest(
        self, paper: str, *, kind: str | None = None, top: int = DEFAULT_TOP, train: bool = True
    ) -> SuggestResult:
        """The `top` links `paper` most likely lacks (`kg suggest`): tasks, datasets and
        methods (or one `kind`: task, dataset, method, repository), each with its score and
        reasons: the similar papers that have it, the paper's items that co-occur with it,
        and where the paper's title or abstract names it. Never a link the paper has. The
        model is tuned on the store's own links on first use and kept beside the store
        (docs/similarity.md, "Suggested links"). With `train=False` (what a request of a
        server or the MCP face does) a store's model is trained here only when the store is
        small (kg.config.SUGGEST_INLINE_PAPERS) and its training has not failed; otherwise
        ModelNotTrainedError says to train it ahead (`train_suggestions`).

        >>> found = g.suggest("attention-module-is-not-only-a-weight", kind="task", top=3)
        >>> len(found.suggestions), {s.relation for s in found.suggestions}
        (3, {'tasks'})
        """
        from kg.graph.cache import suggest_model
        from kg.graph.similarity import resolve_paper
        from kg.graph.suggest import relation_of_kind, suggest

        if kind is not None:
            relation_of_kind(kind)  # a bad kind fails before any loading
        resolve_paper(self.store, paper, self.base_iri)  # so does an unknown paper
        return suggest(
            self.store, paper, base_iri=self.base_iri,
            model=suggest_model(self.store, on_request=not train), kind=kind, top=top,
        )

    def suggestions_trained(self) -> bool:
        """Whether the suggestion model of the store's current content is kept, so that
        `suggest` (and a server's pages and MCP tool) need no training.

        >>> _ = g.train_suggestions()  # trained once, or the kept model loaded
        >>> g.suggestions_trained()
        True
        """
        from kg.graph.cache import has_suggest_model

        return has_suggest_model(self.store)

    def train_suggestions(self) -> Trained:
        """Train the suggestion model of the store and keep it beside the store (`kg suggest
        --train`), so that suggestions, pages and the MCP tool need no training; a model
        already kept for the store's current content is loaded, not trained again.

        >>> trained = g.train_suggestions()
        >>> {"tasks", "datasets", "methods"} <= set(trained.settings)
        True
        """
        from kg.graph.cache import suggest_model

        return suggest_model(self.store).trained

    def projection(
        self,
        kind: str,
        *,
        by: str = PROJECTION_BY,
        min_weight: int = 1,
        max_share: float | None = None,
    ) -> nx.Graph:
        """A NetworkX graph of the store (`kg project`): bipartite (`paper-method`, …) or
        one-mode (`paper-paper` by `by`, `method-method`, `author-author`, …). Nodes are
        IRIs with `label` and `type`; projected edges carry `weight`.

        >>> methods = g.projection("method-method")
        >>> methods.number_of_nodes() > 20, methods.graph["kind"]
        (True, 'method-method')
        """
        from kg.graph.projections import project

        return project(self.store, kind, by=by, min_weight=min_weight, max_share=max_share)

    def communities(
        self,
        kind: str,
        *,
        by: str = COMMUNITY_BY,
        name_by: str = "methods,tasks",
        top: int = DEFAULT_TOP,
        seed: int = 0,
        resolution: float = 1.0,
        min_weight: int = 1,
        max_share: float | None = None,
        backend: str | None = None,
        on_step: Callable[[str], None] | None = None,
    ) -> Communities:
        """Louvain communities of a one-mode projection (`kg communities`), the `top`
        largest named by their most characteristic items (`name_by`) and listed with their
        most central members. `by` links papers for `paper-paper`: by default their tasks
        and datasets (most papers share no method with any other). `on_step` hears each
        step's name (for a progress line).

        >>> found = g.communities("paper-paper", top=2)
        >>> found.communities > 100, len(found.top), found.top[0].size >= found.top[1].size
        (True, 2, True)
        """
        from kg.graph.analytics import communities as louvain
        from kg.graph.analytics import components, describe, pagerank
        from kg.graph.incidence import labels, load_incidence
        from kg.graph.projections import project
        from kg.graph.relations import projection_kind, relation_names

        spec = projection_kind(kind)
        if spec.mode == "bipartite":
            raise UsageError(
                f"{spec.name} is bipartite; communities need a one-mode kind such as "
                "paper-paper, author-author or method-method"
            )
        if top < 1:
            raise UsageError("{parameter} must be at least 1", parameter="top")
        step = on_step or (lambda _: None)
        naming = tuple(r.strip() for r in name_by.split(",") if r.strip())
        relations = (spec.relation,) if spec.relation else relation_names(by)
        incidence = load_incidence(self.store, tuple(dict.fromkeys((*relations, *naming))))
        step(f"projecting {spec.name}")
        graph = project(
            self.store, spec.name, by=by, min_weight=min_weight, max_share=max_share,
            incidence=incidence,
        )
        step(f"finding communities in {graph.number_of_edges():,} edges")
        groups = louvain(graph, seed=seed, resolution=resolution, backend=backend)
        step("ranking and naming the communities")
        parts = components(graph, backend=backend)
        ranks = pagerank(graph, backend=backend)
        found = describe(
            graph, groups, incidence.only(naming), incidence.only(relations), top=top,
            ranks=ranks,
        )
        names = labels(self.store, [t.iri for c in found for t in c.terms])
        node_label = {n: str(d.get("label", n)) for n, d in graph.nodes(data=True)}
        return Communities(
            kind=spec.name,
            nodes=graph.number_of_nodes(),
            edges=graph.number_of_edges(),
            components=len(parts),
            communities=len(groups),
            single_member_communities=sum(1 for g in groups if len(g) == 1),
            seed=seed,
            top=tuple(
                Community(
                    rank=c.rank,
                    size=len(c.members),
                    papers=c.papers,
                    name=" · ".join(names[t.iri] for t in c.terms),
                    terms=tuple(
                        CommunityTerm(t.iri, names[t.iri], t.relation, t.inside, t.overall,
                                      t.lift)
                        for t in c.terms
                    ),
                    central=tuple(
                        CommunityMember(m, node_label[m], round(ranks[m], 6)) for m in c.central
                    ),
                )
                for c in found
            ),
        )

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

    # --- in and out ---------------------------------------------------------------------

    def export(
        self,
        path: str | os.PathLike[str] | IO[bytes] | None = None,
        format: str = "turtle",
        *,
        graph: str | None = None,
        query: str | None = None,
        params: Mapping[str, ParamValue] | None = None,
        gzip: bool = False,
    ) -> ExportReport:
        """Write the graph to `path` (a file name, or a binary stream) in `format`: turtle,
        ntriples, nquads, trig, jsonld or rdfxml (`kg export`). The same graph always gives
        the same bytes. `graph` exports one named graph; `query` (a named CONSTRUCT query or
        @file.rq, with `params`) what it returns. Without a path: exports/kg.<ext>.

        >>> report = g.export(tmp / "kg.nt", "ntriples")
        >>> distinct = "SELECT (COUNT(*) AS ?n) { SELECT DISTINCT ?s ?p ?o { ?s ?p ?o } }"
        >>> report.statements == g.sparql(distinct)[0]["n"]
        True
        """
        from kg.export.exporter import (
            check_destination,
            construct,
            default_path,
            export,
            export_file,
            export_format,
            output_stream,
            resolve_graph,
            subset_query,
        )

        spec = export_format(format)
        if graph is not None and query is not None:
            raise UsageError("{parameter} and query do not combine: a query already picks its "
                             "triples", parameter="graph")
        if params and query is None:
            raise UsageError("{parameter} binds the parameters of a query; give query too",
                             parameter="params")
        graph_iri = resolve_graph(graph, self.base_iri) if graph is not None else None
        source = self.store
        subset_name = None
        if query is not None:
            values = {k: _param_text(v) for k, v in (params or {}).items()}
            subset = subset_query(query, values, self.base_iri, self.store)
            source, subset_name = construct(self.store, subset), subset.name
        if path is not None and not isinstance(path, (str, os.PathLike)):
            with output_stream(path, gzip) as stream:
                report = export(source, stream, spec.name, graph=graph_iri)
            path.flush()
            return report
        where = Path(path) if path is not None else default_path(
            spec.name, compress=gzip, graph=graph_iri, query=subset_name, base_iri=self.base_iri
        )
        check_destination(where)
        return export_file(source, spec.name, where, compress=gzip, graph=graph_iri)

    def ingest(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        strict: bool = False,
        kind: str | None = None,
        snapshot: str | None = None,
        licence: str | None = None,
        attribution: str | None = None,
        batch_size: int = 20_000,
        max_items: int = MAX_ARRAY_ITEMS,
        on_error: Callable[[RecordError], None] | None = None,
        on_progress: Callable[[IngestReport], None] | None = None,
        compact: bool = True,
    ) -> IngestReport:
        """Load paper records and Papers-with-Code dumps (files, directories, `-` for stdin)
        into a writable store (`kg ingest`); the search index follows. Identical records are
        skipped, changed ones replaced whole; a bad record is reported (`on_error`) without
        stopping the others. With `compact`, a large ingest into a large store compacts it
        afterwards (`report.compaction`; see kg.rdf.store.COMPACT_FROM).

        >>> with kg.open(memory=True) as scratch:
        ...     report = scratch.ingest([seeds])
        >>> report.added, report.rejected
        (2, 0)
        """
        if self.read_only:
            raise StoreError(
                f"the store at {self.path} is open read-only; open it with "
                "kg.open(path, read_only=False) to ingest"
            )
        from kg.ingest.identity import Iris
        from kg.ingest.ingestor import Ingestor, check_options
        from kg.rdf.store import COMPACT_FROM
        from kg.search import Upkeep

        check_options(kind=kind, snapshot=snapshot, licence=licence, attribution=attribution)
        start = time.perf_counter()

        # the search index beside the store follows every batch (kg.search.maintain)
        upkeep = None if self.path is None else Upkeep(self.store, self.path)
        ingestor = Ingestor(
            self.store,
            Iris(self.base_iri),
            batch_size=batch_size,
            strict=strict,
            kind=kind,
            snapshot=snapshot,
            max_items=max_items,
            licence=licence,
            attribution=attribution,
            on_error=on_error,
            on_progress=on_progress,
            on_batch=None if upkeep is None else upkeep.observe,
            compact_from=COMPACT_FROM if compact else None,
        )
        if upkeep is not None:
            upkeep.begin()
        index_seconds = time.perf_counter() - start
        try:
            report = ingestor.run([os.fspath(p) for p in paths])
        except BaseException:
            if upkeep is not None:
                upkeep.abort()
            raise
        finished = time.perf_counter()
        if upkeep is not None:
            upkeep.finish()
        self._search = None  # the next search sees the new index
        # the index opened before the run and finished (built whole, after a first ingest) after
        report.timings["search_index"] += index_seconds + time.perf_counter() - finished
        report.timings["total"] = time.perf_counter() - start
        return report

    def pull(
        self,
        *,
        base_url: str = "https://paperswithcode.co/api/v1",
        since: str | None = None,
        until: str | None = None,
        recent_days: int = 30,
        max_requests: int | None = None,
        rate: float = 1.0,
        attempts: int = 5,
        backoff: float = 2.0,
        licence: str | None = None,
        attribution: str | None = None,
        on_error: Callable[[RecordError], None] | None = None,
        on_page: Callable[[PullReport], None] | None = None,
    ) -> PullReport:
        """Bring the store up to date from the relaunched Papers with Code API (`kg pull`,
        docs/live.md): the taxonomy, papers published since the cursor less `recent_days`
        (every date on a first run; `since`/`until` bound it, YYYY-MM-DD), then benchmarks
        and their results, each page committed before the next is asked for; the cursor
        moves only when the run completes. Requests go only below `base_url`, at most
        `rate` a second (`max_requests` in all); a source failing `attempts` times in a row
        raises `SourceError`, keeping what was pulled. Same identity as the archive.

        >>> g.pull(base_url="http://127.0.0.1:9/api/v1")  # g is open read-only
        Traceback (most recent call last):
        ...
        kg.errors.StoreError: the store at ... is open read-only; open it with ... to pull
        """
        if self.read_only:
            raise StoreError(
                f"the store at {self.path} is open read-only; open it with "
                "kg.open(path, read_only=False) to pull"
            )
        from kg.ingest import api
        from kg.ingest.identity import Iris
        from kg.ingest.ingestor import Ingestor
        from kg.search import Upkeep
        from kg.sources.http import PoliteClient
        from kg.sources.pwc_api import Pull, parse_date

        first = parse_date(since, "since") if since else None
        last = parse_date(until, "until") if until else None
        if first and last and first > last:
            raise UsageError(f"{{parameter}} {since} is after --until {until}", parameter="since")
        if max_requests is not None and max_requests < 1:
            raise UsageError("{parameter} must be at least 1", parameter="max-requests")
        client = PoliteClient(
            base_url, rate=rate, attempts=attempts, backoff=backoff, max_requests=max_requests
        )
        upkeep = None if self.path is None else Upkeep(self.store, self.path)
        licence = licence or api.API_LICENCE
        attribution = attribution or api.API_ATTRIBUTION
        ingestor = Ingestor(
            self.store,
            Iris(self.base_iri),
            licence=licence,
            attribution=attribution,
            on_error=on_error,
            on_batch=None if upkeep is None else upkeep.observe,
            compact_from=None,
        )
        run = Pull(
            self.store, ingestor, client, since=first, until=last, recent_days=recent_days,
            licence=licence, attribution=attribution, on_page=on_page,
        )  # fmt: skip
        if upkeep is not None:
            upkeep.begin()
        try:
            report = run.run()
        except BaseException:  # what was committed stays; the index catches up on next use
            if upkeep is not None:
                upkeep.abort()
            self._search = None
            raise
        if upkeep is not None:
            upkeep.finish()
        self._search = None
        return report

    def compact(self, into: str | os.PathLike[str]) -> Compaction:
        """Write a compact copy of the store into the new directory `into` (`kg compact`):
        the store dumped and bulk-loaded in one go, about a third smaller than a store built
        batch by batch, which RocksDB's compactions leave partly uncompressed
        (docs/performance.md). The store is only read (its readers are undisturbed); the
        copy appears whole or not at all, with the search index. Returns the bytes on disk
        of the store and of the copy, and the time it took.

        >>> with kg.open(tmp / "s", read_only=False) as g:
        ...     _ = g.ingest([seeds])
        ...     done = g.compact(tmp / "compact")
        >>> done.bytes_after < done.bytes_before
        True
        """
        if self.read_only:
            raise StoreError(
                f"the store at {self.path} is open read-only; open it with "
                "kg.open(path, read_only=False) to compact it"
            )
        if self.path is None:
            raise UsageError("a memory store has no files to compact")
        if self._store is None and not (self.path / "CURRENT").exists():
            raise StoreMissingError(f"no kg store at {self.path} to compact")
        from kg.search.index import INDEX_DIR

        return self.store.rebuild(Path(into), beside=[INDEX_DIR])


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


def _param_text(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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

