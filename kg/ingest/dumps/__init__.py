"""The five Papers-with-Code dumps as input kinds of `kg ingest` (docs/dumps.md).

Each dump item maps to one unit of change in its own named graph, a `kg:DumpEntry` that
names the dump it was read from (`prov:wasDerivedFrom` a `kg:Dump`, which says the kind,
file and snapshot). A newer dump replaces, entity by entity, exactly what an older one said.
Papers are named through the run's alias index (`Context.paper`), so a paper known by slug,
by arXiv id and by title is one node (docs/identity.md).

`DUMP_KINDS` lists them; `kg.ingest.ingestor.KINDS` adds them to the record kind.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from kg.errors import RecordError
from kg.ingest.fields import Obj
from kg.ingest.identity import (
    AREA_ABBREVIATIONS,
    RepoRef,
    arxiv_id,
    clean_name,
    licence_iri,
    pwc_slug,
    repository,
    slug_from_url,
    title_key,
)
from kg.ingest.mapping import (
    Context,
    Kind,
    Mapped,
    RecordMapper,
    Triple,
    canonical_json,
    code_link_key,
    content_hash,
    result_id,
    result_keys,
    web_iri,
)
from kg.ingest.values import iso_date
from kg.rdf.terms import literal, safe_iri, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri

PAPERS = "papers-with-abstracts"
LINKS = "links-between-papers-and-code"
METHODS = "methods"
DATASETS = "datasets"
EVALUATION = "evaluation-tables"

ARCHIVE = "Papers with Code"
#: What is known of the dumps Papers with Code itself published (by dump name): all its data
#: is CC BY-SA 4.0 ("All data is licenced under CC-BY-SA", paperswithcode-data's README).
#: Files of the same format from elsewhere (the sota-extractor leaderboards: another
#: repository, scraped from external leaderboards) get no licence unless the user names one.
PWC_DUMPS = {PAPERS, LINKS, METHODS, DATASETS, EVALUATION}
PWC_LICENCE = "https://creativecommons.org/licenses/by-sa/4.0/"
PWC_ATTRIBUTION = "https://github.com/paperswithcode/paperswithcode-data"
#: Values that stand for "unknown" in a dump, by field: not stated as facts (docs/dumps.md).
PLACEHOLDER_YEAR = 2000  # methods.json gives it for 1,866 of its 1,924 methods
_INDEX = re.compile(r"\[\d+\]")
_LEADING_DATE = re.compile(r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)-\d{1,2}-", re.I)
_TRAILING_DATE = re.compile(r"[-_.](?:19|20)\d{2}(?:[-_.]?\d{2}){0,2}$")


def dump_name(source_file: str) -> str:
    """A dump's name: its file name without `.gz`, `.json`, a trailing date and the leading
    month-day of the 2025 archive's files (`jul-28-methods.json.gz`).

    >>> dump_name("evaluation-tables.json.gz"), dump_name("methods-2022-05-20.json")
    ('evaluation-tables', 'methods')
    >>> dump_name("jul-29-papers-with-abstracts.json.gz")
    'papers-with-abstracts'
    """
    name = source_file.removesuffix(".gz")
    for suffix in (".json", ".jsonl", ".ndjson"):
        name = name.removesuffix(suffix)
    name = _TRAILING_DATE.sub("", name) or name
    return _LEADING_DATE.sub("", name) or name


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


def _year(date: str | None) -> str | None:
    return date[:4] if date and date[:4].isdigit() else None


class DumpMapper(RecordMapper):
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


# --- methods.json ---------------------------------------------------------------------------


class MethodMapper(DumpMapper):
    kind = METHODS

    def page_entity(self, kind: str, cls: str) -> tuple[str, str, str]:
        """The method or dataset the entry's `/method/<slug>` (`/dataset/…`) URL names,
        declared with its name and linked to that page: (slug, IRI, N-Triples term)."""
        url = self.root.text("url", required=True)
        assert url is not None
        slug = slug_from_url(url, kind)
        if not slug:
            raise RecordError(f"{url[:80]!r} is not a /{kind}/<slug> URL", field="url")
        node = self.iris.method(slug) if kind == "method" else self.iris.dataset(slug)
        n = self.entity(node, cls, STD.label, self.root.text("name"))
        self.add(n, STD.seeAlso, iri(web_iri(url, "url")))
        return slug, node, n

    def map(self) -> Mapped:
        root = self.root
        slug, method, m = self.page_entity("method", KG.Method)
        self.method_details(root, m)
        self.number(root, "num_papers", m, KG.paperCount)
        for item in root.objects("collections"):
            name = item.text("collection", required=True)
            assert name is not None
            coll = self.collection(name)
            self.add(m, KG.inCollection, coll)
            area = self.area(item.text("area"), item.text("area_id"))
            if area:
                self.share(coll, KG.area, area)
        paper = root.obj("paper")
        if paper is not None:
            self.introducing_paper(paper, m, KG.introducesMethod, root)
        return self.entry(self.iris.dump_graph(METHODS, segment(slug)), method)

    def introducing_paper(self, paper: Obj, entity: str, prop: str, root: Obj) -> None:
        title = paper.text("title")
        url = paper.text("url")
        slug = slug_from_url(url, "paper") if url else None
        if url and not slug:
            raise RecordError(f"{url[:80]!r} is not a /paper/<slug> URL", field=paper.where("url"))
        # methods.json gives the introducing paper's source page: when that is the same
        # paper (same title) on arXiv, it links the slug to the arXiv id.
        arxiv = None
        source, source_title = root.text("source_url"), root.text("source_title")
        if (
            source
            and title
            and source_title
            and title_key(title, None) == title_key(source_title, None)
        ):
            arxiv = arxiv_id(source)
        if not (slug or arxiv or title):
            return
        paper_iri = self.ctx.paper(slug=slug, arxiv=arxiv, title=title)
        p = iri(paper_iri)
        self.paper_node(p, slug=slug, arxiv=arxiv, title=title)
        self.add(p, prop, entity)


# --- datasets.json --------------------------------------------------------------------------


class DatasetMapper(MethodMapper):
    kind = DATASETS

    def map(self) -> Mapped:
        root = self.root
        slug, dataset, d = self.page_entity("dataset", KG.Dataset)
        self.text(root, "full_name", d, KG.fullName)
        self.soft_link(root, "homepage", d, STD.homepage)
        self.text(root, "description", d, STD.description)
        self.date(root, "introduced_date", d, KG.introducedDate)
        for key, prop in (
            ("modalities", KG.modality),
            ("languages", KG.language),
            ("variants", KG.variant),
        ):
            for value in root.texts(key):
                self.add(d, prop, literal(value))
        for item in root.objects("tasks"):
            task_url = item.text("url")
            name = item.text("task")
            task_slug = (slug_from_url(task_url, "task") if task_url else None) or (
                pwc_slug(name) if name else None
            )
            if not task_slug:
                raise RecordError("needs 'task' or a /task/<slug> 'url'", field=item.where("task"))
            self.add(
                d, KG.usedForTask, self.entity(self.iris.task(task_slug), KG.Task, STD.label, name)
            )
        self.number(root, "num_papers", d, KG.paperCount)
        for item in root.objects("data_loaders"):
            loader_url, repo = item.text("url"), item.text("repo")
            digest = hashlib.sha1(canonical_json([loader_url, repo]).encode()).hexdigest()[:12]
            node = iri(f"{dataset}/loader/{digest}")
            self.add(d, KG.dataLoader, node)
            self.add(node, STD.type, KG.DataLoader)
            self.soft_link(item, "url", node, KG.linkedUrl)
            ref = self.soft_repo(repo, item.where("repo"))
            if ref is not None:
                self.add(node, KG.repository, self.repo(ref))
            for framework in item.texts("frameworks"):
                self.add(node, KG.framework, literal(framework))
        paper = root.obj("paper")
        if paper is not None:
            self.introducing_paper(paper, d, KG.introducesDataset, root)
        return self.entry(self.iris.dump_graph(DATASETS, segment(slug)), dataset)


# --- papers-with-abstracts.json -------------------------------------------------------------

#: Fields of a method object in the papers dump that are mapped in its own unit.
_METHOD_DETAILS = (
    "full_name",
    "description",
    "introduced_year",
    "source_url",
    "source_title",
    "code_snippet_url",
)


class PaperMapper(DumpMapper):
    kind = PAPERS

    def map_all(self) -> list[Mapped]:
        root = self.root
        url = root.text("paper_url")
        slug = slug_from_url(url, "paper") if url else None
        if url and not slug:
            raise RecordError(f"{url[:80]!r} is not a /paper/<slug> URL", field="paper_url")
        arxiv_raw = root.text("arxiv_id")
        arxiv = arxiv_id(arxiv_raw) if arxiv_raw else None
        if arxiv_raw and not arxiv:
            raise RecordError(f"{arxiv_raw[:40]!r} is not an arXiv id", field="arxiv_id")
        title, date = root.text("title"), root.text("date")
        year = _year(date)
        if not (slug or arxiv or title):
            raise RecordError(
                "names no paper: give 'paper_url', 'arxiv_id' or 'title'", field="paper_url"
            )
        self.paper_iri = self.ctx.paper(slug=slug, arxiv=arxiv, title=title, year=year)
        p = iri(self.paper_iri)
        self.paper_node(p, slug=slug, arxiv=arxiv)
        self.title(root, "title", p)
        self.text(root, "abstract", p, STD.abstract)
        self.date(root, "date", p, STD.issued)
        self.link(root, "url_abs", p, KG.abstractPage)
        self.link(root, "url_pdf", p, KG.pdf)
        self.map_proceeding(p)
        self.map_authors(p)
        for i, task in enumerate(root.array("tasks")):
            name = task if isinstance(task, str) else root.child(f"tasks[{i}]", task).text("task")
            if name and name.strip():
                node = self.iris.task(pwc_slug(name) or name.strip())
                self.add(p, KG.hasTask, self.entity(node, KG.Task, STD.label, name))
        units = []
        for i, raw in enumerate(root.array("methods")):
            unit = self.used_method(p, root.child(f"methods[{i}]", raw), raw)
            if unit is not None:
                units.append(unit)
        key = self.paper_key(slug, arxiv, title, year)
        return [self.entry(self.iris.dump_graph("papers", key), self.paper_iri), *units]

    def used_method(self, p: str, obj: Obj, raw: dict[str, Any]) -> Mapped | None:
        """`paper kg:usesMethod method`; the method object itself is mapped once per run."""
        name = obj.text("name", required=True)
        assert name is not None
        for _ in obj.items():  # the method's own unit reads its fields
            pass
        slug = pwc_slug(name) or name.strip()
        self.add(p, KG.usesMethod, self.entity(self.iris.method(slug), KG.Method, STD.label, name))
        seen: set[str] = self.ctx.memo.setdefault("papers-methods", set())
        if slug in seen:
            return None
        seen.add(slug)
        return EmbeddedMethodMapper(raw, self.ctx).map_method(slug)


class EmbeddedMethodMapper(DumpMapper):
    """A method object of the papers dump, in its own graph: the first copy in a run."""

    kind = PAPERS

    def map_method(self, slug: str) -> Mapped:
        root = self.root
        method = self.iris.method(slug)
        m = self.entity(method, KG.Method, STD.label, root.text("name"))
        self.method_details(root, m)
        main = root.obj("main_collection")
        if main is not None:
            name = main.text("name")
            if name:
                coll = self.collection(name)
                self.add(m, KG.inCollection, coll)
                area = self.area(main.text("area"))
                if area:
                    self.share(coll, KG.area, area)
                parent = main.text("parent")
                if parent:
                    self.share(coll, KG.parentCollection, self.collection(parent))
                description = main.text("description")
                if description:
                    self.share(coll, STD.description, literal(description))
        return self.entry(self.iris.dump_graph("papers-methods", segment(slug)), method)


# --- links-between-papers-and-code.json -----------------------------------------------------


class LinkMapper(DumpMapper):
    kind = LINKS

    def map(self) -> Mapped:
        root = self.root
        url = root.text("paper_url")
        slug = slug_from_url(url, "paper") if url else None
        if url and not slug:
            raise RecordError(f"{url[:80]!r} is not a /paper/<slug> URL", field="paper_url")
        arxiv_raw = root.text("paper_arxiv_id")
        arxiv = arxiv_id(arxiv_raw) if arxiv_raw else None
        if arxiv_raw and not arxiv:
            raise RecordError(f"{arxiv_raw[:40]!r} is not an arXiv id", field="paper_arxiv_id")
        title = root.text("paper_title")
        if not (slug or arxiv or title):
            raise RecordError(
                "names no paper: give 'paper_url', 'paper_arxiv_id' or 'paper_title'",
                field="paper_url",
            )
        repo_url = root.text("repo_url", required=True)
        assert repo_url is not None
        paper_iri = self.ctx.paper(slug=slug, arxiv=arxiv, title=title)
        p = iri(paper_iri)
        self.paper_node(p, slug=slug, arxiv=arxiv, title=title)
        self.link(root, "paper_url_abs", p, KG.abstractPage)
        self.link(root, "paper_url_pdf", p, KG.pdf)
        node = self.code_link(p, paper_iri, repo_url, "repo_url")
        self.flag(root, "is_official", node, KG.isOfficial)
        self.flag(root, "mentioned_in_paper", node, KG.mentionedInPaper)
        self.flag(root, "mentioned_in_github", node, KG.mentionedInGithub)
        self.text(root, "framework", node, KG.framework)
        ref = self.repo_ref(repo_url, "repo_url")
        key = f"{self.paper_key(slug, arxiv, title, None)}/{code_link_key(ref)}"
        return self.entry(self.iris.dump_graph("links", key), node[1:-1])


# --- evaluation-tables.json (and the sota-extractor files in its format) --------------------


class EvaluationMapper(DumpMapper):
    """One top-level task with its subtask and dataset trees: one unit (see docs/dumps.md)."""

    kind = EVALUATION

    def __init__(self, data: Any, ctx: Context) -> None:
        super().__init__(data, ctx)
        self.dump_key = segment(dump_name(ctx.source_file))
        self.parts: list[Mapped] = []
        # parts already mapped in this run (graph -> the triples stated, with their copies):
        # a table the task DAG lists under several parents is stated once
        self.seen_parts: dict[str, set[str]] = ctx.memo.setdefault("evaluation-parts", {})
        # parts mapped from JSON seen before, with nothing left out or unknown (graph ->
        # source digest -> the shared triples it gave and the keys it read): a paper cited by
        # several rows, the same code links each time, is mapped once (it was 12 of the 2020
        # tables' 18 CPU-s)
        self.same_sources: dict[str, dict[bytes, tuple[tuple[str, ...], frozenset[str]]]] = (
            ctx.memo.setdefault("evaluation-part-sources", {})
        )

    def map_all(self) -> list[Mapped]:
        name = self.root.text("task")
        children = self.map_task(self.root, None)
        if name:
            task = self.iris.task(pwc_slug(name) or name.strip())
            graph = self.iris.dump_graph(
                "evaluation", f"{self.dump_key}/{task.rsplit('/', 1)[1]}"
            )
            return [self.entry(graph, task), *self.parts]
        # An unnamed top-level task only groups its subtasks: key it by their names.
        digest = hashlib.sha1(canonical_json(sorted(children)).encode()).hexdigest()[:12]
        graph = self.iris.dump_graph("evaluation", f"{self.dump_key}/-unnamed-{digest}")
        return [self.entry(graph, min(children) if children else graph), *self.parts]

    def part(
        self, key: str, subject: str, source: Any, read_from: Obj, mapper: Callable[[], None]
    ) -> None:
        """Map a dataset's description, or a task's table on a dataset, into a graph of its
        own (`<dump>/dataset/…`, `<dump>/table/…`), once per run. So a result, a
        leaderboard and a dataset are stated in one graph, not once per top-level task whose
        tree lists them (docs/ontology.md, where triples live). A later copy that says more
        (the 2020 file has 8 tables with other rows elsewhere in the DAG) states what it
        adds in a graph `…/-/<n>` beside the first.

        `mapper` reads `source` from `read_from`. The same JSON maps to the same triples
        (their paper IRIs settle the same way, see below), so a part mapped before from the
        same JSON is the same part again: only its shared triples and the keys it read
        count again for this entry."""
        graph = self.iris.dump_graph("evaluation", f"{self.dump_key}/{key}")
        said = hashlib.sha1(canonical_json(source).encode()).digest()
        before = self.same_sources.get(graph, {}).get(said)
        if before is not None:
            self.s.extend(before[0])
            read_from.mark_read(before[1])
            return
        outer, self.t = self.t, []
        shared_from, skipped, reading = len(self.s), len(self.not_mapped), read_from.reading()
        try:
            mapper()
            body = list(dict.fromkeys(self.t))
        finally:
            self.t = outer
        read = read_from.read_since(reading)
        if read is not None and len(self.not_mapped) == skipped:  # else mapped each time, so
            # that the entry reports what it left out where it is
            self.same_sources.setdefault(graph, {})[said] = (tuple(self.s[shared_from:]), read)
        stated = self.seen_parts.get(graph)
        if stated is None:
            self.seen_parts[graph] = set(body)
        else:
            body = [t for t in body if t not in stated]
            if body:  # new, or a paper named by a fallback IRI in one copy and not the other
                known = set(self.ctx.settled(list(stated)))
                body = [t for t, s in zip(body, self.ctx.settled(body), strict=True)
                        if s not in known]  # fmt: skip
            if not body:
                return  # the same table again
            stated.update(body)
            copies = self.seen_parts.setdefault(f"{graph}/-", set())
            graph = f"{graph}/-/{len(copies) + 1}"
            copies.add(graph)
        # hashed from the source's JSON, like every entry: a paper renamed since (an alias)
        # leaves the part unchanged
        digest = content_hash({"copy": graph, "source": source})
        body += entry_provenance(graph, subject, self.dump, digest)
        self.parts.append(Mapped(graph, subject, digest, body))

    def map_task(self, obj: Obj, parent: str | None, inherited: tuple[str, ...] = ()) -> list[str]:
        """Map a task and its trees; an unnamed task maps only its subtasks (their IRIs).

        `inherited` are the categories of an unnamed parent: they land on its subtasks."""
        raw_name = obj.text("task")
        name = clean_name(raw_name) if raw_name else None
        if not name:
            return self.map_unnamed_task(obj, parent, inherited)
        t = self.entity(self.iris.task(pwc_slug(name) or name), KG.Task, STD.label, name)
        if parent is not None:
            self.add(t, KG.subtaskOf, parent)
        self.text(obj, "description", t, STD.description)
        for category in (*inherited, *obj.texts("categories")):
            area = self.area(category)
            if area:
                self.add(t, KG.area, area)
        for synonym in obj.texts("synonyms"):
            self.add(t, STD.altLabel, literal(synonym))
        source = obj.raw("source_link")
        if isinstance(source, str):
            self.soft_link(obj, "source_link", t, KG.sourceUrl)
        elif source is not None:
            link = obj.obj("source_link")
            assert link is not None
            self.soft_link(link, "url", t, KG.sourceUrl)
            self.text(link, "title", t, KG.sourceTitle)
        for dataset in obj.objects("datasets"):
            self.map_dataset(dataset, t, name, None)
        for subtask in obj.objects("subtasks"):
            self.map_task(subtask, t)
        return [t[1:-1]]

    def map_unnamed_task(
        self, obj: Obj, parent: str | None, inherited: tuple[str, ...]
    ) -> list[str]:
        """A task with an empty name is no task kg can identify: it is reported as one entry
        not mapped, with what of it did land (its subtasks' trees; its categories, on them)."""
        categories = (*inherited, *obj.texts("categories"))
        subtasks = list(obj.objects("subtasks"))
        names = [clean_name(sub.text("task") or "") or "(unnamed)" for sub in subtasks]
        landed = f"its {len(names)} subtask(s) {', '.join(names)} landed with their trees"
        if categories and subtasks:
            landed += f", its categories {', '.join(categories)} on them"
        self.skip_entry(obj.where("task"), f"empty: not a task; {landed}")
        for key in ("description", "synonyms", "source_link"):
            value = obj.raw(key)
            if value not in (None, "", [], {}):
                self.skip(obj.where(key), "of a task with no name")
        if obj.array("datasets"):
            self.skip(obj.where("datasets"), "of a task with no name: a leaderboard needs a task")
        if categories and not subtasks:
            self.skip(obj.where("categories"), "of a task with no name and no subtasks")
        return [iri_ for sub in subtasks for iri_ in self.map_task(sub, parent, tuple(categories))]

    def map_dataset(
        self, obj: Obj, t: str, task_name: str, parent: tuple[str, str, str] | None
    ) -> None:
        """`parent` is (IRI, slug, name) of the dataset whose `subdatasets[]` list this one."""
        raw_name = obj.text("dataset") or obj.text("subdataset")
        if not raw_name:
            raise RecordError("needs 'dataset' (or 'subdataset')", field=obj.where("dataset"))
        name = clean_name(raw_name)
        slug = pwc_slug(name) or name
        if parent is None:
            node, full_name = self.iris.dataset(slug), name
        else:
            node, full_name = self.iris.subdataset(parent[1], slug), f"{parent[2]} / {name}"
        d = self.entity(node, KG.Dataset, STD.label, name)
        dataset_key = node.removeprefix(f"{self.iris.base}dataset/")

        def describe() -> None:
            if parent is not None:
                self.add(d, KG.subdatasetOf, iri(parent[0]))
            self.text(obj, "description", d, STD.description)
            for i, citation in enumerate(obj.array("dataset_citations")):
                if isinstance(citation, str):  # a citation text, or {title, url}
                    if citation.strip():
                        self.add(d, STD.bibliographicCitation, literal(citation))
                else:
                    self.titled_link(obj.child(f"dataset_citations[{i}]", citation), d)
            self.titled_links(obj, "dataset_links", d)

        board = self.iris.leaderboard(t[1:-1], node)

        def table() -> None:
            self.add(d, KG.usedForTask, t)
            sota = obj.obj("sota")
            if sota is not None:
                b = iri(board)
                self.add(b, STD.type, KG.Leaderboard)
                self.add(b, KG.onTask, t)
                self.add(b, KG.onDataset, d)
                self.add(b, STD.label, literal(f"{task_name} on {full_name}"))
                for metric in sota.texts("metrics"):
                    self.add(b, KG.leaderboardMetric, literal(clean_name(metric)))
                for row in sota.objects("rows"):
                    self.map_row(row, t, d, board)

        raw = obj.source  # the part's source, hashed
        described = {k: v for k, v in raw.items() if k not in ("sota", "subdatasets")}
        self.part(f"dataset/{dataset_key}", node, [parent, described], obj, describe)
        table_key = board.removeprefix(f"{self.iris.base}leaderboard/")
        sota = [task_name, full_name, raw.get("sota")]
        self.part(f"table/{table_key}", board, sota, obj, table)
        for sub in obj.objects("subdatasets"):
            self.map_dataset(sub, t, task_name, (node, slug, name))

    def map_row(self, row: Obj, t: str, d: str, board: str) -> None:
        raw_model = row.text("model_name")
        model = clean_name(raw_model) if raw_model else None
        title, url = row.text("paper_title"), row.text("paper_url")
        raw_date = row.text("paper_date")
        date = iso_date(raw_date) if raw_date else None  # a bad date is not an identity
        if raw_date and date is None:
            self.skip(row.where("paper_date"), "not a date")
        arxiv = arxiv_id(url) if url else None
        slug = slug_from_url(url, "paper") if url and "paperswithcode.com" in url else None
        paper_iri: str | None = None
        # A page that is neither an arXiv nor a PwC paper page, with no title, identifies no
        # paper kg could merge with another source's: the results keep it as kg:paperUrl.
        page = self.soft_url(url, row.where("paper_url")) if url and not (arxiv or slug) else None
        if slug or arxiv or title:
            paper_iri = self.ctx.paper(slug=slug, arxiv=arxiv, title=title, year=_year(date))
            p, paper = iri(paper_iri), paper_iri

            def describe() -> None:  # the paper as the row names it, with its code
                self.paper_node(p, slug=slug, arxiv=arxiv, title=title, date=date)
                if page:
                    self.add(p, STD.seeAlso, iri(page))
                for position, link in enumerate(row.objects("code_links"), start=1):
                    link_url, link_title = link.text("url"), link.text("title")
                    where = link.where("url")
                    if not link_url:
                        if link_title:
                            self.skip(link.where("title"), "a code link with no URL")
                        continue
                    if self.soft_repo(link_url, where) is None:
                        continue
                    node = self.code_link(p, paper, link_url, where, position)
                    if link_title:
                        self.add(node, STD.label, literal(link_title))

            # stated once per run, not once per table that cites it
            key = self.paper_key(slug, arxiv, title, _year(date))  # never changes with aliases
            fields = ("paper_title", "paper_url", "paper_date", "code_links")
            source = {k: row.raw(k) for k in fields}
            self.part(f"paper/{key}", paper_iri, source, row, describe)
        results = []
        task_key, dataset_key = result_keys(self.iris, t[1:-1], d[1:-1])
        metrics = row.obj("metrics")
        for metric, value in metrics.items() if metrics is not None else ():
            assert metrics is not None
            if value is None:
                self.skip(f"{metrics.where('')}*", "null: no value reported")
                continue
            raw = self.metric_text(metrics, metric, value)
            metric_name = clean_name(metric)
            local = result_id(task_key, dataset_key, metric_name, model, raw)
            node = iri(f"{paper_iri or board}/result/{local}")
            results.append(node)
            if paper_iri is not None:
                self.add(iri(paper_iri), KG.hasResult, node)
            elif page:
                self.add(node, KG.paperUrl, iri(page))
            self.add(node, STD.type, KG.EvaluationResult)
            self.add(node, KG.onTask, t)
            self.add(node, KG.onDataset, d)
            self.add(node, KG.inLeaderboard, iri(board))
            if model:
                self.add(node, KG.modelName, literal(model))
            if date:  # the row's paper_date: when the result was published (its chart date)
                self.add(node, STD.issued, typed(date, XSD.date))
            self.add_metric(node, metric_name, raw)
            self.flag(row, "uses_additional_data", node, KG.usesAdditionalData)
            self.titled_links(row, "model_links", node)
        for link in row.objects("code_links") if paper_iri is None else ():
            link_url, link_title = link.text("url"), link.text("title")  # no paper to label it
            where = link.where("url")
            if not link_url:
                if link_title:
                    self.skip(link.where("title"), "a code link with no URL")
                continue
            ref = self.soft_repo(link_url, where)
            if ref is None:
                continue
            repo = self.repo(ref)
            for result in results:
                self.add(result, KG.repository, repo)
            if link_title:
                self.skip(link.where("title"), "the row names no paper to hold a code link")
        row.raw("model_links")  # read with the results (a row may have none)
        row.raw("uses_additional_data")


# --- detection and registration -------------------------------------------------------------


def _keys(value: Any) -> set[str]:
    return set(value) if isinstance(value, dict) else set()


def _url_has(value: Any, part: str) -> bool:
    url = value.get("url") if isinstance(value, dict) else None
    return isinstance(url, str) and part in url


def _is_papers(value: Any) -> bool:
    keys = _keys(value)
    return (
        "paper_url" in keys
        and "repo_url" not in keys
        and bool({"abstract", "authors", "arxiv_id", "url_abs"} & keys)
    )


def _is_links(value: Any) -> bool:
    return {"paper_url", "repo_url"} <= _keys(value)


def _is_methods(value: Any) -> bool:
    return _url_has(value, "/method/") or {"collections", "introduced_year"} <= _keys(value)


def _is_datasets(value: Any) -> bool:
    return _url_has(value, "/dataset/") or bool({"modalities", "data_loaders"} & _keys(value))


def _is_evaluation(value: Any) -> bool:
    keys = _keys(value)
    return "task" in keys and bool({"datasets", "subtasks"} & keys)


def _one(mapper: type[DumpMapper]) -> Callable[[Any, Context], Iterable[Mapped]]:
    def run(value: Any, ctx: Context) -> list[Mapped]:
        return [mapper(value, ctx).map()]

    return run


def _papers(value: Any, ctx: Context) -> list[Mapped]:
    return PaperMapper(value, ctx).map_all()


def entry_provenance(graph: str, subject: str, dump: str, unit_hash: str) -> list[Triple]:
    """What a dump entry's graph says of itself: what it is about, which dump it came from,
    and the hash that tells a changed entry from an unchanged one. Three triples, no type: a
    graph derived from a kg:Dump is a kg:DumpEntry by definition (ontology/kg.ttl), and at
    a million entries the two types were 5 % of the archive's stored quads."""
    g = iri(graph)
    return [
        f"{g} {STD.primaryTopic} {iri(subject)}",
        f"{g} {STD.wasDerivedFrom} {iri(dump)}",
        f"{g} {KG.contentHash} {literal(unit_hash)}",
    ]


def _evaluation(value: Any, ctx: Context) -> list[Mapped]:
    return EvaluationMapper(value, ctx).map_all()


def dump_units(kind: str) -> Callable[[Context], Iterable[Mapped]]:
    """The unit that describes a dump file itself: its `kg:Dump` node, in its own graph."""

    def units(ctx: Context) -> list[Mapped]:
        name = dump_name(ctx.source_file)
        dump = ctx.iris.dump(name, ctx.snapshot)
        graph = ctx.iris.dump_graph("dump", dump.removeprefix(f"{ctx.iris.base}dump/"))
        # The file name and ingest time are not hashed: the same dump read again, under
        # any name, is unchanged.
        said = {"licence": ctx.licence, "attribution": ctx.attribution}  # a new --licence updates
        if ctx.fetched_from:
            said["fetched_from"] = ctx.fetched_from
        unit_hash = content_hash({"kind": kind, "name": name, "snapshot": ctx.snapshot, **said})
        n = iri(dump)
        triples = [
            *entry_provenance(graph, dump, dump, unit_hash),
            f"{n} {STD.type} {KG.Dump}",
            f"{n} {STD.type} {STD.prov_Entity}",
            f"{n} {KG.dumpKind} {literal(kind)}",
            f"{n} {KG.dumpName} {literal(name)}",
            f"{n} {KG.sourceFile} {literal(ctx.source_file)}",
        ]
        not_mapped = []
        licence, attribution = ctx.licence, ctx.attribution
        if name in PWC_DUMPS:  # the file Papers with Code published under this name
            triples.append(f"{n} {KG.sourceArchive} {literal(ARCHIVE)}")
            licence = licence or PWC_LICENCE
            attribution = attribution or PWC_ATTRIBUTION
        if licence:
            triples.append(f"{n} {STD.license} {iri(licence_iri(licence))}")
        else:
            not_mapped.append(
                f"licence of {ctx.source_file} (unknown: not a dump file Papers with Code "
                "published; give kg ingest --licence IRI --attribution URL)"
            )
        if attribution:
            triples.append(f"{n} {KG.attribution} {iri(attribution)}")
        if ctx.snapshot:
            triples.append(f"{n} {KG.snapshot} {typed(ctx.snapshot, XSD.date)}")
        if ctx.fetched_from:  # where kg fetch downloaded the file (its manifest)
            triples.append(f"{n} {KG.sourceUrl} {iri(ctx.fetched_from)}")
        if ctx.ingested_at:
            triples.append(f"{n} {KG.ingestedAt} {typed(ctx.ingested_at, XSD.dateTime)}")
        return [Mapped(graph, dump, unit_hash, triples, not_mapped=not_mapped)]

    return units


# Slug-naming sources first, then records (priority 1), then the tables (kg.ingest.aliases).
DUMP_KINDS = (
    Kind(PAPERS, _is_papers, _papers, 0, dump_units(PAPERS)),
    Kind(LINKS, _is_links, _one(LinkMapper), 0, dump_units(LINKS)),
    Kind(METHODS, _is_methods, _one(MethodMapper), 0, dump_units(METHODS)),
    Kind(DATASETS, _is_datasets, _one(DatasetMapper), 0, dump_units(DATASETS)),
    Kind(EVALUATION, _is_evaluation, _evaluation, 2, dump_units(EVALUATION)),
)
