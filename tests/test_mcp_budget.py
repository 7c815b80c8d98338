"""Every MCP tool answers within what an assistant can read: through the SDK's own client
over `kg mcp` (stdio) on the README store, each tool is called with its largest realistic
arguments, and no answer is over 25 kB as the client receives it (all content text plus the
structured content). The lists page: `top`, `total`, `next_offset`; the leaderboard carries
its `history` of new bests, checked against the evaluation tables' raw JSON."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_mcp import EXAMPLES, _ok, _run, _stdio

BUDGET = 25_000
BIG_PAPER = "attention-is-all-you-need"  # 288 code links on the README store
IMAGENET = {"task": "Image Classification", "dataset": "ImageNet"}

#: Each tool with its largest realistic arguments: (tool, arguments).
LARGEST: dict[str, tuple[str, dict[str, Any]]] = {
    "search": ("search", {"query": "learning"}),
    "search-100": ("search", {"query": "learning", "top": 100, "offset": 30}),
    "sparql": ("sparql", {"query": "SELECT * WHERE { ?s ?p ?o }", "max_rows": 1000}),
    "construct": ("sparql", {"query": "CONSTRUCT WHERE { ?s ?p ?o }", "max_rows": 1000}),
    "named": ("run_named_query", {"name": "leaderboard", "max_rows": 1000, "params": {
        "task": "image-classification", "dataset": "imagenet", "metric": "top-1 accuracy"}}),
    "paper": ("paper", {"paper": BIG_PAPER}),
    "paper-100": ("paper", {"paper": BIG_PAPER, "top": 100}),
    "leaderboard": ("leaderboard", IMAGENET),
    "leaderboard-metric": ("leaderboard", {**IMAGENET, "metric": "Top 1 Accuracy"}),
    "leaderboard-100": ("leaderboard", {**IMAGENET, "top": 100, "history": "all"}),
    "leaderboard-page-2": ("leaderboard", {**IMAGENET, "metric": "Top 1 Accuracy",
                                           "offset": 10, "top": 10, "history": "none"}),
    "similar": ("similar_papers", {"paper": BIG_PAPER, "by": "all", "top": 100}),
    "shared": ("shared", {"a": BIG_PAPER, "b": "bert-pre-training-of-deep-bidirectional",
                          "top": 100}),
    "suggest": ("suggest", {"paper": "2004.10102", "top": 100}),
}


@pytest.fixture(scope="module")
def largest(readme_store: Path) -> dict[str, Any]:
    async def session(client: Any) -> dict[str, Any]:
        return {key: await client.call_tool(tool, args) for key, (tool, args) in LARGEST.items()}

    return _run(session, _stdio(readme_store))


def _received(result: Any) -> int:
    text = sum(len(c.text) for c in result.content if getattr(c, "text", None))
    return text + len(json.dumps(result.structured_content, ensure_ascii=False))


@pytest.mark.parametrize("key", sorted(LARGEST))
def test_no_answer_is_over_the_budget(largest: dict[str, Any], key: str) -> None:
    result = largest[key]
    data = _ok(result)
    assert _received(result) <= BUDGET, f"{key}: {_received(result):,} characters"
    # the text is the structured content once more, compact
    assert json.loads(result.content[0].text) == data


def test_search_pages_from_an_offset(largest: dict[str, Any]) -> None:
    first, later = _ok(largest["search"]), _ok(largest["search-100"])
    assert len(first["hits"]) == 25 and first["offset"] == 0 and first["next_offset"] == 25
    assert first["total"] == later["total"] > 130
    assert later["offset"] == 30 and later["next_offset"] == 30 + len(later["hits"])
    if len(later["hits"]) < 100:  # cut to fit: the note says how to read on
        assert "next_offset" in later["note"]


def test_a_large_result_is_cut_to_the_budget(largest: dict[str, Any]) -> None:
    data = _ok(largest["sparql"])
    assert data["truncated"] is True and 0 < data["rows"] < 1000
    assert "LIMIT and OFFSET" in data["note"]
    assert _ok(largest["construct"])["truncated"] is True


def test_the_paper_card_caps_its_lists_and_counts_them(largest: dict[str, Any]) -> None:
    card = _ok(largest["paper"])
    assert card["code"]["count"] > 100  # the paper's repositories in all
    assert card["counts"]["code.repositories"] > 25  # those the card gathered
    assert 0 < len(card["code"]["repositories"]) <= 25
    wide = _ok(largest["paper-100"])
    assert wide["counts"] == card["counts"]


def _imagenet_top1() -> list[dict[str, Any]]:
    with gzip.open(EXAMPLES / "pwc" / "evaluation-tables.json.gz", "rt") as f:
        tables = json.load(f)

    def rows(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for task in tasks:
            if task["task"] == "Image Classification":
                for d in task["datasets"]:
                    if d["dataset"] == "ImageNet":
                        out += d["sota"]["rows"]
            out += rows(task.get("subtasks") or [])
        return out

    return rows(tables)


def test_leaderboard_pages_and_gives_the_new_bests(largest: dict[str, Any]) -> None:
    board = _ok(largest["leaderboard-metric"])
    (section,) = board["sections"]
    assert section["metric"] == "Top 1 Accuracy" and section["total"] == board["metrics"][0][
        "entries"]
    assert section["entries"][0]["rank"] == 1
    assert section["next_offset"] == len(section["entries"]) <= 25
    page2 = _ok(largest["leaderboard-page-2"])["sections"][0]
    assert [e["rank"] for e in page2["entries"]][:1] == [section["entries"][10]["rank"]]
    assert page2["entries"][0] == section["entries"][10]
    assert "history" not in page2
    # the new bests, oldest first, each strictly better than every earlier one: dated rows
    # of the raw JSON, the first the oldest, the last the best of all
    dated = set()
    for row in _imagenet_top1():
        value = (row["metrics"].get("Top 1 Accuracy") or "").rstrip("%")
        if row.get("paper_date") and value.replace(".", "", 1).isdigit():
            dated.add((row["paper_date"][:10], float(value)))
    history = [(p["date"], p["value"]) for p in section["history"]]
    assert set(history) <= dated and history[0][0] == min(dated)[0]
    assert all(a[0] <= b[0] and a[1] < b[1] for a, b in itertools.pairwise(history))
    assert section["history_total"] >= len(history) > 5
    if section["history_next_offset"] is None:
        assert history[-1][1] == max(v for _, v in dated)


def test_every_metric_is_listed_when_none_is_asked(largest: dict[str, Any]) -> None:
    board = _ok(largest["leaderboard-100"])
    assert [s["metric"] for s in board["sections"]] == [m["metric"] for m in board["metrics"]]
    for s in board["sections"]:
        assert s["offset"] == 0 and s["total"] >= len(s["entries"])
    papers = {e.get("paper") for s in board["sections"] for e in s["entries"]}
    assert set(board["code"]) <= papers


def test_similar_suggest_and_shared_page(largest: dict[str, Any]) -> None:
    similar = _ok(largest["similar"])
    assert similar["results"] and all(len(r["shared"]) <= 5 for r in similar["results"])
    assert all(r["shared_count"] >= len(r["shared"]) for r in similar["results"])
    suggest = _ok(largest["suggest"])
    assert suggest["suggestions"] and suggest["offset"] == 0
    shared = _ok(largest["shared"])
    for relation in shared["relations"]:
        assert relation["total"] == relation["shared"] >= len(relation["items"])


def test_descriptions_say_what_comes_back(readme_store: Path) -> None:
    async def session(client: Any) -> dict[str, Any]:
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = _run(session, _stdio(readme_store))
    for name in ("search", "leaderboard", "similar_papers", "shared", "suggest"):
        schema = tools[name].input_schema["properties"]
        assert schema["top"]["default"] == 25 and schema["top"]["maximum"] == 100, name
        assert "offset" in schema and "next_offset" in tools[name].description, name
    assert "history" in tools["leaderboard"].description
    assert tools["leaderboard"].input_schema["properties"]["history"]["default"] == "new-bests"
