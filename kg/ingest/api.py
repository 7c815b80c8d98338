"""The relaunched Papers with Code API's responses (paperswithcode.co/api/v1) as units of change
(docs/live.md). `kg.sources.pwc_api` fetches them; this module only maps JSON to triples.

Each unit lands in its own named graph `graph/pwc-api/<kind>/<key>` with the dump vocabulary:
`foaf:primaryTopic`, `prov:wasDerivedFrom` the source node `dump/pwc-api/live` (a `kg:Dump`
with the licence and attribution), `kg:contentHash`, plus the API URLs it was read from
(`kg:sourceUrl`) and when (`kg:ingestedAt`). A later pull replaces exactly that graph.
Identity is the archive's (docs/identity.md): papers through the run's alias index (arXiv id,
else title and year), tasks, methods, datasets and areas by slug, repositories by normalised
URL, and results exactly as the evaluation-tables dump maps them (`EvaluationMapper.map_row`),
so results of both sources on one benchmark are one leaderboard.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps import ARCHIVE, DumpMapper, EvaluationMapper, entry_provenance
from kg.ingest.fields import Obj
from kg.ingest.identity import arxiv_id, clean_name, licence_iri, pwc_slug
from kg.ingest.units import Context, Mapped, content_hash
from kg.ingest.values import iso_date
from kg.rdf.terms import literal, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri

SOURCE = "pwc-api"  # the dump name of the API (`dump/pwc-api/live`, graphs `graph/pwc-api/…`)
SNAPSHOT = "live"
SITE = "https://paperswithcode.co"
#: The terms of the data, as Papers with Code stated them for its archive ("All data is
#: licenced under CC-BY-SA"); the relaunched site is credited as the attribution page.
#: `kg pull --licence/--attribution` say otherwise when the site's terms differ.
API_LICENCE = "https://creativecommons.org/licenses/by-sa/4.0/"
API_ATTRIBUTION = f"{SITE}/"

#: Fields of each response kind that pwc-cli's contract names and kg reads or leaves aside on
#: purpose (counts, ranks, display fields). Any other field is counted as unknown.
KNOWN: dict[str, frozenset[str]] = {
    "area": frozenset({"id", "name", "slug", "description", "tasks", "task_count",
                       "paper_count", "benchmark_count", "evaluation_count"}),
    "task": frozenset({"id", "slug", "name", "description", "area_id", "area", "level",
                       "parent_id", "parents", "children", "sisters", "paper_count",
                       "benchmark_count", "evaluation_count", "is_visible", "benchmarks"}),
    "method": frozenset({"id", "slug", "name", "full_name", "description", "area_id",
                         "introduced_year", "paper_count", "source_url", "source_title",
                         "code_snippet_url"}),
    "paper": frozenset({"id", "arxiv_id", "route_identifier", "title", "abstract", "published",
                        "date_published", "authors", "tasks", "methods", "repositories",
                        "hf_models", "hf_datasets", "hf_spaces", "project_pages", "url_abs",
                        "url_pdf", "source_url", "conference", "conference_name",
                        "citation_count", "organizations", "predecessor_papers",
                        "successor_papers", "version", "is_latest"}),
    "dataset": frozenset({"id", "slug", "name", "full_name", "description", "hf_url",
                          "paper_count", "evaluation_count", "is_open", "tasks", "task"}),
    "evaluation": frozenset({"id", "paper_id", "paper_title", "paper_arxiv_id",
                             "paper_published_date", "task_id", "task_name", "task_slug",
                             "dataset_id", "dataset_name", "dataset_slug", "model_name",
                             "harness", "metrics", "best_metric", "best_rank", "is_open",
                             "result_url", "source_url", "uses_additional_data"}),
}


def _key(value: Any) -> str:
    return segment(str(value)) if value not in (None, "") else ""


def known(obj: Obj, kind: str) -> None:
    """Mark the contract's fields of `kind` as read (what remains is unknown)."""
    for name in KNOWN[kind]:
        obj.raw(name)


