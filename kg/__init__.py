"""kg: a knowledge graph of machine-learning research, as RDF in Oxigraph.

The Python library's front door (docs/python.md)::

    import kg

    with kg.open("kg-store") as g:
        paper = g.resolve("paper", "Attention is not only a weight")
        for match in g.similar(paper.iri, top=5).matches:
            print(f"{match.score:.3f}", match.label)

Every name in `__all__` is loaded on first use, so `import kg` loads neither pyoxigraph nor
the numeric libraries. The modules behind these names are free to move; these names are not.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from kg.errors import (
    AmbiguousNameError,
    EndpointError,
    ForbiddenError,
    InputError,
    KgError,
    MemoryLimitError,
    ModelNotTrainedError,
    NotFoundError,
    ParameterError,
    QuerySyntaxError,
    QueryTimeoutError,
    QueryTooComplexError,
    RecordError,
    ResultTooLargeError,
    SourceError,
    StoreBusyError,
    StoreError,
    StoreMissingError,
    UnknownNameError,
    UsageError,
)

if TYPE_CHECKING:
    from kg.export.exporter import ExportReport
    from kg.export.push import PushReport
    from kg.export.validate import ValidationReport, Violation
    from kg.export.void import VoidDescription
    from kg.graph.similarity import Match, SharedItem, SharedRelation, SharedResult, SimilarResult
    from kg.graph.suggest import Suggestion, SuggestResult
    from kg.ingest.ingestor import IngestReport
    from kg.library import (
        Communities,
        Community,
        CommunityMember,
        CommunityTerm,
        KnowledgeGraph,
        SearchHit,
        SearchPage,
        SparqlResult,
        open,
    )
    from kg.query.leaderboard import Entry as LeaderboardEntry
    from kg.query.leaderboard import Leaderboard
    from kg.query.leaderboard import Point as LeaderboardPoint
    from kg.query.leaderboard import Section as LeaderboardSection
    from kg.query.named import NamedQuery
    from kg.query.resolve import Thing
    from kg.query.stats import Stats
    from kg.sources.pwc_api import PullReport

#: Public name -> (module, name there). The result types are the layers' own dataclasses.
_LAZY = {
    "open": ("kg.library", "open"),
    "KnowledgeGraph": ("kg.library", "KnowledgeGraph"),
    "SparqlResult": ("kg.library", "SparqlResult"),
    "SearchPage": ("kg.library", "SearchPage"),
    "SearchHit": ("kg.library", "SearchHit"),
    "Communities": ("kg.library", "Communities"),
    "Community": ("kg.library", "Community"),
    "CommunityMember": ("kg.library", "CommunityMember"),
    "CommunityTerm": ("kg.library", "CommunityTerm"),
    "SimilarResult": ("kg.graph.similarity", "SimilarResult"),
    "Match": ("kg.graph.similarity", "Match"),
    "SharedItem": ("kg.graph.similarity", "SharedItem"),
    "SharedResult": ("kg.graph.similarity", "SharedResult"),
    "SharedRelation": ("kg.graph.similarity", "SharedRelation"),
    "SuggestResult": ("kg.graph.suggest", "SuggestResult"),
    "Suggestion": ("kg.graph.suggest", "Suggestion"),
    "Leaderboard": ("kg.query.leaderboard", "Leaderboard"),
    "LeaderboardSection": ("kg.query.leaderboard", "Section"),
    "LeaderboardEntry": ("kg.query.leaderboard", "Entry"),
    "LeaderboardPoint": ("kg.query.leaderboard", "Point"),
    "Thing": ("kg.query.resolve", "Thing"),
    "Stats": ("kg.query.stats", "Stats"),
    "ExportReport": ("kg.export.exporter", "ExportReport"),
    "IngestReport": ("kg.ingest.ingestor", "IngestReport"),
    "PullReport": ("kg.sources.pwc_api", "PullReport"),
    "PushReport": ("kg.export.push", "PushReport"),
    "ValidationReport": ("kg.export.validate", "ValidationReport"),
    "Violation": ("kg.export.validate", "Violation"),
    "VoidDescription": ("kg.export.void", "VoidDescription"),
    "NamedQuery": ("kg.query.named", "NamedQuery"),
}

__all__ = [  # noqa: RUF022 - grouped: the front door, the results, the errors
    "open",
    "KnowledgeGraph",
    # results
    "Communities",
    "Community",
    "CommunityMember",
    "CommunityTerm",
    "ExportReport",
    "IngestReport",
    "Leaderboard",
    "LeaderboardEntry",
    "LeaderboardPoint",
    "LeaderboardSection",
    "Match",
    "NamedQuery",
    "PullReport",
    "PushReport",
    "SearchHit",
    "SearchPage",
    "SharedItem",
    "SharedRelation",
    "SharedResult",
    "SimilarResult",
    "SparqlResult",
    "Stats",
    "SuggestResult",
    "Suggestion",
    "Thing",
    "ValidationReport",
    "Violation",
    "VoidDescription",
    # errors
    "AmbiguousNameError",
    "EndpointError",
    "ForbiddenError",
    "InputError",
    "KgError",
    "MemoryLimitError",
    "ModelNotTrainedError",
    "NotFoundError",
    "ParameterError",
    "QuerySyntaxError",
    "QueryTimeoutError",
    "QueryTooComplexError",
    "RecordError",
    "ResultTooLargeError",
    "SourceError",
    "StoreBusyError",
    "StoreError",
    "StoreMissingError",
    "UnknownNameError",
    "UsageError",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata only when asked
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("kg")
        except PackageNotFoundError:  # a checkout that was never installed
            return "0.0.0+unknown"
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(import_module(module), attribute)
        globals()[name] = value  # once loaded, a plain attribute
        return value
    raise AttributeError(f"module 'kg' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
