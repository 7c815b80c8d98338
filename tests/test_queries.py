"""The named queries in queries/*.rq: exact answers, headers, safe binding, errors, CLI."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kg.cli.app import as_flag
from kg.errors import InputError, NotFoundError, ParameterError
from kg.ingest.identity import Iris
from kg.query.named import (
    Parameter,
    bind,
    find_query,
    load_queries,
    load_query,
    markdown_list,
    parse_assignments,
    parse_query,
    portability_problems,
    prepare_local,
    sparql_term,
    to_term,
    with_values,
)
from kg.rdf.results import GraphResult, QueryResult, SelectResult, Term, compact
from kg.rdf.store import GraphStore
from kg.rdf.vocab import PAPER_TO, compact_path
from kg.serve.app import as_query_parameter
from tests.conftest import ROOT, run
from tests.query_data import BASE, INGESTED_AT, build, build_dumps, run_named, write_mini

QUERY_DIR = ROOT / "queries"
QUERY_FILES = sorted(QUERY_DIR.glob("*.rq"))
PAPER_A = ":paper/attention-module-is-not-only-a-weight"
PAPER_S = ":paper/self-attention-attribution-interpreting"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
HOSTILE = [
    "x> } ; DROP ALL ; #",
    'Alpha" ) ) } UNION { ?paper ?p ?o } #',
    '")) || true || (("',
    "line one\nline two\r\n\"quoted\" and 'single' \\ backslash",
    "\\u0022 } ; DROP ALL ; #",
    "'''\"\"\"",
    "ATTENTION\u0000",
]


@dataclass(frozen=True)
class Case:
    graph: str  # "mini" (records), "dumps" (records + dump layout) or "seeds"
    params: dict[str, str]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    triples: frozenset[str] | None = None  # for CONSTRUCT: the expected N-Triples lines


def _ship(paper: str) -> str:
    return f":paper/{paper}"


_ALPHA_T = "Alpha: Attention Everywhere"
_BETA_T = "Beta: Normalising Attention"
_GAMMA_T = "Gamma Rays for Translation"
_DELTA_T = "Delta: A Corpus"
_ZOO = ":repository/github.com/org/zoo"
_BETA_R = ":repository/github.com/beta-lab/beta"
_SOLO = ":repository/github.com/solo/tool"
_NORM = ":repository/github.com/gorokoba560/norm-analysis-of-transformer"
_REC = ("mini.jsonl", "hand-made test records", "2025-07-28", INGESTED_AT)
_CV = ":area/computer-vision"
_IC = ":task/image-classification"
_FEW_IC = ":task/few-shot-image-classification"
_ONE_IC = ":task/one-shot-image-classification"
_FINE_T = "Fine-Grained Image Classification"
_MT_KEY = ":task/machine-translation"
_ADAM_T = "Adam: A Method for Stochastic Optimization"
_DROPOUT_T = "Dropout: A Simple Way to Prevent Neural Networks from Overfitting"
_IMAGENET_T = "ImageNet: A large-scale hierarchical image database"
_DELTA = f"{BASE}paper/delta"
_DIJKSTRA = f"{BASE}author/edsger-dijkstra"
_MT = f"{BASE}task/machine-translation"
# result IRIs: <paper>/result/<hash of task slug, dataset slug, metric, model, value>
_LB_ALPHA = ":paper/alpha/result/a80039450ca1fbea"
_LB_BETA = ":paper/beta/result/9d00f1286643c325"
_LB_BETA5 = ":paper/beta/result/360a4866d0dcddca"
_LB_GAMMA = ":paper/gamma/result/c1881618a779c05d"
_LB_DELTA = ":paper/gamma/result/0f56538f6c109a9e"
_NS = {
    "type": "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    "dct": "http://purl.org/dc/terms/",
    "kg": "https://w3id.org/kg/ontology#",
}

#: Every query file's expected answers. Rows are compacted: `:` is the base IRI, literals
#: are their values, '' is unbound, and cells joined by " | " are compared as sets.
CASES: dict[str, list[Case]] = {
    "shared-methods": [
        Case(
            "mini",
            {"paper": "alpha"},
            [
                (":paper/alpha", ":paper/beta", _BETA_T, "3", "Adam | Attention | Dropout"),
                (":paper/alpha", ":paper/gamma", _GAMMA_T, "3", "Adam | Attention | Dropout"),
            ],
        ),
        Case(
            "mini",
            {"paper": "paper/alpha", "min_shared": "1"},
            [
                (":paper/alpha", ":paper/beta", _BETA_T, "3", "Adam | Attention | Dropout"),
                (":paper/alpha", ":paper/gamma", _GAMMA_T, "3", "Adam | Attention | Dropout"),
                (":paper/alpha", ":paper/epsilon", "Epsilon Tools", "1", "ReLU"),
            ],
        ),
        Case("mini", {"paper": "alpha", "min_shared": "4"}, []),
        Case(
            "seeds",
            {"paper": "attention-module-is-not-only-a-weight", "min_shared": "19"},
            [
                (
                    PAPER_A,
                    PAPER_S,
                    "Self-Attention Attribution: Interpreting Information Interactions "
                    "Inside Transformer",
                    "19",
                    "Absolute Position Encodings | Adam | Attention | Attention Dropout | BERT "
                    "| BPE | Dense Connections | Dropout | Label Smoothing | Layer Normalization "
                    "| Linear Layer | Linear Warmup With Linear Decay | Multi-Head Attention "
                    "| Position-Wise Feed-Forward Layer | Residual Connection | Softmax "
                    "| Transformer | Weight Decay | WordPiece",
                )
            ],
        ),
        Case("seeds", {"paper": "attention-module-is-not-only-a-weight", "min_shared": "20"}),
    ],
    "shared-repositories": [
        Case("mini", {}, [(_ZOO, "<https://github.com/org/zoo>", "2")]),
        Case("mini", {"min_papers": "3"}, []),
        Case("seeds", {}, []),
    ],
    "repository-code": [
        Case(
            "mini",
            {"repository": "https://github.com/Org/Zoo"},
            [
                (_ZOO, "code link", ":paper/alpha", _ALPHA_T, ""),
                (_ZOO, "code link", ":paper/beta", _BETA_T, ""),
                (_ZOO, "identical code", ":paper/beta", _BETA_T, _BETA_R),
            ],
        ),
        Case(
            "mini",
            {"repository": "beta-lab/beta"},
            [
                (_BETA_R, "code link", ":paper/beta", _BETA_T, ""),
                (_BETA_R, "identical code", ":paper/alpha", _ALPHA_T, _ZOO),
            ],
        ),
        Case("mini", {"repository": "repository/github.com/solo/tool"}, []),
    ],
    "papers-by-author": [
        Case(
            "mini",
            {"author": "Grace Hopper"},
            [
                (":author/grace-hopper", ":paper/epsilon", "Epsilon Tools", "2021-02-02", "1"),
                (":author/grace-hopper", ":paper/beta", _BETA_T, "2020-03-01", "2"),
                (":author/grace-hopper", ":paper/alpha", _ALPHA_T, "2019-05-01", "3"),
            ],
        ),
        Case(
            "seeds",
            {"author": "  goro KOBAYASHI "},
            [
                (
                    ":author/goro-kobayashi",
                    PAPER_A,
                    "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms",
                    "2020-04-21",
                    "1",
                )
            ],
        ),
    ],
    "coauthors": [
        Case(
            "mini",
            {"author": "author/grace-hopper"},
            [
                (":author/grace-hopper", ":author/alan-turing", "Alan Turing", "2"),
                (":author/grace-hopper", ":author/ada-lovelace", "Ada Lovelace", "1"),
            ],
        ),
        Case("mini", {"author": "Edsger Dijkstra"}, []),
    ],
    "task-methods": [
        Case(
            "mini",
            {"task": "image-classification"},
            # alpha and beta name the task; gamma reports a result on it. Introduced
            # methods are used methods (docs/ontology.md).
            [
                (":task/image-classification", ":method/adam", "Adam", "3"),
                (":task/image-classification", ":method/attention", "Attention", "3"),
                (":task/image-classification", ":method/dropout", "Dropout", "3"),
                (":task/image-classification", ":method/alpha-attention", "Alpha Attention", "1"),
                (":task/image-classification", ":method/beta-norm", "Beta Norm", "1"),
                (
                    ":task/image-classification",
                    ":method/layer-normalization",
                    "Layer Normalization",
                    "1",
                ),
                (":task/image-classification", ":method/relu", "ReLU", "1"),
            ],
        ),
        Case(
            "mini",
            {"task": "task/machine-translation"},
            [
                (":task/machine-translation", ":method/adam", "Adam", "2"),
                (":task/machine-translation", ":method/attention", "Attention", "2"),
                (":task/machine-translation", ":method/dropout", "Dropout", "2"),
                (":task/machine-translation", ":method/alpha-attention", "Alpha Attention", "1"),
                (":task/machine-translation", ":method/delta-rule", "Delta Rule", "1"),
                (":task/machine-translation", ":method/relu", "ReLU", "1"),
            ],
        ),
    ],
    "official-code-by-framework": [
        Case("mini", {"framework": "pytorch"}, [("pytorch", ":paper/alpha", _ALPHA_T, _ZOO)]),
        Case("mini", {"framework": "tf"}, [("tf", ":paper/beta", _BETA_T, _BETA_R)]),
        Case("mini", {"framework": "PyTorch"}, []),
    ],
    "papers-without-code": [
        Case(
            "mini",
            {},
            [(":paper/gamma", _GAMMA_T, "2020-07-01"), (":paper/delta", _DELTA_T, "2018-01-01")],
        ),
        Case(
            "dumps",
            {},
            [
                (":paper/gamma", _GAMMA_T, "2020-07-01"),
                (":paper/delta", _DELTA_T, "2018-01-01"),
                (":paper/adam-a-method-for-stochastic", _ADAM_T, ""),
                (":paper/dropout-a-simple-way", _DROPOUT_T, ""),
                (":paper/imagenet-a-large-scale", _IMAGENET_T, ""),
                (":paper/old-rule-paper", "", ""),
            ],
        ),
        Case("seeds", {}, []),
    ],
    "papers-per-venue-year": [
        Case(
            "mini",
            {},
            [
                (":venue/iclr", "ICLR", "2020", "1"),
                (":venue/neurips", "NeurIPS", "2019", "1"),
                (":venue/neurips", "NeurIPS", "2020", "1"),
                (":venue/neurips", "NeurIPS", "2021", "1"),
            ],
        ),
        Case("mini", {"venue": "ICLR"}, [(":venue/iclr", "ICLR", "2020", "1")]),
        Case("seeds", {"venue": "EMNLP"}, [(":venue/emnlp", "EMNLP", "2020", "1")]),
    ],
    "papers-per-year": [
        # alpha 2019; beta and gamma 2020; delta 2018; epsilon 2021
        Case("mini", {}, [("2018", "1"), ("2019", "1"), ("2020", "2"), ("2021", "1")]),
    ],
    "samples-by-status": [
        Case(
            "mini",
            {},
            [
                (_BETA_R, "ran_draft_wrong", "1"),
                (_ZOO, "ran_honours", "2"),
                (_SOLO, "", "1"),  # epsilon's sample without a status
                (_SOLO, "ran_honours", "1"),
            ],
        ),
        Case("mini", {"repository": "solo/tool"}, [(_SOLO, "", "1"), (_SOLO, "ran_honours", "1")]),
        Case(
            "seeds",
            {},
            # all five samples: the two whose repository is not known in rows of their own
            [
                ("", "ran_draft_wrong", "1"),
                ("", "ran_honours", "1"),
                (_NORM, "ran_fixture", "1"),
                (_NORM, "unverified", "1"),
                (":repository/github.com/yrdddream/attattr", "ran_draft_wrong", "1"),
            ],
        ),
    ],
    "repositories-all-passed": [
        Case("mini", {}, [(_ZOO, "2")]),
        Case("mini", {"status": "ran_draft_wrong"}, [(_BETA_R, "1")]),
        Case("seeds", {}, []),
    ],
    "search-papers": [
        Case(
            "mini",
            {"text": "attention"},
            [
                (":paper/alpha", "*", _ALPHA_T, "2019-05-01"),
                (":paper/beta", "*", _BETA_T, "2020-03-01"),
            ],
        ),
        Case("mini", {"text": "gamma ray*", "limit": "1"}, [(":paper/gamma", "*", _GAMMA_T, "2020-07-01")]),
        Case("mini", {"text": "no such words anywhere"}, []),
    ],
    "papers-by-title": [
        Case(
            "mini",
            {"text": "ATTENTION"},
            [(":paper/beta", _BETA_T, "2020-03-01"), (":paper/alpha", _ALPHA_T, "2019-05-01")],
        ),
        Case("mini", {"text": "rays for"}, [(":paper/gamma", _GAMMA_T, "2020-07-01")]),
    ],
    "leaderboard-results": [
        Case(
            "dumps",
            {"task": "image-classification", "dataset": "dataset/imagenet"},
            [
                (":leaderboard/image-classification/imagenet/result/2c3d", "Top 1 Accuracy", "12.0%", "12", "true", "", "Anonymous", "", "", "", "", "", _IC, ":dataset/imagenet"),
                (_LB_ALPHA, "Top 1 Accuracy", "76.5%", "76.5", "true", "", "Alpha-L", ":paper/alpha", _ALPHA_T, "2019-05-01", "", "", _IC, ":dataset/imagenet"),
                (_LB_BETA, "Top 1 Accuracy", "9.5", "9.5", "false", "", "Beta-S", ":paper/beta", _BETA_T, "2020-03-01", "", "", _IC, ":dataset/imagenet"),
                (_LB_DELTA, "Top 1 Accuracy", "-", "", "", "", "Delta-X", ":paper/gamma", _GAMMA_T, "2020-07-01", "", "", _IC, ":dataset/imagenet"),
                (_LB_GAMMA, "Top 1 Accuracy", "10.1", "10.1", "false", "", "Gamma", ":paper/gamma", _GAMMA_T, "2020-07-01", "", "", _IC, ":dataset/imagenet"),
                (":paper/zeta/result/0a1b", "Top 1 Accuracy", "88.4", "88.4", "false", "", "Zeta-XL", ":paper/zeta", "Zeta Nets", "", "", "", _IC, ":dataset/imagenet"),
                (_LB_BETA5, "Top 5 Error", "3.1", "3.1", "false", "", "Beta-S", ":paper/beta", _BETA_T, "2020-03-01", "", "", _IC, ":dataset/imagenet"),
            ],
        ),
        Case("mini", {"task": "machine-translation", "dataset": "imagenet"}, []),
    ],
    "leaderboard-flags": [
        Case(
            "dumps",
            {},
            [(":leaderboard/image-classification/imagenet/result/2c3d", "no-paper", "", _IC, ":dataset/imagenet", "Top 1 Accuracy", "Anonymous", "12.0%")],
        ),
        Case(
            "dumps",
            {"task": "image-classification", "dataset": "imagenet", "kind": "no-paper"},
            [(":leaderboard/image-classification/imagenet/result/2c3d", "no-paper", "", _IC, ":dataset/imagenet", "Top 1 Accuracy", "Anonymous", "12.0%")],
        ),
        Case("dumps", {"kind": "duplicate-model"}, []),
        Case("dumps", {"task": "machine-translation"}, []),
    ],
    "leaderboard-code": [
        Case(
            "mini",
            {"task": "image-classification", "dataset": "imagenet"},
            [
                (":paper/alpha", _ZOO, "https://github.com/org/zoo", "true", "", "1", "pytorch", "ran_honours:2"),
                (":paper/beta", _BETA_R, "https://github.com/beta-lab/beta", "true", "", "2", "tf", "ran_draft_wrong:1"),
                (":paper/beta", _ZOO, "https://github.com/org/zoo/tree/main/beta", "false", "", "1", "tf", ""),
            ],
        ),
        Case("mini", {"task": "machine-translation", "dataset": "imagenet"}, []),
    ],
    "leaderboard-source": [
        Case(
            "dumps",
            {"task": "image-classification", "dataset": "imagenet"},
            [(":leaderboard/image-classification/imagenet", "", "Top 1 Accuracy", "", "", "", "", "")],
        ),
        Case("mini", {"task": "image-classification", "dataset": "imagenet"}, []),
    ],
    "leaderboard": [
        Case(
            "mini",
            {"task": "image-classification", "dataset": "imagenet", "metric": "top 1 accuracy"},
            [
                ("1", "Alpha-L", "76.5%", "2019-05-01", ":paper/alpha", _ALPHA_T),
                ("2", "Gamma", "10.1", "2020-07-01", ":paper/gamma", _GAMMA_T),
                ("3", "Beta-S", "9.5", "2020-03-01", ":paper/beta", _BETA_T),
                ("", "Delta-X", "-", "2020-07-01", ":paper/gamma", _GAMMA_T),
            ],
        ),
        Case(
            "mini",
            {
                "task": "task/image-classification",
                "dataset": "dataset/imagenet",
                "metric": "Top 1 Accuracy",
                "ascending": "yes",
            },
            [
                ("1", "Beta-S", "9.5", "2020-03-01", ":paper/beta", _BETA_T),
                ("2", "Gamma", "10.1", "2020-07-01", ":paper/gamma", _GAMMA_T),
                ("3", "Alpha-L", "76.5%", "2019-05-01", ":paper/alpha", _ALPHA_T),
                ("", "Delta-X", "-", "2020-07-01", ":paper/gamma", _GAMMA_T),
            ],
        ),
        Case(
            "dumps",
            {"task": "image-classification", "dataset": "imagenet", "metric": "TOP 1 ACCURACY"},
            [
                ("1", "Zeta-XL", "88.4", "", ":paper/zeta", "Zeta Nets"),
                ("2", "Alpha-L", "76.5%", "2019-05-01", ":paper/alpha", _ALPHA_T),
                ("3", "Anonymous", "12.0%", "", "", ""),
                ("4", "Gamma", "10.1", "2020-07-01", ":paper/gamma", _GAMMA_T),
                ("5", "Beta-S", "9.5", "2020-03-01", ":paper/beta", _BETA_T),
                ("", "Delta-X", "-", "2020-07-01", ":paper/gamma", _GAMMA_T),
            ],
        ),
        Case(
            "mini",
            {"task": "image-classification", "dataset": "imagenet", "metric": "Top 5 Error"},
            [("1", "Beta-S", "3.1", "2020-03-01", ":paper/beta", _BETA_T)],
        ),
        Case(
            "mini",
            {"task": "machine-translation", "dataset": "imagenet", "metric": "Top 5 Error"},
            [],
        ),
    ],
    "datasets-introduced": [
        Case(
            "mini",
            {},
            [
                (":dataset/gamma-corpus", "Gamma Corpus", ":paper/gamma", _GAMMA_T, "2020-07-01"),
                (":dataset/delta-corpus", "Delta Corpus", ":paper/delta", _DELTA_T, "2018-01-01"),
            ],
        ),
        Case(
            "mini",
            {"year": "2018"},
            [(":dataset/delta-corpus", "Delta Corpus", ":paper/delta", _DELTA_T, "2018-01-01")],
        ),
        Case(
            "dumps",
            {"year": "2009"},
            [
                (
                    ":dataset/imagenet",
                    "ImageNet",
                    ":paper/imagenet-a-large-scale",
                    "ImageNet: A large-scale hierarchical image database",
                    "2009-06-20",
                )
            ],
        ),
        Case("seeds", {}, []),
    ],
    "methods-per-year": [
        Case("mini", {}, [("2018", "1"), ("2019", "1"), ("2020", "1")]),
        # reinforce (stated 1999) and old-rule (cs/9901001); adam from arXiv 1412.6980;
        # dropout's placeholder 2000 with an undated paper gives no year.
        Case(
            "dumps",
            {},
            [("1999", "2"), ("2014", "1"), ("2018", "1"), ("2019", "1"), ("2020", "1")],
        ),
        Case("seeds", {}, []),
    ],
    "tasks-per-area": [
        Case(
            "dumps",
            {},
            [
                (":area/computer-vision", "Computer Vision", "4"),
                (":area/methodology", "Methodology", "3"),
                (":area/natural-language-processing", "Natural Language Processing", "1"),
            ],
        ),
        Case("dumps", {"area": "Methodology"}, [(":area/methodology", "Methodology", "3")]),
        Case("mini", {}, []),
    ],
    "tasks-in-area": [
        Case(
            "dumps",
            {"area": "Computer Vision"},
            [
                # alpha and beta name it; gamma and a dump's paper report results on it
                (_CV, ":task/image-classification", "Image Classification", "4"),
                (_CV, _FEW_IC, "Few-Shot Image Classification", "0"),
                (_CV, ":task/fine-grained-image-classification", _FINE_T, "0"),
                (_CV, _ONE_IC, "One-Shot Image Classification", "0"),
            ],
        ),
        Case(
            "dumps",
            {"area": "area/natural-language-processing"},
            [(":area/natural-language-processing", _MT_KEY, "Machine Translation", "3")],
        ),
        Case("dumps", {"area": "Robots"}, []),
    ],
    "task-tree": [
        Case(
            "dumps",
            {"task": "image-classification"},
            [
                (_IC, _FEW_IC, "Few-Shot Image Classification", "1", "Image Classification"),
                (
                    _IC,
                    ":task/fine-grained-image-classification",
                    _FINE_T,
                    "1",
                    "Image Classification",
                ),
                (
                    _IC,
                    _ONE_IC,
                    "One-Shot Image Classification",
                    "2",
                    "Few-Shot Image Classification",
                ),
            ],
        ),
        Case(
            "dumps",
            {"task": "few-shot-learning"},
            [
                (
                    ":task/few-shot-learning",
                    _FEW_IC,
                    "Few-Shot Image Classification",
                    "1",
                    "Few-Shot Learning",
                ),
                (
                    ":task/few-shot-learning",
                    _ONE_IC,
                    "One-Shot Image Classification",
                    "2",
                    "Few-Shot Image Classification",
                ),
            ],
        ),
        Case("dumps", {"task": "one-shot-image-classification"}, []),
    ],
    "provenance": [
        Case(
            "mini",
            {"entity": "paper/gamma"},
            [(":paper/gamma", ":graph/record/paper/gamma", "object | subject", "", *_REC)],
        ),
        Case(
            "mini",
            {"entity": f"{BASE}method/adam"},
            [
                (":method/adam", ":graph/entities", "subject", "", "", "", "", ""),
                (":method/adam", ":graph/record/paper/alpha", "object", "", *_REC),
                (":method/adam", ":graph/record/paper/beta", "object", "", *_REC),
                (":method/adam", ":graph/record/paper/gamma", "object", "", *_REC),
            ],
        ),
        Case(
            "dumps",
            {"entity": "method/adam"},
            [
                (":method/adam", ":graph/entities", "subject", "", "", "", "", ""),
                (
                    ":method/adam",
                    ":graph/pwc-methods/adam",
                    "object | subject",
                    ":dump/methods/2022-05-20",
                    "methods.json.gz",
                    "Papers with Code",
                    "2022-05-20",
                    INGESTED_AT,
                ),
                (":method/adam", ":graph/record/paper/alpha", "object", "", *_REC),
                (":method/adam", ":graph/record/paper/beta", "object", "", *_REC),
                (":method/adam", ":graph/record/paper/gamma", "object", "", *_REC),
            ],
        ),
        Case("mini", {"entity": "method/not-there"}, []),
    ],
    "paper-card": [
        Case(
            "mini",
            {"paper": "delta"},
            triples=frozenset(
                {
                    f"<{_DELTA}> <{_NS['type']}> <{_NS['kg']}Paper> .",
                    f'<{_DELTA}> <{_NS["dct"]}title> "{_DELTA_T}" .',
                    f"<{_DELTA}> <{_NS['dct']}issued> "
                    '"2018-01-01"^^<http://www.w3.org/2001/XMLSchema#date> .',
                    f"<{_DELTA}> <{_NS['dct']}creator> <{_DIJKSTRA}> .",
                    f'<{_DIJKSTRA}> <http://xmlns.com/foaf/0.1/name> "Edsger Dijkstra" .',
                    f"<{_DELTA}> <{_NS['kg']}hasTask> <{_MT}> .",
                    # delta introduces the Delta Rule, so it uses it (docs/ontology.md)
                    f"<{_DELTA}> <{_NS['kg']}usesMethod> <{BASE}method/delta-rule> .",
                    f'<{BASE}method/delta-rule> <http://www.w3.org/2000/01/rdf-schema#label> "Delta Rule" .',
                    f'<{_MT}> <http://www.w3.org/2000/01/rdf-schema#label> "Machine Translation" .',
                }
            ),
        ),
        Case("mini", {"paper": "not-a-paper"}, triples=frozenset()),
    ],
}


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def mini_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_mini(tmp_path_factory.mktemp("mini"))


@pytest.fixture(scope="session")
def graphs(mini_path: Path, seed_paths: list[Path]) -> dict[str, GraphStore]:
    """The fixture graphs by name, each in its own memory store (read, never written)."""
    return {
        "mini": build(GraphStore.memory(), [str(mini_path)]),
        "dumps": build_dumps(GraphStore.memory(), [str(mini_path)]),
        "seeds": build(GraphStore.memory(), [str(p) for p in seed_paths]),
    }


@pytest.fixture(scope="session")
def seed_disk_store(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> Path:
    path = tmp_path_factory.mktemp("seed-disk") / "store"
    with GraphStore.open(path) as store:
        build(store, [str(p) for p in seed_paths])
    return path


# --- helpers -------------------------------------------------------------------------------


def _cell(term: Term | None) -> str:
    text = compact(term, {"": BASE})
    return " | ".join(sorted(text.split(" | "))) if " | " in text else text


def normalise(result: QueryResult) -> list[tuple[str, ...]] | frozenset[str]:
    """Rows as compact strings, or a CONSTRUCT result as its set of N-Triples lines."""
    if isinstance(result, GraphResult):
        return frozenset(line for line in result.ntriples.splitlines() if line.strip())
    assert isinstance(result, SelectResult)
    return [tuple(_cell(t) for t in row) for row in result.rows]


def expected(case: Case) -> list[tuple[str, ...]] | frozenset[str]:
    if case.triples is not None:
        return case.triples
    return [tuple(" | ".join(sorted(c.split(" | "))) for c in row) for row in case.rows]


def matches(
    got: list[tuple[str, ...]] | frozenset[str], want: list[tuple[str, ...]] | frozenset[str]
) -> bool:
    """`got == want`, where a "*" cell of `want` stands for any value (a search score)."""
    if isinstance(got, frozenset) or isinstance(want, frozenset) or len(got) != len(want):
        return got == want
    return all(
        len(g) == len(w) and all(b in ("*", a) for a, b in zip(g, w, strict=True))
        for g, w in zip(got, want, strict=True)
    )


def _cases() -> Iterator[tuple[str, Case]]:
    for name, cases in CASES.items():
        for case in cases:
            yield name, case


# --- the queries, run on the fixture graphs ------------------------------------------------


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_query_file_answers_exactly(path: Path, graphs: dict[str, GraphStore]) -> None:
    """Each real query file, its header parsed from the file, gives the expected rows, both
    with a VALUES block (the default, as sent to endpoints) and with pyoxigraph
    substitutions."""
    query = load_query(path)
    assert query.name in CASES, f"{path.name} has no expected answers in CASES"
    cases = CASES[query.name]
    assert any(c.rows or c.triples for c in cases), f"{query.name}: no case with rows"
    for case in cases:
        store = graphs[case.graph]
        bindings = bind(query, case.params, BASE)
        local = normalise(run_named(store, query, bindings))
        assert matches(local, expected(case)), f"{query.name} {case.params}: {local}"
        substituted = run_named(store, query, bindings, binding="substitutions")
        assert normalise(substituted) == local, f"{query.name} {case.params} (substitutions)"


def test_cases_cover_exactly_the_query_files() -> None:
    assert sorted(CASES) == sorted(p.stem for p in QUERY_FILES)
    assert len(QUERY_FILES) >= 15


def test_substitutions_are_used_where_pyoxigraph_allows() -> None:
    """With binding="substitutions", projected parameters go through pyoxigraph and the
    query text is left as written; the rest still need a VALUES block."""
    query = find_query("papers-by-author")
    bindings = bind(query, {"author": "Grace Hopper"}, BASE)
    prepared = prepare_local(query.sparql, bindings, "substitutions")
    assert prepared.sparql == query.sparql
    assert prepared.substitutions == {"author": Term("uri", f"{BASE}author/grace-hopper")}
    shared = find_query("shared-methods")
    prepared = prepare_local(shared.sparql, bind(shared, {"paper": "alpha"}, BASE), "substitutions")
    assert set(prepared.substitutions) == {"paper"}
    assert "VALUES ?min_shared {" in prepared.sparql
    by_default = prepare_local(query.sparql, bindings)
    assert by_default.substitutions == {}
    assert by_default.sparql == with_values(query.sparql, bindings)


# --- one meaning per relation ---------------------------------------------------------------

#: The predicates that name a relation only in part: a query reaches them through the whole
#: relation's path (docs/ontology.md, "What a paper works on, uses and is evaluated on").
_PARTIAL = {"kg:hasTask": PAPER_TO.task, "kg:usesMethod": PAPER_TO.method}


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_queries_reach_a_relation_through_its_one_path(path: Path) -> None:
    """A query that asks which papers work on a task, or use a method, asks it the way
    kg.rdf.vocab.PAPER_TO defines it (so tasks-in-area counts papers with results)."""
    body = load_query(path).sparql
    where = body[body.upper().index("WHERE") :]  # a CONSTRUCT template may state them
    for predicate, full in _PARTIAL.items():
        canonical = compact_path(full)
        rest = where.replace(canonical, "")
        assert predicate not in rest, f"{path.name} uses {predicate} outside {canonical}"


# --- headers -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_header_is_complete(path: Path) -> None:
    query = load_query(path)
    assert query.name == path.stem
    assert query.summary and query.description and query.example
    assert len(query.summary) <= 120
    for param in query.params:
        assert param.description and param.example
    words = shlex.split(query.example)
    assert words[:3] == ["kg", "query", query.name]
    values = parse_assignments(w for i, w in enumerate(words) if i and words[i - 1] == "--param")
    bind(query, values, BASE)  # the example's parameters are valid


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_query_is_portable_as_written_and_as_bound(path: Path) -> None:
    """Each query file, and the text sent to an endpoint for each of its parameter sets, is
    plain SPARQL 1.1 that every engine takes (tests/test_engines.py runs them on Virtuoso,
    Jena and the oxigraph server)."""
    query = load_query(path)
    assert portability_problems(query.sparql) == []
    for case in CASES[query.name]:
        bound = with_values(query.sparql, bind(query, case.params, BASE))
        assert portability_problems(bound) == [], case.params


@pytest.mark.parametrize(
    ("sparql", "problem"),
    [
        ("SELECT ?x WHERE { VALUES (?x ?y) { (1 2) } OPTIONAL { ?x ?p ?y } }", "several variables"),
        ('PREFIX bif: <bif:> SELECT ?s { ?s ?p ?o FILTER(bif:contains(?o, "a")) }', "<bif:contains>"),
        (
            "PREFIX afn: <http://jena.apache.org/ARQ/function#> "
            "SELECT ?s { ?s ?p ?o BIND(afn:localname(?s) AS ?n) }",
            "engine-specific function",
        ),
        ("SELECT ?s { ?s ?p ?o LATERAL { ?s ?q ?r } }", "not SPARQL 1.1"),
        ("SELECT ?s { LET (?s := 1) }", "not SPARQL 1.1"),
        ("DEFINE input:inference 'x' SELECT ?s { ?s ?p ?o }", "not SPARQL 1.1"),
    ],
)
def test_non_portable_syntax_is_named(sparql: str, problem: str) -> None:
    problems = portability_problems(sparql)
    assert len(problems) == 1 and problem in problems[0]
    assert portability_problems(sparql.replace("VALUES (?x ?y) { (1 2) }", "VALUES ?x { 1 } VALUES ?y { 2 }")) == (
        [] if "VALUES" in sparql else problems
    )
    casts = "SELECT ?s { ?s ?p ?o FILTER(<http://www.w3.org/2001/XMLSchema#integer>(?o) > 1) }"
    assert portability_problems(casts) == []


#: Queries whose header example cannot answer on the README store, and why.
NO_README_DATA = {
    "datasets-introduced": "examples/ holds no datasets dump, so no paper introduces a dataset",
}


def _example_rows(output: str, words: list[str]) -> int:
    if "--format" in words:  # CONSTRUCT examples name their own format (Turtle)
        return sum(1 for line in output.splitlines() if line.strip().endswith((".", ";")))
    return len(json.loads(output)["results"]["bindings"])


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_header_example_answers_on_the_readme_store(
    path: Path, readme_store: Path, graphs: dict[str, GraphStore], cli: CliRunner
) -> None:
    """Every header example, run as written on the README store (`kg ingest examples/`),
    gives at least one row; the rows themselves are checked against the raw JSON in
    tests/test_queries_readme.py."""
    query = load_query(path)
    words = shlex.split(query.example)
    if query.name in NO_README_DATA:  # it answers where the data is: the dumps fixture
        params = parse_assignments(w for i, w in enumerate(words) if i and words[i - 1] == "--param")
        assert normalise(run_named(graphs["dumps"], query, bind(query, params, BASE)))
        return
    args = [*words[1:]] if "--format" in words else [*words[1:], "--format", "json"]
    result = run(cli, "--store", str(readme_store), *args)
    assert result.exit_code == 0, result.output
    assert _example_rows(result.stdout, words) >= 1, f"{query.example}: no rows"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.rq"
    path.write_text(text, encoding="utf-8")
    return path


GOOD_HEADER = """#+ name: bad
#+ summary: s
#+ description: d
#+ params:
#+   - name: n
#+     type: integer
#+     description: a number
#+     example: 3
#+ example: kg query bad
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SELECT * WHERE { ?s ?p ?o }", "no header"),
        ("#+ name: [unclosed\nSELECT * {}", "not valid YAML"),
        ("#+ name: x\n#+ summary: s\nSELECT * {}", "lacks description, example, params"),
        (GOOD_HEADER.replace("#+ example:", "#+ exmaple:") + "SELECT ?n {}", "lacks example"),
        (GOOD_HEADER + "#+ extra: 1\nSELECT ?n {}", "unknown key(s) extra"),
        (GOOD_HEADER + "SELECT ?s WHERE { ?s ?p ?o }", "binds ?n, which the query never uses"),
        (GOOD_HEADER.replace("type: integer", "type: number") + "SELECT ?n {}", "type 'number'"),
        (GOOD_HEADER.replace("example: 3", "example: three") + "SELECT ?n {}", "example is inv"),
        (GOOD_HEADER.replace("    example: 3", "    default: x\n#+     example: 3") + "?n", "def"),
        (GOOD_HEADER.replace("    type:", "    class: paper\n#+     type:") + "?n", "'class'"),
        (GOOD_HEADER.replace("    type:", "    kind: x\n#+     type:") + "?n", "unknown key"),
        (GOOD_HEADER.replace("name: n", "name: n-1") + "?n", "SPARQL variable name"),
        (GOOD_HEADER, "no SPARQL"),
        (GOOD_HEADER.replace("name: bad", "name: Bad Name") + "?n", "lowercase words"),
    ],
)
def test_bad_headers_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_query(path)
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_header_parser_reads_the_documented_format() -> None:
    query = parse_query(
        GOOD_HEADER.replace("#+ description: d", "#+ description: |\n#+   two\n#+   lines")
        + "SELECT ?n WHERE {}",
        Path("x.rq"),
    )
    assert query.description == "two\nlines"
    assert query.params[0].example == "3" and query.params[0].type == "integer"
    assert query.sparql == "SELECT ?n WHERE {}"


