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
from typing import Any

from kg.errors import RecordError
from kg.ingest.fields import Obj
from kg.ingest.identity import Iris, arxiv_id, pwc_slug, slug_from_url
from kg.ingest.mapper import (
    WEB_SCHEMES,
    Mapper,
    code_link_key,
    repository_ref,
    result_id,
    result_keys,
    web_iri,
)
from kg.ingest.units import Context, Kind, Mapped, Triple, canonical_json, content_hash
from kg.rdf.terms import integer, literal, safe_iri, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri

# kept importable from here, where callers have long found them
__all__ = [
    "WEB_SCHEMES",
    "Context",
    "Kind",
    "Mapped",
    "RecordMapper",
    "Triple",
    "canonical_json",
    "content_hash",
    "map_record",
    "paper_identity",
    "record_slug",
    "result_id",
    "result_keys",
    "web_iri",
]


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


class RecordMapper(Mapper):
    """Maps one seed-format record. Use `map_record`; one instance per record."""

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
