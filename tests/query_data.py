"""Small hand-made records whose query answers are known exactly (tests/test_queries.py).

Five papers, chosen so that every named query has rows to find and rows to leave out:
alpha and beta share three methods and a repository; beta holds a code sample identical to
one of alpha's; gamma and delta have no code; epsilon has code samples but no code link,
one of them without a status.
"""

from __future__ import annotations

import dataclasses
import json
import os
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kg.ingest.ingestor import ingest
from kg.query.named import Binding, NamedQuery, run_local
from kg.rdf.results import QueryResult, Term
from kg.rdf.store import GraphStore

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


#: Dump triples laid out as docs/dumps.md describes (entry graphs deriving from dump nodes,
#: areas, the task DAG, a leaderboard, introduced years and dates), for the queries that
#: need the dump vocabulary. Loaded on top of MINI_RECORDS as the "dumps" graph, so it also
#: shows records and dumps merging: the leaderboard and adam's provenance gain rows.
DUMPS_TRIG = """
@base <https://w3id.org/kg/id/> .
@prefix kg: <https://w3id.org/kg/ontology#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

<graph/pwc-dump/methods/2022-05-20> {
  <dump/methods/2022-05-20> a kg:Dump, prov:Entity ; kg:dumpKind "methods" ;
    kg:dumpName "methods" ; kg:sourceFile "methods.json.gz" ;
    kg:snapshot "2022-05-20"^^xsd:date ; kg:ingestedAt "2026-01-01T00:00:00Z"^^xsd:dateTime ;
    kg:sourceArchive "Papers with Code" .
}
<graph/pwc-dump/evaluation-tables/2020-08-28> {
  <dump/evaluation-tables/2020-08-28> a kg:Dump, prov:Entity ;
    kg:dumpKind "evaluation-tables" ; kg:dumpName "evaluation-tables" ;
    kg:sourceFile "evaluation-tables.json.gz" ; kg:snapshot "2020-08-28"^^xsd:date ;
    kg:ingestedAt "2026-01-01T00:00:00Z"^^xsd:dateTime ; kg:sourceArchive "Papers with Code" .
}
<graph/pwc-dump/datasets/undated> {
  <dump/datasets/undated> a kg:Dump, prov:Entity ; kg:dumpKind "datasets" ;
    kg:dumpName "datasets" ; kg:sourceFile "datasets.json" ;
    kg:ingestedAt "2026-01-01T00:00:00Z"^^xsd:dateTime ; kg:sourceArchive "Papers with Code" .
}

# The placeholder year 2000 of a method with a paper gives way to the paper's arXiv year.
<graph/pwc-methods/adam> {
  <graph/pwc-methods/adam> foaf:primaryTopic <method/adam> ;
    prov:wasDerivedFrom <dump/methods/2022-05-20> ; kg:contentHash "sha256:01" .
  <method/adam> kg:fullName "Adam" ; kg:introducedYear 2000 .
  <paper/adam-a-method-for-stochastic> a kg:Paper ; kg:introducesMethod <method/adam> ;
    kg:pwcSlug "adam-a-method-for-stochastic" ;
    dcterms:title "Adam: A Method for Stochastic Optimization" ; kg:arxivId "1412.6980" .
}
# A method without a paper keeps its stated year.
<graph/pwc-methods/reinforce> {
  <graph/pwc-methods/reinforce>
    foaf:primaryTopic <method/reinforce> ; prov:wasDerivedFrom <dump/methods/2022-05-20> .
  <method/reinforce> kg:introducedYear 1999 .
}
# A placeholder year with a paper of unknown date: no year at all.
<graph/pwc-methods/dropout> {
  <graph/pwc-methods/dropout>
    foaf:primaryTopic <method/dropout> ; prov:wasDerivedFrom <dump/methods/2022-05-20> .
  <method/dropout> kg:introducedYear 2000 .
  <paper/dropout-a-simple-way> a kg:Paper ; kg:introducesMethod <method/dropout> ;
    dcterms:title "Dropout: A Simple Way to Prevent Neural Networks from Overfitting" .
}
# A stated 2000 without a paper is the same placeholder: no year.
<graph/pwc-methods/placeholder> {
  <graph/pwc-methods/placeholder>
    foaf:primaryTopic <method/placeholder> ; prov:wasDerivedFrom <dump/methods/2022-05-20> .
  <method/placeholder> kg:introducedYear 2000 .
}
# An old-style arXiv id.
<graph/pwc-methods/old-rule> {
  <graph/pwc-methods/old-rule>
    foaf:primaryTopic <method/old-rule> ; prov:wasDerivedFrom <dump/methods/2022-05-20> .
  <method/old-rule> kg:introducedYear 2000 .
  <paper/old-rule-paper> a kg:Paper ; kg:introducesMethod <method/old-rule> ;
    kg:arxivId "cs/9901001" .
}
<graph/pwc-datasets/imagenet> {
  <graph/pwc-datasets/imagenet>
    foaf:primaryTopic <dataset/imagenet> ; prov:wasDerivedFrom <dump/datasets/undated> .
  <dataset/imagenet> kg:introducedDate "2009-06-20"^^xsd:date ;
    kg:usedForTask <task/image-classification> .
  <paper/imagenet-a-large-scale> a kg:Paper ; kg:introducesDataset <dataset/imagenet> ;
    dcterms:title "ImageNet: A large-scale hierarchical image database" .
}
<graph/pwc-evaluation/evaluation-tables/image-classification> {
  <graph/pwc-evaluation/evaluation-tables/image-classification>
    foaf:primaryTopic <task/image-classification> ;
    prov:wasDerivedFrom <dump/evaluation-tables/2020-08-28> .
  <task/image-classification> kg:area <area/computer-vision> .
  <task/fine-grained-image-classification> kg:subtaskOf <task/image-classification> .
  <task/few-shot-image-classification> kg:subtaskOf <task/image-classification> .
  <task/one-shot-image-classification> kg:subtaskOf <task/few-shot-image-classification> .
  <leaderboard/image-classification/imagenet> a kg:Leaderboard ;
    kg:onTask <task/image-classification> ; kg:onDataset <dataset/imagenet> ;
    kg:leaderboardMetric "Top 1 Accuracy" .
  <paper/zeta> kg:hasResult <paper/zeta/result/0a1b> ; dcterms:title "Zeta Nets" .
  <paper/zeta/result/0a1b> a kg:EvaluationResult ; kg:onTask <task/image-classification> ;
    kg:onDataset <dataset/imagenet> ; kg:metricName "Top 1 Accuracy" ;
    kg:metricValue "88.4" ; kg:metricNumber 88.4 ; kg:metricIsPercent false ;
    kg:modelName "Zeta-XL" ; kg:inLeaderboard <leaderboard/image-classification/imagenet> .
  <leaderboard/image-classification/imagenet/result/2c3d> a kg:EvaluationResult ;
    kg:onTask <task/image-classification> ; kg:onDataset <dataset/imagenet> ;
    kg:metricName "Top 1 Accuracy" ; kg:metricValue "12.0%" ; kg:metricNumber 12.0 ;
    kg:metricIsPercent true ; kg:modelName "Anonymous" ;
    kg:inLeaderboard <leaderboard/image-classification/imagenet> .
}
<graph/pwc-evaluation/evaluation-tables/few-shot-learning> {
  <graph/pwc-evaluation/evaluation-tables/few-shot-learning>
    foaf:primaryTopic <task/few-shot-learning> ;
    prov:wasDerivedFrom <dump/evaluation-tables/2020-08-28> .
  <task/few-shot-learning> kg:area <area/methodology> .
  <task/few-shot-image-classification> kg:subtaskOf <task/few-shot-learning> .
}
<graph/pwc-evaluation/evaluation-tables/machine-translation> {
  <graph/pwc-evaluation/evaluation-tables/machine-translation>
    foaf:primaryTopic <task/machine-translation> ;
    prov:wasDerivedFrom <dump/evaluation-tables/2020-08-28> .
  <task/machine-translation> kg:area <area/natural-language-processing> .
}
<graph/entities> {
  <method/reinforce> a kg:Method ; rdfs:label "REINFORCE" .
  <method/old-rule> a kg:Method ; rdfs:label "Old Rule" .
  <dataset/imagenet> a kg:Dataset ; rdfs:label "ImageNet" .
  <task/fine-grained-image-classification> a kg:Task ;
    rdfs:label "Fine-Grained Image Classification" .
  <task/few-shot-image-classification> a kg:Task ; rdfs:label "Few-Shot Image Classification" .
  <task/one-shot-image-classification> a kg:Task ; rdfs:label "One-Shot Image Classification" .
  <task/few-shot-learning> a kg:Task ; rdfs:label "Few-Shot Learning" .
  <area/computer-vision> a kg:Area ; rdfs:label "Computer Vision" .
  <area/methodology> a kg:Area ; rdfs:label "Methodology" .
  <area/natural-language-processing> a kg:Area ; rdfs:label "Natural Language Processing" .
}
"""


def build_dumps(store: GraphStore, paths: list[str]) -> GraphStore:
    """The records in `paths` plus DUMPS_TRIG."""
    build(store, paths)
    store.load(DUMPS_TRIG.encode("utf-8"), "trig")
    return store


_SEARCHES: weakref.WeakKeyDictionary[GraphStore, Any] = weakref.WeakKeyDictionary()


def run_named(
    store: GraphStore,
    query: NamedQuery,
    bindings: Mapping[str, Term],
    limit: int | None = None,
    binding: Binding = "values",
) -> QueryResult:
    """`run_local` as kg query runs it: kg search blocks expanded first, over an index of
    `store` (built once per store)."""
    from kg.search import StoreSearch

    search = _SEARCHES.get(store)
    if search is None:
        search = _SEARCHES[store] = StoreSearch(store, store.path, quiet=True)
    expanded = dataclasses.replace(query, sparql=search.expand(query.sparql, bindings))
    return run_local(store, expanded, bindings, limit=limit, binding=binding)
