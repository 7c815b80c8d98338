"""Small hand-made records whose query answers are known exactly (tests/test_queries.py).

Five papers, chosen so that every named query has rows to find and rows to leave out:
alpha and beta share three methods and a repository; beta holds a code sample identical to
one of alpha's; gamma and delta have no code; epsilon has code samples but no code link,
one of them without a status.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kg.ingest import ingest
from kg.store import GraphStore

BASE = "https://w3id.org/kg/id/"
#: Fixed ingest time (SOURCE_DATE_EPOCH 1767225600) so provenance rows are exact.
EPOCH = "1767225600"
INGESTED_AT = "2026-01-01T00:00:00Z"  # as Oxigraph normalises it
SOURCE = {
    "archive": "hand-made test records",
    "snapshot": "2025-07-28",
    "licence_url": "https://creativecommons.org/licenses/by-sa/4.0/legalcode",
    "row_kind": "abstracts",
}


def _methods(*names: str) -> list[dict[str, str]]:
    slugs = {"ReLU": "relu", "Layer Normalization": "layer-normalization"}
    return [{"method_slug": slugs.get(n, n.lower()), "method_name": n} for n in names]


def _tasks(*names: str) -> list[dict[str, str]]:
    return [{"task_slug": n.lower().replace(" ", "-"), "task_name": n} for n in names]


def _sample(sha: str, entry: str, repo: str, status: str | None) -> dict[str, Any]:
    return {
        "code_sha256_prefix": sha,
        "entry": entry,
        "repo": repo,
        "path": f"src/{entry}.py",
        "language": "python",
        "status": status,
    }


def _result(model: str, value: str, metric: str = "Top 1 Accuracy") -> dict[str, str]:
    return {
        "task": "Image Classification",
        "dataset": "ImageNet",
        "metric": metric,
        "value": value,
        "model_name": model,
    }


MINI_RECORDS: list[dict[str, Any]] = [
    {
        "url": "/paper/alpha",
        "title": "Alpha: Attention Everywhere",
        "date": "2019-05-01",
        "proceeding": "NeurIPS 2019 12",
        "authors": ["Ada Lovelace", "Alan Turing", "Grace Hopper"],
        "tasks": _tasks("Image Classification", "Machine Translation"),
        "methods": _methods("Adam", "Dropout", "Attention", "ReLU"),
        "code_links": [
            {
                "repo_url": "https://github.com/Org/Zoo",
                "is_official": 1,
                "framework": "pytorch",
            }
        ],
        "syntology": {
            "samples": [
                _sample("aaaa000000000001", "train", "Org/Zoo", "ran_honours"),
                _sample("aaaa000000000002", "evaluate", "Org/Zoo", "ran_honours"),
            ]
        },
        "results": [_result("Alpha-L", "76.5%")],
        "methods_introduced": ["Alpha Attention"],
        "source": SOURCE,
    },
    {
        "url": "/paper/beta",
        "title": "Beta: Normalising Attention",
        "date": "2020-03-01",
        "proceeding": "ICLR 2020",
        "authors": ["Alan Turing", "Grace Hopper"],
        "tasks": _tasks("Image Classification"),
        "methods": _methods("Adam", "Dropout", "Attention", "Layer Normalization"),
        "code_links": [
            {
                "repo_url": "https://github.com/org/zoo/tree/main/beta",
                "is_official": 0,
                "framework": "tf",
            },
            {"repo_url": "https://github.com/beta-lab/beta", "is_official": 1, "framework": "tf"},
        ],
        "syntology": {
            "samples": [_sample("aaaa000000000001", "train", "beta-lab/beta", "ran_draft_wrong")]
        },
        "results": [_result("Beta-S", "9.5"), _result("Beta-S", "3.1", "Top 5 Error")],
        "methods_introduced": ["Beta Norm"],
        "source": SOURCE,
    },
    {
        "url": "/paper/gamma",
        "title": "Gamma Rays for Translation",
        "date": "2020-07-01",
        "proceeding": "NeurIPS 2020",
        "authors": ["Ada Lovelace"],
        "tasks": _tasks("Machine Translation"),
        "methods": _methods("Adam", "Dropout", "Attention"),
        "results": [_result("Gamma", "10.1"), _result("Delta-X", "-")],
        "datasets_introduced": ["Gamma Corpus"],
        "source": SOURCE,
    },
    {
        "url": "/paper/delta",
        "title": "Delta: A Corpus",
        "date": "2018-01-01",
        "authors": ["Edsger Dijkstra"],
        "tasks": _tasks("Machine Translation"),
        "datasets_introduced": ["Delta Corpus"],
        "methods_introduced": ["Delta Rule"],
        "source": SOURCE,
    },
    {
        "url": "/paper/epsilon",
        "title": "Epsilon Tools",
        "date": "2021-02-02",
        "proceeding": "NeurIPS 2021",
        "authors": ["Grace Hopper"],
        "methods": _methods("ReLU"),
        "syntology": {
            "samples": [
                _sample("eeee000000000001", "run", "solo/tool", "ran_honours"),
                _sample("eeee000000000002", "check", "solo/tool", None),
            ]
        },
        "source": SOURCE,
    },
]


def write_mini(directory: Path) -> Path:
    """The records as one JSON Lines file, `mini.jsonl`, in `directory`."""
    path = directory / "mini.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in MINI_RECORDS), encoding="utf-8")
    return path


def build(store: GraphStore, paths: list[str]) -> GraphStore:
    """Ingest `paths` at the fixed ingest time."""
    before = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        report = ingest(store, paths, base_iri=BASE)
    finally:
        if before is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = before
    assert report.rejected == 0, report.errors
    return store
