"""The top 5 suggestions of 30 papers, for judging suggestions blind (bench/suggest_precision.py).

    python bench/suggest_pool.py STORE OUT.json

The papers: every paper of the store with a title (the README store's have titles, and
only its two seed records have abstracts), sorted by IRI, and 30 of them drawn by
`random.Random(58).sample` (58: a fixed seed, written down so the draw can be repeated).
For each, `kg suggest PAPER --top 5` (all kinds: tasks, datasets and methods mixed): the
item, its label and its kind, in order. Run it once with each version of kg on its own copy
of the store (the suggestion model is trained beside it), then pool the two files.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import kg

SEED, PAPERS, TOP = 58, 30, 5


def drawn(graph: kg.KnowledgeGraph) -> list[str]:
    """The 30 papers of the seeded rule."""
    rows = graph.store.select_values(
        "SELECT DISTINCT ?p WHERE { ?p a <https://w3id.org/kg/ontology#Paper> ; "
        "<http://purl.org/dc/terms/title> ?t }"
    )
    papers = sorted(p for (p,) in rows if p)
    return random.Random(SEED).sample(papers, PAPERS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", type=Path, help="the store (its suggestion model is trained)")
    parser.add_argument("out", type=Path, help="the JSON file to write")
    args = parser.parse_args()
    store, out = args.store, args.out
    with kg.open(store) as graph:
        graph.train_suggestions()
        pool = {}
        for paper in drawn(graph):
            found = graph.suggest(paper, top=TOP)
            pool[paper] = [
                {"item": s.item, "label": s.label, "relation": s.relation}
                for s in found.suggestions
            ]
    out.write_text(json.dumps(pool, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
