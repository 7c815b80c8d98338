"""What one MCP answer may hold: pages of `top` items from an `offset`, with the total and
the next page's offset, and a byte budget that cuts the longest lists until the answer fits.

An assistant reads a tool's answer into its context: a list of 25 rows it can page through
serves it better than 10,000 rows it cannot hold. Every list a tool returns is a `Page`
(`total`, `offset`, `next_offset`: None on the last page); `fit` then cuts the pages of an
answer, longest first, until its compact JSON is within the budget, and says so in a note.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Items a list holds by default, and at most.
DEFAULT_TOP = 25
MAX_TOP = 100
#: The compact JSON of one answer, at most (the client receives it twice: as text and as
#: structured content, so about twice this in all).
ANSWER_BYTES = 12_000


def size(data: Any) -> int:
    """The length of `data` as compact JSON (what a tool answer's text carries)."""
    return len(compact(data))


def compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass
class Page:
    """A slice of a list in an answer: `items` (a list inside the answer, cut in place) from
    `offset`, of `total` (None: unknown, `more` says whether items follow the slice), whose
    total, offset and next_offset are written into `holder` under `prefix`."""

    items: list[Any]
    offset: int
    total: int | None
    more: bool
    holder: dict[str, Any]
    prefix: str = ""
    cut: bool = False

    def sync(self) -> None:
        end = self.offset + len(self.items)
        beyond = end < self.total if self.total is not None else (self.more or self.cut)
        self.holder[f"{self.prefix}total"] = self.total
        self.holder[f"{self.prefix}offset"] = self.offset
        self.holder[f"{self.prefix}next_offset"] = end if beyond else None


def paged(
    holder: dict[str, Any], key: str, items: Sequence[Any], top: int, offset: int, *,
    total: int | None = -1, more: bool = False, prefix: str = "",
) -> Page:
    """Put a page of `items` at `holder[key]`, with its total, offset and next_offset in
    `holder` (named with `prefix`). By default `items` is the whole list and the page is
    items [offset, offset + top); given a `total` (None: unknown, then `more` says whether
    items follow), `items` already starts at `offset`."""
    if total == -1:
        kept, total = list(items[offset : offset + top]), len(items)
    else:
        kept = list(items[:top])
        more = more or len(items) > top
    holder[key] = kept
    found = Page(kept, offset, total, more, holder, prefix)
    found.sync()
    return found


def fit(data: dict[str, Any], pages: Sequence[Page], budget: int = ANSWER_BYTES) -> dict[str, Any]:
    """Cut `pages` (lists inside `data`), the longest first, until `data`'s compact JSON is
    at most `budget` characters or every page holds one item; then a `note` says what was
    cut and how to read on."""
    over = size(data) - budget
    if over <= 0:
        return data
    cut = False
    while over > 0:
        longest = max(pages, key=lambda p: len(p.items), default=None)
        if longest is None or len(longest.items) <= 1:
            break
        # drop about as many items as the excess takes, at least one
        each = max(1, size(longest.items) // len(longest.items))
        drop = min(len(longest.items) - 1, max(1, over // each))
        del longest.items[len(longest.items) - drop :]
        longest.cut = True
        longest.sync()
        cut = True
        over = size(data) - budget
    if cut:
        data["note"] = (
            "lists were cut to keep this answer short; ask for the rest "
            "with offset set to a list's next_offset, or a smaller top"
        )
    return data
