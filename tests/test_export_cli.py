"""`kg export` and `kg void` from the command line: files, stdout, gzip, errors."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.export.exporter import export
from kg.rdf.engine import parse_to_ntriples
from kg.rdf.formats import WRITABLE_RDF as FORMATS
from kg.rdf.store import GraphStore
from tests.conftest import BASE, KG, ROOT, run

PAPER = "self-attention-attribution-interpreting"


@pytest.fixture
def exports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "exports"
    monkeypatch.setenv("KG_EXPORTS_DIR", str(folder))
    return folder


@pytest.fixture
def store(cli: CliRunner, tmp_path: Path, seed_paths: list[Path]) -> str:
    path = str(tmp_path / "store")
    result = run(cli, "--store", path, "ingest", "-q", *map(str, seed_paths))
    assert result.exit_code == 0, result.output
    return path


def library_bytes(store: str, fmt: str, **options: str) -> bytes:
    out = io.BytesIO()
    with GraphStore.open(Path(store), read_only=True) as gs:
        export(gs, out, fmt, **options)  # type: ignore[arg-type]
    return out.getvalue()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_export_writes_into_exports_by_default(
    cli: CliRunner, store: str, exports: Path, fmt: str
) -> None:
    result = run(cli, "--store", store, "export", "--format", fmt)
    assert result.exit_code == 0, result.output
    path = exports / f"kg.{FORMATS[fmt].extension}"
    assert path.read_bytes() == library_bytes(store, fmt)
    unit = "quads" if FORMATS[fmt].dataset else "triples"
    dataset = FORMATS[fmt].dataset
    lines = library_bytes(store, "nquads" if dataset else "ntriples").splitlines()
    with GraphStore.open(Path(store), read_only=True) as gs:  # the triple formats: the merge
        graphs = len(list(gs.named_graphs())) if dataset else 1
    assert f"wrote {len(lines)} {unit} from {graphs} graph(s) as {fmt} to {path}" in result.stderr
    assert [p.name for p in exports.iterdir()] == [path.name]  # no leftover partial file


def test_gzip_stdout_and_json_summary(cli: CliRunner, store: str, exports: Path) -> None:
    first = run(cli, "--store", store, "export", "-f", "nquads", "--gzip")
    second = run(cli, "--store", store, "export", "-f", "nquads", "--gzip", "--json")
    assert first.exit_code == second.exit_code == 0
    data = (exports / "kg.nq.gz").read_bytes()
    assert gzip.decompress(data) == library_bytes(store, "nquads")
    summary = json.loads(second.stdout)
    quads = len(library_bytes(store, "nquads").splitlines())
    assert summary["statements"] == quads and summary["bytes"] == len(data)
    piped = run(cli, "--store", store, "export", "-f", "nquads", "--gzip", "--out", "-")
    assert piped.exit_code == 0 and piped.stdout_bytes == data  # the same deterministic bytes
    plain = run(cli, "--store", store, "export", "-f", "ntriples", "-o", "-")
    assert plain.stdout_bytes == library_bytes(store, "ntriples")


def test_one_graph_by_key_or_iri(cli: CliRunner, store: str, exports: Path) -> None:
    result = run(cli, "--store", store, "export", "-f", "trig", "--graph", "graph/entities")
    assert result.exit_code == 0, result.output
    path = exports / "kg-graph-entities.trig"
    assert path.read_bytes() == library_bytes(store, "trig", graph=BASE + "graph/entities")
    same = run(cli, "--store", store, "export", "-f", "trig", "-g", BASE + "graph/entities")
    assert same.exit_code == 0 and path.read_bytes() == library_bytes(
        store, "trig", graph=BASE + "graph/entities"
    )


def test_query_exports_a_paper_card(cli: CliRunner, store: str, exports: Path) -> None:
    result = run(
        cli, "--store", store, "export", "-f", "ntriples", "--query", "paper-card",
        "--param", f"paper={PAPER}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    exported = set((exports / "query-paper-card.nt").read_text(encoding="utf-8").splitlines())
    card = run(
        cli, "--store", store, "query", "paper-card", "-p", f"paper={PAPER}", "-f", "ntriples"
    )
    assert card.exit_code == 0
    assert exported == set(card.stdout.splitlines()) - {""}
    assert any(f"<{BASE}paper/{PAPER}> <http://purl.org/dc/terms/title>" in t for t in exported)


def test_query_file(cli: CliRunner, store: str, exports: Path, tmp_path: Path) -> None:
    query = tmp_path / "tasks.rq"
    query.write_text(
        f"CONSTRUCT {{ ?t a <{KG}Task> }} WHERE {{ ?p <{KG}hasTask> ?t }}", encoding="utf-8"
    )
    result = run(cli, "--store", store, "export", "-f", "turtle", "--query", f"@{query}")
    assert result.exit_code == 0, result.output
    turtle = (exports / "query-tasks.ttl").read_bytes()
    assert len(parse_to_ntriples(turtle, "turtle").splitlines()) == 4


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["-f", "yaml"], 2, "unknown export format 'yaml'; use one of: turtle, ntriples"),
        (["-g", "graph/nowhere"], 1, f"the store has no graph <{BASE}graph/nowhere>"),
        (["-g", "graph/entities", "-q", "paper-card"], 2, "--graph and --query do not combine"),
        (["-p", "paper=x"], 2, "--param binds the parameters of --query"),
        (["-q", "no-such-query"], 1, "no query named 'no-such-query'"),
        (["-q", "paper-card"], 1, "needs --param paper="),
        (["-q", "papers-by-author", "-p", "author=Ke Xu"], 2, "needs a CONSTRUCT or DESCRIBE"),
        (["-o", "."], 2, "--out . is a directory"),
    ],
)
def test_bad_requests_get_one_clear_line(
    cli: CliRunner, store: str, exports: Path, args: list[str], code: int, message: str
) -> None:
    result = run(cli, "--store", store, "export", *args)
    assert result.exit_code == code, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert not exports.exists() or not any(exports.iterdir())


def test_export_of_a_missing_store_says_how_to_build_one(cli: CliRunner, tmp_path: Path) -> None:
    result = run(cli, "--store", str(tmp_path / "none"), "export")
    assert result.exit_code == 1
    assert "no kg store at" in result.stderr and "kg --store" in result.stderr


def test_bytes_do_not_depend_on_the_process(store: str, tmp_path: Path) -> None:
    """Hash randomisation (Python's and any in Oxigraph) must not reach the output."""
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        for fmt in ("turtle", "trig", "rdfxml", "jsonld"):
            out = tmp_path / f"{seed}.{fmt}"
            done = subprocess.run(
                [sys.executable, "-m", "kg", "--store", store, "export", "-f", fmt, "-o", str(out)],
                capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            outputs.append(out.read_bytes())
    assert outputs[:4] == outputs[4:]
