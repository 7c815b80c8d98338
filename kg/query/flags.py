"""Flags on doubtful leaderboard results: computed once, by `queries/leaderboard-flags.rq`.

The named query finds them (its header says each rule); this module words each row for a
reader and groups them by result, for the leaderboard page, `kg leaderboard` and its JSON
(kg.query.leaderboard runs the query with the task and dataset bound, beside its other three).

>>> flag_from("duplicate-model", "3", model="ResNet-50").reason
"the model name 'ResNet-50' is on this leaderboard and metric 3 times"
>>> flag_from("before-dataset", "2014-01-02 2015-06-01").reason
'dated 2014-01-02, before its dataset was introduced (2015-06-01)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kg.rdf.results import SelectResult, Term

FLAGS = "leaderboard-flags"

#: Each kind of flag, with the short name a table or a badge shows.
KINDS: dict[str, str] = {
    "no-paper": "no paper",
    "duplicate-model": "model twice",
    "out-of-range": "out of range",
    "mixed-scale": "mixed scale",
    "before-dataset": "before dataset",
}


@dataclass(frozen=True)
class Flag:
    """Why one result is doubtful: its kind (a key of KINDS) and the reason in words."""

    kind: str
    reason: str

    @property
    def label(self) -> str:
        return KINDS.get(self.kind, self.kind)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "reason": self.reason}


def flag_from(kind: str, detail: str | None, *, model: str | None = None) -> Flag:
    """The flag of one row of the query, worded."""
    detail = detail or ""
    if kind == "no-paper":
        reason = "the table row names neither a paper nor a link to one"
    elif kind == "duplicate-model":
        reason = f"the model name {model!r} is on this leaderboard and metric {detail} times"
    elif kind == "out-of-range" and detail == "over-100":
        reason = "a proportion (accuracy, precision, recall, F1, AP, IoU…) over 100"
    elif kind == "out-of-range":
        reason = "negative, for a metric that cannot be (a proportion, error, size, time or count)"
    elif kind == "mixed-scale" and detail == "fraction":
        reason = "a fraction (0-1) where most values of this metric are percentages"
    elif kind == "mixed-scale":
        reason = "a percentage where most values of this metric are fractions (0-1)"
    elif kind == "before-dataset":
        date, _, introduced = detail.partition(" ")
        reason = f"dated {date}, before its dataset was introduced ({introduced})"
    else:
        reason = f"{kind} {detail}".strip()
    return Flag(kind, reason)


def by_result(result: SelectResult) -> dict[str, tuple[Flag, ...]]:
    """The query's rows as each result's flags (result IRI -> flags, in the query's order)."""
    out: dict[str, list[Flag]] = {}
    for row in result.rows:
        cells: Mapping[str, Term | None] = dict(zip(result.variables, row, strict=True))
        iri, kind = cells.get("result"), cells.get("kind")
        if iri is None or kind is None:
            continue
        detail, model = cells.get("detail"), cells.get("model")
        flag = flag_from(
            kind.value,
            detail.value if detail is not None else None,
            model=model.value if model is not None else None,
        )
        found = out.setdefault(iri.value, [])
        if flag not in found:
            found.append(flag)
    return {iri: tuple(flags) for iri, flags in out.items()}
