"""Relations as property paths or as derived triples (issue 24; docs/ontology.md).

    python bench/relation_paths.py STORE [--repeat 5] [--work DIR]

STORE is the README store (`kg --store STORE ingest examples/`). The script copies it into
--work, derives each relation of `kg.rdf.vocab.PAPER_TO` into a graph of its own (one
`INSERT … WHERE` per relation, timed), then runs each query both ways, side by side and
alternating, and prints the medians and their ratio. Both ways must give the same rows.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.rdf.results import SelectResult  # noqa: E402
from kg.rdf.store import GraphStore  # noqa: E402
from kg.rdf.vocab import PAPER_TO, compact_path  # noqa: E402

P = """PREFIX kg: <https://w3id.org/kg/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""
DERIVED = "https://w3id.org/kg/id/graph/derived"
AREA = "<https://w3id.org/kg/id/area/computer-vision>"
TASK = "<https://w3id.org/kg/id/task/image-classification>"
TASK_PATH, METHOD_PATH = compact_path(PAPER_TO.task), compact_path(PAPER_TO.method)


def tasks_in_area(rel: str) -> str:
    return (
        P
        + f"""SELECT ?task (COUNT(DISTINCT ?paper) AS ?papers) WHERE {{
  {{ SELECT DISTINCT ?task WHERE {{ VALUES ?area {{ {AREA} }} ?above kg:area ?area .
     ?task kg:subtaskOf* ?above . ?task a kg:Task . }} }}
  OPTIONAL {{ ?paper {rel} ?task }} }} GROUP BY ?task"""
    )


def task_methods(rt: str, rm: str) -> str:
    return (
        P
        + f"""SELECT ?method (COUNT(DISTINCT ?paper) AS ?papers) WHERE {{
  VALUES ?task {{ {TASK} }} ?paper {rt} ?task ; {rm} ?method }} GROUP BY ?method"""
    )


def papers_per_task(rel: str) -> str:
    return (
        P + f"SELECT ?task (COUNT(DISTINCT ?paper) AS ?n) WHERE {{ ?paper {rel} ?task }} "
        "GROUP BY ?task"
    )


CASES = {
    "tasks-in-area (Computer Vision)": (tasks_in_area(TASK_PATH), tasks_in_area("kg:worksOn")),
    "task-methods (Image Classification)": (
        task_methods(TASK_PATH, METHOD_PATH),
        task_methods("kg:worksOn", "kg:usesAny"),
    ),
    "papers per task (all)": (papers_per_task(TASK_PATH), papers_per_task("kg:worksOn")),
}


def derive(store: GraphStore) -> float:
    started = time.perf_counter()
    for name, path in (("worksOn", TASK_PATH), ("usesAny", METHOD_PATH)):
        store.update(
            P + f"INSERT {{ GRAPH <{DERIVED}> {{ ?p kg:{name} ?x }} }} WHERE {{ "
            f"SELECT DISTINCT ?p ?x WHERE {{ ?p {path} ?x }} }}"
        )
    store.flush()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("store", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kg-relation-paths-"))
    copy = work / "store"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(args.store, copy)
    with GraphStore.open(copy) as store:
        seconds = derive(store)
        print(f"derived {store.count(DERIVED):,} triples in {seconds:.1f} s")
    with GraphStore.open(copy, read_only=True) as store:
        for name, (by_path, by_derived) in CASES.items():
            tp: list[float] = []
            td: list[float] = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                a = store.query(by_path)
                tp.append(time.perf_counter() - t)
                t = time.perf_counter()
                b = store.query(by_derived)
                td.append(time.perf_counter() - t)
            assert isinstance(a, SelectResult) and isinstance(b, SelectResult)
            assert sorted(map(str, a.rows)) == sorted(map(str, b.rows)), name
            mp, md = statistics.median(tp), statistics.median(td)
            print(
                f"{name}: path {mp * 1000:.0f} ms, derived {md * 1000:.0f} ms, "
                f"ratio {mp / md:.1f}, {len(a.rows)} rows"
            )


if __name__ == "__main__":
    main()
