"""No dead link: a crawler over the README store's pages, in process (the real app and its
worker pool), from `/`, `/search?q=attention` and one page of each kind, following every
internal href and src to depth 2 with a browser's Accept header (every page at depths 0 and
1; at depth 2, up to LAST_PER_SHAPE links of each shape).

Every URL answers 200, or one of the documented redirects (REDIRECTS), leaderboard pages
included. No URL a page links to answers 406 to a browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.serve.app import ServerConfig, create_app
from kg.serve.pool import Source
from tests.crawl_support import Crawl, crawl, kind_of
from tests.serve_support import BASE, TestClient

#: One page of each kind (the smallest interesting ones, to keep the crawl short).
STARTS = {
    "index": "/",
    "search": "/search?q=attention",
    "paper": "/paper/adam-a-method-for-stochastic-optimization",
    "task": "/task/image-dehazing",
    "dataset": "/dataset/o-haze",
    "method": "/method/adam",
    "collection": "/collection/stochastic-optimization",
    "area": "/area/audio",
    "author": "/author/yaru-hao",
    "repository": "/repository/github.com/yrdddream/attattr",
    "dump": "/dump/methods/2022-05-20",
    "graph": "/graph/record/paper/self-attention-attribution-interpreting",
    "queries": "/queries/tasks-in-area?area=audio",
    "leaderboard": "/leaderboard/image-dehazing/o-haze",
    "query": "/query",
}
#: Redirects the server documents (docs/serve.md): /sparql without a query, in a browser,
#: goes to the query page.
REDIRECTS = {"/sparql": "/query"}
#: The kinds of links each page kind carries (by the first segment of the link's path).
EMITS = {
    "search": {"method", "collection", "queries", "sparql", "index"},
    "paper": {"method", "graph", "similar", "dump", "queries", "sparql", "index"},
    "task": {"dataset", "paper", "area", "leaderboard", "method", "graph", "dump"},
    "dataset": {"task", "paper", "leaderboard", "graph", "dump"},
    "method": {"collection", "paper", "graph", "dump"},
    "collection": {"method", "area", "dump"},
    "area": {"task", "collection", "dump"},
    "author": {"paper", "author", "task", "graph"},
    "repository": {"paper", "graph"},
    "dump": {"method", "graph", "dump"},
    "graph": {"paper", "author", "repository", "graph", "task", "method"},
    "queries": {"queries"},
    # the front page: its areas, tasks, datasets and leaderboards, the new bests' papers,
    # the site feed, the query page and the named queries
    "index": {"area", "task", "leaderboard", "paper", "feeds", "query", "queries"},
    "query": {"static", "index", "queries", "feeds"},
    "leaderboard": {"task", "dataset", "paper", "leaderboard"},
}
#: The pages at depth 2 are fetched up to this many of each shape of link (kind, path depth,
#: query parameters, odd characters): every route and every odd IRI is tried, without
#: fetching thousands of pages of one route (the crawl was 3,000+ URLs, the suite's 4th most
#: costly file; 25 of each shape gave 1,292 URLs in 46 CPU-s, 10 give 920 in 34).
LAST_PER_SHAPE = 10
MIN_URLS = 900


@pytest.fixture(scope="module")
def result(readme_store: Path) -> Iterator[Crawl]:
    # warmed as `kg serve` is: the site feed (linked from `/`) is made before the crawl
    config = ServerConfig(base_iri=BASE, workers=2, refresh=0.0, warm=300.0)
    app = create_app(Source(path=readme_store), config)
    with TestClient(app, base_url="http://kg.test") as client:
        yield crawl(client, STARTS.values(), depth=2, last_per_shape=LAST_PER_SHAPE)


def test_the_crawl_reaches_every_page_kind_and_enough_urls(result: Crawl) -> None:
    reached = {kind_of(url) for url, status in result.status.items() if status == 200}
    assert set(STARTS) <= reached, set(STARTS) - reached
    assert len(result.status) >= MIN_URLS, len(result.status)


def test_every_page_kind_emits_its_kinds_of_links(result: Crawl) -> None:
    for kind, expected in EMITS.items():
        assert expected <= result.emits.get(kind, set()), (kind, expected - result.emits[kind])


def test_no_dead_link(result: Crawl) -> None:
    dead = {
        url: status
        for url, status in result.status.items()
        if status != 200 and url not in REDIRECTS
    }
    found = {u: (s, result.found_on.get(u)) for u, s in dead.items()}
    assert found == {}, list(found.items())[:20]
    for url, target in REDIRECTS.items():
        if url in result.status:
            assert result.redirects[url] == target
    assert 406 not in result.status.values()