class ApiMapper(DumpMapper):
    """One API unit: the dump helpers, the API source node, and the URLs read."""

    kind = SOURCE

    def __init__(
        self, data: Any, ctx: Context, *, urls: Iterable[str] = (), unit_hash: str = ""
    ) -> None:
        super().__init__(data, ctx)
        self.hash = unit_hash or self.hash
        self.urls = list(urls)

    def api_entry(self, kind: str, key: str, subject: str) -> Mapped:
        graph = self.iris.dump_graph(f"api/{kind}", key)
        g = iri(graph)
        for url in self.urls:
            self.add(g, KG.sourceUrl, iri(url))
        if self.ctx.ingested_at:
            self.add(g, KG.ingestedAt, typed(self.ctx.ingested_at, XSD.dateTime))
        return self.entry(graph, subject)

    def lineage(self, root: Obj, where: str, raw: Any) -> str | None:
        """A paper of another's lineage (`{route_identifier, title, published}`), named as
        the archive names papers: by arXiv id, else by title and year; None if neither."""
        if not isinstance(raw, dict):
            self.skip(where, "not a paper object")
            return None
        ref = root.child(where, raw)
        route, title = ref.text("route_identifier") or ref.text("reference"), ref.text("title")
        published = ref.text("published")
        arxiv = arxiv_id(route) if route else None
        year = published[:4] if published and published[:4].isdigit() else None
        ref.raw("id")
        if not (arxiv or title):
            self.skip(where, "names no paper kg can identify (no arXiv id, no title)")
            return None
        q = iri(self.ctx.paper(arxiv=arxiv, title=None if arxiv else title, year=year))
        self.paper_node(q, arxiv=arxiv, title=None if arxiv else title)
        return q

    def slug_of(self, obj: Obj, kind: str) -> tuple[str, str | None]:
        name = obj.text("name")
        slug = obj.text("slug") or (pwc_slug(name) if name else None)
        if not slug:
            raise RecordError(f"names no {kind}: give 'slug' or 'name'", field=obj.where("slug"))
        return slug, clean_name(name) if name else None


def map_area(item: Any, ctx: Context, *, url: str) -> Mapped:
    m = ApiMapper(item, ctx, urls=[url], unit_hash=content_hash(item))
    slug, name = m.slug_of(m.root, "area")
    area = m.area(name, slug)
    assert area is not None
    m.text(m.root, "description", area, STD.description)
    known(m.root, "area")
    return m.api_entry("area", segment(slug), area[1:-1])


def map_task(item: Any, ctx: Context, *, url: str, areas: dict[str, str],
             tasks: dict[str, str]) -> Mapped:  # fmt: skip
    """A task; `areas` and `tasks` map the API's ids to slugs (the run's lists)."""
    m = ApiMapper(item, ctx, urls=[url], unit_hash=content_hash(item))
    root = m.root
    slug, name = m.slug_of(root, "task")
    t = m.entity(m.iris.task(slug), KG.Task, STD.label, name)
    m.text(root, "description", t, STD.description)
    area_id = root.raw("area_id")
    if area_id is not None and str(area_id) in areas:
        area = m.area(None, areas[str(area_id)])
        if area:
            m.add(t, KG.area, area)
    parent = root.raw("parent_id")
    if parent is not None and str(parent) in tasks:
        m.add(t, KG.subtaskOf, iri(m.iris.task(tasks[str(parent)])))
    for i, raw in enumerate(root.array("parents")):
        if isinstance(raw, dict):
            ref = root.child(f"parents[{i}]", raw)
            parent_slug, parent_name = m.slug_of(ref, "task")
            ref.raw("id")
            m.add(t, KG.subtaskOf, m.entity(m.iris.task(parent_slug), KG.Task, STD.label,
                                            parent_name))  # fmt: skip
    m.add(t, STD.seeAlso, iri(f"{SITE}/task/{segment(slug)}"))
    known(root, "task")
    return m.api_entry("task", segment(slug), t[1:-1])


