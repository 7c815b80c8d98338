"""The numbers the READMEs give for the bundled data are the README store's.

A number written with trailing zeros ("about 5,500 papers") is the store's count rounded to
that many places; any other number is exact. tests/conftest.py's `readme_store` is the store
the README's quick start builds (`kg ingest examples/`).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.query.stats import compute
from kg.rdf.store import GraphStore
from tests.conftest import BASE, ROOT

#: Where the READMEs describe the bundled data: (file, a phrase of the paragraph).
PARAGRAPHS = (
    ("README.md", "builds the graph from the bundled examples"),
    ("examples/README.md", "With them, `kg ingest examples/` builds"),
    ("examples/pwc/README.md", "reads them with the seed records"),
)
NOUNS = (
    "distinct results",
    "results",
    "papers",
    "repositories",
    "code links",
    "leaderboards",
    "methods",
    "collections",
    "tasks",
    "quads",
    "table rows",
)
#: A count is written with thousands separators ("2022 methods" is a year).
_NUMBER = re.compile(rf"\b(\d{{1,3}}(?:,\d{{3}})*) ({'|'.join(NOUNS)})\b")


def _paragraph(text: str, phrase: str) -> str:
    for block in text.split("\n\n"):
        if phrase in " ".join(block.split()):
            return " ".join(block.split())
    raise AssertionError(f"no paragraph with {phrase!r}")


def _claims() -> Iterator[tuple[str, int, str]]:
    for name, phrase in PARAGRAPHS:
        block = _paragraph((ROOT / name).read_text(encoding="utf-8"), phrase)
        for number, noun in _NUMBER.findall(block):
            yield name, int(number.replace(",", "")), noun


def _table_rows() -> int:
    data: list[dict[str, Any]] = json.loads(
        gzip.decompress((ROOT / "examples" / "pwc" / "evaluation-tables.json.gz").read_bytes())
    )

    def rows(task: dict[str, Any]) -> int:
        def of(ds: dict[str, Any]) -> int:
            own = len((ds.get("sota") or {}).get("rows") or [])
            return own + sum(of(s) for s in ds.get("subdatasets") or [])

        return sum(of(d) for d in task.get("datasets") or []) + sum(
            rows(s) for s in task.get("subtasks") or []
        )

    return sum(rows(t) for t in data)


@pytest.fixture(scope="module")
def actual(readme_store: Path) -> dict[str, int]:
    with GraphStore.open(readme_store, read_only=True) as store:
        stats = compute(store, BASE)
    classes = stats.classes
    return {
        "papers": classes["kg:Paper"],
        "repositories": classes["kg:Repository"],
        "results": classes["kg:EvaluationResult"],
        "distinct results": classes["kg:EvaluationResult"],
        "code links": classes["kg:CodeLink"],
        "leaderboards": classes["kg:Leaderboard"],
        "methods": classes["kg:Method"],
        "collections": classes["kg:Collection"],
        "tasks": classes["kg:Task"],
        "quads": stats.quads,
        "table rows": _table_rows(),
    }


def _rounded(value: int, stated: int) -> int:
    places = len(str(stated)) - len(str(stated).rstrip("0"))
    places = min(places, len(str(stated)) - 2)  # "24,000": thousands, not ten-thousands
    return round(value, -places) if places > 0 else value


def test_the_readmes_give_the_stores_numbers(actual: dict[str, int]) -> None:
    claims = list(_claims())
    assert {noun for _, _, noun in claims} >= {"papers", "repositories", "results", "quads"}
    wrong = [
        f"{name}: {stated:,} {noun}, the store has {actual[noun]:,}"
        for name, stated, noun in claims
        if _rounded(actual[noun], stated) != stated
    ]
    assert not wrong, wrong
