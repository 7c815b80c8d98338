"""The CLI for ingest, stats, sparql and validate: real commands, real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import KG, ROOT, run

Q_PAPERS = f"PREFIX kg: <{KG}> SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ ?p a kg:Paper }}"


def kg(
    *args: str, env: dict[str, str] | None = None, input: bytes | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run the real `kg` program in a child process."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kg", *args], capture_output=True, text=True, env=full_env,
        input=input.decode() if input else None, cwd=cwd, timeout=120,
    )


def count(result_json: str, var: str = "n") -> int:
    return int(json.loads(result_json)["results"]["bindings"][0][var]["value"])


def test_done_when_of_the_core_issue(tmp_path: Path, seed_paths: list[Path]) -> None:
    """`kg --store S ingest seeds` then `kg --store S sparql --format json` answers correctly."""
    store = str(tmp_path / "s")
    first = kg("--store", store, "ingest", *map(str, seed_paths))
    assert first.returncode == 0, first.stderr
    assert "2 records read from 2 file(s), 2 graphs: 2 added, 0 updated, 0 unchanged, 0 rejected" in first.stdout
    questions = {
        "papers": "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p a kg:Paper }",
        "author links": "SELECT (COUNT(*) AS ?n) WHERE { SELECT DISTINCT ?p ?a WHERE { ?p dcterms:creator ?a } }",
        "methods": "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?p kg:usesMethod ?m }",
        "shared methods": "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?a kg:usesMethod ?m . ?b kg:usesMethod ?m FILTER(?a != ?b) }",
        "repositories": "SELECT (COUNT(DISTINCT ?r) AS ?n) WHERE { ?r a kg:Repository }",
        "samples": "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a kg:Sample }",
    }
    prefixes = f"PREFIX kg: <{KG}> PREFIX dcterms: <http://purl.org/dc/terms/> "
    answers = {}
    for name, q in questions.items():
        out = kg("--store", store, "sparql", "--format", "json", prefixes + q)
        assert out.returncode == 0, out.stderr
        answers[name] = count(out.stdout)
    assert answers == {"papers": 2, "author links": 8, "methods": 20, "shared methods": 19,
                       "repositories": 3, "samples": 5}
    stats_before = kg("--store", store, "stats", "--json").stdout
    again = kg("--store", store, "ingest", *map(str, seed_paths))
    assert "0 added, 0 updated, 2 unchanged" in again.stdout
    after = json.loads(kg("--store", store, "stats", "--json").stdout)
    before = json.loads(stats_before)
    # the same counts; only the files on disk may have moved (a flush, a compaction)
    assert after.pop("bytes_on_disk") > 0 and before.pop("bytes_on_disk") > 0
    assert after == before


def test_store_from_environment_and_memory_flag(tmp_path: Path, seed_paths: list[Path]) -> None:
    store = tmp_path / "env-store"
    assert kg("ingest", str(seed_paths[0]), env={"KG_STORE": str(store)}).returncode == 0
    assert (store / "CURRENT").exists()
    out = kg("sparql", "-f", "json", Q_PAPERS, env={"KG_STORE": str(store)})
    assert count(out.stdout) == 1
    mem = kg("--memory", "ingest", str(seed_paths[0]), cwd=tmp_path)
    assert mem.returncode == 0 and "1 added" in mem.stdout
    assert not (tmp_path / "kg-store").exists()  # nothing written to the default store


def test_rejected_records_exit_1_with_one_line_each(tmp_path: Path, seed_paths: list[Path]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"url": "/paper/x", "date": "2020-13-45"}\n{"url": 5}\n')
    out = kg("--store", str(tmp_path / "s"), "ingest", str(seed_paths[0]), str(bad))
    assert out.returncode == 1
    lines = [line for line in out.stderr.splitlines() if line.startswith("rejected")]
    assert lines == [
        f"rejected {bad}:line 1: field 'date': '2020-13-45' is not a date (YYYY-MM-DD)",
        f"rejected {bad}:line 2: field 'url': expected a string, got number",
    ]
    assert "Traceback" not in out.stderr
    assert "1 added" in out.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    out = kg("--store", str(tmp_path / "s"), "ingest", "--kind", "nope", "x.json")
    assert out.returncode == 2 and "unknown --kind 'nope'" in out.stderr
    assert kg("ingest").returncode == 2  # missing argument (Typer)


def test_ingest_from_stdin(tmp_path: Path, seed_paths: list[Path]) -> None:
    out = kg("--store", str(tmp_path / "s"), "ingest", "-", input=seed_paths[1].read_bytes())
    assert out.returncode == 0, out.stderr
    assert "1 added" in out.stdout


def test_sparql_formats(cli: CliRunner, tmp_path: Path, seed_paths: list[Path]) -> None:
    store = str(tmp_path / "s")
    assert run(cli, "--store", store, "ingest", *map(str, seed_paths)).exit_code == 0
    q = f"PREFIX kg: <{KG}> SELECT ?slug WHERE {{ ?p kg:pwcSlug ?slug }} ORDER BY ?slug"
    csv_out = run(cli, "--store", store, "sparql", "-f", "csv", q).stdout_bytes
    # SPARQL 1.1 CSV ends lines with CRLF.
    assert csv_out == b"slug\r\nattention-module-is-not-only-a-weight\r\nself-attention-attribution-interpreting\r\n"
    tsv_out = run(cli, "--store", store, "sparql", "-f", "tsv", q).stdout
    assert tsv_out.splitlines() == ["?slug", '"attention-module-is-not-only-a-weight"',
                                    '"self-attention-attribution-interpreting"']
    table = run(cli, "--store", store, "sparql", q).stdout
    assert "attention-module-is-not-only-a-weight" in table and "2 rows" in table
    ask = run(cli, "--store", store, "sparql", "-f", "json", f"ASK {{ ?p a <{KG}Paper> }}").stdout
    assert json.loads(ask) == {"head": {}, "boolean": True}
    construct = f"PREFIX kg: <{KG}> CONSTRUCT {{ ?p kg:pwcSlug ?s }} WHERE {{ ?p kg:pwcSlug ?s }}"
    turtle = run(cli, "--store", store, "sparql", "-f", "turtle", construct).stdout
    assert "@prefix kg: <https://w3id.org/kg/ontology#> ." in turtle and "kg:pwcSlug" in turtle
    nt = run(cli, "--store", store, "sparql", "-f", "ntriples", construct).stdout
    assert len(nt.strip().splitlines()) == 2
    query_file = tmp_path / "q.rq"
    query_file.write_text(q)
    assert run(cli, "--store", store, "sparql", "-f", "csv", f"@{query_file}").stdout_bytes == csv_out
    wrong = run(cli, "--store", store, "sparql", "-f", "turtle", q)
    assert wrong.exit_code == 2 and "--format turtle is for CONSTRUCT" in wrong.stderr


def test_from_and_from_named_narrow_the_union_default_graph(
    cli: CliRunner, tmp_path: Path, seed_paths: list[Path]
) -> None:
    store = str(tmp_path / "s")
    assert run(cli, "--store", store, "ingest", *map(str, seed_paths)).exit_code == 0
    graph = "https://w3id.org/kg/id/graph/record/paper/attention-module-is-not-only-a-weight"
    papers = run(cli, "--store", store, "sparql", "-f", "json", Q_PAPERS).stdout
    assert count(papers) == 2  # no FROM: the union of all graphs
    narrowed = Q_PAPERS.replace("WHERE", f"FROM <{graph}> WHERE")
    assert count(run(cli, "--store", store, "sparql", "-f", "json", narrowed).stdout) == 1
    named = f"SELECT (COUNT(DISTINCT ?g) AS ?n) FROM NAMED <{graph}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}"
    assert count(run(cli, "--store", store, "sparql", "-f", "json", named).stdout) == 1
    empty = f"SELECT (COUNT(*) AS ?n) FROM NAMED <{graph}> WHERE {{ ?s ?p ?o }}"
    assert count(run(cli, "--store", store, "sparql", "-f", "json", empty).stdout) == 0


def test_sparql_syntax_error_is_one_clear_line(cli: CliRunner, tmp_path: Path, seed_paths: list[Path]) -> None:
    store = str(tmp_path / "s")
    run(cli, "--store", store, "ingest", str(seed_paths[0]))
    result = run(cli, "--store", store, "sparql", "SELEC ?x WHERE { ?x ?y ?z }")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr


def test_read_commands_on_a_missing_store_say_how_to_fix(cli: CliRunner, tmp_path: Path) -> None:
    result = run(cli, "--store", str(tmp_path / "none"), "stats")
    assert result.exit_code == 1
    assert "no kg store at" in result.stderr and "kg --store" in result.stderr


def test_stats_counts_classes(cli: CliRunner, tmp_path: Path, seed_paths: list[Path]) -> None:
    store = str(tmp_path / "s")
    run(cli, "--store", store, "ingest", *map(str, seed_paths))
    data = json.loads(run(cli, "--store", store, "stats", "--json").stdout)
    assert data["classes"]["kg:Paper"] == 2
    assert data["classes"]["kg:Method"] == 20
    assert data["classes"]["kg:Sample"] == 5
    assert data["classes"]["kg:CodeLink"] == 3
    assert data["record_graphs"] == 2 and data["named_graphs"] == 3
    assert data["triples"] == data["quads"]  # nothing is stated twice


def test_validate_seeds_has_no_violations(cli: CliRunner, tmp_path: Path, seed_paths: list[Path]) -> None:
    assert (ROOT / "ontology" / "shapes.ttl").is_file()  # the shapes validate checks against
    store = str(tmp_path / "s")
    run(cli, "--store", store, "ingest", *map(str, seed_paths))
    result = run(cli, "--store", store, "validate", "--json")
    data = json.loads(result.stdout)
    assert data == {"conforms": True, "violations": []}
    assert result.exit_code == 0


def test_compact_needs_a_store_it_can_write(tmp_path: Path, seed_paths: list[Path]) -> None:
    missing = kg("--store", str(tmp_path / "nowhere"), "compact", str(tmp_path / "copy"))
    assert missing.returncode == 1 and "no kg store at" in missing.stderr
    assert not (tmp_path / "nowhere").exists()
    busy_store = tmp_path / "busy"
    assert kg("--store", str(busy_store), "ingest", str(seed_paths[0])).returncode == 0
    import kg as library

    with library.open(busy_store, read_only=False):  # another writer holds it
        refused = kg("--store", str(busy_store), "compact", str(tmp_path / "copy"))
    assert refused.returncode == 1 and "is busy" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "copy").exists()


def test_compact_into_writes_a_smaller_copy_of_the_same_graph(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    """`kg compact NEW`: the same quads (the merge and the search index too) in a new
    store, the store itself untouched; a directory that exists is refused."""
    store, copy = tmp_path / "s", tmp_path / "copy"
    assert kg("--store", str(store), "ingest", *map(str, seed_paths)).returncode == 0
    # a second round of the same records, changed: more files for the copy to pack
    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        "".join(
            json.dumps({**json.loads(p.read_text()), "title": f"Changed {i}"}) + "\n"
            for i, p in enumerate(seed_paths)
        )
    )
    assert kg("--store", str(store), "ingest", str(changed)).returncode == 0
    stats_before = json.loads(kg("--store", str(store), "stats", "--json").stdout)
    done = kg("--store", str(store), "compact", str(copy), "--json")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["bytes_before"] > 0  # a writer's open moves files: not exactly stats'
    copied = json.loads(kg("--store", str(copy), "stats", "--json").stdout)
    assert figures["bytes_after"] == copied["bytes_on_disk"] < figures["bytes_before"]
    for key in ("triples", "quads", "named_graphs", "record_graphs", "classes"):
        assert copied[key] == stats_before[key]
    exports = []
    for where in (store, copy):
        out = tmp_path / f"{where.name}.nq"
        assert kg("--store", str(where), "export", "-f", "nquads", "-o", str(out)).returncode == 0
        exports.append(sorted(out.read_text().splitlines()))
    assert exports[0] == exports[1]
    found = kg("--store", str(copy), "search", "Changed", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["total"] == 2
    again = kg("--store", str(store), "compact", str(copy))
    assert again.returncode == 1 and "exists" in again.stderr
    assert not list(tmp_path.glob(".copy.partial-*"))


@pytest.mark.parametrize(
    ("size", "grown_from", "pays"),
    [
        (1_600 * 10**6, 0, True),  # a tenth of the archive, first ingest: pages 1.7-3.7x at p95
        (17_282 * 2**20, 0, True),  # the archive: its disk too
        (201 * 10**6, 0, False),  # the README's store: nothing pending, a compaction is waste
        (1_600 * 10**6, 1_500 * 10**6, False),  # a small ingest into a larger store
    ],
)
def test_a_compaction_pays_after_an_ingest_that_grew_a_store_of_some_size(
    size: int, grown_from: int, pays: bool
) -> None:
    """The thresholds as measured (kg.rdf.compaction.COMPACT_FROM): a store past 512 MiB
    that the ingest grew by a quarter is compacted for its readers."""
    from kg.rdf.compaction import COMPACT_FROM, compaction_pays

    assert compaction_pays(size, grown_from, COMPACT_FROM) is pays


def test_an_ingest_compacts_the_store_when_it_pays(tmp_path: Path, seed_paths: list[Path]) -> None:
    """A large ingest into a large store ends with a compaction in place (COMPACT_FROM; here
    its threshold lowered to 0 bytes, the store being small): the same graph, published to
    readers, the figures in the report; an ingest that did not grow the store does not."""
    from kg.ingest.identity import Iris
    from kg.ingest.ingestor import Ingestor
    from kg.rdf import snapshots
    from kg.rdf.store import GraphStore
    from tests.conftest import BASE

    stores = {name: tmp_path / name for name in ("compacted", "plain")}
    for name, path in stores.items():
        with GraphStore.open(path) as store:
            report = Ingestor(
                store, Iris(BASE), compact_from=0 if name == "compacted" else None
            ).run([str(p) for p in seed_paths])
        if name == "compacted":
            assert report.compaction is not None and report.compaction.bytes_before > 0
            assert report.as_dict()["compaction"]["bytes_after"] == report.compaction.bytes_after
        else:
            assert report.compaction is None and report.as_dict()["compaction"] is None
    digests = []
    for path in stores.values():
        assert len(list((path / snapshots.PUBLISHED_DIR).iterdir())) == 1
        with GraphStore.open(path, read_only=True) as reader:  # the newest publication
            digests.append(reader.canonical_digest(exclude_predicates=[f"{KG}ingestedAt"]))
    assert digests[0] == digests[1]
    with GraphStore.open(stores["compacted"]) as store:  # the same records: no growth
        again = Ingestor(store, Iris(BASE), compact_from=0).run([str(p) for p in seed_paths])
    assert again.unchanged == len(seed_paths) and again.compaction is None
    # `kg ingest` reports it (none for a store this small, at the real threshold)
    done = kg("--store", str(tmp_path / "cli"), "ingest", "--json", *map(str, seed_paths))
    assert done.returncode == 0 and json.loads(done.stdout)["compaction"] is None
    assert kg("--store", str(tmp_path / "off"), "ingest", "--no-compact", "-q",
              str(seed_paths[0])).returncode == 0
