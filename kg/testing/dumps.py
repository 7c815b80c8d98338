"""Synthetic Papers-with-Code dumps with the final archive's sizes and distributions.

`write_archive(directory)` writes the five dumps as gzipped JSON arrays, streaming (one item
at a time), deterministic for a seed. At `scale=1.0` they hold the final archive's counts:
576,261 papers, 300,161 code links, 8,725 methods, 15,008 datasets and 2,254 top-level
evaluation tables. The sources agree the way the real ones do, so identity can be checked:

* papers are `synthetic-paper-<i>`; 80 % have an arXiv id; links name them by slug;
* methods and datasets name their introducing paper by slug (methods also by its arXiv
  page, as methods.json does through `source_url`);
* evaluation rows name papers as the 2020 dump does: an arXiv URL with a version (80 %),
  another page with the title and date (12 %), or nothing (8 %), with Zipf-like
  popularity (state-of-the-art papers sit in many tables).

Shapes follow the real files: 1–15 authors (Zipf over 400,000 names), tasks and methods
Zipf-like, a method object embedded per use in the papers dump, 0–4 collections per method
in 7 areas, task trees up to 4 deep, about 5 datasets per task tree and 6 rows per table,
metric values such as "96.95%", "15.8", "-" and "N/A".
"""

from __future__ import annotations

import bisect
import datetime as dt
import gzip
import io
import itertools
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kg.testing.records import _WORDS, FRAMEWORKS, N_AUTHORS, N_METHODS, N_TASKS, VENUES

N_PAPERS = 576_261
N_LINKS = 300_161
N_DATASETS = 15_008
N_EVALUATION_TABLES = 2_254
N_COLLECTIONS = 420
AREAS = (
    ("computer-vision", "Computer Vision"),
    ("natural-language-processing", "Natural Language Processing"),
    ("general", "General"),
    ("graphs", "Graphs"),
    ("reinforcement-learning", "Reinforcement Learning"),
    ("sequential", "Sequential"),
    ("audio", "Audio"),
)
MODALITIES = ("Images", "Texts", "Videos", "Audio", "Graphs", "Tabular", "3D", "Medical")
LANGUAGES = ("English", "Chinese", "German", "French", "Spanish", "Japanese", "Arabic")
METRICS = ("Accuracy", "Top 1 Accuracy", "F1", "BLEU", "mAP", "Error rate", "PSNR", "EM")
PWC = "https://paperswithcode.com"

FILES = {
    "papers-with-abstracts": "papers-with-abstracts.json.gz",
    "links-between-papers-and-code": "links-between-papers-and-code.json.gz",
    "methods": "methods.json.gz",
    "datasets": "datasets.json.gz",
    "evaluation-tables": "evaluation-tables.json.gz",
}

#: The names and snapshot dates of the 2025 archive's files (kg.sources.archive's catalogue;
#: tests/test_fetch.py checks that the two agree). `write_archive(names="2025")` uses them
#: and dates each gzip header on its snapshot, as `kg fetch`'s manifest does.
FILES_2025 = {
    "papers-with-abstracts": ("jul-29-papers-with-abstracts.json.gz", "2025-07-29"),
    "links-between-papers-and-code": ("jul-28-links-between-papers-and-code.json.gz", "2025-07-28"),
    "methods": ("jul-28-methods.json.gz", "2025-07-28"),
    "datasets": ("jul-28-datasets.json.gz", "2025-07-28"),
    "evaluation-tables": ("jul-28-evaluation-tables.json.gz", "2025-07-28"),
}


class _Draw:
    """Draws from 0..n-1 with P(k) ∝ 1/(k+1)^s (one bisect per draw)."""

    def __init__(self, n: int, s: float, rng: random.Random) -> None:
        self.cum = list(itertools.accumulate(1.0 / (k + 1) ** s for k in range(n)))
        self.rng = rng

    def one(self) -> int:
        return bisect.bisect_left(self.cum, self.rng.random() * self.cum[-1])

    def some(self, k: int) -> list[int]:
        return sorted({self.one() for _ in range(k)})


def paper_slug(i: int) -> str:
    return f"synthetic-paper-{i}"


