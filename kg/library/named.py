"""The named queries of queries/*.rq, as the library offers them: the catalogue, one query
by name, `--param name=value` pairs, and the README's table of them. Running one is
`KnowledgeGraph.query` (or `RemoteGraph.prepare` and `stream` on another endpoint).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kg.query.named import NamedQuery


def named_queries(directory: Path | None = None) -> dict[str, NamedQuery]:
    """Every named query in `directory` (default: kg's queries/), by name, sorted.

    >>> "papers-by-author" in named_queries()
    True
    """
    from kg.query.named import load_queries

    return load_queries(directory)


def named_query(name: str, directory: Path | None = None) -> NamedQuery:
    """The named query `name`; NotFoundError names the near ones.

    >>> [p.name for p in named_query("papers-by-author").params]
    ['author']
    """
    from kg.query.named import find_query

    return find_query(name, directory)


def parse_params(items: Iterable[str]) -> dict[str, str]:
    """`name=value` strings (`--param`) as a dict; the value may itself hold '='.

    >>> parse_params(["author=Goro Kobayashi", "q=a=b"])
    {'author': 'Goro Kobayashi', 'q': 'a=b'}
    """
    from kg.query.named import parse_assignments

    return parse_assignments(items)


def markdown_table(queries: Iterable[NamedQuery]) -> str:
    """The README's table of the named queries, from their headers."""
    from kg.query.named import markdown_list

    return markdown_list(queries)
