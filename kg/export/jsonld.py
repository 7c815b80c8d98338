"""JSON-LD compacted against ontology/context.jsonld, with readable keys.

`Compactor` turns one subject's triples into one node object using the context's term
definitions, without a JSON-LD processor: the export writes millions of them, and a
general compaction (rdflib, pyld) costs seconds per 100,000 triples. CONSTRUCT results
(`kg sparql`, `kg query`, the server) go through the same compactor. It covers what kg's
context uses: prefixes, simple and typed terms (`@type` "@id" or a datatype),
`@container` "@set", and the `id`/`type` aliases. A triple that no term fits keeps a
compact-IRI key and an explicit value object, so the output always expands back to the
same triples.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from kg.errors import KgError
from kg.rdf.results import Term
from kg.rdf.vocab import RDF_NS, XSD
from kg.resources import ontology_dir

if TYPE_CHECKING:
    from kg.rdf.engine import BinaryWriter

_RDF_TYPE = f"{RDF_NS}type"
_GEN_DELIMS = (":", "/", "?", "#", "[", "]", "@")
_TERM_KEYS = {"@id", "@type", "@container"}


@cache
def context() -> dict[str, Any]:
    with open(ontology_dir() / "context.jsonld", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data.get("@context", data)  # type: ignore[no-any-return]


def compact_ntriples(ntriples: str) -> str:
    """Compact N-Triples text (a CONSTRUCT result, say) to JSON-LD against kg's context, in
    the shape `kg export --format jsonld` writes: one object per subject."""
    import io
    import itertools

    from kg.rdf.engine import parse_triples

    lines = sorted({line for line in ntriples.encode("utf-8").splitlines() if line.strip()})
    out = io.BytesIO()
    writer = JsonLdWriter(out)
    triples = parse_triples(b"\n".join(lines)) if lines else iter(())
    for subject, group in itertools.groupby(triples, key=lambda t: t[0]):
        writer.node(subject, ((p, o) for _, p, o in group))
    writer.close()
    return out.getvalue().decode("utf-8")


@dataclass(frozen=True)
class TermDefinition:
    name: str
    iri: str
    coerce: str | None  # "@id", a datatype IRI, or None
    always_list: bool  # @container @set


# How a (predicate, kind of object) pair is written: the key, whether the key always holds
# a list, and the value's shape.
_Plan = tuple[str, bool, str]


class Compactor:
    """Compacts triples grouped by subject into node objects, driven by a JSON-LD context."""

    def __init__(self, ctx: Mapping[str, Any]) -> None:
        self.context = dict(ctx)
        self.id_key = next((k for k, v in ctx.items() if v == "@id"), "@id")
        self.type_key = next((k for k, v in ctx.items() if v == "@type"), "@type")
        self.default_language = "@language" in ctx
        # Prefixes: simple definitions ending in a gen-delim (JSON-LD 1.1's prefix flag).
        self.prefixes: dict[str, str] = {
            name: value
            for name, value in ctx.items()
            if isinstance(value, str)
            and not name.startswith("@")
            and ":" not in name
            and value.endswith(_GEN_DELIMS)
            and not value.startswith("@")
        }
        self._by_length = sorted(self.prefixes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        self.by_iri: dict[str, list[TermDefinition]] = {}
        self.class_terms: dict[str, str] = {}
        for name in sorted(ctx):
            definition = self._definition(name, ctx[name])
            if definition is None:
                continue
            self.by_iri.setdefault(definition.iri, []).append(definition)
            if definition.coerce is None and not definition.always_list:
                self.class_terms.setdefault(definition.iri, name)
        self._plans: dict[tuple[str, str, str | None, bool], _Plan] = {}

    # -- reading the context ----------------------------------------------------------------
    def expand(self, value: str) -> str:
        prefix, sep, suffix = value.partition(":")
        if sep and not suffix.startswith("//") and prefix in self.prefixes:
            return self.prefixes[prefix] + suffix
        return value

    def _definition(self, name: str, value: Any) -> TermDefinition | None:
        if name.startswith("@") or name in self.prefixes:
            return None
        if isinstance(value, str):
            if value.startswith("@") or ":" not in value:
                return None
            return TermDefinition(name, self.expand(value), None, False)
        if not isinstance(value, dict) or set(value) - _TERM_KEYS or "@id" not in value:
            return None  # a feature this compactor does not write (@reverse, @list, …)
        container = value.get("@container")
        coerce = value.get("@type")
        if container not in (None, "@set") or coerce in ("@vocab", "@json", "@none"):
            return None
        if not isinstance(value["@id"], str) or not isinstance(coerce, str | None):
            return None
        return TermDefinition(
            name,
            self.expand(value["@id"]),
            coerce if coerce in (None, "@id") else self.expand(coerce),
            container == "@set",
        )

    # -- IRIs -------------------------------------------------------------------------------
    def compact_iri(self, iri: str) -> str:
        """An IRI as a JSON-LD processor will read it back: a compact IRI or the IRI itself."""
        for prefix, ns in self._by_length:
            if iri.startswith(ns) and len(iri) > len(ns):
                suffix = iri[len(ns) :]
                if not suffix.startswith("//"):
                    return f"{prefix}:{suffix}"
        scheme, sep, rest = iri.partition(":")
        if sep and scheme in self.prefixes and not rest.startswith("//"):
            raise KgError(
                f"the IRI <{iri[:80]}> cannot be written in JSON-LD with kg's context: its "
                f"scheme {scheme!r} is a prefix there; export it as Turtle or N-Triples instead"
            )
        return iri

    def _node_id(self, term: Term) -> str:
        return f"_:{term.value}" if term.kind == "bnode" else self.compact_iri(term.value)

    def _type_value(self, term: Term) -> str:
        if term.kind == "bnode":
            return f"_:{term.value}"
        return self.class_terms.get(term.value) or self.compact_iri(term.value)

    # -- one property value -----------------------------------------------------------------
    def _plan(self, predicate: str, obj: Term) -> _Plan:
        datatype = obj.datatype or XSD.string
        key = (predicate, obj.kind, None if obj.kind != "literal" else datatype, bool(obj.lang))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._choose(predicate, obj.kind, datatype, bool(obj.lang))
            self._plans[key] = plan
        return plan

    def _choose(self, predicate: str, kind: str, datatype: str, lang: bool) -> _Plan:
        if kind == "triple":
            raise KgError("JSON-LD 1.1 cannot hold RDF 1.2 triple terms; export as N-Triples")
        candidates = self.by_iri.get(predicate, [])
        reference = kind in ("uri", "bnode")
        for td in candidates:  # a term whose coercion fits: the value is a bare string
            if reference and td.coerce == "@id":
                return td.name, td.always_list, "iri"
            if kind == "literal" and not lang:
                if td.coerce is not None and td.coerce == datatype:
                    return td.name, td.always_list, "lexical"
                if td.coerce is None and datatype == XSD.string and not self.default_language:
                    return td.name, td.always_list, "lexical"
        for td in candidates:  # a term without coercion: the value is a value object
            if td.coerce is None:
                return td.name, td.always_list, "object"
        return self.compact_iri(predicate), False, "object"

    def _value(self, shape: str, obj: Term) -> Any:
        if shape == "iri":
            return self._node_id(obj)
        if shape == "lexical":
            return obj.value
        if obj.kind in ("uri", "bnode"):
            return {self.id_key: self._node_id(obj)}
        if obj.lang:
            return {"@value": obj.value, "@language": obj.lang}
        if obj.datatype and obj.datatype != XSD.string:
            return {"@value": obj.value, "@type": self._type_value(Term("uri", obj.datatype))}
        return {"@value": obj.value}

    # -- one node ---------------------------------------------------------------------------
    def node(self, subject: Term, pairs: Iterable[tuple[Term, Term]]) -> dict[str, Any]:
        """The node object for `subject` with its (predicate, object) pairs, keys sorted."""
        types: list[str] = []
        values: dict[str, list[Any]] = {}
        always: dict[str, bool] = {}
        for predicate, obj in pairs:
            if predicate.value == _RDF_TYPE and obj.kind in ("uri", "bnode"):
                types.append(self._type_value(obj))
                continue
            key, as_list, shape = self._plan(predicate.value, obj)
            values.setdefault(key, []).append(self._value(shape, obj))
            always[key] = as_list
        node: dict[str, Any] = {self.id_key: self._node_id(subject)}
        if types:
            node[self.type_key] = types[0] if len(types) == 1 else types
        for key in sorted(values):
            items = values[key]
            node[key] = items if always[key] or len(items) > 1 else items[0]
        return node


class JsonLdWriter:
    """Streams a JSON-LD document: the context inline, then one node object per line."""

    def __init__(self, out: BinaryWriter, ctx: Mapping[str, Any] | None = None) -> None:
        self.ctx = dict(context() if ctx is None else ctx)
        self.compactor = Compactor(self.ctx)
        self.out = out
        self.nodes = 0
        entries = ",\n".join(
            f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in self.ctx.items()
        )
        out.write(f'{{\n "@context": {{\n{entries}\n }},\n "@graph": ['.encode())

    def node(self, subject: Term, pairs: Iterable[tuple[Term, Term]]) -> None:
        text = json.dumps(self.compactor.node(subject, pairs), ensure_ascii=False)
        self.out.write(("\n" if self.nodes == 0 else ",\n").encode() + text.encode("utf-8"))
        self.nodes += 1

    def close(self) -> None:
        self.out.write(b"\n ]\n}\n")
