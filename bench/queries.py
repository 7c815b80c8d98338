"""Named-query benchmark (issue 4): every queries/*.rq on the example graph and on a
generated graph of 100,000 records.

    python bench/queries.py [--records 100000] [--repeat 3] [--work DIR] [--write-doc]

1. The example graph: the bundled example records (examples/records), in memory; each query
   runs with the parameters of its header example.
2. The generated graph: N records from kg.testing.records (archive-like distributions), ingested once
   into an on-disk store under --work (reused when it already holds them). Each query runs
   with parameters picked from the generated data; where the answer size depends on the
   value, both a typical value and the worst one (the most used method, task or author).
3. Side by side in the same process, as the baseline: a scan that touches every paper once
   (`SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }`). Each query's time is also given as
   a ratio to it. Parameterised queries are timed with both local bindings: the VALUES
   block (kg's default, and what a remote endpoint runs) and pyoxigraph substitutions.

Each figure is the median of --repeat runs after one warm-up run, results fully read into
Python (rows counted). --write-doc replaces the "Named queries" section of
docs/performance.md with the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.ingest.ingestor import ingest  # noqa: E402
from kg.query.named import (  # noqa: E402
    NamedQuery,
    bind,
    load_queries,
    parse_assignments,
    run_local,
)
from kg.rdf.results import GraphResult, QueryResult, SelectResult  # noqa: E402
from kg.rdf.store import GraphStore  # noqa: E402

BASE = "https://w3id.org/kg/id/"
BASELINE = (
    "PREFIX kg: <https://w3id.org/kg/ontology#> SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }"
)
SECTION = "## Named queries (`bench/queries.py`, issue 4)"
OLD_SECTIONS = ("## Named queries (issue 4)",)
#: Why a query may take over 1 s on the generated graph (shown for those that do).
WHY_SLOW = {
    "shared-methods": "the worst paper's methods include the most used ones (method-0 is in "
    "76% of the generated papers), so 400,000 (paper, method) pairs are counted and 69,950 "
    "papers share at least 3 methods: the answer itself is large. A typical paper takes a "
    "fifth of a second; raise `min_shared` to narrow the answer.",
    "papers-without-code": "the answer is half of all papers (50,157 rows), and about half "
    "of the time is Oxigraph's ORDER BY over them (sorting compares IRIs and dates by "
    "decoding them).",
    "samples-by-status": "without `repository` the answer is one row per repository and "
    "status, 93,566 rows, and four fifths of the time is Oxigraph's ORDER BY over them; for "
    "one repository it takes well under a millisecond.",
    "repositories-all-passed": "every one of the 100,000 samples and its status is read to "
    "decide, and 17,132 repositories qualify; a third of the time is the ORDER BY.",
    "provenance": "method-0 is named by 76,338 record graphs, and each is one row of the "
    "answer with its source looked up; a typical entity takes about a millisecond.",
    "task-methods": "task-0 is on 29% of the generated papers: 350,000 (paper, method) pairs "
    "are counted (the counting comes before the label lookups).",
    "official-code-by-framework": "all 25,000 PyTorch code links are read to keep the "
    "5,002 official ones, each with its paper, repository and title.",
    "coauthors": "the most prolific generated author has 1,840 papers and 15,939 co-authors.",
    "papers-by-title": "a substring test has no index to use: all 100,000 titles are read "
    "and decoded (for a word search, a full-text index would be the fix).",
    "papers-by-author": "the most prolific generated author has 1,840 papers.",
    "papers-per-venue-year": "without `venue`, all 35,000 papers with a venue are read.",
    "shared-repositories": "all 130,000 code links are grouped by repository.",
    "repository-code": "see the note on OPTIONAL groups in docs/queries.md.",
}


@dataclass
class Timing:
    query: str
    params: dict[str, str]
    rows: int
    seconds: float
    cpu_seconds: float
    subs_seconds: float | None  # bound by pyoxigraph substitutions, when it has parameters


def size(result: QueryResult) -> int:
    if isinstance(result, SelectResult):
        return len(result.rows)
    if isinstance(result, GraphResult):
        return len(result)
    return 1


def median_time(
    run: Callable[[], QueryResult], repeat: int, warm: bool = True
) -> tuple[float, float, int]:
    """Median wall and CPU seconds of `repeat` runs after a warm-up, and the result size.

    CPU time is this process's (pyoxigraph evaluates in the calling thread), so it stays
    meaningful when other work shares the machine; wall time is what a user waits.
    """
    rows = size(run()) if warm else 0
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        rows = size(run())
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu), rows


def time_query(store: GraphStore, query: NamedQuery, params: dict[str, str], repeat: int) -> Timing:
    bindings = bind(query, params, BASE)
    seconds, cpu, rows = median_time(lambda: run_local(store, query, bindings), repeat)
    subs_seconds = None
    if bindings:
        # One cold run: substitutions can be far slower, and only the ratio is reported.
        subs_seconds, _, subs_rows = median_time(
            lambda: run_local(store, query, bindings, binding="substitutions"), 1, warm=False
        )
        assert subs_rows == rows, f"{query.name}: the two bindings disagree"
    return Timing(query.name, params, rows, seconds, cpu, subs_seconds)


def example_params(query: NamedQuery) -> dict[str, str]:
    import shlex

    words = shlex.split(query.example)
    return parse_assignments(w for i, w in enumerate(words) if i and words[i - 1] == "--param")


# --- the generated graph ------------------------------------------------------------------


def build_generated(work: Path, n: int) -> tuple[Path, dict[str, Any]]:
    """Ingest N synthetic records once; return the store path and facts for parameters."""
    from kg.testing.records import records

    store_path = work / f"synth-{n}"
    facts_path = work / f"synth-{n}.facts.json"
    if facts_path.exists() and (store_path / "CURRENT").exists():
        return store_path, json.loads(facts_path.read_text())
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"synth-{n}.jsonl"
    method_use: Counter[str] = Counter()
    task_use: Counter[str] = Counter()
    author_use: Counter[str] = Counter()
    paper_methods: dict[str, list[str]] = {}
    sample_repo = None
    with open(data, "w", encoding="utf-8") as f:
        for rec in records(n, seed=1):
            f.write(json.dumps(rec) + "\n")
            slug = rec["url"].rsplit("/", 1)[-1]
            methods = [m["method_slug"] for m in rec["methods"]]
            method_use.update(methods)
            task_use.update(t["task_slug"] for t in rec["tasks"])
            author_use.update(rec["authors"])
            if len(paper_methods) < 5000:
                paper_methods[slug] = methods
            samples = rec["syntology"]["samples"]
            if sample_repo is None and len(samples) >= 3:
                sample_repo = samples[0]["repo"]
    # The worst paper for shared-methods: the one whose methods are used the most.
    worst_paper = max(paper_methods, key=lambda s: sum(method_use[m] for m in paper_methods[s]))
    start = time.perf_counter()
    with GraphStore.open(store_path) as store:
        report = ingest(store, [str(data)], base_iri=BASE)
        store.optimize()
    print(f"ingested {report.added:,} records in {time.perf_counter() - start:.0f} s")
    data.unlink()
    facts = {
        "typical_paper": "synthetic-paper-1",
        "worst_paper": worst_paper,
        "worst_paper_shares": sum(method_use[m] for m in paper_methods[worst_paper]),
        "top_method": method_use.most_common(1)[0][0],
        "top_method_papers": method_use.most_common(1)[0][1],
        "top_task": task_use.most_common(1)[0][0],
        "top_task_papers": task_use.most_common(1)[0][1],
        "top_author": author_use.most_common(1)[0][0],
        "top_author_papers": author_use.most_common(1)[0][1],
        "typical_author": "Author 200000",
        "sample_repo": sample_repo,
    }
    facts_path.write_text(json.dumps(facts, indent=1))
    return store_path, facts


def generated_params(facts: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """(query, params) for the generated graph: typical and worst-case values."""
    typical, worst = facts["typical_paper"], facts["worst_paper"]
    return [
        ("shared-methods", {"paper": typical}),
        ("shared-methods", {"paper": worst}),
        ("shared-repositories", {}),
        ("repository-code", {"repository": facts["sample_repo"]}),
        ("papers-by-author", {"author": facts["typical_author"]}),
        ("papers-by-author", {"author": facts["top_author"]}),
        ("coauthors", {"author": facts["typical_author"]}),
        ("coauthors", {"author": facts["top_author"]}),
        ("task-methods", {"task": "task-100"}),
        ("task-methods", {"task": facts["top_task"]}),
        ("official-code-by-framework", {"framework": "pytorch"}),
        ("papers-without-code", {}),
        ("papers-per-venue-year", {"venue": "ICML"}),
        ("papers-per-venue-year", {}),
        ("samples-by-status", {"repository": facts["sample_repo"]}),
        ("samples-by-status", {}),
        ("repositories-all-passed", {}),
        ("papers-by-title", {"text": "causal bayesian"}),
        (
            "leaderboard",
            {"task": "image-classification", "dataset": "imagenet", "metric": "Top 1 Accuracy"},
        ),
        ("methods-per-year", {}),
        ("datasets-introduced", {}),
        ("tasks-per-area", {}),
        ("tasks-in-area", {"area": "Computer Vision"}),
        ("task-tree", {"task": facts["top_task"]}),
        ("provenance", {"entity": f"paper/{typical}"}),
        ("provenance", {"entity": f"method/{facts['top_method']}"}),
        ("paper-card", {"paper": typical}),
    ]


# --- the real slices -----------------------------------------------------------------------

RAW = ROOT.parent / "shared" / "data" / "raw"
SLICE_FILES = [
    RAW / "pwc-methods-2022" / "methods.json.gz",
    RAW / "pwc-evaluation-tables-2020" / "evaluation-tables.json.gz",
    *sorted((RAW / "sota-extractor-tasks").glob("*.json")),
]
#: The dump-based queries, which have nothing to find in the generated graph.
SLICE_PARAMS: list[tuple[str, dict[str, str]]] = [
    ("methods-per-year", {}),
    ("tasks-per-area", {}),
    ("tasks-in-area", {"area": "Computer Vision"}),
    ("task-tree", {"task": "video"}),
    (
        "leaderboard",
        {"task": "image-classification", "dataset": "imagenet", "metric": "Top 1 Accuracy"},
    ),
    ("datasets-introduced", {}),
    ("provenance", {"entity": "method/adam"}),
    ("provenance", {"entity": "task/image-classification"}),
    ("paper-card", {"paper": "deep-residual-learning-for-image-recognition"}),
]


def build_slices(work: Path) -> Path | None:
    """The real dump slices in shared/data/raw, ingested once into an on-disk store."""
    if not all(p.exists() for p in SLICE_FILES[:2]):
        return None
    path = work / "slices"
    if not (path / "CURRENT").exists():
        start = time.perf_counter()
        with GraphStore.open(path) as store:
            report = ingest(store, [str(p) for p in SLICE_FILES], base_iri=BASE)
        print(
            f"ingested the slices ({report.added:,} units) in {time.perf_counter() - start:.0f} s"
        )
    return path


# --- reporting ----------------------------------------------------------------------------


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.2f}" if ms < 1 else f"{ms:,.1f}" if ms < 10_000 else f"{ms:,.0f}"


def table(timings: list[Timing], baseline: float) -> str:
    lines = [
        "| query | parameters | rows | ms | CPU ms | × paper scan | substitutions / VALUES |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in timings:
        params = ", ".join(f"{k}={v}" for k, v in t.params.items()) or "—"
        ratio = f"{t.subs_seconds / t.seconds:.2f}" if t.subs_seconds else "—"
        lines.append(
            f"| `{t.query}` | {params} | {t.rows:,} | {fmt_ms(t.seconds)} | "
            f"{fmt_ms(t.cpu_seconds)} | {t.seconds / baseline:.2f} | {ratio} |"
        )
    return "\n".join(lines)


def write_doc(text: str) -> None:
    path = ROOT / "docs" / "performance.md"
    doc = path.read_text(encoding="utf-8")
    heading = next(h for h in (SECTION, *OLD_SECTIONS) if h in doc)
    start = doc.index(heading)
    end = doc.find("\n## ", start + len(heading))
    end = len(doc) if end < 0 else end + 1
    path.write_text(doc[:start] + text.rstrip() + "\n\n" + doc[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "kg-bench-queries"
    )
    parser.add_argument("--write-doc", action="store_true")
    args = parser.parse_args()

    queries = load_queries()
    load_before = os.getloadavg()[0]

    examples = GraphStore.memory()
    ingest(examples, [str(ROOT / "examples" / "records")], base_iri=BASE)
    example_base, _, _ = median_time(lambda: examples.query(BASELINE), args.repeat)
    example_timings = [
        time_query(examples, q, example_params(q), args.repeat) for q in queries.values()
    ]
    print(table(example_timings, example_base))

    store_path, facts = build_generated(args.work, args.records)
    generated = GraphStore.open(store_path, read_only=True)
    gen_base, _, _ = median_time(lambda: generated.query(BASELINE), args.repeat)
    gen_timings = []
    for name, params in generated_params(facts):
        timing = time_query(generated, queries[name], params, args.repeat)
        gen_timings.append(timing)
        print(f"{name} {params}: {timing.rows:,} rows, {fmt_ms(timing.seconds)} ms", flush=True)
    missing = set(queries) - {name for name, _ in generated_params(facts)}
    assert not missing, f"no generated-graph parameters for {missing}"
    print(table(gen_timings, gen_base))

    slice_lines: list[str] = []
    slice_path = build_slices(args.work)
    if slice_path is not None:
        slices = GraphStore.open(slice_path, read_only=True)
        slice_base, _, _ = median_time(lambda: slices.query(BASELINE), args.repeat)
        slice_timings = [
            time_query(slices, queries[name], params, args.repeat) for name, params in SLICE_PARAMS
        ]
        print(table(slice_timings, slice_base))
        slice_lines = [
            "",
            "### The real slices (methods.json 2022, evaluation-tables.json 2020 and the "
            f"sota-extractor files, on disk, {len(slices):,} quads): paper scan "
            f"{fmt_ms(slice_base)} ms",
            "",
            "The generated records carry no dump data, so the dump-based queries are timed here.",
            "",
            table(slice_timings, slice_base),
        ]
        slices.close()

    slow = sorted({t.query for t in gen_timings if t.seconds > 1.0})
    slow_cpu = sorted({t.query for t in gen_timings if t.cpu_seconds > 1.0})
    notes = [f"* `{name}`: {WHY_SLOW.get(name, 'no explanation recorded')}" for name in slow]
    text = "\n".join(
        [
            SECTION,
            "",
            f"`python bench/queries.py --records {args.records} --repeat {args.repeat}` "
            "(median of the runs after one warm-up; results read into Python in full). The "
            "baseline, run side by side, is a scan of every paper "
            "(`SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }`); *× paper scan* is each "
            "query's time over it. *ms* is with parameters in a `VALUES` block, kg's default "
            "and what a remote endpoint runs; *substitutions / VALUES* is the time with "
            "pyoxigraph substitutions instead (for the variables it can substitute) over that.",
            "",
            f"### Example graph (examples/records, in memory): paper scan {fmt_ms(example_base)} ms",
            "",
            table(example_timings, example_base),
            "",
            f"### Generated graph ({args.records:,} records from kg.testing.records, on disk, "
            f"{len(generated):,} quads): paper scan {fmt_ms(gen_base)} ms",
            "",
            f"Worst-case values: paper `{facts['worst_paper']}` (its methods have "
            f"{facts['worst_paper_shares']:,} uses in all), task `{facts['top_task']}` "
            f"({facts['top_task_papers']:,} papers), author `{facts['top_author']}` "
            f"({facts['top_author_papers']:,} papers), method `{facts['top_method']}` "
            f"({facts['top_method_papers']:,} papers).",
            "",
            table(gen_timings, gen_base),
            "",
            f"Over 1 s of CPU at this scale: {', '.join(f'`{n}`' for n in slow_cpu) or 'none'}; "
            f"over 1 s of wall time: {', '.join(f'`{n}`' for n in slow) or 'none'}. Why, for "
            "each of them, with the value that makes it slow:",
            "",
            *notes,
            *slice_lines,
            "",
            f"Machine load (1-minute average) {load_before:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end, on 2 cores shared with other work: wall "
            "times include waiting for a core, CPU times do not.",
        ]
    )
    print(text)
    generated.close()
    if args.write_doc:
        write_doc(text)


if __name__ == "__main__":
    main()
