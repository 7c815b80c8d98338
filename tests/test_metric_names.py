"""Metric names go through the one resolver (kg.query.resolve) on every face: `kg query`,
`g.query`, `kg leaderboard` and the HTTP named query, all on the README store.
`Top-1 Accuracy` and `top 1 accuracy` are Top 1 Accuracy; a miss gets "did you mean",
exit 1 (HTTP 404). The rows are checked against the raw evaluation tables."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kg
from kg.errors import UnknownNameError
from kg.query.resolve import match_metric, metric_key
from tests.serve_support import KG_BIN, ServeProcess

ROOT = Path(__file__).resolve().parent.parent
BOARD = ["-p", "task=image-classification", "-p", "dataset=imagenet"]


def _raw_top1_count() -> int:
    with gzip.open(ROOT / "examples" / "pwc" / "evaluation-tables.json.gz", "rt") as f:
        tables = json.load(f)

    def rows(tasks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for task in tasks:
            if task["task"] == "Image Classification":
                for d in task["datasets"]:
                    if d["dataset"] == "ImageNet":
                        yield from d["sota"]["rows"]
            yield from rows(task.get("subtasks") or [])

    return sum(1 for r in rows(tables) if "Top 1 Accuracy" in r["metrics"])


def _kg(store: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG_BIN, "--store", str(store), *argv], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.parametrize("spelling", ["Top-1 Accuracy", "top 1 accuracy", "TOP 1 ACCURACY"])
def test_kg_query_resolves_a_metrics_spelling(readme_store: Path, spelling: str) -> None:
    done = _kg(readme_store, "query", "leaderboard", *BOARD, "-p", f"metric={spelling}",
               "-f", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["results"]["bindings"]
    assert len(rows) == _raw_top1_count() > 100
    assert rows[0]["rank"]["value"] == "1" and rows[0]["value"]["value"] == "88.5%"


def test_a_misspelt_metric_gets_did_you_mean_and_exit_1(readme_store: Path) -> None:
    done = _kg(readme_store, "query", "leaderboard", *BOARD, "-p", "metric=Top 1 Acuracy")
    assert done.returncode == 1
    assert "did you mean: 'Top 1 Accuracy'" in done.stderr, done.stderr
    board = _kg(readme_store, "leaderboard", "image-classification", "imagenet", "--metric",
                "Top 1 Acuracy")
    assert board.returncode == 1 and "did you mean: 'Top 1 Accuracy'" in board.stderr


def test_the_library_and_kg_leaderboard_take_any_spelling(readme_store: Path) -> None:
    with kg.open(readme_store) as g:
        rows = g.query("leaderboard", task="image-classification", dataset="imagenet",
                       metric="Top-1 Accuracy")
        assert len(rows) == _raw_top1_count()
        board = g.leaderboard("image-classification", "imagenet", metric="top-1 accuracy")
        assert board.sections[0].metric == "Top 1 Accuracy"
        # the same order and ranks on both faces
        assert [(int(str(r["rank"])), str(r["model"])) for r in rows][:30] == [
            (e.rank, e.model) for e in board.sections[0].entries[:30]
        ]
        with pytest.raises(UnknownNameError, match="did you mean"):
            g.query("leaderboard", task="image-classification", dataset="imagenet",
                    metric="Top 1 Acuracy")


def test_http_resolves_metrics_and_answers_404_on_a_miss(readme_store: Path) -> None:
    server = ServeProcess(["--store", str(readme_store)], ["--workers", "1"])
    try:
        base = f"{server.url}/queries/leaderboard"
        params = {"task": "Image Classification", "dataset": "imagenet", "format": "json"}
        ok = server.client.get(base, params={**params, "metric": "Top-1 Accuracy"})
        assert ok.status_code == 200, ok.text
        assert len(ok.json()["results"]["bindings"]) == _raw_top1_count()
        miss = server.client.get(base, params={**params, "metric": "Top 1 Acuracy"})
        assert miss.status_code == 404 and "Top 1 Accuracy" in miss.text
    finally:
        server.stop()


@given(st.sampled_from(["Top 1 Accuracy", "Top 5 Accuracy", "Number of params", "BLEU"]),
       st.sampled_from(["lower", "upper", "same"]), st.sampled_from([" ", "-", "_", "  "]))
def test_match_metric_ignores_case_spacing_and_punctuation(
    name: str, case: str, sep: str
) -> None:
    names = ["Top 1 Accuracy", "Top 5 Accuracy", "Number of params", "BLEU"]
    spelt = sep.join(name.split())
    spelt = spelt.lower() if case == "lower" else spelt.upper() if case == "upper" else spelt
    assert match_metric(spelt, names) == name
    assert metric_key(spelt) == metric_key(name)


def test_search_with_no_hits_offers_did_you_mean(readme_store: Path) -> None:
    done = _kg(readme_store, "search", "imagenett")
    assert done.returncode == 0
    assert done.stderr.startswith("no hits; did you mean: ImageNet (dataset)"), done.stderr
    with kg.open(readme_store) as g:
        assert g.search("imagenett").total == 0
        assert g.near("imagenett")[0].label == "ImageNet"
