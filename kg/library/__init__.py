"""kg as a Python library: `kg.open(...)` gives a `KnowledgeGraph` (docs/python.md).

This layer sits above query, search, graph, export and ingest, and below serve and cli:
each CLI command is a thin layer over one `KnowledgeGraph` method.
"""

from __future__ import annotations

from kg.library.knowledge_graph import KnowledgeGraph, open
from kg.library.named import named_queries, named_query, parse_params
from kg.library.remote import RemoteGraph
from kg.library.results import (
    Communities,
    Community,
    CommunityMember,
    CommunityTerm,
    SearchHit,
    SearchPage,
    SparqlResult,
)

__all__ = [
    "Communities",
    "Community",
    "CommunityMember",
    "CommunityTerm",
    "KnowledgeGraph",
    "RemoteGraph",
    "SearchHit",
    "SearchPage",
    "SparqlResult",
    "named_queries",
    "named_query",
    "open",
    "parse_params",
]
