"""A leaderboard query against its text at another revision, on every leaderboard of a store.

    python bench/leaderboard_queries.py --store kg-store [--query leaderboard-code]
                                        [--baseline a38d022] [--limit 0]

Runs the named query (task and dataset bound, as the leaderboard page binds them) of this
checkout and of `--baseline` (read with `git show REV:queries/NAME.rq`) side by side on each
kg:Leaderboard of the store, checks that both give the same rows, and prints the total time
of each and their ratio. Session 9 moved leaderboard-code off DISTINCT subqueries that
Oxigraph joins after scanning every code link.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.query.named import find_query, parse_query, with_values  # noqa: E402
from kg.rdf.results import SelectResult, Term  # noqa: E402
from kg.rdf.store import GraphStore  # noqa: E402

BOARDS = (
    "PREFIX kg: <https://w3id.org/kg/ontology#> "
    "SELECT DISTINCT ?task ?dataset WHERE { ?b a kg:Leaderboard ; kg:onTask ?task ; "
    "kg:onDataset ?dataset } ORDER BY ?task ?dataset"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--query", default="leaderboard-code")
    parser.add_argument("--baseline", default="a38d022", help="git revision of the old text")
    parser.add_argument("--limit", type=int, default=0, help="only the first N leaderboards")
    args = parser.parse_args()

    old_text = subprocess.run(
        ["git", "show", f"{args.baseline}:queries/{args.query}.rq"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    old = parse_query(old_text, Path(f"{args.query}.rq")).sparql
    new = find_query(args.query).sparql
    store = GraphStore.open(args.store, read_only=True)
    boards = store.query(BOARDS)
    assert isinstance(boards, SelectResult)
    rows = boards.rows[: args.limit] if args.limit else boards.rows
    spent = {"baseline": 0.0, "now": 0.0}
    for task, dataset in rows:
        assert task is not None and dataset is not None
        bound = {"task": Term("uri", task.value), "dataset": Term("uri", dataset.value)}
        answers = {}
        for name, text in (("baseline", old), ("now", new)):
            started = time.perf_counter()
            answer = store.query(with_values(text, bound))
            spent[name] += time.perf_counter() - started
            assert isinstance(answer, SelectResult)
            answers[name] = answer.rows
        if answers["baseline"] != answers["now"]:
            print(f"different rows on {task.value} × {dataset.value}", file=sys.stderr)
            return 1
    n = len(rows)
    print(f"{args.query} on {n:,} leaderboards, the same rows on each")
    for name, seconds in spent.items():
        print(f"  {name:8} {seconds:8.2f} s  ({1000 * seconds / max(n, 1):.1f} ms a board)")
    print(f"  now / baseline: {spent['now'] / max(spent['baseline'], 1e-9):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
