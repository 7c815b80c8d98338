"""DumpMapper: what the mappers of the five dump kinds share (soft URLs and repositories,
papers by any of their keys, code links, areas, collections, an entry's finished unit),
and the helpers their detectors use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps.provenance import dump_name, entry_provenance
from kg.ingest.fields import Obj
from kg.ingest.identity import AREA_ABBREVIATIONS, RepoRef, pwc_slug, repository
from kg.ingest.mapper import Mapper, web_iri
from kg.ingest.units import Context, Mapped, content_hash
from kg.rdf.terms import literal, safe_iri, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri

#: Values that stand for "unknown" in a dump, by field: not stated as facts (docs/dumps.md).
PLACEHOLDER_YEAR = 2000  # methods.json gives it for 1,866 of its 1,924 methods
_INDEX = re.compile(r"\[\d+\]")


@functools.lru_cache(maxsize=1 << 16)
def _checked_url(value: str) -> str | None:
    """`value` as a safe absolute IRI, or None. Cached: dumps repeat the same URLs a lot."""
    try:
        return web_iri(value, "")
    except RecordError:
        return None


@functools.lru_cache(maxsize=1 << 16)
def _checked_repo(url: str) -> RepoRef | None:
    """The normalised repository of `url` when both are valid IRIs, else None. Cached."""
    ref = repository(url)
    if ref is None or _checked_url(ref.url) is None or _checked_url(url) is None:
        return None
    return ref


def date_year(date: str | None) -> str | None:
    return date[:4] if date and date[:4].isdigit() else None


class DumpMapper(Mapper):
    """Maps one dump item; subclasses map one kind. Helpers shared by the kinds."""

    kind = ""

    def __init__(self, data: Any, ctx: Context) -> None:
        super().__init__(data, ctx)
        self.hash = content_hash(data)  # a lone surrogate is rejected here, not at write
        self.dump = ctx.iris.dump(dump_name(ctx.source_file), ctx.snapshot)
        self.not_mapped: list[str] = []  # values left out, each named with its reason
        self.entries_not_mapped: list[str] = []  # whole entries left out, with what landed

    def skip(self, where: str, why: str) -> None:
        """Report a value (or a whole entry) that does not land, and why."""
        self.not_mapped.append(f"{_INDEX.sub('[]', where)} ({why})")

    def skip_entry(self, where: str, why: str) -> None:
        """Report a whole entry (a task with no name) that does not land as such; the ingest
        summary names it by file and item, not as a count."""
        self.entries_not_mapped.append(f"{where} ({why})")
        self.skip(where, why.split(";")[0])

    def soft_url(self, value: str | None, where: str) -> str | None:
        """A secondary URL as a safe IRI; one that is not a URL is left out and reported
        (scraped leaderboards hold Markdown fragments and relative links)."""
        if not value:
            return None
        checked = _checked_url(value)
        if checked is None:
            self.skip(where, "not a URL")
        return checked

    def soft_link(self, obj: Obj, key: str, s: str, p: str) -> None:
        target = self.soft_url(obj.text(key), obj.where(key))
        if target:
            self.add(s, p, iri(target))

    def entry(self, graph: str, subject: str) -> Mapped:
        """The finished unit: this entry's provenance added, repeated triples dropped."""
        self.t.extend(entry_provenance(graph, subject, self.dump, self.hash))
        return Mapped(
            graph=graph,
            subject=subject,
            content_hash=self.hash,
            triples=list(dict.fromkeys(self.t)),
            shared=list(dict.fromkeys(self.s)),
            unknown_keys=self.root.unknown_keys(),
            not_mapped=self.not_mapped,
            entries_not_mapped=self.entries_not_mapped,
        )

    def paper_key(
        self, slug: str | None, arxiv: str | None, title: str | None, year: str | None
    ) -> str:
        """The source's own key for a paper (graph names use it; it never changes with aliases)."""
        plain = Context(self.iris).paper(slug=slug, arxiv=arxiv, title=title, year=year)
        return self.iris.local_key(plain).removeprefix("paper/")

    def paper_node(
        self,
        p: str,
        *,
        slug: str | None = None,
        arxiv: str | None = None,
        title: str | None = None,
        date: str | None = None,
    ) -> None:
        """What a source says of a paper it names: type, keys, title, date and pages."""
        self.add(p, STD.type, KG.Paper)
        if slug:
            self.add(p, KG.pwcSlug, literal(slug))
            self.add(p, STD.seeAlso, iri(f"https://paperswithcode.com/paper/{segment(slug)}"))
        if arxiv:
            self.add(p, KG.arxivId, literal(arxiv))
            self.add(p, STD.seeAlso, iri(f"https://arxiv.org/abs/{safe_iri(arxiv)}"))
        if title:
            self.add(p, STD.title, literal(title))
            self.add(p, STD.label, literal(title))
        if date:
            self.add(p, STD.issued, typed(date, XSD.date))

    def repo_ref(self, url: str, where: str) -> RepoRef:
        ref = _checked_repo(url)
        if ref is None:
            raise RecordError(f"{url[:80]!r} is not a repository URL", field=where)
        return ref

    def soft_repo(self, url: str | None, where: str) -> RepoRef | None:
        if not url:
            return None
        try:
            return self.repo_ref(url, where)
        except RecordError:
            self.skip(where, "not a repository URL")
            return None

    def code_link(
        self, p: str, paper_iri: str, url: str, where: str, position: int | None = None
    ) -> str:
        """The paper's code link to `url`, a repository URL checked as a dump's
        (`repo_ref`), mapped as every source's (`add_code_link`)."""
        return self.add_code_link(p, paper_iri, self.repo_ref(url, where), position)

    def titled_links(self, obj: Obj, key: str, s: str) -> None:
        """`[{title, url}]` (or URL strings): `rdfs:seeAlso` each URL, labelled by its title."""
        for i, item in enumerate(obj.array(key)):
            where = f"{obj.where(key)}[{i}]"
            if isinstance(item, str):
                target = self.soft_url(item, where)
                if target:
                    self.add(s, STD.seeAlso, iri(target))
                continue
            self.titled_link(obj.child(f"{key}[{i}]", item), s)

    def titled_link(self, link: Obj, s: str) -> None:
        url = self.soft_url(link.text("url"), link.where("url"))
        title = link.text("title")
        if url:
            self.add(s, STD.seeAlso, iri(url))
            if title:
                self.add(iri(url), STD.label, literal(title))

    def area(self, name: str | None, area_id: str | None = None) -> str | None:
        slug = area_id or (pwc_slug(name) if name else None)
        if not slug:
            return None
        full_name = AREA_ABBREVIATIONS.get(slug)
        if full_name is None:
            return self.entity(self.iris.area(slug), KG.Area, STD.label, name)
        # "NLP" stands for the area "Natural Language Processing": an alternative label
        area = self.entity(self.iris.area(slug), KG.Area, STD.label, full_name)
        if name:
            self.share(area, STD.altLabel, literal(name))
        return area

    def collection(self, name: str) -> str:
        slug = pwc_slug(name) or name.strip()
        return self.entity(self.iris.collection(slug), KG.Collection, STD.label, name)

    def method_details(self, obj: Obj, m: str) -> None:
        """The fields methods.json and the papers dump's method objects share."""
        self.text(obj, "full_name", m, KG.fullName)
        self.text(obj, "description", m, STD.description)
        if obj.integer("introduced_year") == PLACEHOLDER_YEAR:
            why = f"{PLACEHOLDER_YEAR}: the placeholder for unknown"
            self.skip(obj.where("introduced_year"), why)
        else:
            self.number(obj, "introduced_year", m, KG.introducedYear)
        self.soft_link(obj, "source_url", m, KG.sourceUrl)
        self.text(obj, "source_title", m, KG.sourceTitle)
        self.soft_link(obj, "code_snippet_url", m, KG.codeSnippet)


def keys_of(value: Any) -> set[str]:
    """An item's keys, for the kinds' detectors (none for a value that is no object)."""
    return set(value) if isinstance(value, dict) else set()


def url_has(value: Any, part: str) -> bool:
    """Whether an item's `url` holds `part` (`/method/`, `/dataset/`)."""
    url = value.get("url") if isinstance(value, dict) else None
    return isinstance(url, str) and part in url


def one(mapper: type[DumpMapper]) -> Callable[[Any, Context], Iterable[Mapped]]:
    """A kind's map function for a mapper that gives one unit per item."""
    def run(value: Any, ctx: Context) -> list[Mapped]:
        return [mapper(value, ctx).map()]

    return run