def map_method(item: Any, ctx: Context, *, url: str, areas: dict[str, str]) -> Mapped:
    m = ApiMapper(item, ctx, urls=[url], unit_hash=content_hash(item))
    root = m.root
    slug, name = m.slug_of(root, "method")
    node = m.entity(m.iris.method(slug), KG.Method, STD.label, name)
    m.method_details(root, node)
    area_id = root.raw("area_id")
    if area_id is not None and str(area_id) in areas:
        area = m.area(None, areas[str(area_id)])
        if area:
            m.add(node, KG.area, area)
    m.add(node, STD.seeAlso, iri(f"{SITE}/method/{segment(slug)}"))
    known(root, "method")
    return m.api_entry("method", segment(slug), node[1:-1])


def paper_key(item: dict[str, Any]) -> str:
    """The API's own key of a paper (its graph's name): `arxiv/<id>`, else `id/<id>`."""
    raw = item.get("arxiv_id")
    arxiv = arxiv_id(raw) if isinstance(raw, str) and raw else None
    if arxiv:
        return f"arxiv/{segment(arxiv)}"
    if item.get("id") in (None, ""):
        raise RecordError("names no paper: give 'arxiv_id' or 'id'", field="id")
    return f"id/{_key(item.get('id'))}"


def paper_reference(item: dict[str, Any]) -> str:
    """What `papers/{…}` takes for this paper: its arXiv id, else its API id."""
    return str(item.get("arxiv_id") or item.get("id"))


def map_paper(item: Any, ctx: Context, *, urls: list[str], unit_hash: str) -> Mapped:
    """A paper as `papers/{id}?include_resources=true` gives it (over its list entry)."""
    m = ApiMapper(item, ctx, urls=urls, unit_hash=unit_hash)
    root = m.root
    key = paper_key(item)
    raw = root.text("arxiv_id")
    arxiv = arxiv_id(raw) if raw else None
    if raw and not arxiv:
        raise RecordError(f"{raw[:40]!r} is not an arXiv id", field="arxiv_id")
    title = root.text("title")
    date_key = "published" if root.raw("published") is not None else "date_published"
    raw_date = root.text(date_key)
    date = iso_date(raw_date[:10]) if raw_date else None
    if raw_date and date is None:
        raise RecordError(f"{raw_date[:40]!r} is not a date (YYYY-MM-DD)", field=date_key)
    m.paper_iri = ctx.paper(arxiv=arxiv, title=title, year=date[:4] if date else None)
    p = iri(m.paper_iri)
    m.paper_node(p, arxiv=arxiv, title=title, date=date)
    m.text(root, "abstract", p, STD.abstract)
    m.soft_link(root, "url_abs", p, KG.abstractPage)
    m.soft_link(root, "url_pdf", p, KG.pdf)
    m.add(p, STD.seeAlso, iri(f"{SITE}/paper/{segment(paper_reference(item))}"))
    conference = root.text("conference_name") or root.text("conference")
    if conference:
        m.add(p, KG.proceeding, literal(conference))
    m.map_authors(p)
    for kind, prop, cls, maker in (
        ("tasks", KG.hasTask, KG.Task, m.iris.task),
        ("methods", KG.usesMethod, KG.Method, m.iris.method),
    ):
        for i, raw_ref in enumerate(root.array(kind)):
            if isinstance(raw_ref, str):
                if raw_ref.strip():
                    node = maker(pwc_slug(raw_ref) or raw_ref.strip())
                    m.add(p, prop, m.entity(node, cls, STD.label, clean_name(raw_ref)))
                continue
            ref = root.child(f"{kind}[{i}]", raw_ref)
            slug, name = m.slug_of(ref, kind[:-1])
            ref.raw("id")
            m.add(p, prop, m.entity(maker(slug), cls, STD.label, name))
    for i, raw_repo in enumerate(root.array("repositories")):
        where = f"repositories[{i}]"
        if isinstance(raw_repo, str):
            if m.soft_repo(raw_repo, where) is not None:
                m.code_link(p, m.paper_iri, raw_repo, where)
            continue
        repo = root.child(where, raw_repo)
        url = repo.text("url")
        if m.soft_repo(url, repo.where("url")) is None or url is None:
            continue
        node = m.code_link(p, m.paper_iri, url, repo.where("url"))
        m.flag(repo, "is_official", node, KG.isOfficial)
        m.flag(repo, "mentioned_in_paper", node, KG.mentionedInPaper)
        m.text(repo, "framework", node, KG.framework)
        for extra in ("stars", "name", "owner", "description", "id"):
            repo.raw(extra)
    for field in ("hf_models", "hf_datasets", "hf_spaces", "project_pages"):
        for i, link in enumerate(root.array(field)):
            url = link if isinstance(link, str) else None
            if isinstance(link, dict):
                url = root.child(f"{field}[{i}]", link).text("url")
            target = m.soft_url(url, f"{field}[{i}]")
            if target:
                m.add(p, STD.seeAlso, iri(target))
    for field in ("predecessor_papers", "successor_papers"):
        for i, raw_ref in enumerate(root.array(field)):
            other = m.lineage(root, f"{field}[{i}]", raw_ref)
            if other is not None:  # the paper builds on its predecessors; successors on it
                m.add(*((p, STD.references, other) if field[0] == "p" else
                        (other, STD.references, p)))  # fmt: skip
    known(root, "paper")
    return m.api_entry("paper", key, m.paper_iri)


