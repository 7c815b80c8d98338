"""Paper records (the seed format) to RDF, as N-Triples text.

`map_record` validates and maps one record in one pass. It either returns every triple of
the record or raises `RecordError` naming the field: a record is never half-mapped.

Where triples live (see docs/ontology.md):
* the record's own named graph holds the paper, its links, code links, samples, results
  and the record's provenance;
* the shared entities graph holds what every record would otherwise repeat: the type and
  label of methods, tasks, authors, repositories, datasets and venues. A triple stated once
  there is counted once under the union default graph.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kg.config import MAX_ARRAY_ITEMS, MAX_FIELD_CHARS
from kg.errors import RecordError
from kg.ingest.fields import Obj, invalid_unicode_path
from kg.ingest.identity import (
    Iris,
    RepoRef,
    arxiv_id,
    licence_iri,
    pwc_slug,
    repository,
    slug_from_url,
)
from kg.ingest.values import iso_date, iso_datetime, metric_value, proceeding
from kg.rdf.engine import iri_error
from kg.rdf.terms import boolean, integer, is_absolute_iri, literal, safe_iri, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri

Triple = str  # "s p o" in N-Triples syntax, without the final " ."


def canonical_json(value: Any) -> str:
    """Sorted, compact JSON: the form hashed for change detection and kept in rdf:JSON literals."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(data: Any) -> str:
    """kg's content hash of a JSON value: sha256 of its canonical JSON, as `sha256:<hex>`.

    A value holding a lone surrogate cannot become UTF-8 N-Quads: it is a RecordError that
    names the field."""
    try:
        encoded = canonical_json(data).encode("utf-8")
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


def result_id(
    task_key: str | None, dataset_key: str | None, metric: str, model: Any, raw: str
) -> str:
    """The local id of one leaderboard value: the same value from any source is one node.

    The task and the dataset enter by their keys (slugs; `parent/sub` for a subdataset),
    not their names: "WMT2016 English--Romanian" and "WMT2016 English-Romanian" are one
    dataset, so a row listed under both is one result (docs/dumps.md)."""
    key = canonical_json([task_key, dataset_key, metric, model, raw]).encode()
    return hashlib.sha1(key).hexdigest()[:16]


def result_keys(
    iris: Iris, task: str | None, dataset: str | None
) -> tuple[str | None, str | None]:
    """The keys a result's id hashes: its task's and its dataset's IRIs after `task/` and
    `dataset/` (their slugs; `parent/sub` for a subdataset), None where it names none."""
    task_key = task.removeprefix(f"{iris.base}task/") if task else None
    dataset_key = dataset.removeprefix(f"{iris.base}dataset/") if dataset else None
    return task_key, dataset_key


def code_link_key(ref: RepoRef) -> str:
    """`<host>/<owner>/<name>[/-/<path>]`: a code link's IRI under its paper's."""
    tail = "/".join(segment(s) for s in ref.key.split("/"))
    if ref.path:
        tail += "/-/" + "/".join(segment(s) for s in ref.path.split("/"))
    return tail


#: The schemes of the links kg keeps: pages and files on the web. A `javascript:` or
#: `data:` URL in a link field is no link, and a page that shows it must never make it one.
WEB_SCHEMES = frozenset({"http", "https", "ftp"})


def web_iri(value: str, where: str, schemes: frozenset[str] = WEB_SCHEMES) -> str:
    """A URL from the data as a safe absolute IRI, or a RecordError naming the field.

    >>> web_iri("https://arxiv.org/abs/2004.10102", "url_abs")
    'https://arxiv.org/abs/2004.10102'
    >>> try:
    ...     web_iri("javascript:alert(1)", "url_abs")
    ... except RecordError as exc:
    ...     print(str(exc)[:64])
    field 'url_abs': 'javascript:alert(1)' is not a web URL (its sch
    """
    text = value.strip()
    if not is_absolute_iri(text):
        raise RecordError(f"{text[:80]!r} is not an absolute URL", field=where)
    scheme = text.split(":", 1)[0].lower()
    if scheme not in schemes:
        kept = sorted(schemes)
        raise RecordError(
            f"{text[:80]!r} is not a web URL (its scheme is {scheme[:20] + ':'!r}; kg keeps "
            f"{', '.join(kept[:-1])} and {kept[-1]} links)",
            field=where,
        )
    target = safe_iri(text)
    problem = iri_error(target)
    if problem:
        raise RecordError(f"{text[:80]!r} is not a valid URL ({problem})", field=where)
    return target


