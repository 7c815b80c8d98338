"""Text as the index and the snippets see it: Markdown read as the words a reader sees, and
the identifiers an entity is known by.

The Papers-with-Code dumps write descriptions in Markdown (`**Attention Dropout**`,
`[dropout](https://…)`); the index keeps them as plain text, so that neither matching nor
snippets see markup or link targets. One mechanism: pages that show a description as plain
text call `plain_text` too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from kg.ingest.identity import arxiv_id, slug_from_url

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: Tokens after which a block of text ends (a space keeps its words apart).
_BLOCK_END = re.compile(r"_(close)$")
_SPACES = re.compile(r"\s+")
#: Raw HTML elements whose content no reader sees as text.
_HIDDEN = re.compile(r"<(script|style)\b[^>]*>.*?(?:</\1\s*>|$)", re.IGNORECASE | re.DOTALL)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table")


def plain_text(markdown: str) -> str:
    """Markdown as the plain text a reader sees: markup, HTML tags and link targets gone,
    images by their alt text, blocks joined by spaces.

    >>> plain_text("**Attention Dropout** uses [dropout](https://x.org/d) on `a`.\\n\\n- x")
    'Attention Dropout uses dropout on a. x'
    >>> plain_text("<b>bold</b> ![a figure](f.png) | x | <script>y</script>")
    'bold a figure | x |'
    """
    out: list[str] = []
    for token in _parser().parse(_HIDDEN.sub(" ", markdown)):
        if token.type == "inline":
            for child in token.children or ():
                if child.type in ("text", "code_inline"):
                    out.append(child.content)
                elif child.type == "image":
                    out.append(" ".join(c.content for c in child.children or ()))
                elif child.type in ("softbreak", "hardbreak"):
                    out.append(" ")
        elif token.type in ("fence", "code_block"):
            out.append(" " + token.content + " ")
        elif _BLOCK_END.search(token.type):
            out.append(" ")
    return _SPACES.sub(" ", "".join(out)).strip()


# --- identifiers ---------------------------------------------------------------------------

_DOI = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^arxiv:\s*", re.IGNORECASE)
_REPOSITORY = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:github\.com/)?([A-Za-z0-9][\w.-]*/[\w.-]+?)(?:\.git)?/?$"
)
#: A bare slug: slug characters with a separator or a digit (a bare word is a name first)
_SLUG = re.compile(r"^(?=.*[-._~0-9])[a-z0-9][a-z0-9._~-]*$", re.IGNORECASE)
_ID_BASE = re.compile(r"/id/([a-z]+)/(.+)$")
DOI_IRI = "https://doi.org/"


def doi_id(value: str) -> str | None:
    """`doi:…` for a DOI, bare or as a doi.org address (DOIs are case-insensitive).

    >>> doi_id("https://doi.org/10.1109/TAFFC.2018.2817622")
    'doi:10.1109/taffc.2018.2817622'
    >>> doi_id("10.1109") is None
    True
    """
    match = _DOI.match(value.strip())
    return f"doi:{match.group(1).lower()}" if match else None


def entity_ids(
    key: str, type_: str, label: str, arxiv: list[str], slugs: list[str], dois: list[str]
) -> list[str]:
    """The identifiers a document is found by, normalised as `query_ids` normalises a query:
    `arxiv:ID` (no version), `slug:SLUG` (the Papers-with-Code slug, and the last part of an
    entity's IRI), `doi:DOI` and `repo:owner/name`."""
    out = {f"arxiv:{a}" for a in (arxiv_id(x) for x in arxiv) if a}
    out |= {f"slug:{s.strip().lower()}" for s in slugs if s.strip()}
    out |= {d for d in (doi_id(x) for x in dois) if d}
    local = _ID_BASE.search(key)
    if local and local.group(1) == type_ and "/" not in local.group(2):
        out.add(f"slug:{local.group(2).lower()}")
    if type_ == "repository" and "/" in label:
        out.add(f"repo:{label.strip().lower()}")
    return sorted(out)


def query_ids(text: str) -> list[str]:
    """The identifiers a query may be: an arXiv id (any version, with or without `arXiv:`,
    or its address), a DOI, a repository's `owner/name` (or its GitHub address), or a slug
    (or a Papers-with-Code address; a bare slug has a `-`, `.`, `_` or a digit: a word alone
    is a name, found by the whole-name tier).

    >>> query_ids("arXiv:2004.11207v2")
    ['arxiv:2004.11207']
    >>> query_ids("https://github.com/tensorflow/models")
    ['repo:tensorflow/models']
    >>> query_ids("attention is all you need")
    []
    """
    text = text.strip()
    if not text or len(text) > 300 or " " in text:
        return []
    out: list[str] = []
    arxiv = arxiv_id(_ARXIV_PREFIX.sub("", text))
    if arxiv:
        out.append(f"arxiv:{arxiv}")
    doi = doi_id(text)
    if doi:
        out.append(doi)
    for kind in ("paper", "method", "task", "dataset", "area", "collection", "author"):
        slug = slug_from_url(text, kind) if "/" in text else None
        if slug:
            out.append(f"slug:{slug.lower()}")
    if out:
        return out
    if "/" in text:
        repo = _REPOSITORY.match(text)
        if repo and ("://" not in text or "://github.com/" in text.lower()):
            out.append(f"repo:{repo.group(1).lower()}")
    elif _SLUG.match(text):
        out.append(f"slug:{text.lower()}")
    return out
