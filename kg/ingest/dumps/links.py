"""links-between-papers-and-code.json: one entry per paper's code link (docs/dumps.md).
"""

from __future__ import annotations

from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps.mapper import DumpMapper, keys_of
from kg.ingest.dumps.provenance import LINKS
from kg.ingest.identity import arxiv_id, slug_from_url
from kg.ingest.mapper import code_link_key
from kg.ingest.units import Mapped
from kg.rdf.vocab import KG, iri


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


def is_links(value: Any) -> bool:
    return {"paper_url", "repo_url"} <= keys_of(value)