def repository_ref(url: str, where: str) -> RepoRef:
    """A repository URL from the data, normalised, or a RecordError naming the field."""
    ref = repository(url)
    if ref is None or iri_error(ref.url):
        raise RecordError(f"{url[:80]!r} is not a repository URL", field=where)
    return ref


def record_slug(obj: Obj) -> str | None:
    """The PwC slug of a record's `url` (`/paper/<slug>` or a bare slug)."""
    url = obj.text("url")
    if not url:
        return None
    if "?" in url or "#" in url:
        raise RecordError(
            f"{url[:80]!r} has a query or a fragment; give the plain /paper/<slug> URL",
            field=obj.where("url"),
        )
    slug = slug_from_url(url, "paper") or (url.strip("/") if "/" not in url.strip("/") else None)
    if not slug:
        raise RecordError(f"{url[:80]!r} is not a /paper/<slug> URL", field=obj.where("url"))
    return slug


def paper_identity(obj: Obj, iris: Iris) -> tuple[str, str]:
    """The paper's IRI and its key (the part under the base), by the identity rules."""
    slug = record_slug(obj)
    if slug:
        paper = iris.paper(slug)
    else:
        arxiv = obj.text("arxiv_id")
        title = obj.text("title")
        if arxiv:
            normal = arxiv_id(arxiv)
            if not normal:
                raise RecordError(f"{arxiv[:40]!r} is not an arXiv id", field=obj.where("arxiv_id"))
            paper = iris.paper_by_arxiv(normal)
        elif title:
            date = obj.text("date")
            paper = iris.paper_by_title(title, date[:4] if date else None)
        else:
            raise RecordError(
                "the record names no paper: give 'url' (/paper/<slug>), 'arxiv_id' or 'title'",
                field="url",
            )
    return paper, iris.local_key(paper)


