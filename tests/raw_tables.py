"""The bundled 2020 evaluation tables read as plain Python: every result, as kg should hold it.

An independent reading for the tests (no kg code but the slug rule): each table row's metric
values, one per (task slug, dataset key, metric, model, value as written), the key kg's
result ids hash, so a row listed under two spellings of one dataset is one result. The
feeds and the flags are checked against what this module computes from the raw JSON.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from kg.ingest.identity import pwc_slug

ROOT = Path(__file__).resolve().parent.parent
RAW_TABLES = ROOT / "examples" / "pwc" / "evaluation-tables.json.gz"
Key = tuple[str, str, str, str | None, str, str]  # task, dataset, metric, model, value, owner
_PLAIN = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(%?)\s*$")
_PAPER_PAGE = re.compile(r"arxiv\.org/(?:abs|pdf)/|paperswithcode\.com/paper/")


def plain_number(text: str) -> Decimal | None:
    """The value when it is a plain number (with or without "%"), else None."""
    m = _PLAIN.match(text)
    return Decimal(m.group(1)) if m else None


def clean(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class RawResult:
    task: str  # slug
    dataset: str  # key: slug, or parent/sub
    metric: str
    model: str | None
    value: str  # as written
    date: str | None
    titled: bool  # the row names a paper kg can hold (a title, or an arXiv / PwC page)
    page: bool  # the row gives some paper URL

    @property
    def number(self) -> Decimal | None:
        return plain_number(self.value)

    @property
    def percent(self) -> bool:
        m = _PLAIN.match(self.value)
        return bool(m and m.group(2))


def _rows(data: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    found: list[tuple[str, str, dict[str, Any]]] = []

    def dataset(d: dict[str, Any], task: str, parent: str | None) -> None:
        name = clean(d.get("dataset") or d.get("subdataset") or "")
        if not name:
            return
        key = pwc_slug(name) or name
        if parent is not None:
            key = f"{parent}/{key}"
        for row in (d.get("sota") or {}).get("rows") or []:
            found.append((task, key, row))
        for sub in d.get("subdatasets") or []:
            dataset(sub, task, key)

    def task(t: dict[str, Any]) -> None:
        name = clean(t.get("task") or "")
        if name:
            for d in t.get("datasets") or []:
                dataset(d, pwc_slug(name) or name, None)
        for sub in t.get("subtasks") or []:
            task(sub)

    for t in data:
        task(t)
    return found


@cache
def raw_results() -> dict[Key, RawResult]:
    """Every result of the bundled tables by its identity key."""
    return read_results(RAW_TABLES)


def read_results(path: Path) -> dict[Key, RawResult]:
    """Every result of an evaluation-tables file (gzipped or not) by its identity key."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    out: dict[Key, RawResult] = {}
    for task, dataset, row in _rows(data):
        model = clean(row["model_name"]) if row.get("model_name") else None
        url, title = row.get("paper_url") or "", row.get("paper_title") or ""
        for metric, value in (row.get("metrics") or {}).items():
            if value is None or isinstance(value, bool):
                continue
            raw = value if isinstance(value, str) else repr(value)
            # kg's node is the paper's result, else the leaderboard's: one key per owner
            titled = bool(title.strip() or _PAPER_PAGE.search(url))
            owner = clean(title).lower() or _PAPER_PAGE.sub("", url) if titled else ""
            key = (task, dataset, clean(metric), model, raw, owner)
            date = (row.get("paper_date") or "")[:10] or None
            seen = out.get(key)
            if seen is not None and seen.date and (date is None or seen.date <= date):
                continue  # one result listed by two rows: it keeps the earlier date
            out[key] = RawResult(
                task, dataset, clean(metric), model, raw, date, titled, bool(url.strip())
            )
    return out