def test_unknown_query_name_suggests(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="did you mean shared-methods"):
        find_query("shared-method")
    with pytest.raises(NotFoundError, match="no query directory"):
        load_queries(tmp_path / "none")


# --- safe binding --------------------------------------------------------------------------


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize(
    ("name", "param"),
    [
        ("papers-by-title", "text"),
        ("official-code-by-framework", "framework"),
        ("shared-methods", "paper"),
        ("papers-by-author", "author"),
        ("provenance", "entity"),
        ("leaderboard", "metric"),
    ],
)
def test_hostile_values_change_nothing(
    graphs: dict[str, GraphStore], name: str, param: str, value: str
) -> None:
    """Values that would break out of the query if pasted are only ever values: no rows,
    no error from the engine, and the store is untouched."""
    store = graphs["mini"]
    before = len(store)
    query = find_query(name)
    values = {"task": "image-classification", "dataset": "imagenet", "metric": "Top 1 Accuracy"}
    values = {k: v for k, v in values.items() if query.param(k)}
    values[param] = value
    try:
        bindings = bind(query, values, BASE)
    except ParameterError:
        # An absolute IRI with forbidden characters is refused outright.
        assert "://" in value or query.param(param).cls is None  # type: ignore[union-attr]
        return
    assert normalise(run_named(store, query, bindings)) == []
    assert normalise(run_named(store, query, bindings, binding="substitutions")) == []
    assert len(store) == before


