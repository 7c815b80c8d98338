"""Precision@5 of kg's suggestions, judged blind: two versions of kg against one set of
judgements.

    python bench/suggest_precision.py [RUN.json ...]

Each RUN is the output of bench/suggest_pool.py for one version of kg (default: the three
kept in bench/suggest_pools/: `before`, the text matcher that counted every word of an item's
name; `after`, the one that drops stopwords and short tokens; `scored`, the one where a
dataset's common words and a short token beside a matched word add to the score, never to
the reasons, and a name with a stopword stands whole as a phrase). The judgements are
tests/data/suggest_judgements.json: every (paper, item) pair of the pooled runs, judged by
hand with the runs shuffled together and their source hidden. A pair with no judgement is
an error: pool and judge it first. Precision@5 of a run is the mean, over its papers, of
the share of its top 5 judged relevant (a paper with fewer than 5 suggestions counts the
missing ones as misses).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JUDGEMENTS = ROOT / "tests" / "data" / "suggest_judgements.json"
RUNS = ROOT / "bench" / "suggest_pools"
TOP = 5


def judgements(path: Path = JUDGEMENTS) -> dict[tuple[str, str], bool]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(j["paper"], j["item"]): bool(j["relevant"]) for j in data["judgements"]}


def precision_at_5(run: dict[str, list[dict[str, str]]], judged: dict[tuple[str, str], bool]) -> float:
    shares = []
    for paper, suggestions in run.items():
        top = [s["item"] for s in suggestions[:TOP]]
        missing = [i for i in top if (paper, i) not in judged]
        if missing:
            raise SystemExit(f"{paper}: no judgement of {missing}; pool and judge them first")
        shares.append(sum(judged[(paper, i)] for i in top) / TOP)
    return sum(shares) / len(shares)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, nargs="*", help="bench/suggest_pool.py outputs")
    paths = parser.parse_args().runs or [RUNS / f"{r}.json" for r in ("before", "after", "scored")]
    judged = judgements()
    for path in paths:
        run = json.loads(path.read_text(encoding="utf-8"))
        print(f"{path.stem}: precision@5 {precision_at_5(run, judged):.3f} over {len(run)} papers")


if __name__ == "__main__":
    main()
