"""kg similar, shared, project and communities: the real CLI on a real on-disk seed store."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from typer.testing import CliRunner

from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from tests.conftest import BASE, run

A = "attention-module-is-not-only-a-weight"
B = "self-attention-attribution-interpreting"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> str:
    path = tmp_path_factory.mktemp("graph-cli") / "store"
    with GraphStore.open(path) as store:
        assert ingest(store, [str(p) for p in seed_paths], base_iri=BASE).added == 2
    return str(path)


@pytest.fixture
def exports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "exports"
    monkeypatch.setenv("KG_EXPORTS_DIR", str(folder))
    return folder


def test_similar_text(cli: CliRunner, store_path: str) -> None:
    result = run(cli, "--store", store_path, "similar", A, "--by", "methods", "--metric", "jaccard")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == f"Attention is Not Only a Weight: Analyzing Transformers with Vector Norms <{BASE}paper/{A}>"
    )
    assert lines[1] == "19 items (methods); metric jaccard; 1 similar paper"
    assert lines[2].startswith("  1. 0.9500  Self-Attention Attribution: Interpreting")
    assert lines[3].startswith("       19 shared: Absolute Position Encodings (method, 2 papers),")
    assert lines[3].endswith("… (+14)")


def test_similar_json_defaults(cli: CliRunner, store_path: str) -> None:
    result = run(cli, "--store", store_path, "similar", "2004.11207v2", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["paper"] == f"{BASE}paper/{B}"
    assert data["metric"] == "idf" and data["by"] == [
        "methods",
        "repositories",
        "tasks",
        "authors",
        "datasets",
    ]
    [match] = data["results"]
    assert match["paper"] == f"{BASE}paper/{A}" and match["shared_count"] == 19
    assert len(match["shared"]) == 19  # JSON lists every shared item
    assert match["shared"][0] == {
        "iri": f"{BASE}method/absolute-position-encodings",
        "label": "Absolute Position Encodings",
        "relation": "methods",
        "papers": 2,
        "weight": round(0.18232155679395465**2, 6),
    }


def test_similar_errors(cli: CliRunner, store_path: str) -> None:
    unknown = run(cli, "--store", store_path, "similar", "attention-module-is-not-only")
    assert unknown.exit_code == 1
    (line,) = unknown.stderr.strip().splitlines()
    assert line.startswith(
        f"error: no paper named 'attention-module-is-not-only'; did you mean: {A} ("
    ), line
    bad_metric = run(cli, "--store", store_path, "similar", A, "--metric", "dice")
    assert bad_metric.exit_code == 2
    assert (
        "unknown metric 'dice'; use one of: idf, idf-cosine, jaccard, overlap, cosine, "
        "adamic-adar"
        in bad_metric.stderr
    )
    bad_by = run(cli, "--store", store_path, "similar", A, "--by", "code")
    assert bad_by.exit_code == 2 and "unknown relation 'code'" in bad_by.stderr
    assert run(cli, "--store", store_path, "similar", A, "--top", "0").exit_code == 2
    missing = run(cli, "--store", store_path + "-missing", "similar", A)
    assert missing.exit_code == 1 and "no kg store at" in missing.stderr


def test_similar_without_items(cli: CliRunner, store_path: str) -> None:
    result = run(cli, "--store", store_path, "similar", A, "--by", "datasets")
    assert result.exit_code == 0
    assert "it has no datasets in the store, so nothing to compare it by" in result.stdout


def test_shared(cli: CliRunner, store_path: str) -> None:
    result = run(cli, "--store", store_path, "shared", A, f"{BASE}paper/{B}")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2] == "methods: 19 shared of 19 and 20 (Jaccard 0.9500)"
    assert lines[3] == "  Absolute Position Encodings (method, 2 papers)"
    assert "authors: 0 shared of 4 and 4 (Jaccard 0.0000)" in lines
    as_json = json.loads(
        run(cli, "--store", store_path, "shared", A, B, "--by", "tasks", "--json").stdout
    )
    assert as_json["relations"] == [
        {"relation": "tasks", "a": 3, "b": 1, "shared": 0, "jaccard": 0.0, "items": []}
    ]


def test_project_default_file(cli: CliRunner, store_path: str, exports: Path) -> None:
    # the default links papers as kg communities does: by tasks and datasets (the seeds
    # share none); --by methods finds their 19 shared methods
    default = run(cli, "--store", store_path, "project", "paper-paper")
    assert default.exit_code == 0, default.output
    path = exports / "paper-paper-by-tasks-datasets.graphml"
    assert f"wrote {path} (graphml): paper-paper, 2 nodes, 0 edges" in default.stderr
    result = run(cli, "--store", store_path, "project", "paper-paper", "--by", "methods")
    assert result.exit_code == 0, result.output
    path = exports / "paper-paper-by-methods.graphml"
    assert f"wrote {path} (graphml): paper-paper, 2 nodes, 1 edges" in result.stderr
    graph = nx.read_graphml(path)
    assert [d["weight"] for *_, d in graph.edges(data=True)] == [19]


@pytest.mark.parametrize("name", ["co.gexf", "co.json", "co.graphml"])
def test_project_formats(cli: CliRunner, store_path: str, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    result = run(
        cli, "--store", store_path, "project", "coauthorship", "--out", str(path), "--json"
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["nodes"] == 8 and summary["edges"] == 12 and summary["kind"] == "author-author"
    if name.endswith(".gexf"):
        graph = nx.read_gexf(path)
    elif name.endswith(".json"):
        graph = nx.node_link_graph(json.loads(path.read_text(encoding="utf-8")), edges="edges")
    else:
        graph = nx.read_graphml(path)
    assert graph.nodes[f"{BASE}author/goro-kobayashi"]["label"] == "Goro Kobayashi"


def test_project_errors(cli: CliRunner, store_path: str, tmp_path: Path) -> None:
    wrong = run(
        cli, "--store", store_path, "project", "paper-paper", "--out", str(tmp_path / "g.csv")
    )
    assert wrong.exit_code == 2 and "end the file name with .graphml, .gexf, .json" in wrong.stderr
    folder = run(cli, "--store", store_path, "project", "paper-paper", "--out", str(tmp_path))
    assert folder.exit_code == 2 and "is a directory" in folder.stderr
    kind = run(cli, "--store", store_path, "project", "papers")
    assert kind.exit_code == 2 and "unknown graph kind 'papers'" in kind.stderr


def test_communities(cli: CliRunner, store_path: str) -> None:
    result = run(cli, "--store", store_path, "communities", "coauthorship", "--top", "1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "author-author: 8 nodes, 12 edges, 2 connected component(s), 2 communities "
        "(0 of one member; Louvain, seed 0)"
    )
    assert lines[1] == "  1. 4 members, 1 paper: ReLU · Attribute · Absolute Position Encodings"
    assert len(lines) == 3
    data = json.loads(
        run(cli, "--store", store_path, "communities", "paper-paper", "--by", "methods", "--json")
        .stdout
    )
    assert data["communities"] == 1 and data["top"][0]["size"] == 2
    assert data["single_member_communities"] == 0
    # By default papers are linked by tasks and datasets, which the two seeds do not share.
    data = json.loads(
        run(cli, "--store", store_path, "communities", "paper-paper", "--json").stdout
    )
    assert data["communities"] == data["single_member_communities"] == 2
    bipartite = run(cli, "--store", store_path, "communities", "paper-method")
    assert bipartite.exit_code == 2 and "paper-method is bipartite" in bipartite.stderr
    backend = run(cli, "--store", store_path, "communities", "paper-paper", "--backend", "nope")
    assert backend.exit_code == 2 and "backend 'nope' is not installed" in backend.stderr


def test_help_lists_the_graph_commands(cli: CliRunner) -> None:
    result = run(cli, "--help")
    for name in ("similar", "shared", "project", "communities"):
        assert name in result.stdout


def test_several_relations_comma_separated(cli: CliRunner, store_path: str, tmp_path: Path) -> None:
    result = run(cli, "--store", store_path, "similar", A, "--by", "methods,authors", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["by"] == ["methods", "authors"] and data["items"] == 19 + 4
    path = tmp_path / "p.graphml"
    projected = run(
        cli,
        "--store",
        store_path,
        "project",
        "paper-paper",
        "--by",
        "tasks,methods",
        "-o",
        str(path),
    )
    assert projected.exit_code == 0, projected.output
    [(_, _, edge)] = nx.read_graphml(path).edges(data=True)
    assert edge == {"weight": 19, "methods": 19, "tasks": 0}
    communities = run(
        cli, "--store", store_path, "communities", "paper-paper", "--by", "methods,tasks"
    )
    assert communities.exit_code == 0, communities.output