def test_the_hostile_values_would_match_if_pasted(graphs: dict[str, GraphStore]) -> None:
    """The control for the test above: pasted as text, the same value returns every paper."""
    # the substring test papers-by-title made before it used the search index
    substring = (
        "PREFIX dcterms: <http://purl.org/dc/terms/> SELECT ?paper WHERE { "
        "?paper dcterms:title ?t . FILTER (CONTAINS(LCASE(?t), LCASE(?text))) }"
    )
    pasted = substring.replace("LCASE(?text)", 'LCASE("' + HOSTILE[2] + '")')
    rows = normalise(graphs["mini"].query(pasted))
    assert len(rows) == 5
    bound = graphs["mini"].query(with_values(substring, {"text": Term("literal", HOSTILE[2])}))
    assert normalise(bound) == []


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_iri_values_are_refused_or_encoded(value: str) -> None:
    query = find_query("provenance")
    with pytest.raises(ParameterError, match=r"not a valid IRI|neither an absolute IRI"):
        bind(query, {"entity": "http://example.org/" + value}, BASE)
    term = bind(find_query("shared-methods"), {"paper": value}, BASE)["paper"]
    assert term.value.startswith(f"{BASE}paper/")
    assert sparql_term(term) == f"<{term.value}>"  # valid: no forbidden characters left


