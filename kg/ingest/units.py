"""What a mapping takes and gives: the `Context` of a run (IRIs, provenance, limits, the
paper alias index), the `Mapped` unit it returns (a named graph's triples, the shared
entities' triples, what did not land), the content hash that tells a changed unit from an
unchanged one, and `Kind`: one kind of input item, how to recognise and map it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from kg.config import MAX_ARRAY_ITEMS, MAX_FIELD_CHARS
from kg.errors import RecordError
from kg.ingest.fields import invalid_unicode_path
from kg.ingest.identity import Iris

Triple = str  # "s p o" in N-Triples syntax, without the final " ."


def canonical_json(value: Any) -> str:
    """Sorted, compact JSON: the form hashed for change detection and kept in rdf:JSON literals."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _without_floats(value: Any) -> bool:
    """Whether `value` is made of dicts, lists, strings, integers, booleans and None only
    (exact types: a subclass may serialise otherwise)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict:
            extend(item.values())
        elif kind is list:
            extend(item)
        else:
            return False
    return True


def canonical_bytes(value: Any) -> bytes:
    """`canonical_json(value)` as UTF-8, byte for byte. Without floats it is orjson's output
    (sorted keys, compact, the same escapes: 3x faster, the check included; a float may be
    written otherwise, 1e-05 against 1e-5, so a value with one goes through `json`); orjson
    refuses what `json` may still write (integers past 64 bits, nesting past 255), and a
    lone surrogate, which raises UnicodeEncodeError here as it does from `json`'s text."""
    if _without_floats(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            pass
    return canonical_json(value).encode("utf-8")


def content_hash(data: Any) -> str:
    """kg's content hash of a JSON value: sha256 of its canonical JSON, as `sha256:<hex>`.

    A value holding a lone surrogate cannot become UTF-8 N-Quads: it is a RecordError that
    names the field."""
    try:
        encoded = canonical_bytes(data)
    except UnicodeEncodeError:
        where = invalid_unicode_path(data) or ""
        raise RecordError("holds invalid Unicode (a lone surrogate)", field=where) from None
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


@dataclass
class Mapped:
    """One mapped unit (a record, or one entity of a dump) ready to be written."""

    graph: str  # named-graph IRI; also the Record node's IRI
    subject: str  # the main entity's IRI (the paper, for a record)
    content_hash: str
    triples: list[Triple] = field(default_factory=list)  # in `graph`
    shared: list[Triple] = field(default_factory=list)  # in the entities graph
    unknown_keys: list[str] = field(default_factory=list)
    # input values (or whole entries) that did not land, each as "where (why)"
    not_mapped: list[str] = field(default_factory=list)
    entries_not_mapped: list[str] = field(default_factory=list)  # whole entries, with why

    def nquads(self, entities_graph: str) -> str:
        g = f" <{self.graph}> .\n"
        e = f" <{entities_graph}> .\n"
        return g.join(self.triples) + g + (e.join(self.shared) + e if self.shared else "")


class PaperResolver(Protocol):
    """Gives a paper one IRI across sources (kg.ingest.aliases.PaperAliases does, for a run)."""

    def paper(
        self, *, slug: str | None, arxiv: str | None, title: str | None, year: str | None
    ) -> str: ...

    def settled(self, lines: list[str]) -> list[str]: ...


@dataclass(frozen=True)
class Context:
    """What a mapping needs beyond the record: where IRIs live and ingest provenance."""

    iris: Iris
    source_file: str = ""
    ingested_at: str | None = None  # xsd:dateTime lexical form
    max_chars: int = MAX_FIELD_CHARS
    max_items: int = MAX_ARRAY_ITEMS  # items per array (authors, links, samples, results…)
    snapshot: str | None = None  # the input's snapshot date (YYYY-MM-DD), for dump provenance
    papers: PaperResolver | None = None  # the run's alias index; None: the plain identity rule
    licence: str | None = None  # the dumps' licence IRI, as the user gave it (--licence)
    attribution: str | None = None  # the dumps' attribution page (--attribution)
    fetched_from: str | None = None  # the URL kg fetch downloaded the file from (its manifest)
    memo: dict[str, Any] = field(default_factory=dict)  # per-run scratch space of the mappers

    def paper(
        self,
        *,
        slug: str | None = None,
        arxiv: str | None = None,
        title: str | None = None,
        year: str | None = None,
    ) -> str:
        """A paper's IRI: by slug, else arXiv id, else title and year (docs/identity.md)."""
        if self.papers is not None:
            return self.papers.paper(slug=slug, arxiv=arxiv, title=title, year=year)
        if slug:
            return self.iris.paper(slug)
        if arxiv:
            return self.iris.paper_by_arxiv(arxiv)
        if title:
            return self.iris.paper_by_title(title, year)
        raise RecordError("names no paper: give a /paper/<slug> URL, an arXiv id or a title")

    def settled(self, lines: list[str]) -> list[str]:
        """N-Triples `lines` with each paper IRI the run has since learnt a better one for
        rewritten to it (kg.ingest.aliases.PaperAliases.settled)."""
        return lines if self.papers is None else self.papers.settled(lines)


@dataclass(frozen=True)
class Kind:
    """One kind of input item: how to recognise it and how to map it.

    `priority` orders the files of one run (lower first): sources that name papers by slug
    go before those that name them only by arXiv id or title, so fewer IRIs need renaming
    (kg.ingest.aliases). `file_units` maps what a whole file says (a dump's provenance node); it is
    called once per file, with the context of its first item.
    """

    name: str
    detect: Callable[[Any], bool]
    map: Callable[[Any, Context], Iterable[Mapped]]
    priority: int = 1
    file_units: Callable[[Context], Iterable[Mapped]] | None = None
