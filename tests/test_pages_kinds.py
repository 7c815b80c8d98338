"""The designed pages on generated dumps (kg.testing.dumps, all five kinds) and the seeds:
what each page shows is checked against the raw JSON, read here with plain Python."""

from __future__ import annotations

import contextlib
import gzip
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from kg.ingest.identity import pwc_slug
from kg.testing.dumps import write_archive
from tests.serve_support import BASE, TestClient, client_for, memory_store

KG = "https://w3id.org/kg/ontology#"

HTML = {"Accept": "text/html"}


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_archive(tmp_path_factory.mktemp("kinds"), scale=0.0005, seed=5)


@pytest.fixture(scope="module")
def client(dumps: dict[str, Path], seed_paths: list[Path]) -> Iterator[TestClient]:
    with client_for(memory_store([*seed_paths, *dumps.values()]), workers=1) as c:
        yield c


def _raw(dumps: dict[str, Path], kind: str) -> list[dict[str, Any]]:
    return json.loads(gzip.decompress(dumps[kind].read_bytes()))


def _section(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}"[^>]*>(.*?)</section>', html, re.S)
    assert match, f"no section {name}"
    return match.group(1)


def test_a_dataset_page_shows_what_the_datasets_dump_says(
    client: TestClient, dumps: dict[str, Path]
) -> None:
    raw = next(d for d in _raw(dumps, "datasets") if d["homepage"] and d["paper"])
    slug = raw["url"].rsplit("/", 1)[-1]
    page = client.get(f"/dataset/{slug}", headers=HTML)
    assert page.status_code == 200
    html = page.text
    assert raw["full_name"] in html
    assert f'href="{raw["homepage"]}"' in html
    assert raw["description"].split()[0] in _section(html, "description")
    intro = raw["paper"]["url"].rsplit("/", 1)[-1]
    assert f'href="/paper/{intro}"' in html.split('<section id="description"')[0]
    for task in raw["tasks"]:
        assert f'href="/task/{task["url"].rsplit("/", 1)[-1]}"' in _section(html, "tasks")
    assert "Data as of" in html and "CC BY-SA 4.0" in html


def test_a_method_page_shows_the_dumps_facts(client: TestClient, dumps: dict[str, Path]) -> None:
    raw = next(m for m in _raw(dumps, "methods") if m["collections"] and m["code_snippet_url"])
    slug = raw["url"].rsplit("/", 1)[-1]
    html = client.get(f"/method/{slug}", headers=HTML).text
    assert raw["full_name"] in html
    assert f'href="{raw["code_snippet_url"]}"' in html
    assert f"{raw['num_papers']:,} in the Papers-with-Code dump" in html
    for c in raw["collections"]:
        assert f'href="/collection/{pwc_slug(c["collection"])}"' in html


