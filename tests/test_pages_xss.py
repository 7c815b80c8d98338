"""Hostile text renders inert on every page kind: descriptions, titles, model names, names
and links holding <script>, javascript: URLs and event attributes, in generated dumps
(kg.testing.dumps) and a seed record turned hostile, served by the real app and workers."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from kg.testing.dumps import write_archive
from tests.serve_support import (
    BASE,
    HOSTILE_SLUG,
    TestClient,
    awkward_record,
    client_for,
    memory_store,
    write_records,
)

SCRIPT = "<script>alert('xss')</script>"
ATTRIBUTE = '<img src=x onerror="alert(1)"><a href="javascript:alert(2)" onclick="alert(3)">x</a>'
LINK = "[click me](javascript:alert(4)) [ok](JaVaScRiPt:alert(5))"
HOSTILE = f"{SCRIPT} {ATTRIBUTE} {LINK} <svg onload=alert(6)>"
BROWSER = {"Accept": "text/html"}


def _hostile_archive(directory: Path) -> list[Path]:
    paths = write_archive(directory, scale=0.0005, seed=3)

    def rewrite(kind: str, change: Any) -> None:
        path = paths[kind]
        items = json.loads(gzip.decompress(path.read_bytes()))
        for item in items:
            change(item)
        path.write_bytes(gzip.compress(json.dumps(items).encode()))

    def paper(p: dict[str, Any]) -> None:
        p["title"] = f"{p['title']} {SCRIPT}"
        p["abstract"] = HOSTILE
        p["authors"] = [*p["authors"][:2], 'Eve <b onmouseover="alert(7)">Evil</b>']
        for m in p["methods"]:
            m["description"] = HOSTILE

    def method(m: dict[str, Any]) -> None:
        m["description"] = HOSTILE
        m["full_name"] = SCRIPT
        m["code_snippet_url"] = "javascript:alert(8)"
        for c in m["collections"]:
            c["collection"] = f"{c['collection']} {SCRIPT}"

    def dataset(d: dict[str, Any]) -> None:
        d["description"] = HOSTILE
        d["full_name"] = ATTRIBUTE
        d["homepage"] = "javascript:alert(9)"

    def table(t: dict[str, Any]) -> None:
        t["description"] = HOSTILE
        for d in t["datasets"]:
            d["description"] = HOSTILE
            for row in d["sota"]["rows"]:
                row["model_name"] = f"{row['model_name']} {ATTRIBUTE}"
                row["paper_title"] = row["paper_title"] and f"{row['paper_title']} {SCRIPT}"
        for sub in t["subtasks"]:
            table(sub)

    rewrite("papers-with-abstracts", paper)
    rewrite("methods", method)
    rewrite("datasets", dataset)
    rewrite("evaluation-tables", table)
    return list(paths.values())


@pytest.fixture(scope="module")
def client(
    tmp_path_factory: pytest.TempPathFactory, seed_records: list[dict[str, Any]]
) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("xss")
    record = awkward_record(seed_records[1])
    record["abstract"] = HOSTILE
    paths = [write_records(tmp, [record]), *_hostile_archive(tmp / "dumps")]
    with client_for(memory_store(paths), workers=1) as c:
        yield c


def _one(client: TestClient, cls: str) -> str:
    """A path of one entity of the class (the one with the most statements)."""
    query = (
        f"SELECT ?s (COUNT(*) AS ?n) WHERE {{ ?s a <https://w3id.org/kg/ontology#{cls}> ; ?p ?o "
        f'FILTER(STRSTARTS(STR(?s), "{BASE}")) }} GROUP BY ?s ORDER BY DESC(?n) ?s LIMIT 1'
    )
    got = client.get("/sparql", params={"query": query}, headers={"Accept": "application/json"})
    iri = got.json()["results"]["bindings"][0]["s"]["value"]
    return "/" + quote(iri[len(BASE) :], safe="/")


class _Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "iframe", "object", "embed", "svg", "img"):
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}>")
            text = "".join((value or "").split()).lower()
            dangerous = text.startswith(("javascript:", "data:")) and text != "data:,"
            if name in ("href", "src", "action") and dangerous:  # data:, is the empty icon
                self.problems.append(f"<{tag} {name}={value!r}>")


KINDS = {
    "paper": "Paper",
    "task": "Task",
    "dataset": "Dataset",
    "method": "Method",
    "collection": "Collection",
    "area": "Area",
    "author": "Author",
    "repository": "Repository",
    "dump": "Dump",
    "record": "Record",
}


@pytest.mark.parametrize("kind", [*KINDS, "hostile-paper", "search", "query"])
def test_hostile_text_renders_inert(client: TestClient, kind: str) -> None:
    if kind == "hostile-paper":
        path = f"/paper/{HOSTILE_SLUG}"
    elif kind == "search":
        path = "/search?q=" + quote("alert script <script>")
    elif kind == "query":
        path = "/queries/papers-by-title?text=" + quote(SCRIPT)
    else:
        path = _one(client, KINDS[kind])
    page = client.get(path, headers=BROWSER)
    assert page.status_code == 200, (path, page.text[:300])
    assert page.headers["content-type"].startswith("text/html")
    audit = _Audit()
    audit.feed(page.text)
    assert audit.problems == [], (path, audit.problems)
    assert "<script" not in page.text.lower()


def test_hostile_text_is_shown_as_text(client: TestClient) -> None:
    """The hostile words stay readable (escaped), not dropped: a title is text."""
    page = client.get(f"/paper/{HOSTILE_SLUG}", headers=BROWSER).text
    assert "&lt;script&gt;alert(" in page
    method = client.get(_one(client, "Method"), headers=BROWSER).text
    assert 'href="javascript' not in method.lower()
    assert "click me" in method  # the link's text is kept, its target is not
    task = client.get(_one(client, "Task"), headers=BROWSER).text
    assert "&lt;img src=x onerror=" in task  # a model name, in the best results