def _round_trip(store: GraphStore, term: Term) -> Term | None:
    result = store.query(with_values("SELECT ?x WHERE { }", {"x": term}))
    assert isinstance(result, SelectResult) and len(result.rows) == 1
    return result.rows[0][0]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_string_survives_the_values_block(text: str) -> None:
    """Whatever the text, the VALUES block carries exactly that literal and nothing else."""
    store = GraphStore.memory()
    back = _round_trip(store, Term("literal", text))
    assert back is not None and back.value == text and back.kind == "literal"


@pytest.mark.parametrize(
    "term",
    [
        Term("literal", "3", "http://www.w3.org/2001/XMLSchema#integer"),
        Term("literal", "chat", None, "fr-ca"),
        Term("literal", '\\u0022 }"', "http://www.w3.org/2001/XMLSchema#string"),
        Term("uri", "https://example.org/a%20b#frag"),
    ],
)
def test_typed_terms_survive_the_values_block(term: Term) -> None:
    back = _round_trip(GraphStore.memory(), term)
    assert back is not None and back.n3() == term.n3()


def test_codepoint_escapes_cannot_close_a_string() -> None:
    """A backslash-u after a backslash is itself escaped, so servers that process \\u
    escapes before parsing (as SPARQL 1.1 section 19.2 says) still see one string."""
    text = sparql_term(Term("literal", "\\u0022 } ; DROP ALL ; #"))
    assert text == '"\\\\\\u0075' + '0022 } ; DROP ALL ; #"'
    assert not re.search(r"(?<!\\)\\u0022", text.replace("\\\\", ""))


