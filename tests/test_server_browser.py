"""The query page in a real headless Chromium (Debian's `chromium`, driven by Playwright).

It loads the vendored YASGUI from `kg serve` with no other network, runs the default query
and a named-query example, and finds the results in the DOM; it also follows a link on a
Linked Data page. Set KG_SCREENSHOT=docs/serve-page.png to refresh the screenshot in docs/.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.rdf.store import GraphStore
from tests.query_data import build
from tests.serve_support import STOPPED, ServeProcess

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium: apt-get install -y chromium"
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]) -> Iterator[str]:
    path = tmp_path_factory.mktemp("browser") / "store"
    with GraphStore.open(path) as store:
        build(store, [str(p) for p in seed_paths])
    proc = ServeProcess(["--store", str(path)], ["--workers", "2"])
    try:
        yield proc.url
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda msg: page.problems.append(f"console: {msg.text}") if msg.type == "error" else None,
    )

    def offline(request: Any) -> None:  # the page must work with no network but the server
        if not request.url.startswith((server, "data:")):
            page.problems.append(f"request to another host: {request.url}")

    page.on("request", offline)
    try:
        yield page
    finally:
        page.close()


def test_the_query_page_runs_queries_and_shows_results(page: Any, server: str) -> None:
    page.goto(f"{server}/query")
    page.wait_for_selector(".yasqe .CodeMirror")
    # The default query lists papers with their titles.
    page.click(".yasqe_queryButton")
    page.wait_for_selector(".yasr table tbody tr td", timeout=30_000)
    table = page.inner_text(".yasr table")
    assert "Attention is Not Only a Weight" in table
    assert "Self-Attention Attribution" in table
    # A named query, preloaded as an example with its example parameter bound.
    names = page.eval_on_selector_all("#kg-examples option", "os => os.map(o => o.textContent)")
    assert "papers-by-author" in names and "shared-methods" in names
    page.select_option("#kg-examples", label="papers-by-author")
    assert "goro-kobayashi" in page.eval_on_selector(
        ".yasqe .CodeMirror", "e => e.CodeMirror.getValue()"
    )
    page.click(".yasqe_queryButton")
    page.wait_for_function(
        "() => document.querySelector('.yasr').innerText.includes('position')",
        timeout=30_000,
    )
    rows = page.inner_text(".yasr table tbody")
    assert "Attention is Not Only a Weight" in rows and "Self-Attention" not in rows
    assert "papers-by-author:" in page.inner_text("#kg-summary")
    shot = os.environ.get("KG_SCREENSHOT")
    if shot:
        page.screenshot(path=shot)
    assert page.problems == []


def test_the_query_page_takes_kgs_usual_prefixes(page: Any, server: str) -> None:
    """`kg:Paper` with no PREFIX line: the editor marks no error and the endpoint answers."""
    page.goto(f"{server}/query")
    page.wait_for_selector(".yasqe .CodeMirror")
    # a prefix kg does not know is marked ...
    page.eval_on_selector(
        ".yasqe .CodeMirror", "e => e.CodeMirror.setValue('SELECT * { ?p a nope:Paper }')"
    )
    page.wait_for_selector(".yasqe .parseErrorIcon", timeout=10_000)
    # ... and the mark goes once the query uses only kg's prefixes
    query = "SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }"
    page.eval_on_selector(".yasqe .CodeMirror", f"e => e.CodeMirror.setValue('{query}')")
    page.wait_for_selector(".yasqe .parseErrorIcon", state="detached", timeout=10_000)
    page.click(".yasqe_queryButton")
    page.wait_for_selector(".yasr table tbody tr td", timeout=30_000)
    assert '"2"' in page.inner_text(".yasr table tbody")
    assert page.problems == []


def test_a_syntax_error_shows_the_parsers_message(page: Any, server: str) -> None:
    page.goto(f"{server}/query")
    page.wait_for_selector(".yasqe .CodeMirror")
    page.eval_on_selector(".yasqe .CodeMirror", "e => e.CodeMirror.setValue('SELECT * WHERE {')")
    page.click(".yasqe_queryButton")
    page.wait_for_function(
        "() => document.querySelector('.yasr').innerText.includes('does not parse')",
        timeout=30_000,
    )
    # The only console error is the failed request itself (the 400 the page reports).
    assert all("400" in p for p in page.problems), page.problems


def test_linked_data_pages_link_to_their_neighbours(page: Any, server: str) -> None:
    page.goto(f"{server}/paper/self-attention-attribution-interpreting")
    assert "Self-Attention Attribution" in page.inner_text("h1")
    page.click("a[href='/author/yaru-hao']")
    page.wait_for_selector("h1")
    assert page.inner_text("h1") == "Yaru Hao"
    assert page.url == f"{server}/author/yaru-hao"
    assert page.problems == []


def test_the_search_box_finds_the_seed_paper(page: Any, server: str) -> None:
    """The query page's search box: typed into, submitted, the hits page lists the seed paper
    first with its marked words; its link leads to the paper's page, whose own search box
    searches again."""
    page.goto(f"{server}/query")
    page.wait_for_selector("#kg-search-q")
    page.fill("#kg-search-q", "attention is not only a weight")
    page.press("#kg-search-q", "Enter")
    page.wait_for_selector("ol.hits li")
    first = page.inner_text("ol.hits li:first-child")
    assert "Attention is Not Only a Weight" in first and "2020" in first
    assert page.eval_on_selector_all("ol.hits li:first-child mark", "ms => ms.length") > 0
    page.click("ol.hits li:first-child a")
    page.wait_for_selector("h1")
    assert page.url == f"{server}/paper/attention-module-is-not-only-a-weight"
    page.fill("form.kg-search input[name=q]", "self-attention attribution")
    page.select_option("form.kg-search select[name=type]", "paper")
    page.press("form.kg-search input[name=q]", "Enter")
    page.wait_for_selector("ol.hits li")
    assert "Self-Attention Attribution" in page.inner_text("ol.hits li:first-child")


def test_a_named_querys_form_runs_and_its_results_link_to_local_pages(
    page: Any, server: str
) -> None:
    page.goto(f"{server}/query")
    page.wait_for_selector(".yasqe .CodeMirror")
    page.select_option("#kg-examples", label="papers-by-author")
    form = page.wait_for_selector("#kg-param-form[data-query='papers-by-author']")
    field = form.query_selector("input[name='author']")
    assert field.get_attribute("required") is not None  # the header marks it required
    assert field.input_value() == "Goro Kobayashi"  # the header's example
    # completion from the store: typing part of a name offers the author's local key
    field.fill("")
    field.type("hao")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#kg-param-form datalist option')]"
        ".some(o => o.value === 'author/yaru-hao')",
        timeout=30_000,
    )
    field.fill("author/yaru-hao")
    form.query_selector("button[type='submit']").click()
    page.wait_for_function(
        "() => document.querySelector('.yasr').innerText.includes('Self-Attention Attribution')",
        timeout=30_000,
    )
    assert "yaru-hao" in page.eval_on_selector(".yasqe .CodeMirror", "e => e.CodeMirror.getValue()")
    # a bad value is refused by the server's binding, and the form says why
    field.fill("http://bad iri")
    form.query_selector("button[type='submit']").click()
    page.wait_for_function(
        "() => document.querySelector('.kg-form-error').innerText.includes('not a valid IRI')",
        timeout=30_000,
    )
    field.fill("author/yaru-hao")
    shot = os.environ.get("KG_SCREENSHOT_QUERY")
    if shot:
        page.screenshot(path=shot, full_page=True)
    # the result's paper IRI links to this server's entity page, not to w3id.org
    link = page.wait_for_selector(
        ".yasr a.kg-local[href='/paper/self-attention-attribution-interpreting']"
    )
    assert link.get_attribute("target") is None
    assert link.get_attribute("title").startswith("https://w3id.org/kg/id/paper/")
    # YASR's result table takes the pointer events of its cells, so follow the link's href
    page.goto(server + link.get_attribute("href"))
    assert page.url == f"{server}/paper/self-attention-attribution-interpreting"
    similar = page.wait_for_selector("section#similar")
    text = similar.inner_text()
    assert "Attention is Not Only a Weight" in text  # the other seed paper
    assert "shares" in text and "method" in text  # and what explains it
    assert page.query_selector("section#code .flag.official") is not None
    assert "Yaru Hao" in page.inner_text("section#authors")
    shot = os.environ.get("KG_SCREENSHOT_PAPER")
    if shot:
        page.set_viewport_size({"width": 900, "height": 1400})
        page.screenshot(path=shot)
    # the only console error is the refused binding's 400, which the form reported
    assert [p for p in page.problems if "400" not in p] == [], page.problems


def test_the_downloads_follow_the_querys_form(page: Any, server: str) -> None:
    page.goto(f"{server}/query")
    page.wait_for_selector(".yasqe .CodeMirror")
    assert page.is_visible("#kg-downloads a[data-format='csv']")
    assert not page.is_visible("#kg-downloads a[data-format='turtle']")
    page.select_option("#kg-examples", label="paper-card")  # a CONSTRUCT query
    page.wait_for_function(
        "() => !document.querySelector(\"#kg-downloads a[data-format='turtle']\").hidden"
    )
    assert not page.is_visible("#kg-downloads a[data-format='csv']")
    with page.expect_download() as info:
        page.click("#kg-downloads a[data-format='turtle']")
    body = Path(info.value.path()).read_text(encoding="utf-8")
    assert "Self-Attention Attribution" in body or "Attention is Not Only" in body
    assert page.problems == []


#: One page of each kind on the README store, and the sections a reader comes for on it.
PAGE_KINDS = {
    "paper": ("/paper/self-attention-attribution-interpreting", ["#authors", "#code", "#similar", "#provenance"]),
    "task": ("/task/image-classification", ["#description", "#benchmarks", "#methods", "#papers"]),
    "dataset": ("/dataset/cifar-10", ["#tasks", "#benchmarks", "#papers"]),
    "method": ("/method/transformer", ["#description", "#papers", "dl.facts"]),
    "collection": ("/collection/attention-mechanisms", ["#methods"]),
    "area": ("/area/audio", ["#tasks", "#collections"]),
    "author": ("/author/yaru-hao", ["#papers", "#coauthors", "#tasks"]),
    "repository": ("/repository/github.com/yrdddream/attattr", ["#papers", "#samples"]),
    "dump": ("/dump/evaluation-tables/2020-08-28", ["#entries", "dl.facts"]),
    "record": ("/graph/record/paper/self-attention-attribution-interpreting", ["dl.facts"]),
    "search": ("/search?q=attention", ["ol.hits li"]),
    "query": ("/queries/tasks-in-area?area=audio", ["#results table", "#downloads a"]),
}


@pytest.fixture(scope="module")
def readme_server(readme_store: Path) -> Iterator[str]:
    proc = ServeProcess(["--store", str(readme_store)], ["--workers", "2"])
    try:
        yield proc.url
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


@pytest.mark.parametrize("kind", list(PAGE_KINDS))
def test_every_page_kind_shows_its_sections(browser: Any, readme_server: str, kind: str) -> None:
    """Each page kind, opened in Chromium on the README store, has its key sections and the
    source footer (snapshot date, licence). KG_SCREENSHOTS=docs/ saves docs/page-KIND.png."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on(
        "request",
        lambda r: None if r.url.startswith((readme_server, "data:")) else problems.append(r.url),
    )
    try:
        path, sections = PAGE_KINDS[kind]
        response = page.goto(readme_server + path)
        assert response is not None and response.status == 200
        for selector in sections:
            assert page.query_selector(selector) is not None, (kind, selector)
        assert page.inner_text("h1").strip()
        footer = page.inner_text("footer.source")
        if kind not in ("search", "query"):
            assert "Data as of" in footer and "CC BY-SA 4.0" in footer, footer
        shots = os.environ.get("KG_SCREENSHOTS")
        if shots:
            page.screenshot(path=str(Path(shots) / f"page-{kind}.png"))
        assert problems == []
    finally:
        page.close()