class RecordMapper:
    """Maps one seed-format record. Use `map_record`; one instance per record."""

    def __init__(self, data: Any, ctx: Context) -> None:
        if not isinstance(data, dict):
            raise RecordError(f"a record must be a JSON object, got {type(data).__name__}")
        self.ctx = ctx
        self.iris = ctx.iris
        self.root = Obj(data, max_chars=ctx.max_chars, max_items=ctx.max_items)
        self.data = data
        self.t: list[Triple] = []
        self.s: list[Triple] = []
        self.not_mapped: list[str] = []  # values left out, each named with its reason

    # -- helpers ---------------------------------------------------------------------------
    def add(self, s: str, p: str, o: str) -> None:
        self.t.append(f"{s} {p} {o}")

    def share(self, s: str, p: str, o: str) -> None:
        self.s.append(f"{s} {p} {o}")

    def text(self, obj: Obj, key: str, s: str, p: str) -> str | None:
        value = obj.text(key)
        if value is not None:
            self.add(s, p, literal(value))
        return value

    def flag(self, obj: Obj, key: str, s: str, p: str) -> None:
        value = obj.flag(key)
        if value is not None:
            self.add(s, p, boolean(value))

    def number(self, obj: Obj, key: str, s: str, p: str) -> None:
        value = obj.integer(key)
        if value is not None:
            self.add(s, p, integer(value))

    def link(self, obj: Obj, key: str, s: str, p: str) -> str | None:
        value = obj.text(key)
        if value is None:
            return None
        target = web_iri(value, obj.where(key))
        self.add(s, p, iri(target))
        return target

    def licence(self, obj: Obj, key: str, s: str, p: str) -> None:
        """A licence document's URL as its one IRI (identity.licence_iri)."""
        value = obj.text(key)
        if value is not None:
            self.add(s, p, iri(web_iri(licence_iri(value), obj.where(key))))

    def title(self, obj: Obj, key: str, p: str) -> None:
        """A paper's title: dcterms:title, and rdfs:label so that generic clients show it."""
        value = self.text(obj, key, p, STD.title)
        if value is not None:
            self.add(p, STD.label, literal(value))

    def json_literal(self, obj: Obj, key: str, s: str, p: str) -> None:
        value = obj.raw(key)
        if value is None:
            return
        try:
            text = canonical_json(value)
        except (RecursionError, ValueError) as exc:
            raise RecordError(f"cannot be kept as JSON: {exc}", field=obj.where(key)) from None
        if len(text) > self.ctx.max_chars:
            raise RecordError("JSON value is longer than the field limit", field=obj.where(key))
        self.add(s, p, typed(text, STD.JSON[1:-1]))

    def date(self, obj: Obj, key: str, s: str, p: str) -> None:
        value = obj.text(key)
        if value is None:
            return
        parsed = iso_date(value)
        if parsed is None:
            raise RecordError(f"{value[:40]!r} is not a date (YYYY-MM-DD)", field=obj.where(key))
        self.add(s, p, typed(parsed, XSD.date))

    def datetime(self, obj: Obj, key: str, s: str, p: str) -> None:
        value = obj.text(key)
        if value is None:
            return
        parsed = iso_datetime(value)
        if parsed is None:
            raise RecordError(f"{value[:40]!r} is not an ISO date-time", field=obj.where(key))
        self.add(s, p, typed(parsed, XSD.dateTime))

    def entity(self, node: str, cls: str, label_p: str, label: str | None) -> str:
        """Declare a shared entity (type and label) in the entities graph; a label given by
        a specific property (foaf:name, skos:prefLabel) is also its rdfs:label."""
        n = iri(node)
        self.share(n, STD.type, cls)
        if label:
            self.share(n, label_p, literal(label))
            if label_p != STD.label:
                self.share(n, STD.label, literal(label))
        return n

    def slugged(self, obj: Obj, slug_key: str, name_key: str, kind: str) -> tuple[str, str | None]:
        """A task/method/dataset reference: by slug, else by PwC's slug rule on the name."""
        slug = obj.text(slug_key)
        name = obj.text(name_key)
        if not slug:
            if not name:
                raise RecordError(f"needs {slug_key!r} or {name_key!r}", field=obj.where(slug_key))
            slug = pwc_slug(name) or name.strip()
        return slug, name

    def repo_kind(self, kind: str) -> str:
        """A repository kind of the controlled vocabulary, declared as a SKOS concept."""
        node = self.entity(self.iris.repo_kind(kind), KG.RepoKind, STD.prefLabel, kind)
        self.share(node, STD.type, STD.skos_Concept)
        return node

    def repo(self, ref: RepoRef) -> str:
        node = self.entity(
            self.iris.repository(ref), KG.Repository, STD.label, ref.key.split("/", 1)[-1]
        )
        self.share(node, STD.codeRepository, iri(ref.url))
        self.share(node, KG.host, literal(ref.key.split("/", 1)[0]))
        return node

    def add_code_link(
        self, p: str, paper_iri: str, ref: RepoRef, position: int | None = None
    ) -> str:
        """The paper's code link to the repository `ref`: one node under the paper's IRI,
        whichever source names it (records, the links dump, the evaluation tables' rows),
        with its 1-based place in the list the source gives (`schema:position`), if any."""
        repo = self.repo(ref)
        node = iri(f"{paper_iri}/code/{code_link_key(ref)}")
        self.add(p, KG.codeLink, node)
        self.add(p, KG.hasRepository, repo)
        self.add(node, STD.type, KG.CodeLink)
        self.add(node, KG.repository, repo)
        self.add(node, KG.linkedUrl, iri(ref.link_url))
        if ref.path:
            self.add(node, KG.repositoryPath, literal(ref.path))
        if position is not None:
            self.add(node, STD.position, integer(position))
        return node

    # -- the record ------------------------------------------------------------------------
    def map(self) -> Mapped:
        root = self.root
        # Hashed first: a lone surrogate anywhere (a key, a value kept as JSON) rejects the
        # record up front, naming the field.
        self.hash = content_hash(self.data)
        paper_iri, key = paper_identity(root, self.iris)
        if self.ctx.papers is not None:  # known by slug elsewhere? (the graph keeps `key`)
            date, arxiv_raw = root.text("date"), root.text("arxiv_id")
            paper_iri = self.ctx.paper(
                slug=record_slug(root),
                arxiv=arxiv_id(arxiv_raw) if arxiv_raw else None,
                title=root.text("title"),
                year=date[:4] if date else None,
            )
        graph_iri = self.iris.record_graph(key)
        p, g = iri(paper_iri), iri(graph_iri)
        self.paper_iri = paper_iri

        self.add(p, STD.type, KG.Paper)
        slug = record_slug(root)
        if slug:
            self.add(p, KG.pwcSlug, literal(slug))
            self.add(p, STD.seeAlso, iri(f"https://paperswithcode.com/paper/{segment(slug)}"))
        self.title(root, "title", p)
        self.text(root, "abstract", p, STD.abstract)
        self.date(root, "date", p, STD.issued)
        arxiv_raw = root.text("arxiv_id")
        if arxiv_raw:
            arxiv = arxiv_id(arxiv_raw)
            if arxiv is None:
                raise RecordError(f"{arxiv_raw[:40]!r} is not an arXiv id", field="arxiv_id")
            self.add(p, KG.arxivId, literal(arxiv))
            self.add(p, STD.seeAlso, iri(f"https://arxiv.org/abs/{safe_iri(arxiv)}"))
        self.link(root, "url_abs", p, KG.abstractPage)
        self.link(root, "url_pdf", p, KG.pdf)
        self.map_proceeding(p)
        self.map_authors(p)
        self.map_concepts(p)
        self.map_code_links(p, slug)
        self.map_results(p)
        self.json_literal(root, "arxiv_metadata", p, KG.arxivMetadata)
        self.json_literal(root, "syntology_extracted_results", p, KG.extractedResults)
        self.map_provenance(g, p)
        self.map_syntology(g, p)

        return Mapped(
            graph=graph_iri,
            subject=paper_iri,
            content_hash=self.hash,
            triples=list(dict.fromkeys(self.t)),  # a triple stated twice is one triple
            shared=list(dict.fromkeys(self.s)),
            unknown_keys=root.unknown_keys(),
            not_mapped=self.not_mapped,
        )

    def map_proceeding(self, p: str) -> None:
        raw = self.root.text("proceeding")
        if not raw:
            return
        self.add(p, KG.proceeding, literal(raw))
        parsed = proceeding(raw)
        if parsed is None:
            return
        venue = self.entity(self.iris.venue(parsed.venue), KG.Venue, STD.label, parsed.venue)
        self.add(p, KG.venue, venue)
        if parsed.year is not None:
            self.add(p, KG.venueYear, integer(parsed.year))
        if parsed.month is not None:
            self.add(p, KG.venueMonth, integer(parsed.month))

    def map_authors(self, p: str) -> None:
        for position, name in enumerate(self.root.texts("authors"), start=1):
            author = self.entity(self.iris.author(name), KG.Author, STD.foaf_name, name.strip())
            ship = iri(f"{self.paper_iri}/authorship/{position}")
            self.add(p, STD.creator, author)
            self.add(p, KG.authorship, ship)  # a kg:Authorship by its range: not stated
            self.add(ship, KG.author, author)
            self.add(ship, KG.position, integer(position))
            self.add(ship, KG.authorName, literal(name))

    def map_concepts(self, p: str) -> None:
        root = self.root
        for item in root.objects("tasks"):
            slug, name = self.slugged(item, "task_slug", "task_name", "task")
            self.add(p, KG.hasTask, self.entity(self.iris.task(slug), KG.Task, STD.label, name))
        for item in root.objects("methods"):
            slug, name = self.slugged(item, "method_slug", "method_name", "method")
            self.add(
                p, KG.usesMethod, self.entity(self.iris.method(slug), KG.Method, STD.label, name)
            )
        self.map_introduced("methods_introduced", "method", KG.Method, KG.introducesMethod, p)
        self.map_introduced("datasets_introduced", "dataset", KG.Dataset, KG.introducesDataset, p)

    def map_introduced(self, key: str, kind: str, cls: str, prop: str, p: str) -> None:
        for i, item in enumerate(self.root.array(key)):
            name: str | None
            if isinstance(item, str):
                if not item.strip():
                    continue
                slug, name = pwc_slug(item) or item.strip(), item
            else:
                obj = self.root.child(f"{key}[{i}]", item)
                slug_key = next(
                    (k for k in (f"{kind}_slug", "slug") if obj.raw(k) is not None), "slug"
                )
                name_key = next(
                    (k for k in (f"{kind}_name", "name") if obj.raw(k) is not None), "name"
                )
                if obj.raw("url") is not None and obj.raw(slug_key) is None:
                    slug_key = "url"
                slug, name = self.slugged(obj, slug_key, name_key, kind)
                slug = slug_from_url(slug, kind) or slug
            node_iri = self.iris.method(slug) if kind == "method" else self.iris.dataset(slug)
            self.add(p, prop, self.entity(node_iri, cls, STD.label, name))

    def map_code_links(self, p: str, slug: str | None) -> None:
        seen: dict[str, tuple[dict[str, Any], str]] = {}  # link node -> (its object, where)
        for position, link in enumerate(self.root.objects("code_links"), start=1):
            named = link.text("paper_slug")
            if named and slug and named != slug:
                raise RecordError(
                    f"names paper {named[:80]!r} but the record is about {slug[:80]!r}",
                    field=link.where("paper_slug"),
                )
            url = link.text("repo_url", required=True)
            assert url is not None
            ref = repository_ref(url, link.where("repo_url"))
            node_iri = f"{self.paper_iri}/code/{code_link_key(ref)}"
            if node_iri in seen:
                first, where = seen[node_iri]
                mine = link.source
                for key in mine:
                    link.raw(key)  # read: what is not mapped is said below, not "unknown"
                keys = first.keys() | mine.keys()
                differ = sorted(k for k in keys if first.get(k) != mine.get(k))
                if differ:  # the same link listed twice says nothing new, a conflict does
                    path = link.where("repo_url").removesuffix(".repo_url")
                    self.not_mapped.append(
                        f"{path} (a second link to {ref.link_url} whose {', '.join(differ)} "
                        f"{'differs' if len(differ) == 1 else 'differ'} from {where}'s; "
                        f"{where} was kept)"
                    )
                continue
            seen[node_iri] = (link.source, link.where("repo_url").removesuffix(".repo_url"))
            node = self.add_code_link(p, self.paper_iri, ref, position)  # the record's order
            self.flag(link, "is_official", node, KG.isOfficial)
            self.flag(link, "mentioned_in_paper", node, KG.mentionedInPaper)
            self.flag(link, "mentioned_in_github", node, KG.mentionedInGithub)
            self.text(link, "framework", node, KG.framework)
            reach = link.obj("reach")
            if reach is not None:
                self.text(reach, "status", node, KG.reachStatus)

    def map_results(self, p: str) -> None:
        for item in self.root.objects("results"):
            task = item.text("task")
            dataset = item.text("dataset")
            model = item.text("model_name") or item.text("model")
            pairs: list[tuple[str, str]] = []
            metric = item.text("metric")
            value = item.raw("value")
            if metric is not None:
                pairs.append((metric, self.metric_text(item, "value", value)))
            metrics = item.obj("metrics")
            if metrics is not None:
                for name, val in metrics.items():
                    pairs.append((name, self.metric_text(metrics, name, val)))
            if not pairs:
                raise RecordError(
                    "a result needs 'metric' and 'value' (or 'metrics')", field=item.where("metric")
                )
            task_iri = self.iris.task(pwc_slug(task) or task) if task else None
            dataset_iri = self.iris.dataset(pwc_slug(dataset) or dataset) if dataset else None
            task_key, dataset_key = result_keys(self.iris, task_iri, dataset_iri)
            for name, raw in pairs:
                local = result_id(task_key, dataset_key, name, model, raw)
                node = iri(f"{self.paper_iri}/result/{local}")
                self.add(p, KG.hasResult, node)
                self.add(node, STD.type, KG.EvaluationResult)
                if task_iri:
                    node_t = self.entity(task_iri, KG.Task, STD.label, task)
                    self.add(node, KG.onTask, node_t)
                if dataset_iri:
                    node_d = self.entity(dataset_iri, KG.Dataset, STD.label, dataset)
                    self.add(node, KG.onDataset, node_d)
                if model:
                    self.add(node, KG.modelName, literal(model))
                self.add_metric(node, name, raw)

    def metric_text(self, obj: Obj, key: str, value: Any) -> str:
        if isinstance(value, bool) or value is None or not isinstance(value, str | int | float):
            raise RecordError("expected a metric value (string or number)", field=obj.where(key))
        return value if isinstance(value, str) else repr(value)

    def add_metric(self, node: str, name: str, raw: str) -> None:
        self.add(node, KG.metricName, literal(name))
        self.add(node, KG.metricValue, literal(raw))
        parsed = metric_value(raw)
        if parsed.number is not None:
            self.add(node, KG.metricNumber, typed(parsed.number, XSD.decimal))
            self.add(node, KG.metricIsPercent, boolean(parsed.percent))
        if parsed.spread is not None:
            self.add(node, KG.metricSpread, typed(parsed.spread, XSD.decimal))

    def map_provenance(self, g: str, p: str) -> None:
        ctx = self.ctx
        self.add(g, STD.type, KG.Record)
        self.add(g, STD.type, STD.prov_Entity)
        self.add(g, KG.describes, p)
        self.add(g, KG.contentHash, literal(self.hash))
        if ctx.source_file:
            self.add(g, KG.sourceFile, literal(ctx.source_file))
        if ctx.ingested_at:
            self.add(g, KG.ingestedAt, typed(ctx.ingested_at, XSD.dateTime))
        source = self.root.obj("source")
        if source is not None:
            self.text(source, "archive", g, KG.sourceArchive)
            self.date(source, "snapshot", g, KG.snapshot)
            self.licence(source, "licence_url", g, KG.archiveLicence)
            self.text(source, "row_kind", g, KG.rowKind)
        about = self.root.obj("about")
        if about is not None:
            self.link(about, "site", g, KG.republishedBy)
            self.text(about, "licence", g, KG.licenceName)
            self.licence(about, "licence_url", g, STD.license)
            self.link(about, "attribution", g, KG.attribution)
            self.text(about, "modified", g, KG.modificationNote)
            self.text(about, "non_affiliation", g, KG.nonAffiliation)

    def map_syntology(self, g: str, p: str) -> None:
        syn = self.root.obj("syntology")
        if syn is None:
            return
        self.link(syn, "syntology_url", p, STD.seeAlso)
        self.link(syn, "atlas_url", g, KG.atlasPage)
        self.link(syn, "developers", g, KG.developersPage)
        self.json_literal(syn, "mcp", g, KG.mcpCall)
        self.datetime(syn, "read_at", g, KG.readAt)
        self.text(syn, "read_at_is", g, KG.readAtMeaning)
        self.text(syn, "claim", g, KG.harvestClaim)
        self.number(syn, "n_pointer_only_for_licence", g, KG.pointerOnlyForLicence)
        vocabulary = syn.obj("repo_kind_vocabulary")
        if vocabulary is not None:
            for kind, definition in vocabulary.items():
                if not isinstance(definition, str):
                    raise RecordError("expected a string definition", field=vocabulary.where(kind))
                self.share(self.repo_kind(kind), STD.definition, literal(definition))
        for repo in syn.objects("repos"):
            url = repo.text("url", required=True)
            assert url is not None
            ref = repository_ref(url, repo.where("url"))
            node = iri(f"{g[1:-1]}/harvest/{'/'.join(segment(s) for s in ref.key.split('/'))}")
            self.add(g, KG.harvestedRepository, node)
            self.add(node, STD.type, KG.HarvestedRepository)
            self.add(node, KG.repository, self.repo(ref))
            self.text(repo, "provenance", node, KG.harvestProvenance)
            reach = repo.obj("reach")
            if reach is not None:
                self.text(reach, "status", node, KG.reachStatus)
        summary = syn.obj("summary")
        if summary is not None:
            for status, count in summary.items():
                if type(count) is not int:
                    raise RecordError("expected an integer count", field=summary.where(status))
                node = iri(f"{g[1:-1]}/status/{segment(status)}")
                self.add(g, KG.statusCount, node)
                self.add(node, STD.type, KG.StatusCount)
                self.add(node, KG.status, literal(status))
                self.add(node, KG.count, integer(count))
        by_kind = syn.obj("by_repo_kind")
        if by_kind is not None:
            for kind, value in by_kind.items():
                counts = by_kind.child(kind, value)
                node = iri(f"{g[1:-1]}/repo-kind/{segment(kind)}")
                self.add(g, KG.repoKindSummary, node)
                self.add(node, STD.type, KG.RepoKindSummary)
                self.add(node, KG.repoKind, self.repo_kind(kind))
                self.number(counts, "samples", node, KG.sampleCount)
                self.number(counts, "ran", node, KG.ranCount)
                self.number(counts, "repositories", node, KG.repositoryCount)
        self.map_samples(syn, p)

    def map_samples(self, syn: Obj, p: str) -> None:
        seen: set[str] = set()
        for sample in syn.objects("samples"):
            sha = sample.text("code_sha256_prefix")
            entry = sample.text("entry")
            local = (
                segment(sha)
                if sha
                else "h"
                + hashlib.sha1(
                    canonical_json([entry, sample.raw("repo"), sample.raw("path")]).encode()
                ).hexdigest()[:16]
            )
            node_iri = f"{self.paper_iri}/sample/{local}"
            if node_iri in seen:  # same code twice: tell them apart by entry, then by order
                node_iri += "-" + segment(entry or "")
                base_iri, n = node_iri, 2
                while node_iri in seen:
                    node_iri, n = f"{base_iri}-{n}", n + 1
            seen.add(node_iri)
            node = iri(node_iri)
            self.add(p, KG.hasSample, node)
            self.add(node, STD.type, KG.Sample)
            if sha:
                self.add(node, KG.codeSha256Prefix, literal(sha))
            if entry:
                self.add(node, KG.entry, literal(entry))
            repo = sample.text("repo")
            if repo:
                ref = repository_ref(repo, sample.where("repo"))
                self.add(node, KG.repository, self.repo(ref))
            kind = sample.text("repo_kind")
            if kind:
                self.add(node, KG.repoKind, self.repo_kind(kind))
            self.text(sample, "path", node, KG.filePath)
            self.link(sample, "file_url", node, KG.fileUrl)
            self.text(sample, "link_basis", node, KG.linkBasis)
            self.text(sample, "language", node, STD.programmingLanguage)
            self.text(sample, "status", node, KG.executionStatus)
            self.number(sample, "verification_level", node, KG.verificationLevel)
            self.text(sample, "contract_check", node, KG.contractCheck)
            self.text(sample, "metamorphic_tier", node, KG.metamorphicTier)
            self.flag(sample, "behaviour_fingerprint", node, KG.behaviourFingerprint)
            self.text(sample, "licence", node, KG.licenceName)
            self.flag(sample, "inline_ok", node, KG.inlineOk)
            self.json_literal(sample, "mcp_get_code", node, KG.mcpCall)


def map_record(data: Any, ctx: Context) -> Mapped:
    """Map one seed-format record, or raise RecordError naming the field."""
    try:
        return RecordMapper(data, ctx).map()
    except RecursionError:
        raise RecordError("is nested too deeply to read") from None


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
