"""JSON-LD compacted against ontology/context.jsonld, with readable keys."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from kg.resources import ontology_dir


@cache
def context() -> dict[str, Any]:
    with open(ontology_dir() / "context.jsonld", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data.get("@context", data)  # type: ignore[no-any-return]


def compact_ntriples(ntriples: str) -> str:
    """Compact N-Triples text to JSON-LD against kg's context (via rdflib)."""
    import rdflib

    graph = rdflib.Graph().parse(data=ntriples, format="nt")
    return graph.serialize(format="json-ld", context=context(), indent=1, sort_keys=True)
