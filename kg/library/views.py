"""The graph views of a `KnowledgeGraph`: similar papers, shared items, suggested links,
projections and communities (kg.graph, loaded only when a method runs)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kg.errors import UsageError
from kg.graph.relations import ALL, DEFAULT_BY, DEFAULT_METRIC, PAPER_LINKS_BY
from kg.library.base import DEFAULT_TOP, GraphBase
from kg.library.results import Communities, Community, CommunityMember, CommunityTerm

if TYPE_CHECKING:
    import networkx as nx

    from kg.graph.similarity import SharedResult, SimilarResult
    from kg.graph.suggest import SuggestResult, Trained

#: What `projection` and `communities` of paper-paper link papers by unless told (`--by`):
#: one default for both.
PROJECTION_BY = COMMUNITY_BY = PAPER_LINKS_BY


class GraphViews(GraphBase):
    """Similar papers, shared items, suggested links, projections, communities."""

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



def write_graph(graph: nx.Graph, path: str | os.PathLike[str]) -> str:
    """Write a projection as GraphML, GEXF or node-link JSON, by the file's extension, for
    NetworkX, Gephi or Cytoscape (`kg project`). Returns the format."""
    from kg.graph.projections import write_graph as write

    return write(graph, Path(path))
