"""What a store holds: quads, distinct triples, named graphs, entities per class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG_NS, shorten

_CLASSES = """
SELECT ?class (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?class } GROUP BY ?class ORDER BY ?class
"""
_TRIPLES = "SELECT (COUNT(*) AS ?n) WHERE { SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o } }"


@dataclass
class Stats:
    quads: int
    triples: int
    graphs: int
    record_graphs: int
    classes: dict[str, int] = field(default_factory=dict)
    #: the version of kg's mapping and layout that wrote the store (None: in memory)
    store_version: int | None = None
    #: bytes the store directory holds, search index included (None: in memory)
    bytes_on_disk: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "quads": self.quads,
            "triples": self.triples,
            "named_graphs": self.graphs,
            "record_graphs": self.record_graphs,
            "classes": self.classes,
            "store_version": self.store_version,
            "bytes_on_disk": self.bytes_on_disk,
        }


def compute(store: GraphStore, base_iri: str) -> Stats:
    classes = store.query(_CLASSES)
    triples = store.query(_TRIPLES)
    assert isinstance(classes, SelectResult) and isinstance(triples, SelectResult)
    counts: dict[str, int] = {}
    for cls, n in classes.rows:
        if cls is not None and n is not None:
            counts[shorten(cls.value) or cls.value] = int(n.value)
    graphs = list(store.named_graphs())
    record_prefix = base_iri.rstrip("/") + "/graph/record/"
    n_triples = triples.rows[0][0]
    return Stats(
        quads=store.count(),
        triples=int(n_triples.value) if n_triples is not None else 0,
        graphs=len(graphs),
        record_graphs=sum(1 for g in graphs if g.startswith(record_prefix)),
        classes={k: v for k, v in counts.items() if k.startswith("kg:") or not k.startswith(KG_NS)},
        store_version=store.version(),
        bytes_on_disk=store.size_on_disk(),
    )
