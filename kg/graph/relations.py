"""What the graph views are made of, without numpy, scipy or networkx.

The relations from papers to items, the projection kinds, the similarity metrics' names and
the graph file formats: the vocabulary of `kg similar`, `kg project` and `kg communities`,
which the CLI needs before (and without) loading the numeric libraries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from kg.errors import UsageError
from kg.rdf.vocab import PAPER_TO


@dataclass(frozen=True)
class Relation:
    """How papers reach one kind of item."""

    name: str  # "methods": the value of --by
    item_type: str  # "Method": the `type` attribute of item nodes
    path: str  # SPARQL property path from a paper to an item
    description: str


RELATIONS: dict[str, Relation] = {
    r.name: r
    for r in (
        Relation("methods", "Method", PAPER_TO.method, "methods the paper uses or introduces"),
        Relation("repositories", "Repository", PAPER_TO.repository, "code repositories linked"),
        Relation(
            "tasks", "Task", PAPER_TO.task, "tasks the paper addresses or reports results on"
        ),
        Relation("authors", "Author", PAPER_TO.author, "authors"),
        Relation(
            "datasets",
            "Dataset",
            PAPER_TO.dataset,
            "datasets the paper introduces or reports results on",
        ),
    )
}
ALL = "all"
#: What `kg suggest --kind` accepts, and the relation each names.
SUGGEST_KINDS = {
    "task": "tasks",
    "dataset": "datasets",
    "method": "methods",
    "repository": "repositories",
}
#: What --by accepts.
BY_CHOICES = (*RELATIONS, ALL)


def relation_names(by: str | Sequence[str]) -> tuple[str, ...]:
    """Validate --by: a relation name, `all`, or several names (a list or comma-separated)."""
    names = by.split(",") if isinstance(by, str) else list(by)
    out: list[str] = []
    for name in names:
        key = name.strip().lower()
        if key == ALL:
            return tuple(RELATIONS)
        if key not in RELATIONS:
            raise UsageError(f"unknown relation {name!r}; use one of: {', '.join(BY_CHOICES)}")
        if key not in out:
            out.append(key)
    if not out:
        raise UsageError(f"no relation given; use one of: {', '.join(BY_CHOICES)}")
    return tuple(r for r in RELATIONS if r in out)  # canonical order



def fallback_label(iri: str) -> str:
    """The last path segment of an IRI, decoded: what is shown when nothing names it."""
    return unquote(iri.rstrip("/").rsplit("/", 1)[-1])



@dataclass(frozen=True)
class ProjectionKind:
    name: str
    mode: str  # "bipartite", "papers" or "items"
    relation: str | None  # the item relation; None for paper-paper (it takes --by)
    description: str


def _kinds() -> dict[str, ProjectionKind]:
    kinds: dict[str, ProjectionKind] = {}
    for name, rel in RELATIONS.items():
        item = rel.item_type.lower()
        kinds[f"paper-{item}"] = ProjectionKind(
            f"paper-{item}", "bipartite", name, f"papers and their {rel.description}"
        )
    kinds["paper-paper"] = ProjectionKind(
        "paper-paper", "papers", None, "papers linked by the items they share (--by)"
    )
    for name, rel in RELATIONS.items():
        item = rel.item_type.lower()
        kinds[f"{item}-{item}"] = ProjectionKind(
            f"{item}-{item}", "items", name, f"{name} linked by the papers they share"
        )
    return kinds


KINDS = _kinds()
ALIASES = {
    "coauthorship": "author-author",
    "co-authorship": "author-author",
    "method-cooccurrence": "method-method",
    "method-co-occurrence": "method-method",
    "repository-couse": "repository-repository",
    "repository-co-use": "repository-repository",
}


def projection_kind(name: str) -> ProjectionKind:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    kind = KINDS.get(key)
    if kind is None:
        raise UsageError(
            f"unknown graph kind {name!r}; use one of: {', '.join([*KINDS, *ALIASES])}"
        )
    return kind



#: The similarity metrics, in the order kg.graph.similarity defines them.
METRIC_NAMES = ("idf", "idf-cosine", "jaccard", "overlap", "cosine", "adamic-adar")
DEFAULT_METRIC = "idf"
DEFAULT_BY = ALL
#: What papers are linked by in a paper-paper projection unless told (`kg project` and
#: `kg communities`, one default for both): their tasks and datasets. Most papers share no
#: method with any other, so a projection by methods is mostly papers alone.
PAPER_LINKS_BY = "tasks,datasets"

GRAPH_FORMATS = {".graphml": "graphml", ".gexf": "gexf", ".json": "node-link JSON"}


def graph_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in GRAPH_FORMATS:
        raise UsageError(
            f"cannot tell the graph format of {path.name!r}; end the file name with "
            f"{', '.join(GRAPH_FORMATS)} (GraphML, GEXF or node-link JSON)"
        )
    return GRAPH_FORMATS[suffix]
