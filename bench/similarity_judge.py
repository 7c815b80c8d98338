"""Blind relevance judgements of `kg similar` rankings (issue 24, docs/similarity.md).

Three steps, each reading the README store (`kg ingest examples/`):

1. `pool STORE OUT_DIR`: choose the query papers by the seeded rule (`choose_queries`), rank
   each one's top 5 under every ranking named in RANKINGS, and write
   * `OUT_DIR/blind.txt`: the pooled (query, candidate) pairs, shuffled, each with a pair id,
     the two titles and what the pair shares, and nothing about which ranking proposed it;
   * `OUT_DIR/key.json`: which rankings proposed each pair (not to be read while judging).
2. Judge: write `OUT_DIR/grades.txt`, one `pair-id grade` per line (grade 0, 1 or 2, see
   docs/similarity.md), from `blind.txt` alone.
3. `join OUT_DIR DATA`: join grades and key into DATA (tests/data/similarity_judgements.json),
   which tests/test_similarity_quality.py reads to compute nDCG@5 of the rankings.

Rankings are computed here by brute force (every paper scored against the query with numpy),
independently of `SimilarityIndex`, with the same tie rule: score rounded to 12 decimals,
descending, then paper IRI ascending.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kg.graph.incidence import Incidence, labels, load_incidence
from kg.graph.similarity import bm25_idf
from kg.rdf.store import GraphStore

#: The seeded rule: papers with at least MIN_ITEMS items over all relations, sorted by IRI,
#: then random.Random(SEED).sample(that list, QUERIES).
SEED = 24
QUERIES = 30
MIN_ITEMS = 2
DEPTH = 5

Score = Callable[[np.ndarray, float, np.ndarray], np.ndarray]  # D, q mass, p masses


def _geometric(alpha: float) -> Score:
    """D / (qm^(1-alpha) pm^alpha): alpha 0.5 is the cosine of the idf vectors."""
    return lambda d, qm, pm: d / (qm ** (1 - alpha) * pm**alpha)


#: Every ranking pooled: today's (idf-weighted cosine) and the candidates for the new one.
RANKINGS: dict[str, Score] = {
    "idf-cosine": _geometric(0.5),
    "idf-geo-0.25": _geometric(0.25),
    "idf-geo-0.1": _geometric(0.1),
}


def choose_queries(inc: Incidence) -> list[str]:
    eligible = sorted(p for p, n in zip(inc.papers, inc.paper_items, strict=True) if n >= MIN_ITEMS)
    return random.Random(SEED).sample(eligible, QUERIES)


def rank(inc: Incidence, query: str, score: Score, k: int = DEPTH) -> list[str]:
    n = inc.shape[0]
    weight = bm25_idf(inc.item_papers, n) ** 2
    mass = np.asarray(inc.matrix @ weight).ravel()
    row = inc.papers.index(query)
    q = np.zeros(inc.shape[1])
    q[inc.items_of(row)] = weight[inc.items_of(row)]
    d = np.asarray(inc.matrix @ q).ravel()
    d[row] = 0.0
    cand = np.flatnonzero(d > 0)
    s = np.round(score(d[cand], float(mass[row]), mass[cand]), 12)
    order = sorted(range(len(cand)), key=lambda i: (-s[i], inc.papers[int(cand[i])]))
    return [inc.papers[int(cand[i])] for i in order[:k]]


def _describe(inc: Incidence, names: dict[str, str], a: str, b: str) -> list[str]:
    ra, rb = inc.papers.index(a), inc.papers.index(b)
    ia, ib = set(inc.items_of(ra).tolist()), set(inc.items_of(rb).tolist())

    def items(cols: set[int], limit: int = 10) -> str:
        ordered = sorted(cols, key=lambda c: (inc.relation_of(c), names[inc.items[c]]))
        text = [f"{names[inc.items[c]]} ({inc.relation_of(c)[:-1]})" for c in ordered[:limit]]
        more = f" … and {len(ordered) - limit} more" if len(ordered) > limit else ""
        return "; ".join(text) + more

    return [
        f"  A: {names[a]}",
        f"  B: {names[b]}",
        f"  shared: {items(ia & ib, 12) or '-'}",
        f"  A only: {items(ia - ib)}",
        f"  B only: {items(ib - ia)}",
    ]


def pool(store_path: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with GraphStore.open(store_path, read_only=True) as store:
        inc = load_incidence(store, "all")
        queries = choose_queries(inc)
        key: dict[str, dict[str, object]] = {}
        proposed: dict[tuple[str, str], set[str]] = {}
        tops: dict[str, dict[str, list[str]]] = {}
        for q in queries:
            tops[q] = {}
            for name, score in RANKINGS.items():
                tops[q][name] = rank(inc, q, score)
                for c in tops[q][name]:
                    proposed.setdefault((q, c), set()).add(name)
        pairs = sorted(proposed)
        random.Random(SEED + 1).shuffle(pairs)
        wanted = {p for pair in pairs for p in pair}
        wanted |= {inc.items[c] for p in wanted for c in inc.items_of(inc.papers.index(p))}
        names = labels(store, wanted)
        lines = []
        for i, (q, c) in enumerate(pairs):
            pid = f"p{i:03d}"
            key[pid] = {"query": q, "candidate": c, "proposed_by": sorted(proposed[(q, c)])}
            lines += [pid, *_describe(inc, names, q, c), ""]
        (out / "blind.txt").write_text("\n".join(lines), encoding="utf-8")
        (out / "key.json").write_text(
            json.dumps({"queries": queries, "pairs": key, "tops": tops}, indent=1),
            encoding="utf-8",
        )
        print(f"{len(queries)} queries, {len(pairs)} pooled pairs -> {out}/blind.txt")


def join(out: Path, data: Path) -> None:
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    grades: dict[str, int] = {}
    for line in (out / "grades.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            pid, grade = line.split()[:2]
            grades[pid] = int(grade)
    missing = sorted(set(key["pairs"]) - set(grades))
    if missing:
        raise SystemExit(f"no grade for {len(missing)} pairs: {missing[:5]}")
    judgements = [
        {"query": p["query"], "candidate": p["candidate"], "grade": grades[pid]}
        for pid, p in key["pairs"].items()
    ]
    judgements.sort(key=lambda j: (j["query"], j["candidate"]))
    doc = {
        "about": (
            "Blind graded relevance (0, 1, 2) of pairs pooled from the top 5 of several "
            "`kg similar` rankings on the README store (kg ingest examples/), by all "
            "relations; see docs/similarity.md for the rule and the grades, and "
            "bench/similarity_judge.py for how they were pooled."
        ),
        "rule": {
            "seed": SEED,
            "queries": QUERIES,
            "min_items": MIN_ITEMS,
            "depth": DEPTH,
            "text": (
                "papers of the README store with at least 2 items by `all`, sorted by IRI; "
                "random.Random(24).sample(them, 30)"
            ),
        },
        "queries": key["queries"],
        "pooled_from": key["tops"],
        "judgements": judgements,
    }
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(judgements)} judgements -> {data}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    steps = parser.add_subparsers(dest="step", required=True)
    pool_step = steps.add_parser("pool", help="choose the queries and pool the rankings")
    pool_step.add_argument("store", type=Path, help="the README store")
    pool_step.add_argument("out", type=Path, help="where blind.txt and key.json go")
    join_step = steps.add_parser("join", help="join grades.txt and key.json into the data")
    join_step.add_argument("out", type=Path, help="the folder of blind.txt and grades.txt")
    join_step.add_argument("data", type=Path, help="tests/data/similarity_judgements.json")
    args = parser.parse_args()
    if args.step == "pool":
        pool(args.store, args.out)
    else:
        join(args.out, args.data)


if __name__ == "__main__":
    main()