def paper_arxiv(i: int) -> str | None:
    """A unique arXiv id for 4 papers in 5, None for the rest."""
    if i % 5 == 4:
        return None
    return f"{15 + i // 100_000:02d}{1 + (i // 8_334) % 12:02d}.{i % 100_000:05d}"


def paper_date(i: int) -> str:
    return f"{2015 + i // 100_000}-{1 + (i // 8_334) % 12:02d}-{1 + i % 28:02d}"


def paper_title(i: int) -> str:
    rng = random.Random(i)
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10)))
    return f"{words.capitalize()} {i}"


def method_name(m: int) -> str:
    return f"Method {m}"


def task_name(t: int) -> str:
    return f"Task {t}"


class ArchiveFactory:
    """The five dumps' items. Deterministic for (seed, scale)."""

    def __init__(self, scale: float = 1.0, seed: int = 0) -> None:
        self.scale = scale
        self.rng = random.Random(seed)
        self.n_papers = max(10, round(N_PAPERS * scale))
        self.n_links = max(5, round(N_LINKS * scale))
        self.n_methods = max(5, round(N_METHODS * scale))
        self.n_datasets = max(5, round(N_DATASETS * scale))
        self.n_tables = max(2, round(N_EVALUATION_TABLES * scale))
        self.n_tasks = max(5, round(N_TASKS * scale))
        rng = self.rng
        self.methods = _Draw(self.n_methods, 1.1, rng)
        self.tasks = _Draw(self.n_tasks, 1.0, rng)
        self.authors = _Draw(max(20, round(N_AUTHORS * scale)), 0.6, rng)
        self.papers = _Draw(self.n_papers, 0.8, rng)
        self.datasets = _Draw(self.n_datasets, 1.0, rng)
        self._method_objects: dict[int, dict[str, Any]] = {}

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def collection(self, m: int) -> dict[str, Any]:
        c = m % N_COLLECTIONS
        area_id, area = AREAS[c % len(AREAS)]
        return {"collection": f"Collection {c}", "area_id": area_id, "area": area}

    def method_object(self, m: int) -> dict[str, Any]:
        """A method as the papers dump embeds it (the same object every time)."""
        found = self._method_objects.get(m)
        if found is None:
            rng = random.Random(m)
            c = self.collection(m)
            found = {
                "name": method_name(m),
                "full_name": f"Method number {m}",
                "description": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(30, 90))),
                "introduced_year": 2000 if m % 3 else 2010 + m % 13,
                "source_url": f"https://arxiv.org/abs/{paper_arxiv(m * 5)}v1",
                "source_title": paper_title(m * 5),
                "code_snippet_url": f"https://github.com/org{m}/impl/blob/main/model.py#L{m % 90}",
                "main_collection": {
                    "name": c["collection"],
                    "description": f"Methods of kind {m % N_COLLECTIONS}",
                    "parent": None if m % 4 else f"Collection {(m + 1) % N_COLLECTIONS}",
                    "area": c["area"],
                },
            }
            self._method_objects[m] = found
        return found

    # -- the five dumps ------------------------------------------------------------------
    def paper(self, i: int) -> dict[str, Any]:
        rng = self.rng
        arxiv = paper_arxiv(i)
        year = paper_date(i)[:4]
        return {
            "paper_url": f"{PWC}/paper/{paper_slug(i)}",
            "arxiv_id": arxiv,
            "title": paper_title(i),
            "abstract": self.words(rng.randint(80, 220)),
            "url_abs": f"https://arxiv.org/abs/{arxiv}v{rng.randint(1, 3)}" if arxiv else None,
            "url_pdf": f"https://arxiv.org/pdf/{arxiv}v1.pdf" if arxiv else None,
            "proceeding": f"{rng.choice(VENUES)} {year} {rng.randint(1, 12)}"
            if rng.random() < 0.3
            else None,
            "authors": [
                f"Author {a}" for a in self.authors.some(min(15, 1 + int(rng.expovariate(0.3))))
            ],
            "tasks": [task_name(t) for t in self.tasks.some(rng.randint(0, 4))],
            "date": paper_date(i),
            "methods": [self.method_object(m) for m in self.methods.some(rng.randint(0, 8))],
        }

    def link(self, k: int) -> dict[str, Any]:
        """Code links: 40 % of papers have one, a few have several."""
        rng = self.rng
        i = min(self.n_papers - 1, k * self.n_papers // max(1, self.n_links) + rng.randint(0, 1))
        arxiv = paper_arxiv(i)
        repo = f"https://github.com/User{rng.randint(0, 200_000)}/repo-{k}"
        if rng.random() < 0.05:
            repo += f"/tree/master/research/part_{k % 7}"
        return {
            "paper_url": f"{PWC}/paper/{paper_slug(i)}",
            "paper_title": paper_title(i),
            "paper_arxiv_id": arxiv,
            "paper_url_abs": f"https://arxiv.org/abs/{arxiv}v1" if arxiv else None,
            "paper_url_pdf": f"https://arxiv.org/pdf/{arxiv}v1.pdf" if arxiv else None,
            "repo_url": repo,
            "is_official": rng.random() < 0.35,
            "mentioned_in_paper": rng.random() < 0.4,
            "mentioned_in_github": rng.random() < 0.7,
            "framework": rng.choice(FRAMEWORKS),
        }

    def method(self, m: int) -> dict[str, Any]:
        rng = self.rng
        source = m * 5 % self.n_papers
        has_paper = rng.random() < 0.9
        return {
            "url": f"{PWC}/method/method-{m}",
            "name": method_name(m),
            "full_name": f"Method number {m}",
            "description": self.words(rng.randint(30, 120)),
            "paper": {"title": paper_title(source), "url": f"{PWC}/paper/{paper_slug(source)}"}
            if has_paper
            else None,
            "introduced_year": 2000 if m % 3 else 2010 + m % 13,
            "source_url": f"https://arxiv.org/abs/{paper_arxiv(source)}v2"
            if has_paper and paper_arxiv(source)
            else None,
            "source_title": paper_title(source) if has_paper else None,
            "code_snippet_url": f"https://github.com/org{m}/impl/blob/main/model.py#L{m % 90}"
            if rng.random() < 0.6
            else "",
            "num_papers": max(0, int(rng.paretovariate(1.2)) - 1),
            "collections": [self.collection(m + k) for k in range(rng.choice((0, 1, 1, 1, 2, 3)))],
        }

    def dataset(self, d: int) -> dict[str, Any]:
        rng = self.rng
        introducer = self.papers.one()
        return {
            "url": f"{PWC}/dataset/dataset-{d}",
            "name": f"Dataset {d}",
            "full_name": f"The dataset number {d}",
            "homepage": f"https://data{d}.example.org/" if rng.random() < 0.7 else None,
            "description": self.words(rng.randint(20, 100)),
            "paper": {
                "title": paper_title(introducer),
                "url": f"{PWC}/paper/{paper_slug(introducer)}",
            }
            if rng.random() < 0.6
            else None,
            "introduced_date": paper_date(introducer) if rng.random() < 0.6 else None,
            "modalities": rng.sample(MODALITIES, rng.randint(0, 2)),
            "tasks": [
                {"task": task_name(t), "url": f"{PWC}/task/task-{t}"}
                for t in self.tasks.some(rng.randint(0, 3))
            ],
            "languages": rng.sample(LANGUAGES, rng.choice((0, 0, 1, 1, 2))),
            "variants": [f"Dataset {d} ({v})" for v in ("small", "large")[: rng.randint(0, 2)]],
            "num_papers": max(0, int(rng.paretovariate(1.3)) - 1),
            "data_loaders": [
                {
                    "url": f"https://huggingface.co/datasets/dataset{d}",
                    "repo": "https://github.com/huggingface/datasets",
                    "frameworks": rng.sample(("pytorch", "tf", "jax"), rng.randint(1, 2)),
                }
            ]
            if rng.random() < 0.15
            else [],
        }

    def row(self, metrics: list[str]) -> dict[str, Any]:
        rng = self.rng
        i = self.papers.one()
        arxiv, roll = paper_arxiv(i), rng.random()
        if arxiv and roll < 0.8:
            url, title, date = (
                f"http://arxiv.org/abs/{arxiv}v{rng.randint(1, 4)}",
                paper_title(i),
                paper_date(i),
            )
        elif roll < 0.92:
            url, title, date = (
                f"https://openaccess.thecvf.com/paper{i}.pdf",
                paper_title(i),
                paper_date(i),
            )
        else:
            url, title, date = "", None, None
        values = {}
        for name in metrics:
            kind = rng.random()
            number = rng.uniform(1, 99)
            values[name] = (
                f"{number:.2f}%"
                if kind < 0.2
                else "-"
                if kind < 0.23
                else "N/A"
                if kind < 0.25
                else f"{number:.1f}"
            )
        return {
            "code_links": [
                {"title": f"user{c}/repo", "url": f"https://github.com/user{c}/repo-{i}"}
                for c in range(rng.choice((0, 0, 1, 1, 2, 3)))
            ],
            "metrics": values,
            "model_links": [],
            "model_name": f"Model-{rng.randint(0, 99_999)}",
            "paper_date": date,
            "paper_title": title,
            "paper_url": url,
        }

    def table(self, depth: int) -> dict[str, Any]:
        """One task (with its datasets and, above depth 3, subtasks)."""
        rng = self.rng
        t = self.tasks.one()
        datasets = []
        for d in self.datasets.some(rng.choice((0, 1, 1, 2, 2, 3))):
            metrics = rng.sample(METRICS, rng.randint(1, 3))
            datasets.append(
                {
                    "dataset": f"Dataset {d}",
                    "dataset_citations": [],
                    "dataset_links": [],
                    "description": "",
                    "sota": {
                        "metrics": metrics,
                        "rows": [
                            self.row(metrics) for _ in range(min(60, int(rng.expovariate(1 / 6))))
                        ],
                    },
                    "subdatasets": [],
                }
            )
        subtasks = (
            [self.table(depth + 1) for _ in range(rng.choice((0, 0, 0, 1, 1, 2)))]
            if depth < 3
            else []
        )
        area = AREAS[t % len(AREAS)][1]
        return {
            "task": task_name(t),
            "description": self.words(rng.randint(0, 40)),
            "categories": [area] if depth == 0 else [],
            "source_link": None,
            "synonyms": [],
            "datasets": datasets,
            "subtasks": subtasks,
        }

    def evaluation_root(self, r: int) -> dict[str, Any]:
        root = self.table(0)
        root["task"] = f"Root task {r}"  # top-level names are unique in a dump
        return root


def _write_array(path: Path, items: Iterator[dict[str, Any]], mtime: int | None = None) -> int:
    """Stream items into a gzipped JSON array (its header dated `mtime`, default now).
    Returns how many were written."""
    count = 0
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=mtime) as packed,
        io.TextIOWrapper(packed, encoding="utf-8") as out,
    ):
        out.write("[\n")
        for count, item in enumerate(items, start=1):
            if count > 1:
                out.write(",\n")
            out.write(json.dumps(item, ensure_ascii=False))
        out.write("\n]\n")
    return count


