"""kg's command line: a thin skin over the library. Each module registers its commands."""

from kg.cli import (
    core,  # noqa: F401  (registers ingest, stats, sparql, validate)
    export,  # noqa: F401  (registers export, void)
    fetch,  # noqa: F401  (registers fetch)
    graph,  # noqa: F401  (registers project, similar, shared, communities)
    leaderboard,  # noqa: F401  (registers leaderboard)
    mcp,  # noqa: F401  (registers mcp)
    pull,  # noqa: F401  (registers pull)
    query,  # noqa: F401  (registers query)
    search,  # noqa: F401  (registers search)
    serve,  # noqa: F401  (registers serve)
)
from kg.cli.app import app, main

__all__ = ["app", "main"]
