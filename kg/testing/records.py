"""Synthetic paper records in the seed format, with the archive's distributions.

Used by the benchmarks and the tests. Deterministic for a given seed. Distributions follow
the Papers-with-Code archive: 1–15 authors; methods drawn Zipf-like from ~8,700 and tasks
from ~4,500 (a few, like Adam and Dropout, are everywhere); 0–5 code links with about half
of the papers having none; 0–4 harvested samples.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

N_METHODS = 8_725
N_TASKS = 4_451
N_AUTHORS = 400_000
FRAMEWORKS = ("pytorch", "tf", "jax", "mxnet", "paddle", "none")
STATUSES = ("ran_honours", "ran_draft_wrong", "ran_fixture", "unverified")
REPO_KINDS = ("official", "named_in_paper", "listed", "found_in_text", "community")
VENUES = (
    "NeurIPS",
    "ICML",
    "ICLR",
    "CVPR",
    "ICCV",
    "ECCV",
    "ACL",
    "EMNLP",
    "NAACL",
    "AAAI",
    "IJCAI",
)
_WORDS = [
    "attention",
    "learning",
    "neural",
    "deep",
    "graph",
    "network",
    "transformer",
    "robust",
    "efficient",
    "sparse",
    "adversarial",
    "generative",
    "contrastive",
    "self-supervised",
    "reinforcement",
    "policy",
    "vision",
    "language",
    "model",
    "models",
    "representation",
    "scalable",
    "federated",
    "causal",
    "bayesian",
    "diffusion",
    "segmentation",
    "detection",
    "retrieval",
    "translation",
    "reasoning",
    "memory",
    "optimisation",
]


class _Zipf:
    """Draws from 0..n-1 with P(k) ∝ 1/(k+1)^s, via a precomputed cumulative table."""

    def __init__(self, n: int, s: float, rng: random.Random) -> None:
        import itertools

        weights = [1.0 / (k + 1) ** s for k in range(n)]
        self.cum = list(itertools.accumulate(weights))
        self.rng = rng

    def sample(self, k: int) -> list[int]:
        import bisect

        total = self.cum[-1]
        out: set[int] = set()
        while len(out) < k:
            out.add(bisect.bisect_left(self.cum, self.rng.random() * total))
        return sorted(out)


def method_slug(i: int) -> str:
    return f"method-{i}"


def task_slug(i: int) -> str:
    return f"task-{i}"


class RecordFactory:
    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.methods = _Zipf(N_METHODS, 1.1, self.rng)
        self.tasks = _Zipf(N_TASKS, 1.0, self.rng)
        self.authors = _Zipf(N_AUTHORS, 0.6, self.rng)

    def record(self, i: int) -> dict[str, Any]:
        rng = self.rng
        slug = f"synthetic-paper-{i}"
        arxiv = f"{18 + i % 7:02d}{1 + i % 12:02d}.{i % 100000:05d}"
        year = 2018 + i % 7
        title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12))).capitalize()
        n_links = 0 if rng.random() < 0.5 else rng.randint(1, 5)
        repos = [
            f"https://github.com/user{rng.randint(0, 200000)}/repo-{i}-{k}" for k in range(n_links)
        ]
        samples = []
        for k in range(rng.randint(0, 4) if repos else 0):
            repo = repos[k % len(repos)].removeprefix("https://github.com/")
            status = rng.choice(STATUSES)
            samples.append(
                {
                    "code_sha256_prefix": f"{rng.getrandbits(64):016x}",
                    "entry": f"fn_{k}",
                    "repo": repo,
                    "repo_kind": rng.choice(REPO_KINDS),
                    "path": f"src/module_{k}.py",
                    "file_url": f"https://github.com/{repo}/blob/HEAD/src/module_{k}.py",
                    "link_basis": "first_harvest_node",
                    "language": "python",
                    "status": status,
                    "verification_level": 0 if status == "unverified" else 1,
                    "contract_check": None if status == "unverified" else "HONOURS",
                    "metamorphic_tier": None if status == "unverified" else "well_formed",
                    "behaviour_fingerprint": rng.random() < 0.3,
                    "licence": "MIT",
                    "inline_ok": False,
                    "mcp_get_code": {"code_sha256": f"{k:016x}"},
                }
            )
        summary: dict[str, int] = {}
        for s in samples:
            status = str(s["status"])
            summary[status] = summary.get(status, 0) + 1
        return {
            "url": f"/paper/{slug}",
            "title": title,
            "arxiv_id": arxiv,
            "date": f"{year}-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "proceeding": f"{rng.choice(VENUES)} {year} {1 + i % 12}"
            if rng.random() < 0.35
            else None,
            "authors": [f"Author {a}" for a in self.authors.sample(rng.randint(1, 15))],
            "abstract": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(80, 200))),
            "url_abs": f"https://arxiv.org/abs/{arxiv}v{rng.randint(1, 3)}",
            "url_pdf": f"https://arxiv.org/pdf/{arxiv}v1.pdf",
            "source": {
                "archive": "pwc-archive (Hugging Face), CC BY-SA 4.0",
                "snapshot": "2025-07-28",
                "licence_url": "https://creativecommons.org/licenses/by-sa/4.0/legalcode",
                "row_kind": "abstracts",
            },
            "code_links": [
                {
                    "paper_slug": slug,
                    "repo_url": url,
                    "is_official": int(k == 0 and rng.random() < 0.6),
                    "mentioned_in_paper": int(rng.random() < 0.4),
                    "mentioned_in_github": int(rng.random() < 0.7),
                    "framework": rng.choice(FRAMEWORKS),
                    "reach": None if rng.random() < 0.8 else {"status": "ok"},
                }
                for k, url in enumerate(repos)
            ],
            "tasks": [
                {"task_slug": task_slug(t), "task_name": f"Task {t}"}
                for t in self.tasks.sample(rng.randint(1, 5))
            ],
            "methods": [
                {"method_slug": method_slug(m), "method_name": f"Method {m}"}
                for m in self.methods.sample(rng.randint(0, 25))
            ],
            "datasets_introduced": [],
            "methods_introduced": [],
            "results": [],
            "syntology": {
                "read_at": "2026-09-25T09:33:49+00:00",
                "summary": summary,
                "samples": samples,
            },
            "arxiv_metadata": None,
            "syntology_extracted_results": None,
        }


#: `WideRecordFactory`: every how many records one is wide (100 authors, 200 methods).
WIDE_EVERY = 250
HOSTS = ("github.com", "gitlab.com", "bitbucket.org")


class WideRecordFactory:
    """Records with other distributions than `RecordFactory`'s, to check that a figure does
    not hold for one shape only: counts drawn uniformly, 1–12 authors, 0–25 methods, 0–6
    tasks and 0–8 code links a paper (on three hosts, some with a path), entities drawn
    uniformly from their pools, no harvested samples; and one record in `WIDE_EVERY` with
    100 authors and 200 methods."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def record(self, i: int) -> dict[str, Any]:
        rng = self.rng
        slug = f"wide-paper-{i}"
        arxiv = f"{15 + i % 10:02d}{1 + i % 12:02d}.{i % 100000:05d}"
        year = 2015 + i % 10
        wide = i % WIDE_EVERY == WIDE_EVERY - 1
        n_authors, n_methods = (100, 200) if wide else (rng.randint(1, 12), rng.randint(0, 25))
        authors = rng.sample(range(N_AUTHORS), n_authors)
        methods = sorted(rng.sample(range(N_METHODS), n_methods))
        tasks = sorted(rng.sample(range(N_TASKS), rng.randint(0, 6)))
        links = []
        for k in range(rng.randint(0, 8)):
            host = rng.choice(HOSTS)
            url = f"https://{host}/group{rng.randint(0, 50000)}/project-{i}-{k}"
            if rng.random() < 0.2:
                url += f"/tree/main/src/part{k}"
            links.append(
                {
                    "paper_slug": slug,
                    "repo_url": url,
                    "is_official": int(rng.random() < 0.3),
                    "mentioned_in_paper": int(rng.random() < 0.5),
                    "mentioned_in_github": int(rng.random() < 0.5),
                    "framework": rng.choice(FRAMEWORKS),
                }
            )
        return {
            "url": f"/paper/{slug}",
            "title": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 20))).capitalize(),
            "arxiv_id": arxiv if rng.random() < 0.9 else None,
            "date": f"{year}-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "proceeding": f"{rng.choice(VENUES)} {year}" if rng.random() < 0.5 else None,
            "authors": [f"Writer {a}" for a in authors],
            "abstract": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 300))),
            "url_abs": f"https://arxiv.org/abs/{arxiv}",
            "url_pdf": f"https://arxiv.org/pdf/{arxiv}.pdf",
            "code_links": links,
            "tasks": [{"task_slug": task_slug(t), "task_name": f"Task {t}"} for t in tasks],
            "methods": [
                {"method_slug": method_slug(m), "method_name": f"Method {m}"} for m in methods
            ],
            "datasets_introduced": [],
            "methods_introduced": [],
            "results": [],
        }


#: The record generators the benchmarks offer, by name.
GENERATORS: dict[str, type[RecordFactory | WideRecordFactory]] = {
    "archive": RecordFactory,
    "wide": WideRecordFactory,
}


def records(n: int, seed: int = 0, generator: str = "archive") -> Iterator[dict[str, Any]]:
    """`n` synthetic records of `generator` (GENERATORS), the same ones for the same seed."""
    factory = GENERATORS[generator](seed)
    for i in range(n):
        yield factory.record(i)
