"""A link crawler over the server's pages, in process (Starlette's TestClient over the real
app and its worker pool): what `tests/test_pages_crawl.py` and `bench/pages.py` use."""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

from tests.serve_support import TestClient

#: What a browser sends (Chromium's navigation Accept header).
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name == "href" or (name == "src" and tag in ("script", "img"))):
                if tag == "link" and dict(attrs).get("rel") not in ("stylesheet", "alternate"):
                    continue
                self.links.append(value)


def links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return parser.links


def internal(base_url: str, page: str, href: str) -> str | None:
    """The path and query an href names on this server, or None for other hosts/schemes."""
    target, _ = urldefrag(urljoin(base_url + page, href))
    parts = urlsplit(target)
    origin = urlsplit(base_url)
    if (parts.scheme, parts.netloc) != (origin.scheme, origin.netloc):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def kind_of(url: str) -> str:
    """The page kind a URL names: the first path segment ('/' is 'index')."""
    path = urlsplit(url).path
    return path.strip("/").split("/", 1)[0] or "index"


@dataclass
class Crawl:
    status: dict[str, int] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    #: page kind -> the kinds of the internal links its pages carry
    emits: dict[str, set[str]] = field(default_factory=dict)
    found_on: dict[str, str] = field(default_factory=dict)
    #: links at the last depth left unfetched (more than `last_per_shape` of their shape)
    skipped: int = 0


#: Characters a plain path is made of; a path with others (escapes, odd IRIs) is a shape
#: of its own, so that the links most likely to break are always followed.
_PLAIN = re.compile(r"[a-z0-9/._-]*")


def shape(url: str) -> tuple[str, int, str, bool]:
    """What a link's route depends on: its page kind, how many path segments, which query
    parameters, and whether its path holds characters outside the plain ones."""
    parts = urlsplit(url)
    keys = ",".join(sorted({k.split("=", 1)[0] for k in parts.query.split("&") if k}))
    return kind_of(url), parts.path.count("/"), keys, not _PLAIN.fullmatch(parts.path)


def crawl(
    client: TestClient, starts: Iterable[str], depth: int = 2, last_per_shape: int | None = None
) -> Crawl:
    """Breadth first from `starts`, following the internal links of HTML pages down to
    `depth` (the pages at `depth` are fetched, their links not followed). With
    `last_per_shape`, the pages at `depth` are fetched only up to that many of each `shape`
    (a route answers alike for links of one shape; the pages above are all fetched)."""
    base = str(client.base_url).rstrip("/")
    out = Crawl()
    queue: deque[tuple[str, int]] = deque((s, 0) for s in starts)
    seen = {s for s, _ in queue}
    last = Counter[tuple[str, int, str, bool]]()
    while queue:
        url, level = queue.popleft()
        if last_per_shape is not None and level == depth and level > 0:
            kind = shape(url)
            last[kind] += 1
            if last[kind] > last_per_shape:
                out.skipped += 1
                continue
        response = client.get(url, headers={"Accept": BROWSER}, follow_redirects=False)
        out.status[url] = response.status_code
        next_urls: list[str] = []
        if response.is_redirect:
            location = internal(base, url, response.headers["location"])
            if location is not None:
                out.redirects[url] = location
                next_urls.append(location)
        elif (
            level < depth
            and response.status_code == 200
            and response.headers.get("content-type", "").startswith("text/html")
        ):
            kinds = out.emits.setdefault(kind_of(url), set())
            for href in links(response.text):
                target = internal(base, url, href)
                if target is None:
                    continue
                kinds.add(kind_of(target))
                next_urls.append(target)
        for target in next_urls:
            if target not in seen:
                seen.add(target)
                out.found_on[target] = url
                queue.append((target, level + 1))
    return out
