"""kg search at archive size: index time, query latency, SPARQL-joined search, disk size.

One run, ratios against baselines measured side by side in the same run:

1. Generated papers (bench/search_corpus.py: titles and abstracts drawn from the real text
   of the bundled slices) as N-Quads, one named graph per paper
   (type, title, abstract, date): `Store.bulk_load` into a
   fresh on-disk store (the baseline), then `kg.search.rebuild` of the index from that store.
2. Warm query latency p50/p95 through `StoreSearch.search` (snippets included, as
   `kg search` and `/search` return them): one-word, three-word and phrase queries, for
   papers (`--type paper`) and over all classes with the total and the counts per class
   (`StoreSearch.find`, what `kg search` and `/search` run by default since issue 27), and a
   prefix query (`word*`). Step 2 also runs against the code before issue 27 (which has no
   `find`: its all-class search is timed instead), so the two can be measured side by side
   on one kept store.
3. A SPARQL join, "papers matching X issued since 2019, newest first", as a kg search block
   (`StoreSearch.expand` + the store's query) against the same join with a REGEX scan of
   the titles and abstracts.
4. The index's disk size against the store's.

    .venv/bin/python bench/search.py [--papers 576261] [--out FILE.json] [--keep DIR]
    .venv/bin/python bench/search.py --store DIR/store [--no-join]   # 2-3 on a kept store
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_corpus import chain, generated_papers

from kg.rdf.store import GraphStore
from kg.rdf.terms import literal, typed
from kg.rdf.vocab import KG, STD, XSD
from kg.search import StoreSearch, rebuild
from kg.search.index import index_path

BASE = "https://w3id.org/kg/id/paper/"
JOIN = True


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def pct(times: list[float], q: float) -> float:
    times = sorted(times)
    return times[max(0, int(q * len(times)) - 1)]


def latency(fn, queries: list[str]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Wall and CPU time per query (CPU time: the process's, every thread; on a machine
    shared with other work it is the figure that load does not inflate)."""
    for q in queries[:20]:
        fn(q)
    times, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(pct(times, 0.95), 2),
            "cpu_p50_ms": round(statistics.median(cpu), 2),
            "cpu_p95_ms": round(pct(cpu, 0.95), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=576_261)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--keep", type=Path, help="build the store and index here, and keep them")
    parser.add_argument("--store", type=Path,
                        help="a store (and index) kept by --keep: measure only queries and joins")
    parser.add_argument("--no-join", action="store_true",
                        help="skip step 3 (its REGEX scan takes minutes at archive size)")
    args = parser.parse_args()
    global JOIN
    JOIN = not args.no_join
    if args.keep:
        args.keep.mkdir(parents=True)
    work = args.keep or Path(tempfile.mkdtemp(prefix="kg-search-bench-"))
    result: dict[str, object] = {"papers": args.papers}
    try:
        if args.store:
            queries_and_joins(args.store, result, *sample(args.papers))
            return
        t = time.perf_counter()
        model = chain()
        lines: list[str] = []
        for i, doc in enumerate(generated_papers(args.papers, seed=11, model=model)):
            s = f"<{BASE}gen-{i}>"
            g = f"<{BASE.replace('/paper/', '/graph/record/paper/')}gen-{i}>"
            date = f"{2012 + i % 12}-{1 + i % 12:02d}-{1 + i % 28:02d}"
            lines += [  # one named graph per paper, as kg ingest writes them
                f"{s} {STD.type} {KG.Paper} {g} .",
                f"{s} {STD.title} {literal(doc.title)} {g} .",
                f"{s} {STD.abstract} {literal(doc.body)} {g} .",
                f"{s} {STD.issued} {typed(date, XSD.date)} {g} .",
            ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        del lines
        result["generate_s"] = round(time.perf_counter() - t, 1)
        result["nquads_mb"] = round(len(data) / 1e6, 1)
        print(f"generated {args.papers:,} papers in {result['generate_s']} s", flush=True)

        store_path = work / "store"
        store = GraphStore.open(store_path)
        t = time.perf_counter()
        store.bulk_load(data, "nquads")
        store.flush()
        result["bulk_load_s"] = round(time.perf_counter() - t, 1)
        del data
        print(f"bulk_load {result['bulk_load_s']} s", flush=True)

        t = time.perf_counter()
        _, n = rebuild(store, store_path)
        result["index_s"] = round(time.perf_counter() - t, 1)
        result["indexed"] = n
        result["index_vs_bulk_load"] = round(result["index_s"] / result["bulk_load_s"], 2)  # type: ignore[operator]
        print(f"index {result['index_s']} s ({n:,} documents)", flush=True)
        result["store_mb"] = round(size(store_path) / 1e6 - size(index_path(store_path)) / 1e6, 1)
        result["index_mb"] = round(size(index_path(store_path)) / 1e6, 1)
        result["index_vs_store_size"] = round(result["index_mb"] / result["store_mb"], 2)  # type: ignore[operator]

        store.close()
        queries_and_joins(store_path, result, *sample(args.papers))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        text = json.dumps(result, indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")


def sample(papers: int) -> tuple[list[str], list[list[str]]]:
    """The first 5,000 papers' titles and abstract words: the corpus starts the same way
    whatever its size, so a kept store gets the same queries."""
    titles, bodies = [], []
    for doc in generated_papers(min(papers, 5000), seed=11, model=chain()):
        titles.append(doc.title)
        bodies.append(doc.body.lower().rstrip(".").split())
    return titles, bodies


def queries_and_joins(
    store_path: Path, result: dict[str, object], titles: list[str], bodies: list[list[str]]
) -> None:
    """Steps 2 and 3: warm query latency, and the SPARQL join against a REGEX scan."""
    store = GraphStore.open(store_path, read_only=True)
    rng = random.Random(3)
    search = StoreSearch(store, store_path)
    vocab = [w for t_ in titles for w in t_.lower().split() if len(w) > 3]
    qs = {
        "1-word": [rng.choice(vocab) for _ in range(300)],
        "3-word": [" ".join(rng.sample(vocab, 3)) for _ in range(300)],
        "phrase": [],
    }
    while len(qs["phrase"]) < 300:
        b = rng.choice(bodies)
        i = rng.randrange(max(1, len(b) - 3))
        qs["phrase"].append('"' + " ".join(b[i : i + 3]) + '"')
    qs["prefix"] = [w[: max(3, len(w) - 3)] + "*" for w in qs["1-word"]]
    result["latency"] = {
        kind: latency(lambda q: search.search(q, "paper", 10), queries)
        for kind, queries in qs.items()
    }
    result["latency_no_snippets"] = {  # what a SPARQL block's search costs
        kind: latency(lambda q: search.search(q, "paper", 10, snippets=False), queries)
        for kind, queries in qs.items()
    }
    find = getattr(search, "find", None)  # None: the code before issue 27
    result["all_classes"] = "find (page 1, total, counts per class)" if find else "search"
    result["latency_all_classes"] = {
        kind: latency((lambda q: find(q, None, limit=10)) if find else
                      (lambda q: search.search(q, None, 10)), queries)
        for kind, queries in qs.items()
    }
    if find:
        result["latency_all_classes_page_3"] = {
            kind: latency(lambda q: find(q, None, page=3, limit=10), queries)
            for kind, queries in qs.items()
        }
    for key in ("latency", "latency_no_snippets", "latency_all_classes",
                "latency_all_classes_page_3"):
        print(key, json.dumps(result.get(key)), flush=True)
    if not JOIN:
        store.close()
        return

    join_words = ["graph neural", "reinforcement learning", "image segmentation"]
    joined, scanned, agree = [], [], True
    for words in join_words:
        searched = (
            "PREFIX kgs: <https://w3id.org/kg/search#>\n"
            "SELECT ?paper ?date WHERE {\n"
            "  SERVICE <https://w3id.org/kg/search> {\n"
            f"    [] kgs:query {literal(words)} ; kgs:type \"paper\" ; kgs:limit 10000 ;\n"
            "       kgs:hit ?paper .\n  }\n"
            f"  ?paper {STD.issued} ?date . FILTER (?date >= \"2019-01-01\"^^<{XSD.date}>)\n"
            "} ORDER BY DESC(?date) ?paper LIMIT 100"
        )
        pattern = ".*".join(words.split())
        regex = (
            "SELECT ?paper ?date WHERE {\n"
            f"  ?paper a {KG.Paper} ; {STD.title} ?t ; {STD.abstract} ?a ; {STD.issued} ?date .\n"
            f"  FILTER (?date >= \"2019-01-01\"^^<{XSD.date}>)\n"
            f"  FILTER (REGEX(?t, {literal(pattern)}, \"i\") || REGEX(?a, {literal(pattern)}, \"i\"))\n"
            "} ORDER BY DESC(?date) ?paper LIMIT 100"
        )
        t = time.perf_counter()
        a = store.query(search.expand(searched))
        joined.append(time.perf_counter() - t)
        t = time.perf_counter()
        b_ = store.query(regex)
        scanned.append(time.perf_counter() - t)
        agree = agree and bool(a.rows) == bool(b_.rows)  # type: ignore[union-attr]
    result["sparql_join"] = {
        "queries": join_words,
        "search_block_s": round(statistics.median(joined), 3),
        "regex_scan_s": round(statistics.median(scanned), 3),
        "speedup": round(statistics.median(scanned) / statistics.median(joined), 1),
        "both_find_rows": agree,
    }
    print(json.dumps(result["sparql_join"]), flush=True)
    store.close()


if __name__ == "__main__":
    main()
