"""`kg void`: the VoID description parses and its counts agree with `kg stats`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.export.void import DEFAULT_LICENSE, describe
from kg.ingest.dumps import EVALUATION
from kg.ingest.ingestor import ingest
from kg.query.stats import compute
from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.testing.records import records as synth_records
from tests.conftest import BASE, RAW_DIR, run

VOID = "http://rdfs.org/ns/void#"
DATASET = f"<{BASE}dataset>"


def void_graph(data: bytes, fmt: str = "turtle") -> GraphStore:
    store = GraphStore.memory()
    store.load(data, fmt)  # it must parse
    return store


def rows(store: GraphStore, sparql: str) -> list[tuple[Any, ...]]:
    result = store.query(f"PREFIX void: <{VOID}> {sparql}")
    assert isinstance(result, SelectResult)
    return [tuple(None if t is None else t.value for t in row) for row in result.rows]


def counts(void: GraphStore) -> dict[str, Any]:
    """What the description says, read back with SPARQL."""
    (triples, entities), *_ = rows(
        void, f"SELECT ?t ?e WHERE {{ {DATASET} void:triples ?t ; void:entities ?e }}"
    )
    classes = rows(
        void,
        f"SELECT ?c ?n WHERE {{ {DATASET} void:classPartition ?p . ?p void:class ?c ; "
        "void:entities ?n }",
    )
    properties = rows(
        void,
        f"SELECT ?p ?n WHERE {{ {DATASET} void:propertyPartition ?x . ?x void:property ?p ; "
        "void:triples ?n }",
    )
    return {
        "triples": int(triples),
        "entities": int(entities),
        "classes": {c: int(n) for c, n in classes},
        "properties": {p: int(n) for p, n in properties},
    }


def expand(short: str) -> str:
    from kg.rdf.vocab import PREFIXES

    prefix, _, local = short.partition(":")
    return PREFIXES[prefix] + local if prefix in PREFIXES else short


def assert_matches_stats(void: GraphStore, stats: dict[str, Any], store: GraphStore) -> None:
    said = counts(void)
    assert said["triples"] == stats["triples"]
    assert said["classes"] == {expand(c): n for c, n in stats["classes"].items()}
    assert sum(said["properties"].values()) == stats["triples"]  # partitions add up
    typed = store.query(
        "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?c }"
    )  # the definition of void:entities
    assert isinstance(typed, SelectResult) and typed.rows[0][0] is not None
    assert said["entities"] == int(typed.rows[0][0].value)


def test_kg_void_agrees_with_kg_stats_on_the_seeds(
    cli: CliRunner, tmp_path: Path, seed_paths: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KG_EXPORTS_DIR", str(tmp_path / "exports"))
    store = str(tmp_path / "store")
    assert run(cli, "--store", store, "ingest", "-q", *map(str, seed_paths)).exit_code == 0
    assert run(cli, "--store", store, "export", "-f", "ntriples", "--gzip").exit_code == 0
    assert run(cli, "--store", store, "export", "-f", "turtle").exit_code == 0
    result = run(cli, "--store", store, "void")
    assert result.exit_code == 0, result.output
    path = tmp_path / "exports" / "void.ttl"
    assert f"to {path}" in result.stderr
    void = void_graph(path.read_bytes())
    stats = json.loads(run(cli, "--store", store, "stats", "--json").stdout)
    with GraphStore.open(Path(store), read_only=True) as gs:
        assert_matches_stats(void, stats, gs)
    dumps = rows(void, f"SELECT ?d WHERE {{ {DATASET} void:dataDump ?d }} ORDER BY ?d")
    assert dumps == [(f"{BASE}dumps/kg.nt.gz",), (f"{BASE}dumps/kg.ttl",)]
    features = rows(void, f"SELECT ?f WHERE {{ {DATASET} void:feature ?f }} ORDER BY ?f")
    assert features == [
        ("http://www.w3.org/ns/formats/N-Triples",),
        ("http://www.w3.org/ns/formats/Turtle",),
    ]
    examples = rows(void, f"SELECT ?e WHERE {{ {DATASET} void:exampleResource ?e }} ORDER BY ?e")
    assert examples == [
        (f"{BASE}paper/attention-module-is-not-only-a-weight",),
        (f"{BASE}paper/self-attention-attribution-interpreting",),
    ]
    licence = rows(void, f"SELECT ?l WHERE {{ {DATASET} <http://purl.org/dc/terms/license> ?l }}")
    assert licence == [("https://creativecommons.org/licenses/by-sa/4.0/",)]  # one IRI per licence
    vocabularies = {v for (v,) in rows(void, f"SELECT ?v WHERE {{ {DATASET} void:vocabulary ?v }}")}
    assert {"https://w3id.org/kg/ontology#", "http://purl.org/dc/terms/"} <= vocabularies
    again = run(cli, "--store", store, "void", "--out", "-")
    assert again.stdout_bytes == path.read_bytes()  # deterministic


def test_void_counts_match_stats_on_generated_records(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(
        "".join(json.dumps(r) + "\n" for r in synth_records(150, seed=3)), encoding="utf-8"
    )
    store = GraphStore.memory()
    ingest(store, [str(records)], base_iri=BASE)
    description = describe(store, BASE, dumps=["https://example.org/kg.nq.gz"])
    void = void_graph(description.serialize("ntriples"), "ntriples")
    assert_matches_stats(void, compute(store, BASE).as_dict(), store)
    assert counts(void)["classes"][f"{BASE.replace('id/', 'ontology#')}Paper"] == 150


def test_void_counts_match_stats_on_the_dump_slices() -> None:
    store = GraphStore.memory()
    files = [*sorted((RAW_DIR / "sota-extractor-tasks").glob("*.json"))]
    report = ingest(store, [str(f) for f in files], base_iri=BASE)
    assert report.rejected == 0 and report.kinds[EVALUATION] > 0  # read as the tables' dump
    description = describe(store, BASE)
    void = void_graph(description.serialize("rdfxml"), "rdfxml")
    assert_matches_stats(void, compute(store, BASE).as_dict(), store)
    assert description.triples < store.count()  # the dumps repeat triples; VoID counts once


def test_a_store_without_licences_gets_the_archive_licence() -> None:
    store = GraphStore.memory()
    store.update("INSERT DATA { GRAPH <http://e/g> { <http://e/s> a <http://e/C> } }")
    description = describe(store, BASE)
    assert description.licenses == [DEFAULT_LICENSE]
    assert description.triples == 1 and description.classes == {"http://e/C": 1}
    assert description.examples == []  # no papers


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "nquads"], "a VoID description is one graph"),
        (["--dump", "kg.nt.gz"], "'kg.nt.gz' is not an absolute URL"),
        (["--sparql-endpoint", "localhost:7878"], "not an absolute URL"),
    ],
)
def test_void_refuses_bad_options(
    cli: CliRunner, tmp_path: Path, seed_paths: list[Path], args: list[str], message: str
) -> None:
    store = str(tmp_path / "store")
    assert run(cli, "--store", store, "ingest", "-q", *map(str, seed_paths)).exit_code == 0
    result = run(cli, "--store", store, "void", *args)
    assert result.exit_code == 2 and message in result.stderr
