"""The one table of worker operations (kg.mcp.calls.CALLS): every operation a face (pages,
HTTP, MCP, /search) asks a pool worker for is in it, and the MCP tools' pages are cut from
the same library answer the pages show."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import kg
from kg.library import KnowledgeGraph
from kg.mcp.calls import CALLS, SHARED_ITEMS, run_call

KG = Path(kg.__file__).parent
#: Where a face names an operation: pool.graph("x", …), pool.call("x", …), the MCP tools'
#: run("x", …), and story.listed(pool, "x", …).
_ASKED = re.compile(r'(?:\.graph|\.call|\brun|\blisted)\(\s*(?:pool,\s*)?"(\w+)"')
PAPER = "https://w3id.org/kg/id/paper/attention-module-is-not-only-a-weight"


def test_every_operation_a_face_asks_for_is_in_the_one_table() -> None:
    asked: dict[str, str] = {}
    for path in sorted([*(KG / "serve").rglob("*.py"), *(KG / "mcp").rglob("*.py")]):
        for name in _ASKED.findall(path.read_text(encoding="utf-8")):
            asked.setdefault(name, str(path.relative_to(KG)))
    # the scan sees the pages', HTTP's, /search's and MCP's calls
    assert {"similar", "suggest", "lookup", "warm", "search_hits", "similar_page"} <= set(asked)
    missing = {name: where for name, where in asked.items() if name not in CALLS}
    assert not missing, f"asked of a worker but not in kg.mcp.calls.CALLS: {missing}"


@pytest.fixture(scope="module")
def graph(readme_store: Path) -> Iterator[KnowledgeGraph]:
    with kg.open(readme_store) as g:
        yield g


def test_an_mcp_page_of_similar_papers_is_cut_from_the_pages_ranking(
    graph: KnowledgeGraph,
) -> None:
    ask = {"paper": PAPER, "by": "all", "metric": "idf"}
    whole = run_call(graph, "similar", {**ask, "top": 4})
    ranked = [m.paper for m in graph.similar(PAPER, by="all", metric="idf", top=4).matches]
    assert [r["paper"] for r in whole["results"]] == ranked and len(ranked) == 4
    page = run_call(graph, "similar_page", {**ask, "top": 2, "offset": 1})
    assert [r["paper"] for r in page["results"]] == ranked[1:3]
    assert all(len(r["shared"]) <= SHARED_ITEMS for r in page["results"])
    assert page["next_offset"] == 3


def test_search_hits_are_the_librarys_search(graph: KnowledgeGraph) -> None:
    found = run_call(graph, "search_hits", {"text": "attention", "type": "paper", "top": 3})
    assert found == graph.search("attention", type="paper", top=3).as_dict()
    assert found["hits"] and {h["type"] for h in found["hits"]} == {"paper"}