def _walk(table: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield table
    for sub in table["subtasks"]:
        yield from _walk(sub)


def test_a_tasks_benchmarks_show_the_best_result_of_the_raw_rows(
    client: TestClient, dumps: dict[str, Path]
) -> None:
    """The count of results and the best value, for every dataset and metric of a task,
    counted here over the evaluation table's rows (higher is better unless the metric's
    name says error or loss)."""
    tables = [t for root in _raw(dumps, "evaluation-tables") for t in _walk(root)]
    table = max(tables, key=lambda t: sum(len(d["sota"]["rows"]) for d in t["datasets"]))
    html = client.get(f"/task/{pwc_slug(table['task'])}", headers=HTML).text
    cells = re.findall(
        r'<td class="num">([\d,]+)</td>\s*<td class="num">([^<]*)</td><td>([^<]*)</td>',
        _section(html, "benchmarks"),
    )
    want = []
    for d in table["datasets"]:
        for metric in d["sota"]["metrics"]:
            rows = [r for r in d["sota"]["rows"] if metric in r["metrics"]]
            values = [r["metrics"][metric] for r in rows]
            numbers = []
            for row in rows:
                text = row["metrics"][metric]
                with contextlib.suppress(ArithmeticError):
                    numbers.append((Decimal(text.rstrip("%")), text, row["model_name"]))
            if not values:
                continue
            lower = re.search("error|loss", metric, re.I) is not None
            best = (min if lower else max)(numbers, key=lambda n: n[0]) if numbers else None
            want.append((str(len(values)), best[1] if best else "–", best[2] if best else ""))
    assert sorted(cells) == sorted(want)


def test_the_paper_page_shows_each_sample_beside_its_repository(client: TestClient) -> None:
    code = _section(
        client.get("/paper/self-attention-attribution-interpreting", headers=HTML).text, "code"
    )
    row = next(r for r in code.split("<tr>") if "yrdddream/attattr" in r)
    assert "ran draft wrong" in row and "scaled_input" in row and "level 1" in row
    assert "examples/generate_attrscore.py" in row


@pytest.mark.parametrize("accept", ["text/html", "text/html,application/xhtml+xml,*/*;q=0.8"])
def test_a_named_query_in_a_browser_is_a_table_with_downloads(
    client: TestClient, accept: str
) -> None:
    path = "/queries/papers-by-author?author=author/yaru-hao"
    page = client.get(path, headers={"Accept": accept})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Self-Attention Attribution" in _section(page.text, "results")
    links = re.findall(r'<a href="([^"]+)" download>(\w+)</a>', page.text)
    assert [name for _, name in links] == ["json", "xml", "csv", "tsv"]
    for href, name in links:
        got = client.get(href.replace("&amp;", "&"), headers={"Accept": accept})
        assert got.status_code == 200, (href, got.text[:200])
        assert name in got.headers["content-type"] or (name == "tsv" and "tab" in got.headers["content-type"])
    assert client.get(path, headers={"Accept": "*/*"}).headers["content-type"].startswith(
        "application/sparql-results+json"
    )


def test_a_dump_page_is_made_once_a_store_version(dumps: dict[str, Path]) -> None:
    """A dump's page counts its entries (585,000 for the archive's papers: a quarter second
    each time), so it is made once a store version: asked again, the server answers the page
    it kept without asking its workers; after a write, the page is made again with the
    write's entry counted."""
    store = memory_store([dumps["methods"]])
    (dump,) = [iri for (iri,) in store.select_values(f"SELECT ?d WHERE {{ ?d a <{KG}Dump> }}")]
    assert dump is not None
    path = "/" + dump[len(BASE) :]
    count = re.compile(r"<dt>entries</dt><dd>([\d,]+)</dd>")
    entry = BASE + "entry/written-after-the-page"
    update = (
        f"INSERT DATA {{ GRAPH <{entry}> {{ <{entry}> <http://www.w3.org/ns/prov#wasDerivedFrom>"
        f" <{dump}> }} }}"
    )
    auth = {"Authorization": "Bearer t", "Content-Type": "application/sparql-update"}
    with client_for(store, workers=1, allow_update=True, update_token="t") as c:
        server = c.app.state.server  # type: ignore[attr-defined]
        first = c.get(path, headers=HTML)
        assert first.status_code == 200
        found = count.search(first.text)
        assert found, first.text[:500]
        entries = int(found.group(1).replace(",", ""))
        assert entries == len(_raw(dumps, "methods")) + 1  # each method, and the dump's own unit
        kept = [k for k in server.pages.cache.entries if k[1] == "dump"]
        assert kept and kept[0][2].startswith(dump)
        server.pages.cache.entries[kept[0]] = first.text.replace(found.group(0), "KEPT")
        assert "KEPT" in c.get(path, headers=HTML).text  # the kept page, not a new one
        assert c.get(path, headers={"Accept": "text/turtle"}).status_code == 200  # RDF: not kept
        assert c.post("/update", content=update, headers=auth).status_code == 204
        again = count.search(c.get(path, headers=HTML).text)
        assert again and int(again.group(1).replace(",", "")) == entries + 1
