"""A request never trains a large store's suggestion model (issue 26, pages): the paper page,
`/suggest` and the MCP tool say how to train it ahead (`kg suggest --train`), write nothing,
and show the suggestions once it is trained; a training that failed or died is not started
again by requests; a small store still trains on first use."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.cli import app
from kg.config import SUGGEST_INLINE_ENV
from kg.errors import ModelNotTrainedError, UsageError
from kg.graph import cache
from kg.library.knowledge_graph import KnowledgeGraph
from kg.mcp.calls import suggest_page as mcp_suggest
from kg.rdf.snapshots import READERS_DIR
from kg.rdf.store import GraphStore
from kg.serve.app import ServerConfig, create_app
from kg.serve.pool import Source
from tests.serve_support import TestClient

BASE = "https://w3id.org/kg/id/"
PAPER = "attention-module-is-not-only-a-weight"
HOW = "kg suggest --train"
HTML = {"Accept": "text/html"}


@pytest.fixture
def fresh_store(readme_store: Path, tmp_path: Path) -> Path:
    """A copy of the README store with no model kept (the shared one has one), and none of
    the snapshot pins other tests' readers make and remove meanwhile."""
    path = tmp_path / "store"
    shutil.copytree(
        readme_store, path, ignore=shutil.ignore_patterns(cache.CACHE_DIR, READERS_DIR)
    )
    return path


def model_files(path: Path) -> list[str]:
    return sorted(
        p.name
        for p in (path / cache.CACHE_DIR).glob("*/*")
        if p.name.startswith(("suggest-", "content-"))
    )


@contextmanager
def client(path: Path) -> Iterator[TestClient]:
    config = ServerConfig(base_iri=BASE, workers=1, refresh=0.0)
    with TestClient(create_app(Source(path=path), config), base_url="http://kg.test") as c:
        yield c


def suggested_section(html: str) -> str:
    return html.split('<section id="suggested"')[1].split("</section>")[0]


def test_a_large_store_is_never_trained_by_a_request_until_trained_ahead(
    fresh_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SUGGEST_INLINE_ENV, "1000")  # the README store has 5,502 papers
    with client(fresh_store) as c:
        page = c.get(f"/paper/{PAPER}", headers=HTML)
        assert page.status_code == 200
        section = suggested_section(page.text)
        assert HOW in section and "not trained" in section and "5,502 papers" in section
        assert '<ol class="similar suggested">' not in section
        answer = c.get(f"/suggest/{PAPER}", headers={"Accept": "application/json"})
        assert answer.status_code == 503 and HOW in answer.text
        assert "similar papers" not in answer.text
        assert c.get(f"/paper/{PAPER}", headers=HTML).status_code == 200  # again: no training
    assert model_files(fresh_store) == []  # nothing trained, nothing half-written
    with KnowledgeGraph(fresh_store, read_only=True) as graph, pytest.raises(
        ModelNotTrainedError, match="kg suggest --train"
    ):
        mcp_suggest(graph, PAPER, None, 5)  # the MCP tool, as a server worker runs it
    assert model_files(fresh_store) == []

    trained = CliRunner().invoke(app, ["--store", str(fresh_store), "suggest", "--train"])
    assert trained.exit_code == 0, trained.output
    assert "trained" in trained.output
    assert any(n.startswith("suggest-v") and n.endswith(".json") for n in model_files(fresh_store))
    again = CliRunner().invoke(app, ["--store", str(fresh_store), "suggest", "--train"])
    assert again.exit_code == 0 and "already trained" in again.output

    cli = CliRunner().invoke(
        app, ["--store", str(fresh_store), "suggest", PAPER, "--top", "5", "--json"]
    )
    assert cli.exit_code == 0, cli.output
    with client(fresh_store) as c:
        section = suggested_section(c.get(f"/paper/{PAPER}", headers=HTML).text)
        assert '<ol class="similar suggested">' in section and HOW not in section
        assert section.count('<span class="flag">suggested') == 8  # SUGGEST_TOP
        answer = c.get(f"/suggest/{PAPER}?top=5", headers={"Accept": "application/json"})
        assert answer.status_code == 200 and answer.json() == json.loads(cli.output)
    with KnowledgeGraph(fresh_store, read_only=True) as graph:
        mcp = mcp_suggest(graph, PAPER, None, 5)
    expected = json.loads(cli.output)  # the MCP answer is a page of it, reasons cut short
    assert mcp["paper"] == expected["paper"]
    assert [(s["item"], s["score"]) for s in mcp["suggestions"]] == [
        (s["item"], s["score"]) for s in expected["suggestions"]
    ]


def test_a_training_that_died_is_not_started_again_by_requests(
    seed_paths: list[Path], tmp_path: Path
) -> None:
    """A worker killed over its memory limit leaves its `.training` file with its pid; the
    next requests do not start the training again, `kg suggest --train` does."""
    small = tmp_path / "small"
    from kg.ingest.ingestor import ingest

    with GraphStore.open(small) as writer:
        ingest(writer, [str(p) for p in seed_paths], base_iri=BASE)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(gone.stdout)
    with GraphStore.open(small, read_only=True) as store:
        cache.similarity_index(store, "all", "idf")  # the cache directory of this version
        directory = cache.cache_directory(store, cache.content_key(store))
        assert directory is not None and directory.is_dir()
        (directory / "suggest-v2.training").write_text(str(dead_pid))
        with pytest.raises(ModelNotTrainedError, match="stopped before it finished"):
            cache.suggest_model(store, on_request=True)
        assert not any(directory.glob("suggest-v*.json"))
        (directory / "suggest-v2.training").unlink()
        (directory / "suggest-v2.failed").write_text("over the memory limit")
        with pytest.raises(ModelNotTrainedError, match="failed on this version"):
            cache.suggest_model(store, on_request=True)
        model = cache.suggest_model(store)  # as `kg suggest --train` does
        assert model.trained.settings
        assert sorted(p.name for p in directory.glob("suggest-v2.*")) == ["suggest-v2.json"]
        assert cache.suggest_model(store, on_request=True) is model


def test_a_small_store_still_trains_on_first_request(
    seed_paths: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kg.ingest.ingestor import ingest

    path = tmp_path / "small"
    with GraphStore.open(path) as writer:
        ingest(writer, [str(p) for p in seed_paths], base_iri=BASE)
    monkeypatch.setenv(SUGGEST_INLINE_ENV, "0")
    with GraphStore.open(path, read_only=True) as store:
        with pytest.raises(ModelNotTrainedError, match="never trains"):
            cache.suggest_model(store, on_request=True)
        assert not cache.has_suggest_model(store)
    monkeypatch.delenv(SUGGEST_INLINE_ENV)
    with GraphStore.open(path, read_only=True) as store:
        model = cache.suggest_model(store, on_request=True)  # 2 papers: under the limit
        assert model.votes.incidence.shape[0] == 2
        assert cache.has_suggest_model(store)
    assert model_files(path)


@pytest.mark.parametrize("value", ["many", "-3"])
def test_a_bad_limit_names_its_variable(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SUGGEST_INLINE_ENV, value)
    with pytest.raises(UsageError, match=SUGGEST_INLINE_ENV):
        cache.inline_training_limit()


def test_suggest_needs_a_paper_or_train(fresh_store: Path) -> None:
    result = CliRunner().invoke(app, ["--store", str(fresh_store), "suggest"])
    assert result.exit_code == 2 and "--train" in result.output
