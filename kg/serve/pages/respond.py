"""How every page of the site is answered: one `html_response` that carries the security
headers (the Content-Security-Policy, defined here once, and nosniff), and the cache of
what pages made from one version of the store.

Pages run no script and load nothing from elsewhere (the icon is an empty data: URL); a
chart served alone (`chart.svg`) has no image of its own either.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from starlette.responses import Response

#: Pages run no script and load nothing (the icon is an empty data: URL).
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
#: A chart alone (`…/chart.svg`): its own styles, nothing else.
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'"
NOSNIFF = {"X-Content-Type-Options": "nosniff"}
#: Things kept made per store version (a leaderboard page is up to a few hundred kB).
CACHED = 64

Kept = TypeVar("Kept")


def html_response(
    body: str, *, status: int = 200, vary: bool = True, csp: str | None = PAGE_CSP
) -> Response:
    """A page of the site (a template's HTML) with its security headers; `vary`: the same
    URL answers other media types too (RDF, JSON), so caches must key on Accept; `csp`
    None only for the query editor, whose vendored YASGUI runs its scripts."""
    headers = dict(NOSNIFF)
    if csp is not None:
        headers["Content-Security-Policy"] = csp
    if vary:
        headers["Vary"] = "Accept"
    return Response(
        body, status_code=status, media_type="text/html; charset=utf-8", headers=headers
    )


class StoreVersionCache(Generic[Kept]):
    """What the pages made from one version of the store (rendered pages, leaderboards,
    feeds), the last `size` of them, by (store generation, what, which): what an older
    version made is dropped as soon as one from a newer version is kept."""

    def __init__(self, size: int = CACHED) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[int, str, str], Kept] = OrderedDict()

    def get(self, key: tuple[int, str, str]) -> Kept | None:
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key: tuple[int, str, str], value: Kept) -> None:
        self.entries[key] = value
        self.entries.move_to_end(key)
        for old in [k for k in self.entries if k[0] != key[0]]:  # an older store version
            del self.entries[old]
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
