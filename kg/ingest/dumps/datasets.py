"""datasets.json: one entry per dataset, in its own graph (docs/dumps.md).
"""

from __future__ import annotations

import hashlib
from typing import Any

from kg.errors import RecordError
from kg.ingest.dumps.mapper import keys_of, url_has
from kg.ingest.dumps.methods import MethodMapper
from kg.ingest.dumps.provenance import DATASETS
from kg.ingest.identity import pwc_slug, slug_from_url
from kg.ingest.units import Mapped, canonical_json
from kg.rdf.terms import literal, segment
from kg.rdf.vocab import KG, STD, iri


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


def is_datasets(value: Any) -> bool:
    return url_has(value, "/dataset/") or bool({"modalities", "data_loaders"} & keys_of(value))