class BenchmarkMapper(EvaluationMapper, ApiMapper):
    """A benchmark (`datasets/` entry) with its results (`datasets/{id}/evaluations/`), one
    unit; each result row is mapped as the evaluation-tables dump maps its rows."""

    def __init__(self, data: Any, ctx: Context, *, urls: list[str], unit_hash: str) -> None:
        EvaluationMapper.__init__(self, data, ctx)  # through ApiMapper, to DumpMapper
        self.hash, self.urls = unit_hash, list(urls)

    def map_benchmark(self, tasks: dict[str, str]) -> list[Mapped]:
        root = self.root
        bench = root.obj("benchmark")
        if bench is None:
            raise RecordError("a benchmark needs its datasets/ entry", field="benchmark")
        slug, name = self.slug_of(bench, "benchmark")
        d = self.entity(self.iris.dataset(slug), KG.Dataset, STD.label, name)
        self.text(bench, "description", d, STD.description)
        self.text(bench, "full_name", d, KG.fullName)
        self.soft_link(bench, "hf_url", d, STD.seeAlso)
        self.add(d, STD.seeAlso, iri(f"{SITE}/benchmark/{segment(slug)}"))
        known(bench, "dataset")
        by_task: dict[str, tuple[str | None, list[Obj]]] = {}
        for row in root.objects("evaluations"):
            known(row, "evaluation")
            t_slug = tasks.get(str(row.raw("task_id"))) or row.text("task_slug")
            task_name = row.text("task_name")
            if not t_slug and task_name:
                t_slug = pwc_slug(task_name)
            if not t_slug:
                self.skip(row.where("task_id"), "a result on no task: a leaderboard needs one")
                continue
            named, rows = by_task.setdefault(t_slug, (task_name, []))
            if named is None and task_name:
                by_task[t_slug] = (task_name, rows)
            rows.append(row)
        for t_slug, (task_name, rows) in by_task.items():
            self.table(t_slug, clean_name(task_name) if task_name else None, d, slug, name, rows)
        return [self.api_entry("benchmark", segment(slug), d[1:-1]), *self.parts]

    def table(
        self, t_slug: str, task_name: str | None, d: str, slug: str, name: str | None,
        rows: list[Obj],
    ) -> None:  # fmt: skip
        """One task's results on this benchmark: a leaderboard in its own graph
        (`…/table/<task>/<dataset>`, as the evaluation-tables dump states its tables), so
        the leaderboard names the API among its sources."""
        t = self.entity(self.iris.task(t_slug), KG.Task, STD.label, task_name)
        board = self.iris.leaderboard(t[1:-1], d[1:-1])
        b = iri(board)

        def state() -> None:
            self.add(d, KG.usedForTask, t)
            self.add(b, STD.type, KG.Leaderboard)
            self.add(b, KG.onTask, t)
            self.add(b, KG.onDataset, d)
            self.add(b, STD.label, literal(f"{task_name or t_slug} on {name or slug}"))
            metrics: dict[str, None] = {}
            for row in rows:
                values = row.obj("metrics")
                for metric, _ in values.items() if values is not None else ():
                    if metric.strip():
                        metrics[clean_name(metric)] = None
            for metric in metrics:
                self.add(b, KG.leaderboardMetric, literal(metric))
            for row in rows:
                self.map_row(self.table_row(row), t, d, board)

        source = [task_name, name, [row.source for row in rows]]
        self.part(f"table/{board.removeprefix(f'{self.iris.base}leaderboard/')}", board,
                  source, self.root, state)  # fmt: skip

    def table_row(self, row: Obj) -> Obj:
        """The API's evaluation as an evaluation-tables row (the fields `map_row` reads)."""
        model = row.text("model_name")
        harness = row.text("harness")
        arxiv = row.text("paper_arxiv_id")
        title = row.text("paper_title")
        data: dict[str, Any] = {
            "model_name": f"{model} ({harness})" if model and harness else model,
            # the title names a paper only when no arXiv id does: the paper's own unit says
            # its title, and a retitled paper leaves no stale title in a benchmark's graph
            "paper_title": None if arxiv else title,
            "paper_url": f"https://arxiv.org/abs/{arxiv}" if arxiv else None,
            "paper_date": row.text("paper_published_date"),
            "metrics": row.raw("metrics"),
            "code_links": [],
            "model_links": [],
        }
        if row.raw("uses_additional_data") is not None:
            data["uses_additional_data"] = row.raw("uses_additional_data")
        return Obj(data, row.where("")[:-1], max_chars=self.ctx.max_chars,
                   max_items=self.ctx.max_items)  # fmt: skip


