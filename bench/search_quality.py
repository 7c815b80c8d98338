"""Known-item search on real text: the quality table of docs/search.md, row by row.

On the store `kg ingest examples/` builds (the README store):

1. each paper's exact title -> that paper first (or a paper with the very same title);
2. the same, counting only that very paper;
3. each method's name in the real 2022 methods dump -> that method first;
4. the same with `--type method`;
5. a method's name in the other number (`name` +/- `s`, alphabetic names) -> that method in
   the top 5, `--type method`.

    .venv/bin/kg --store /tmp/readme ingest -q examples/
    .venv/bin/python bench/search_quality.py /tmp/readme [--out FILE.json]

tests/test_search.py asserts rows 1 and 3 with the same computation.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.search import StoreSearch
from kg.search.index import normalise

ROOT = Path(__file__).resolve().parent.parent
BASE = "https://w3id.org/kg/id/"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    store = GraphStore.open(args.store, read_only=True)
    search = StoreSearch(store, args.store)
    rows = store.query(
        "SELECT DISTINCT ?p ?t WHERE { ?p a <https://w3id.org/kg/ontology#Paper> ; "
        "<http://purl.org/dc/terms/title> ?t }"
    )
    assert isinstance(rows, SelectResult)
    titles: dict[str, set[str]] = {}
    for p, t in rows.rows:
        if p is not None and t is not None:
            titles.setdefault(p.value, set()).add(t.value)
    same = very = 0
    for paper, names in titles.items():
        title = min(names, key=len)
        hits = search.search(title, None, 1, snippets=False)
        very += bool(hits) and hits[0].iri == paper
        same += bool(hits) and (hits[0].iri == paper
                                or normalise(hits[0].label) == normalise(title))
    with gzip.open(ROOT / "examples" / "pwc" / "methods.json.gz", "rt", encoding="utf-8") as f:
        methods = json.load(f)
    anywhere = typed = 0
    other_number = other_found = 0
    for m in methods:
        iri = f"{BASE}method/{m['url'].rstrip('/').rsplit('/', 1)[-1]}"
        hits = search.search(m["name"], None, 1, snippets=False)
        anywhere += bool(hits) and hits[0].iri == iri
        hits = search.search(m["name"], "method", 1, snippets=False)
        typed += bool(hits) and hits[0].iri == iri
        name = m["name"]
        if name.replace(" ", "").isalpha():
            other = name[:-1] if name.endswith("s") else name + "s"
            other_number += 1
            top = search.search(other, "method", 5, snippets=False)
            other_found += iri in [h.iri for h in top]
    result = {
        "titles_same_title": [same, len(titles)],
        "titles_that_paper": [very, len(titles)],
        "methods_any_class": [anywhere, len(methods)],
        "methods_typed": [typed, len(methods)],
        "methods_other_number_top5": [other_found, other_number],
    }
    for key, (found, n) in result.items():
        print(f"{key}: {found:,} of {n:,} = {100 * found / n:.2f} %")
    store.close()
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
