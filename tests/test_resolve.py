"""The resolver every face uses (kg.query.resolve), on the README store.

Names, slugs, arXiv ids and IRIs are checked against the raw evaluation tables in examples/
(an independent reading of what the store was built from), and the faces (CLI, HTTP) are
checked to word a miss and an ambiguity the same way.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.errors import AmbiguousNameError, ParameterError, UnknownNameError
from kg.ingest.identity import Iris, pwc_slug
from kg.query.resolve import KINDS, LARGE_KINDS, lookup, resolve
from kg.rdf.store import GraphStore
from tests.conftest import BASE, ROOT, run

TABLES = ROOT / "examples" / "pwc" / "evaluation-tables.json.gz"


@pytest.fixture(scope="module")
def store(readme_store: Path) -> Iterator[GraphStore]:
    opened = GraphStore.open(readme_store, read_only=True)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def tables() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(gzip.decompress(TABLES.read_bytes()))
    return data


def _task_names(tables: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []

    def walk(task: dict[str, Any]) -> None:
        names.append(task["task"])
        for sub in task.get("subtasks") or []:
            walk(sub)

    for task in tables:
        walk(task)
    return sorted({n for n in names if n and n.strip()})


@pytest.mark.parametrize(
    ("kind", "text", "key"),
    [
        ("task", "image-classification", "image-classification"),
        ("task", "Image Classification", "image-classification"),
        ("task", "IMAGE   classification", "image-classification"),
        ("task", ":task/image-classification", "image-classification"),
        ("task", "task/image-classification", "image-classification"),
        ("task", f"{BASE}task/image-classification", "image-classification"),
        ("task", "https://paperswithcode.com/task/image-classification", "image-classification"),
        ("dataset", "ImageNet", "imagenet"),
        ("dataset", "imagenet", "imagenet"),
        ("method", "adam", "adam"),
        ("method", "ADAM", "adam"),
        ("paper", "2003.08237", "arxiv/2003.08237"),
        ("paper", "2003.08237v2", "arxiv/2003.08237"),
        ("paper", "arXiv:2003.08237", "arxiv/2003.08237"),
        ("paper", "https://arxiv.org/abs/2003.08237v1", "arxiv/2003.08237"),
        (
            "paper",
            "self-attention-attribution-interpreting",
            "self-attention-attribution-interpreting",
        ),
        (
            "paper",
            "fixing the train-test resolution discrepancy",
            "fixing-the-train-test-resolution-discrepancy",
        ),
        ("author", "Goro Kobayashi", "goro-kobayashi"),
        ("author", "goro kobayashi", "goro-kobayashi"),
        ("area", "Computer Vision", "computer-vision"),
        ("area", "computer vision", "computer-vision"),
        ("area", "NLP", "natural-language-processing"),
        ("repository", "facebookresearch/fixres", "github.com/facebookresearch/fixres"),
        (
            "repository",
            "https://github.com/FacebookResearch/FixRes.git",
            "github.com/facebookresearch/fixres",
        ),
    ],
)
def test_every_form_of_a_name_resolves(store: GraphStore, kind: str, text: str, key: str) -> None:
    thing = resolve(store, kind, text, BASE)
    assert (thing.kind, thing.key, thing.iri) == (kind, key, f"{BASE}{kind}/{key}")


def test_every_task_of_the_raw_tables_resolves_by_its_name_in_any_case(
    store: GraphStore, tables: list[dict[str, Any]]
) -> None:
    names = _task_names(tables)
    assert len(names) > 1000
    for name in names[::15]:  # a spread of them: each is two or three small lookups
        iri = Iris(BASE).task(pwc_slug(name) or name.strip())  # the ingest's identity rule
        for text in (name, name.upper(), pwc_slug(name) or name):
            thing = resolve(store, "task", text, BASE)
            assert thing.iri == iri, (text, thing)


def test_a_miss_names_the_kind_and_the_nearest_things(store: GraphStore) -> None:
    with pytest.raises(UnknownNameError) as caught:
        resolve(store, "task", "image-clasification", BASE)
    assert str(caught.value).startswith(
        "no task named 'image-clasification'; did you mean: "
        "image-classification (Image Classification)"
    )
    assert caught.value.candidates[0] == f"{BASE}task/image-classification"
    with pytest.raises(
        UnknownNameError, match=r"no dataset named 'imagenett'; did you mean: imagenet \(ImageNet\)"
    ):
        resolve(store, "dataset", "imagenett", BASE)
    with pytest.raises(UnknownNameError, match=r"no paper named '1999\.99999'; give a paper by"):
        resolve(store, "paper", "1999.99999", BASE)
    # an IRI of another kind names no task
    with pytest.raises(UnknownNameError, match="no task named"):
        resolve(store, "task", f"{BASE}dataset/imagenet", BASE)


def test_an_ambiguous_name_lists_the_candidates(store: GraphStore) -> None:
    title = "Translating Embeddings for Modeling Multi-relational Data"
    expected = sorted(
        row[0]
        for row in store.select_values(
            "SELECT DISTINCT ?p WHERE { ?p a <https://w3id.org/kg/ontology#Paper> ; "
            f'<http://purl.org/dc/terms/title> "{title}" }}'
        )
        if row[0]
    )
    assert len(expected) == 2
    with pytest.raises(AmbiguousNameError) as caught:
        resolve(store, "paper", title.upper(), BASE)
    assert sorted(caught.value.candidates) == expected
    message = str(caught.value)
    assert "names 2 papers: " in message
    for iri in expected:
        assert iri.removeprefix(f"{BASE}paper/") in message
    # either key names one of them
    assert resolve(store, "paper", expected[0], BASE).iri == expected[0]


@pytest.mark.parametrize("text", ["", "   ", "a\x00b", "x" * 3000])
def test_hostile_or_empty_text_is_a_parameter_error(store: GraphStore, text: str) -> None:
    with pytest.raises(ParameterError):
        resolve(store, "task", text, BASE)


@pytest.mark.parametrize(
    "text", ['" } ; DROP ALL', "<http://x> . ?s ?p ?o", "task/a>b", 'zz\\qq"y']
)
def test_query_syntax_in_a_name_is_only_a_name(store: GraphStore, text: str) -> None:
    with pytest.raises((UnknownNameError, ParameterError)):
        resolve(store, "task", text, BASE)


def test_every_kind_a_query_parameter_may_name_is_resolvable() -> None:
    from kg.query.named import CLASSES

    assert set(CLASSES) == set(KINDS)


def test_the_cli_takes_names_and_words_a_miss(readme_store: Path, cli: CliRunner) -> None:
    store = str(readme_store)
    leaderboard = ["query", "leaderboard", "-p", "dataset=ImageNet", "-p", "metric=Top 1 Accuracy"]
    by_name = run(
        cli, "--store", store, *leaderboard, "-p", "task=Image Classification", "-f", "csv"
    )
    by_slug = run(
        cli, "--store", store, *leaderboard, "-p", "task=image-classification", "-f", "csv"
    )
    assert by_name.exit_code == 0, by_name.output
    assert by_name.output == by_slug.output and by_name.output.count("\n") > 100
    typo = run(cli, "--store", store, *leaderboard, "-p", "task=image-clasification")
    assert typo.exit_code == 1
    assert typo.stderr.startswith(
        "error: no task named 'image-clasification'; did you mean: "
        "image-classification (Image Classification)"
    )
    similar = run(cli, "--store", store, "similar", "arXiv:2003.08237v1", "--top", "1", "--json")
    assert similar.exit_code == 0, similar.output
    assert json.loads(similar.stdout)["paper"] == f"{BASE}paper/arxiv/2003.08237"


def test_the_server_takes_names_and_answers_a_miss_with_json(readme_store: Path) -> None:
    from starlette.testclient import TestClient

    from kg.serve.app import ServerConfig, create_app
    from kg.serve.pool import Source

    app = create_app(Source(path=readme_store), ServerConfig(base_iri=BASE, workers=1))
    params = {"dataset": "imagenet", "metric": "Top 1 Accuracy", "format": "csv"}
    with TestClient(app, base_url="http://kg.test") as client:
        by_name = client.get(
            "/queries/leaderboard", params={**params, "task": "Image Classification"}
        )
        by_slug = client.get(
            "/queries/leaderboard", params={**params, "task": "image-classification"}
        )
        assert by_name.status_code == 200 and by_name.text == by_slug.text
        miss = client.get("/queries/leaderboard", params={**params, "task": "image-clasification"})
        assert miss.status_code == 404
        body = miss.json()
        assert body["parameter"] == "task"
        assert body["error"].startswith(
            "no task named 'image-clasification'; did you mean: "
            "image-classification (Image Classification)"
        )
        assert body["candidates"][0] == f"{BASE}task/image-classification"
        text = client.get(
            "/queries/leaderboard/sparql", params={**params, "task": "IMAGE CLASSIFICATION"}
        )
        assert text.status_code == 200 and f"<{BASE}task/image-classification>" in text.text


def test_a_pages_lookup_gives_the_thing_or_the_nearest_names(store: GraphStore) -> None:
    """What a page's path names (kg.serve.pages.not_found): one thing, or "did you mean" names;
    a large kind (papers) is looked up by its indexes only and offers no nearest names."""
    noisy = lookup(store, "paper", "1911.04252v2", BASE)
    assert noisy["thing"]["key"] == "self-training-with-noisy-student-improves"  # type: ignore[index]
    near = lookup(store, "dataset", "imagenett", BASE)["candidates"]
    assert f"{BASE}dataset/imagenet" in [c["iri"] for c in near]  # type: ignore[union-attr]
    assert "paper" in LARGE_KINDS
    assert lookup(store, "paper", "Self-training with Noisy Studnt", BASE) == {"candidates": []}
    assert lookup(store, "task", "\x00", BASE) == {"candidates": []}


@pytest.mark.parametrize(
    ("query", "given", "plain", "iri"),
    [
        ("tasks-in-area", {"area": "NLP"}, {"area": "Natural Language Processing"},
         f"{BASE}area/natural-language-processing"),
        ("leaderboard",
         {"task": "https://paperswithcode.com/task/image-classification",
          "dataset": "https://paperswithcode.com/dataset/imagenet", "metric": "Top 1 Accuracy"},
         {"task": "Image Classification", "dataset": "ImageNet", "metric": "Top 1 Accuracy"},
         f"{BASE}task/image-classification"),
    ],
)
def test_a_pwc_url_or_an_area_abbreviation_names_the_same_thing_on_every_face(
    readme_store: Path, cli: CliRunner, query: str, given: dict[str, str],
    plain: dict[str, str], iri: str,
) -> None:
    """The one resolver (kg.query.resolve) reads a Papers-with-Code URL and an area's
    abbreviation alike for `kg query NAME --param` and the server's named query (its
    bound text, its rows and its page): the same IRI, the same rows as the thing's name."""
    import csv
    import io

    from starlette.testclient import TestClient

    from kg.serve.app import ServerConfig, create_app
    from kg.serve.pool import Source

    def cli_rows(values: dict[str, str]) -> list[list[str]]:
        params = [a for k, v in values.items() for a in ("--param", f"{k}={v}")]
        out = run(cli, "--store", str(readme_store), "query", query, *params, "-f", "csv")
        assert out.exit_code == 0, out.output
        return list(csv.reader(io.StringIO(out.stdout)))

    shown = run(cli, "--store", str(readme_store), "query", query, "--show-sparql",
                *[a for k, v in given.items() for a in ("-p", f"{k}={v}")])
    assert shown.exit_code == 0 and f"<{iri}>" in shown.stdout, shown.output
    rows = cli_rows(given)
    assert len(rows) > 1 and rows == cli_rows(plain)
    app = create_app(Source(path=readme_store), ServerConfig(base_iri=BASE, workers=1))
    with TestClient(app, base_url="http://kg.test") as client:
        text = client.get(f"/queries/{query}/sparql", params=given)
        assert text.status_code == 200 and f"<{iri}>" in text.text
        assert text.text.strip() == shown.stdout.strip()
        served = client.get(f"/queries/{query}", params={**given, "format": "csv"})
        assert served.status_code == 200, served.text
        assert list(csv.reader(io.StringIO(served.text))) == rows
        page = client.get(f"/queries/{query}", params=given, headers={"accept": "text/html"})
        assert page.status_code == 200 and iri in page.text