@pytest.mark.parametrize(
    ("sparql", "head"),
    [
        ("SELECT * WHERE { ?s ?p ?o }", "SELECT * WHERE {"),
        ("SELECT * { ?s ?p ?o }", "SELECT * {"),
        ("# WHERE { \nSELECT ?where { ?where ?p ?o }", "# WHERE { \nSELECT ?where {"),
        ('SELECT ("WHERE {" AS ?x) WHERE { }', 'SELECT ("WHERE {" AS ?x) WHERE {'),
        (
            "PREFIX where: <http://x/where> SELECT * WHERE { }",
            "PREFIX where: <http://x/where> SELECT * WHERE {",
        ),
        ("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "CONSTRUCT { ?s ?p ?o } WHERE {"),
        ("ASK { ?s ?p 'WHERE {' }", "ASK {"),
        ("SELECT * WHERE { { SELECT * WHERE { ?s ?p ?o } } }", "SELECT * WHERE {"),
        ("SELECT ?x WHERE { ?x ?p ?o FILTER(?x < 3 && ?o > 2) }", "SELECT ?x WHERE {"),
        ("SELECT ?x where{?x <http://x/p> 'a'}", "SELECT ?x where{"),
        ('SELECT ?x WHERE { ?x ?p """{ WHERE\n}""" }', "SELECT ?x WHERE {"),
    ],
)
def test_values_go_into_the_where_group(sparql: str, head: str) -> None:
    out = with_values(sparql, {"v": Term("literal", "v")})
    assert out.startswith(head + '\n  VALUES ?v { "v" }\n')
    assert out.replace('\n  VALUES ?v { "v" }\n', "", 1) == sparql
    GraphStore.memory().query(out)  # still valid SPARQL


def test_values_reach_every_group_that_uses_the_variable() -> None:
    """Nested groups that use a parameter get their own block (planners do not push one
    VALUES block into a UNION or a subquery); data blocks, templates, OPTIONAL and EXISTS
    groups are left alone."""
    sparql = (
        "CONSTRUCT { ?r <http://x/n> ?min } WHERE { "
        "{ SELECT ?r (COUNT(*) AS ?n) WHERE { ?p <http://x/has> ?r } "
        "GROUP BY ?r ?min HAVING (COUNT(*) >= ?min) } "
        "OPTIONAL { ?r <http://x/l> ?l FILTER (?l != ?min) } "
        "{ ?a ?b ?c } UNION { ?r ?b ?min } VALUES ?z { 1 2 } "
        "MINUS { ?r <http://x/q> ?min } FILTER NOT EXISTS { ?r <http://x/w> ?other } }"
    )
    block = '\n  VALUES ?min { "2"^^<http://www.w3.org/2001/XMLSchema#integer> }\n'
    out = with_values(sparql, {"min": Term("literal", "2", XSD_INTEGER)})
    # the WHERE group, the subquery (whose HAVING uses it), one branch and MINUS; not the
    # OPTIONAL, which sees the value row by row (a block there is evaluated apart)
    assert out.count(block) == 4
    assert "OPTIONAL { ?r <http://x/l>" in out
    assert out.replace(block, "") == sparql
    assert out.startswith("CONSTRUCT { ?r <http://x/n> ?min } WHERE {" + block)
    assert "{ ?a ?b ?c }" in out and "VALUES ?z { 1 2 }" in out
    GraphStore.memory().query(out)


def test_the_short_construct_form_cannot_take_parameters() -> None:
    with pytest.raises(ParameterError, match="CONSTRUCT WHERE"):
        with_values("CONSTRUCT WHERE { ?s ?p ?o }", {"v": Term("literal", "v")})


# --- parameter errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "values", "message"),
    [
        ("shared-methods", {}, "needs 'paper'="),
        ("shared-methods", {"paper": "alpha", "min_shared": "three"}, "takes an integer"),
        ("shared-methods", {"paper": "alpha", "min_shared": "2.5"}, "takes an integer"),
        ("shared-methods", {"paper": "alpha", "papr": "x"}, "no parameter 'papr'"),
        ("shared-methods", {"paper": ""}, "is empty"),
        ("provenance", {"entity": "adam"}, "neither an absolute IRI nor a local key"),
        ("provenance", {"entity": "http://example.org/a b"}, "contains ' '"),
        (
            "leaderboard",
            {"task": "t", "dataset": "d", "metric": "m", "ascending": "maybe"},
            "takes true or false",
        ),
        ("datasets-introduced", {"year": "20x0"}, "takes an integer"),
        ("repository-code", {"repository": "not a repo"}, "is not a repository"),
    ],
)
def test_wrong_or_missing_parameters_are_clear(
    name: str, values: dict[str, str], message: str
) -> None:
    with pytest.raises(ParameterError, match=re.escape(message)) as info:
        bind(find_query(name), values, BASE)
    if info.value.parameter is not None:  # the CLI and the server each word it their way
        assert info.value.parameter.role == "query"
        spelt = info.value.parameter.name
        assert f"--param {spelt}" in info.value.worded(as_flag)
        assert "--" not in info.value.worded(as_query_parameter)


def test_parameter_assignments_are_checked() -> None:
    assert parse_assignments(["a=b=c", "x="]) == {"a": "b=c", "x": ""}
    with pytest.raises(ParameterError, match="name=value"):
        parse_assignments(["novalue"])
    with pytest.raises(ParameterError, match="given twice"):
        parse_assignments(["a=1", "a=2"])


def test_typed_values_are_canonical() -> None:
    iris = Iris(BASE)

    def term(kind: str, value: str) -> Term:
        return to_term(Parameter("p", kind, "d", "e"), value, iris)  # type: ignore[arg-type]

    assert term("integer", " +007 ").value == "7"
    assert term("decimal", "1e2").value == "100.0"
    assert term("decimal", "0.50").value == "0.50"
    assert term("date", "2020-02-29").value == "2020-02-29"
    assert term("boolean", "YES").value == "true"
    with pytest.raises(ParameterError, match="YYYY-MM-DD"):
        term("date", "2021-02-29")
    with pytest.raises(ParameterError, match="decimal"):
        term("decimal", "nan")


# --- the CLI -------------------------------------------------------------------------------


def test_cli_lists_every_query(cli: CliRunner) -> None:
    result = run(cli, "query", "--list", "--format", "json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert [q["name"] for q in listed] == sorted(p.stem for p in QUERY_FILES)
    table = run(cli, "query", "--list")
    assert table.exit_code == 0 and "shared-methods" in table.output


def test_cli_runs_a_query_in_each_format(cli: CliRunner, seed_disk_store: Path) -> None:
    store = ["--store", str(seed_disk_store)]
    args = ["query", "papers-by-author", "--param", "author=Goro Kobayashi"]
    csv_out = run(cli, *store, *args, "--format", "csv")
    assert csv_out.exit_code == 0, csv_out.output
    assert csv_out.output.splitlines()[0] == "author,paper,title,date,position"
    assert "2020-04-21,1" in csv_out.output
    tsv_out = run(cli, *store, *args, "-f", "tsv")
    assert '"2020-04-21"^^<http://www.w3.org/2001/XMLSchema#date>' in tsv_out.output
    table = run(cli, *store, *args)
    assert "1 row" in table.output
    card = ["query", "paper-card", "-p", "paper=self-attention-attribution-interpreting"]
    turtle = run(cli, *store, *card, "--format", "turtle")
    assert turtle.exit_code == 0 and "kg:hasRepository" in turtle.output
    jsonld = run(cli, *store, *card, "--format", "jsonld")
    assert jsonld.exit_code == 0 and "Self-Attention Attribution" in jsonld.output
    wrong = run(cli, *store, *card, "--format", "csv")
    assert wrong.exit_code == 2 and "for SELECT/ASK" in wrong.output
    limited = run(cli, *store, "query", "task-methods", "-p", "task=attribute", "--limit", "2")
    assert "2 rows" in limited.output


def test_cli_errors_are_one_line(cli: CliRunner, seed_disk_store: Path) -> None:
    store = ["--store", str(seed_disk_store)]
    missing = run(cli, *store, "query", "shared-methods")
    assert missing.exit_code == 1
    assert "needs --param paper=" in missing.output and "Traceback" not in missing.output
    typed = run(cli, *store, "query", "shared-methods", "-p", "paper=x", "-p", "min_shared=lots")
    assert typed.exit_code == 1 and "takes an integer" in typed.output
    unknown = run(cli, *store, "query", "no-such-query")
    assert unknown.exit_code == 1 and "no query named 'no-such-query'" in unknown.output
    nothing = run(cli, *store, "query")
    assert nothing.exit_code == 2 and "--list" in nothing.output


def test_cli_describe_and_show_sparql(cli: CliRunner) -> None:
    described = run(cli, "query", "leaderboard", "--describe")
    assert described.exit_code == 0 and "ascending" in described.output
    shown = run(cli, "query", "papers-by-title", "-p", 'text=a"b', "--show-sparql")
    assert shown.exit_code == 0
    assert 'VALUES ?text { "a\\"b" }' in shown.output


def test_cli_reads_another_query_directory(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "mine.rq").write_text(
        "#+ name: mine\n#+ summary: s\n#+ description: d\n#+ params: []\n"
        "#+ example: kg query mine\nASK { }\n",
        encoding="utf-8",
    )
    result = run(cli, "--memory", "query", "mine", "--queries", str(tmp_path))
    assert result.exit_code == 0 and result.output.strip() == "yes"


# --- the README ----------------------------------------------------------------------------


def test_readme_query_list_matches_the_headers(cli: CliRunner) -> None:
    generated = run(cli, "query", "--list", "--markdown").output
    assert generated == markdown_list(load_queries().values())
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- queries:start -->", "<!-- queries:end -->"
    assert start in text and end in text, "README.md lost its generated query list"
    section = text.split(start, 1)[1].split(end, 1)[0]
    assert section.strip() == generated.strip(), "regenerate with `kg query --list --markdown`"