def write_archive(
    directory: Path,
    *,
    scale: float = 1.0,
    seed: int = 0,
    kinds: tuple[str, ...] = tuple(FILES),
    names: str = "plain",
) -> dict[str, Path]:
    """Write the five dumps (or `kinds` of them) into `directory`; returns kind -> path.

    `names="2025"` names them as the 2025 archive does (`jul-28-methods.json.gz`, …), each
    gzip header dated on its snapshot, so the bytes depend on the seed and scale only."""
    directory.mkdir(parents=True, exist_ok=True)
    factory = ArchiveFactory(scale, seed)
    makers: dict[str, Callable[[], Iterator[dict[str, Any]]]] = {
        "papers-with-abstracts": lambda: (factory.paper(i) for i in range(factory.n_papers)),
        "links-between-papers-and-code": lambda: (factory.link(k) for k in range(factory.n_links)),
        "methods": lambda: (factory.method(m) for m in range(factory.n_methods)),
        "datasets": lambda: (factory.dataset(d) for d in range(factory.n_datasets)),
        "evaluation-tables": lambda: (factory.evaluation_root(r) for r in range(factory.n_tables)),
    }
    out = {}
    for kind in kinds:
        if names == "2025":
            name, snapshot = FILES_2025[kind]
            path = directory / name
            when = dt.datetime.fromisoformat(snapshot).replace(tzinfo=dt.UTC)
            _write_array(path, makers[kind](), int(when.timestamp()))
        else:
            path = directory / FILES[kind]
            _write_array(path, makers[kind]())
        out[kind] = path
    return out