def map_benchmark(
    item: Any, evaluations: list[Any], ctx: Context, *, urls: list[str], unit_hash: str,
    tasks: dict[str, str],
) -> list[Mapped]:  # fmt: skip
    data = {"benchmark": item, "evaluations": evaluations}
    return BenchmarkMapper(data, ctx, urls=urls, unit_hash=unit_hash).map_benchmark(tasks)


def source_unit(
    ctx: Context, *, base_url: str, cursor: str | None, licence: str, attribution: str
) -> Mapped:
    """The API as a source (`dump/pwc-api/live`): kind, base URL, licence, attribution, and
    the cursor (`kg:snapshot`: the last publication date a completed pull read through)."""
    dump = ctx.iris.dump(SOURCE, SNAPSHOT)
    graph = ctx.iris.dump_graph("api", "source")
    said = {"base": base_url, "cursor": cursor, "licence": licence, "attribution": attribution}
    unit_hash = content_hash({"kind": SOURCE, **said})
    n = iri(dump)
    triples = [
        *entry_provenance(graph, dump, dump, unit_hash),
        f"{n} {STD.type} {KG.Dump}",
        f"{n} {STD.type} {STD.prov_Entity}",
        f"{n} {KG.dumpKind} {literal(SOURCE)}",
        f"{n} {KG.dumpName} {literal(SOURCE)}",
        f"{n} {KG.sourceFile} {literal(base_url)}",
        f"{n} {KG.sourceArchive} {literal(ARCHIVE)}",
        f"{n} {STD.license} {iri(licence_iri(licence))}",
        f"{n} {KG.attribution} {iri(attribution)}",
    ]
    if cursor:
        triples.append(f"{n} {KG.snapshot} {typed(cursor, XSD.date)}")
    if ctx.ingested_at:
        triples.append(f"{n} {KG.ingestedAt} {typed(ctx.ingested_at, XSD.dateTime)}")
    return Mapped(graph, dump, unit_hash, triples)
