"""evaluation-tables.json (and the sota-extractor files in its format): one entry per
top-level task, its datasets, tables and cited papers in parts stated once per run
(docs/dumps.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps.mapper import DumpMapper, date_year, keys_of
from kg.ingest.dumps.provenance import EVALUATION, dump_name, entry_provenance
from kg.ingest.fields import Obj
from kg.ingest.identity import arxiv_id, clean_name, pwc_slug, slug_from_url
from kg.ingest.mapper import result_id, result_keys
from kg.ingest.units import Context, Mapped, canonical_json, content_hash
from kg.ingest.values import iso_date
from kg.rdf.terms import literal, segment, typed
from kg.rdf.vocab import KG, STD, XSD, iri


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
            paper_iri = self.ctx.paper(slug=slug, arxiv=arxiv, title=title, year=date_year(date))
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
            key = self.paper_key(slug, arxiv, title, date_year(date))  # never changes with aliases
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


def is_evaluation(value: Any) -> bool:
    keys = keys_of(value)
    return "task" in keys and bool({"datasets", "subtasks"} & keys)



def map_evaluation(value: Any, ctx: Context) -> list[Mapped]:
    return EvaluationMapper(value, ctx).map_all()
