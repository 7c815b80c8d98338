"""Which way a leaderboard metric improves, read off its name by a rule kept as data.

The evaluation tables give a metric's name and values, never whether lower is better. The
rule lives in `metric_directions.toml` beside this module: exact names first, then ordered
blocks of patterns, the first that is found in the lowercased name deciding. A name no
pattern places is `"unknown"`, and pages and the CLI say so instead of guessing.

>>> metric_direction("Top 1 Accuracy"), metric_direction("FID"), metric_direction("Test")
('higher', 'lower', 'unknown')
>>> metric_direction("Top-1 Error Rate"), metric_direction("Accuracy (ADD)")
('lower', 'higher')
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib.resources import files
from typing import Literal

Direction = Literal["higher", "lower", "unknown"]
DIRECTIONS: tuple[Direction, ...] = ("higher", "lower", "unknown")
RULE_FILE = "metric_directions.toml"


@dataclass(frozen=True)
class Rule:
    direction: Direction
    why: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class DirectionRules:
    exact: dict[str, Direction]
    rules: tuple[Rule, ...]

    def place(self, metric: str) -> Direction:
        name = " ".join(metric.split()).lower()
        if name in self.exact:
            return self.exact[name]
        for rule in self.rules:
            if rule.pattern.search(name):
                return rule.direction
        return "unknown"


def _direction(value: object, where: str) -> Direction:
    if value not in DIRECTIONS:
        raise ValueError(f"{RULE_FILE}: {where} is {value!r}, not one of {DIRECTIONS}")
    return value


def parse_rules(text: str) -> DirectionRules:
    """The rules from the TOML text of `metric_directions.toml` (a ValueError names a bad
    entry)."""
    data = tomllib.loads(text)
    exact = {
        " ".join(k.split()).lower(): _direction(v, f"[exact] {k!r}")
        for k, v in data.get("exact", {}).items()
    }
    rules = []
    for i, block in enumerate(data.get("rule", [])):
        direction = _direction(block.get("direction"), f"rule {i + 1}'s direction")
        patterns = block.get("patterns") or []
        joined = "|".join(f"(?:{p})" for p in patterns)
        rules.append(Rule(direction, str(block.get("why", "")), re.compile(joined)))
    return DirectionRules(exact, tuple(rules))


@functools.cache
def direction_rules() -> DirectionRules:
    """The packaged rule, read once."""
    return parse_rules(files("kg.query").joinpath(RULE_FILE).read_text(encoding="utf-8"))


def metric_direction(metric: str) -> Direction:
    """`higher`, `lower` or `unknown`: which way the metric named `metric` improves."""
    return direction_rules().place(metric)
