"""methods.json: one entry per method, in its own graph (docs/dumps.md).
"""

from __future__ import annotations

from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps.mapper import DumpMapper, keys_of, url_has
from kg.ingest.dumps.provenance import METHODS
from kg.ingest.fields import Obj
from kg.ingest.identity import arxiv_id, slug_from_url, title_key
from kg.ingest.mapper import web_iri
from kg.ingest.units import Mapped
from kg.rdf.terms import segment
from kg.rdf.vocab import KG, STD, iri


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


def is_methods(value: Any) -> bool:
    return url_has(value, "/method/") or {"collections", "introduced_year"} <= keys_of(value)
