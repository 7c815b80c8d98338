"""The front page, the query page's new place, no dead ends and pages that read cleanly, on
the README store, in process (the real app and its worker pool, warmed as `kg serve` is).

* `/` shows what the graph holds (counted here independently), the newest new bests (the
  site feed's first entries), the most-used benchmarks and the areas; every leaderboard is
  three clicks from it (home → tasks → task → leaderboard).
* Paths holding a name the resolver reads (`/paper/arxiv/1911.04252v2`,
  `/leaderboard/Image%20Classification/ImageNet`) redirect to the thing's page; a miss is
  a 404 page with "did you mean" links for browsers and JSON for clients.
* Descriptions' TeX is MathML; no datatype badge; feeds are titled by name and carry a
  stylesheet.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape, unescape
from pathlib import Path
from urllib.parse import unquote

import pytest

from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.serve.app import ServerConfig, create_app
from kg.serve.pool import Source
from kg.serve.render import markdown, math_text, tex_text
from tests.crawl_support import BROWSER, links
from tests.serve_support import BASE, TestClient

KG = "https://w3id.org/kg/ontology#"
HTML = {"Accept": BROWSER}
NOISY = "/paper/self-training-with-noisy-student-improves"


@pytest.fixture(scope="module")
def client(readme_store: Path) -> Iterator[TestClient]:
    config = ServerConfig(base_iri=BASE, workers=2, refresh=0.0, warm=300.0)
    app = create_app(Source(path=readme_store), config)
    with TestClient(app, base_url="http://kg.test") as c:
        yield c


@pytest.fixture(scope="module")
def store(readme_store: Path) -> Iterator[GraphStore]:
    opened = GraphStore.open(readme_store, read_only=True)
    yield opened
    opened.close()


def _rows(store: GraphStore, sparql: str) -> list[list[str]]:
    result = store.query(f"PREFIX kg: <{KG}> {sparql}")
    assert isinstance(result, SelectResult)
    return [[t.value if t is not None else "" for t in row] for row in result.rows]


def _paths(html: str) -> list[str]:
    return [unquote(h.split("#")[0]) for h in links(html) if h.startswith("/")]


# --- the front page -------------------------------------------------------------------------


def test_the_front_page_says_what_the_graph_holds(client: TestClient, store: GraphStore) -> None:
    page = client.get("/", headers=HTML)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = re.sub(r"<[^>]+>", "", page.text)
    for cls, name in (("Paper", "papers"), ("Task", "tasks"), ("Leaderboard", "leaderboards")):
        n = len(_rows(store, f"SELECT DISTINCT ?s WHERE {{ ?s a kg:{cls} }}"))
        assert f"{n:,} {name}" in text, (cls, n)
    snapshots = {r[0] for r in _rows(store, "SELECT ?d WHERE { ?x kg:snapshot ?d }")}
    assert f"Data as of {max(snapshots)}" in text
    assert 'action="/search"' in page.text  # a search box
    found = set(_paths(page.text))
    assert {"/query", "/queries", "/feeds/sota.atom", "/tasks"} <= found
    assert any(p.startswith("/area/") for p in found) and any(
        p.startswith("/leaderboard/") for p in found
    )


def test_the_newest_new_bests_are_the_site_feeds_first_entries(client: TestClient) -> None:
    feed = client.get("/feeds/sota.atom").text
    boards = re.findall(r'<link rel="alternate" type="text/html" href="http://kg\.test([^"#]+)', feed)
    assert boards, feed[:500]
    page = client.get("/", headers=HTML).text
    section = page[page.index('id="new-bests"') : page.index('id="benchmarks"')]
    shown = [p for p in _paths(section) if p.startswith("/leaderboard/")]
    assert shown == [unquote(b) for b in boards[: len(shown)]] and len(shown) == 8


def test_every_leaderboard_is_three_clicks_from_the_front_page(
    client: TestClient, store: GraphStore
) -> None:
    every = _rows(store, "SELECT ?lb ?t WHERE { ?lb a kg:Leaderboard ; kg:onTask ?t } ORDER BY ?lb")
    no_area = {r[0] for r in _rows(store, "SELECT ?t WHERE { ?t a kg:Task FILTER NOT EXISTS "
                                          "{ ?t kg:area ?a } }")}
    sample = every[:: max(1, len(every) // 12)]
    sample += [r for r in every if r[1] in no_area][:3]  # a task in no area too
    home = set(_paths(client.get("/", headers=HTML).text))
    assert "/tasks" in home
    tasks = set(_paths(client.get("/tasks", headers=HTML).text))
    for board, task in sample:
        task_path = "/" + task.removeprefix(BASE)
        assert task_path in tasks, task_path
        on_task = set(_paths(client.get(task_path, headers=HTML).text))
        assert "/" + board.removeprefix(BASE) in on_task, (board, task_path)


def test_the_front_page_was_made_at_start_up(client: TestClient) -> None:
    server = client.app.state.server  # type: ignore[attr-defined]
    assert server.warming is None  # done before the first request
    assert server.pages.feeds.cache.entries  # the site feed, made by the warm-up
    assert any(k[2] == "home" for k in server.pages.cache.entries)


# --- the query page and the named queries ---------------------------------------------------


def test_the_query_page_moved_and_old_links_follow(client: TestClient) -> None:
    page = client.get("/query")
    assert page.status_code == 200 and "/static/yasgui/yasgui.min.js" in page.text
    old = client.get("/?query=ASK%7B%7D", follow_redirects=False)
    assert old.status_code == 301 and old.headers["location"] == "/query?query=ASK%7B%7D"
    browse = client.get("/sparql", headers=HTML, follow_redirects=False)
    assert browse.status_code == 303 and browse.headers["location"] == "/query"
    for path in ("/", NOISY, "/tasks", "/queries"):  # every page's header links to it
        assert '<a href="/query">' in client.get(path, headers=HTML).text, path


def test_queries_are_a_page_in_a_browser_and_json_for_clients(client: TestClient) -> None:
    listing = client.get("/queries").json()
    assert listing and all("sparql" in q for q in listing)
    for accept in ({"Accept": "application/json"}, {}):
        assert client.get("/queries", headers=accept).headers["content-type"].startswith(
            "application/json"
        )
    page = client.get("/queries", headers=HTML)
    assert page.headers["content-type"].startswith("text/html")
    paths = _paths(page.text)
    assert {f"/queries/{q['name']}" for q in listing} <= {p.split("?")[0] for p in paths}


# --- no dead ends ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/paper/arxiv/1911.04252", NOISY),
        ("/paper/arxiv/1911.04252v2", NOISY),
        ("/leaderboard/Image%20Classification/ImageNet", "/leaderboard/image-classification/imagenet"),
        ("/task/image%20classification", "/task/image-classification"),
        ("/dataset/IMAGENET", "/dataset/imagenet"),
        ("/task/Image%20Classification/sota.atom", "/task/image-classification/sota.atom"),
    ],
)
def test_a_name_the_resolver_reads_redirects_to_the_things_page(
    client: TestClient, path: str, target: str
) -> None:
    moved = client.get(path, headers=HTML, follow_redirects=False)
    assert moved.status_code == 302 and moved.headers["location"] == target
    assert client.get(target, headers=HTML).status_code == 200


def test_the_arxiv_path_reaches_the_noisy_student_paper(client: TestClient) -> None:
    page = client.get("/paper/arxiv/1911.04252", headers=HTML)
    assert page.status_code == 200
    assert "Self-training with Noisy Student improves ImageNet classification" in page.text


def test_a_misspelt_leaderboard_gets_did_you_mean(client: TestClient) -> None:
    path = "/leaderboard/image-classification/imagenett"
    page = client.get(path, headers=HTML)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "Did you mean" in page.text
    assert "/leaderboard/image-classification/imagenet" in _paths(page.text)
    for accept in ({"Accept": "application/json"}, {}):
        answer = client.get(path, headers=accept)
        assert answer.status_code == 404
        body = answer.json()
        assert f"{BASE}leaderboard/image-classification/imagenet" in body["candidates"]


def test_a_path_that_names_nothing_is_a_page_for_a_browser(client: TestClient) -> None:
    page = client.get("/no/such/thing", headers=HTML)
    assert page.status_code == 404 and "<h1>Not found</h1>" in page.text
    assert client.get("/no/such/thing").headers["content-type"].startswith("text/plain")


# --- pages that read cleanly ----------------------------------------------------------------


def test_tex_in_descriptions_is_mathml_and_no_datatype_badge(client: TestClient) -> None:
    # the page as it opens (the folded "All statements" shows the stored literals as they are)
    method = client.get("/method/resnet", headers=HTML).text.split('<details class="all">')[0]
    assert "<math" in method and "\\mathcal" not in method
    assert "$" not in re.sub(r"<[^>]+>", "", method)
    paper = client.get(NOISY, headers=HTML).text
    assert "xsd:date" not in paper and "xsd:decimal" not in paper


def test_feeds_are_titled_by_name_and_styled_for_browsers(client: TestClient) -> None:
    feed = client.get("/task/image-classification/sota.atom")
    assert feed.headers["content-type"].startswith("application/atom+xml")
    assert "<title type=\"text\">kg: new bests on Image Classification</title>" in feed.text
    assert '<?xml-stylesheet type="text/css" href="/static/feed.css"?>' in feed.text
    seen = client.get("/task/image-classification/sota.atom", headers=HTML)
    assert seen.headers["content-type"].startswith("application/xml")
    assert client.get("/static/feed.css").status_code == 200


def test_math_is_sanitised_and_money_stays_text() -> None:
    html = str(markdown("cost $5 and $10; $x<script>alert(1)</script>$ and $\\alpha$"))
    assert "<script" not in html and "$5 and $10" in html
    assert html.count("<math") == 2 and "α" in html


# --- names, not slugs, and no raw TeX, on every human page ---------------------------------

#: Link text that is a key (`task/image-classification`) instead of the thing's name.
KEY_TEXT = re.compile(
    r"^(?:area|task|dataset|method|paper|author|repository|collection|leaderboard|venue)/\S+$"
)
RAW_TEX = ("$\\", "\\mathcal", "\\frac")
KINDS = ("Area", "Task", "Dataset", "Method", "Paper", "Author", "Repository", "Collection",
         "Leaderboard")  # fmt: skip


def _sample(store: GraphStore) -> dict[str, list[str]]:
    """Pages of each kind: the first few, and those whose stored text holds TeX (a method's
    or dataset's description, a paper's title)."""
    pages: dict[str, list[str]] = {}
    for cls in KINDS:
        first = _rows(store, f"SELECT ?s WHERE {{ ?s a kg:{cls} }} ORDER BY ?s LIMIT 3")
        tex = _rows(
            store,
            f"SELECT DISTINCT ?s WHERE {{ ?s a kg:{cls} ; "
            "<http://purl.org/dc/terms/description>|<http://purl.org/dc/terms/title> ?t "
            'FILTER(CONTAINS(?t, "$\\\\") || CONTAINS(?t, "$K$")) } ORDER BY ?s LIMIT 3',
        )
        pages[cls] = ["/" + r[0].removeprefix(BASE) for r in first + tex]
    return pages


def _link_texts(html: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", m))).strip()
        for m in re.findall(r"<a\b[^>]*>(.*?)</a>", html, re.DOTALL)
    ]


def _reader_text(html: str) -> str:
    """What a reader sees: no tags, no scripts or styles, entities decoded."""
    html = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.DOTALL | re.IGNORECASE)
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_no_page_shows_raw_tex_or_a_key_for_a_name(client: TestClient, store: GraphStore) -> None:
    sample = _sample(store)
    assert sample["Method"][3:] and sample["Paper"][3:], sample  # TeX to render is there
    paths = [p for kind in sample.values() for p in kind]
    paths += ["/", "/tasks", "/queries", "/search?q=mathcal", "/search?q=residual"]
    for path in paths:
        page = client.get(path, headers=HTML)
        assert page.status_code == 200, path
        keys = [t for t in _link_texts(page.text) if KEY_TEXT.match(t)]
        assert not keys, (path, keys[:5])
        seen = _reader_text(page.text)  # the folded "All statements" included
        assert not [t for t in RAW_TEX if t in seen], (path, seen[seen.find("\\") - 80 :][:200])
    search = client.get("/search?q=mathcal", headers=HTML).text
    assert search.count('<div class="s">') >= 3 and "𝒳" in search  # TeX made readable


def test_the_leaderboard_page_names_its_task_and_dataset(
    client: TestClient, store: GraphStore
) -> None:
    rdfs = "http://www.w3.org/2000/01/rdf-schema#label"
    for task, dataset in (("image-classification", "imagenet"), ("node-classification", "cora")):
        page = client.get(f"/leaderboard/{task}/{dataset}", headers=HTML).text
        for kind, slug in (("task", task), ("dataset", dataset)):
            (name,) = {
                r[0]
                for r in _rows(store, f"SELECT ?l WHERE {{ <{BASE}{kind}/{slug}> <{rdfs}> ?l }}")
            }
            assert f'<dt>{kind}</dt><dd><a href="/{kind}/{slug}">{escape(name)}</a></dd>' in page
            assert f'title="New bests on {escape(name)}"' in page


def test_tex_beside_digits_is_math_prices_stay_and_snippets_read_as_text() -> None:
    html = str(markdown("a 3$\\times$3 kernel, if $\\nabla L<0 $; costs $5-$10"))
    assert html.count("<math") == 2 and "×" in html and "$5-$10" in html
    title = str(math_text("Merging $K$-means <b>fast</b> for $5"))
    assert title.count("<math") == 1 and "&lt;b&gt;" in title and "for $5" in title
    cut = "mathcal{L}_{i} = \\sum \\left(x^{2}\\right) with $\\alpha$ and \\mathbf{X"
    assert tex_text(cut) == "ℒ_i = ∑(x²) with α and X"
    assert tex_text("costs $5 and $10, {braces} stay") == "costs $5 and $10, {braces} stay"
