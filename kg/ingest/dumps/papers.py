"""papers-with-abstracts.json: one entry per paper, and each method object it embeds in a
graph of its own, the first copy in a run (docs/dumps.md).
"""

from __future__ import annotations

from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps.mapper import DumpMapper, date_year, keys_of
from kg.ingest.dumps.provenance import PAPERS
from kg.ingest.fields import Obj
from kg.ingest.identity import arxiv_id, pwc_slug, slug_from_url
from kg.ingest.units import Context, Mapped
from kg.rdf.terms import literal, segment
from kg.rdf.vocab import KG, STD, iri


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
        year = date_year(date)
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


def is_papers(value: Any) -> bool:
    keys = keys_of(value)
    return (
        "paper_url" in keys
        and "repo_url" not in keys
        and bool({"abstract", "authors", "arxiv_id", "url_abs"} & keys)
    )



def map_papers(value: Any, ctx: Context) -> list[Mapped]:
    return PaperMapper(value, ctx).map_all()
