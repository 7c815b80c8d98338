"""Mapper: the triple-writing helpers every mapper shares (records, the dumps' kinds, the
live API), with the parts a paper has whichever source names it (proceeding, authors, code
links, metric values), and the rules that key shared nodes: a code link under its paper, a
result by task, dataset, metric, model and value; links from the data kept only as web URLs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kg.errors import RecordError
from kg.ingest.fields import Obj
from kg.ingest.identity import Iris, RepoRef, licence_iri, pwc_slug, repository
from kg.ingest.units import Context, Mapped, Triple, canonical_json
from kg.ingest.values import iso_date, iso_datetime, metric_value, proceeding
from kg.rdf.engine import iri_error
from kg.rdf.terms import boolean, integer, is_absolute_iri, literal, safe_iri, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri


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


class Mapper:
    """Maps one JSON object; subclasses map one kind of input. One instance per item."""

    paper_iri: str  # the paper being mapped, for the parts under its IRI

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


    def map(self) -> Mapped:
        """The item's unit (each kind of mapper maps its own)."""
        raise NotImplementedError
