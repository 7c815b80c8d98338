"""Search benchmark corpora: real text from the bundled slices, and generated papers whose
titles and abstracts are drawn from that real text.

Real text (known items for ranking): the paper titles of the 2020 evaluation tables, the
names and descriptions of the 2022 methods dump, the task descriptions, the seed records'
abstracts. Generated papers: a word-bigram chain trained on all of it, with titles of 6-16
words and abstracts of 80-300 words (Papers-with-Code abstracts average about 170 words),
deterministic for a seed.
"""

from __future__ import annotations

import bisect
import gzip
import itertools
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*|[0-9]+")


@dataclass(frozen=True)
class Doc:
    key: str
    kind: str  # paper | method | task
    title: str
    body: str


def _walk_tasks(tasks: list[dict[str, Any]], out: list[Doc], titles: dict[str, None]) -> None:
    for task in tasks:
        name = task.get("task") or ""
        out.append(Doc(f"task:{name}", "task", name, task.get("description") or ""))
        for dataset in task.get("datasets") or []:
            for row in (dataset.get("sota") or {}).get("rows") or []:
                title = (row.get("paper_title") or "").strip()
                if title:
                    titles.setdefault(title, None)
        _walk_tasks(task.get("subtasks") or [], out, titles)


def real_docs() -> list[Doc]:
    """Every real titled text in the bundled examples: papers (titles; the seeds' abstracts),
    methods (name + full name, description), tasks (name, description)."""
    docs: list[Doc] = []
    for path in sorted((EXAMPLES / "records").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        docs.append(Doc(f"paper:{record['url']}", "paper", record["title"], record["abstract"]))
    with gzip.open(EXAMPLES / "pwc" / "methods.json.gz") as f:
        methods = json.loads(f.read())
    for m in methods:
        title = m["name"] if m["full_name"] in (None, "", m["name"]) else f"{m['name']} {m['full_name']}"
        docs.append(Doc(f"method:{m['url']}", "method", title, m.get("description") or ""))
    with gzip.open(EXAMPLES / "pwc" / "evaluation-tables.json.gz") as f:
        tables = json.loads(f.read())
    titles: dict[str, None] = {}
    _walk_tasks(tables, docs, titles)
    seeds = {d.title for d in docs if d.kind == "paper"}
    docs.extend(Doc(f"paper:{t}", "paper", t, "") for t in titles if t not in seeds)
    return docs


class Chain:
    """A word-bigram chain over real text (lower-cased words and numbers)."""

    def __init__(self, texts: list[str]) -> None:
        follow: dict[str, Counter[str]] = defaultdict(Counter)
        starts: Counter[str] = Counter()
        self.unigrams: Counter[str] = Counter()
        for text in texts:
            words = [w.lower() for w in _WORD.findall(text)]
            if not words:
                continue
            starts[words[0]] += 1
            self.unigrams.update(words)
            for a, b in itertools.pairwise(words):
                follow[a][b] += 1
        self._starts = self._table(starts)
        self._follow = {w: self._table(c) for w, c in follow.items()}
        self._any = self._table(self.unigrams)

    @staticmethod
    def _table(counts: Counter[str]) -> tuple[list[str], list[int]]:
        words, cum, total = [], [], 0
        for word, n in counts.items():
            total += n
            words.append(word)
            cum.append(total)
        return words, cum

    @staticmethod
    def _pick(table: tuple[list[str], list[int]], rng: random.Random) -> str:
        words, cum = table
        return words[bisect.bisect_right(cum, rng.randrange(cum[-1]))]

    def words(self, n: int, rng: random.Random) -> list[str]:
        out = [self._pick(self._starts, rng)]
        while len(out) < n:
            nxt = self._follow.get(out[-1])
            # a fresh start now and then keeps sentences from looping on one bigram
            out.append(self._pick(nxt if nxt and rng.random() < 0.85 else self._any, rng))
        return out


def chain() -> Chain:
    docs = real_docs()
    return Chain([d.title for d in docs] + [d.body for d in docs if d.body])


def generated_papers(n: int, seed: int = 0, model: Chain | None = None) -> Iterator[Doc]:
    """`n` generated papers (title + abstract), deterministic for `seed`."""
    model = model or chain()
    rng = random.Random(seed)
    for i in range(n):
        title = " ".join(model.words(rng.randint(6, 16), rng)).capitalize()
        abstract = " ".join(model.words(int(rng.triangular(80, 300, 150)), rng))
        yield Doc(f"paper:gen-{i}", "paper", title, abstract.capitalize() + ".")
