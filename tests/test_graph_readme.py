"""The README's `kg similar` and `kg communities` examples, run on the README store
(`kg ingest examples/`), give sensible answers, checked against plain Python over SPARQL rows
read with property paths written out here (not kg.graph.relations')."""

from __future__ import annotations

import json
import shlex
from collections import defaultdict
from itertools import combinations
from pathlib import Path

from typer.testing import CliRunner

from kg.rdf.store import GraphStore
from tests.conftest import ROOT, run, select

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _examples(command: str) -> list[list[str]]:
    """The README's example lines of `kg COMMAND`, split as a shell would, comments dropped."""
    block = README.split("### Similar papers and graph projections", 1)[1].split("```", 2)[1]
    out = []
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if words[:2] == ["kg", command]:
            out.append(words[1:])
    assert out, f"the README has no `kg {command}` example"
    return out


def test_the_readme_communities_example_finds_topics(readme_store: Path, cli: CliRunner) -> None:
    [example] = _examples("communities")
    result = run(cli, "--store", str(readme_store), *example, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # Plain Python: papers linked when they share a task or a dataset (through a record's
    # link or a leaderboard result), from SPARQL rows.
    with GraphStore.open(readme_store, read_only=True) as store:
        rows = select(
            store,
            "SELECT DISTINCT ?p ?i WHERE { "
            "{ ?p kg:hasTask|(kg:hasResult/kg:onTask) ?i } UNION "
            "{ ?p kg:introducesDataset|(kg:hasResult/kg:onDataset) ?i } FILTER(isIRI(?i)) }",
        )
    papers_of: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        papers_of[str(row["i"])].add(str(row["p"]))
    nodes = {p for ps in papers_of.values() for p in ps}
    edges = {pair for ps in papers_of.values() for pair in combinations(sorted(ps), 2)}
    parent = {p: p for p in nodes}

    def root(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for a, b in edges:
        parent[root(a)] = root(b)
    assert data["nodes"] == len(nodes)
    assert data["edges"] == len(edges)
    assert data["components"] == len({root(p) for p in nodes})
    # Sensible: ten large communities named by their topics; few papers left alone (those
    # whose only task or dataset no other paper has).
    top = data["top"]
    assert len(top) == 10
    assert all(c["size"] >= 100 for c in top), [c["size"] for c in top]
    assert all(c["name"] and c["central"] for c in top)
    assert data["single_member_communities"] < 0.05 * data["nodes"]
    names = " · ".join(c["name"] for c in top)
    for topic in ("Question Answering", "Image Classification", "Machine Translation"):
        assert topic in names


def test_the_readme_similar_examples_answer(readme_store: Path, cli: CliRunner) -> None:
    examples = _examples("similar")
    assert len(examples) == 2
    for example in examples:
        args = example if "--json" in example else [*example, "--json"]
        result = run(cli, "--store", str(readme_store), *args)
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["results"], example
        first = data["results"][0]
        # The two seeds are the closest pair: 19 shared methods.
        assert first["title"] in {
            "Self-Attention Attribution: Interpreting Information Interactions Inside "
            "Transformer",
            "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms",
        }, first["title"]
        assert first["shared_count"] >= 19
