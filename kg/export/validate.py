"""SHACL validation of the store against ontology/shapes.ttl.

`validate` compiles each constraint of the shapes file into one SPARQL SELECT that finds
the nodes violating it, and runs those queries on the store itself (the union of all
graphs, values counted DISTINCT because Oxigraph's union is a bag). The shapes file stays
the single source of truth: a construct this compiler does not implement is an error, not
a silent pass. `validate_pyshacl` is the reference (pyshacl over an rdflib copy of the
store): same answers, but it copied 770,000 quads into rdflib and took 5 min 16 s on the
README store, where the compiled queries take seconds (docs/performance.md).

Supported SHACL Core subset (what shapes.ttl uses): node shapes with `sh:targetClass`,
`sh:targetSubjectsOf` or `sh:targetObjectsOf` (for the classes kg does not state in the data),
node-level `sh:nodeKind` and `sh:class`; property shapes whose `sh:path` is an IRI or
`[sh:inversePath IRI]`, with `sh:class`, `sh:datatype`, `sh:nodeKind` (`sh:IRI`,
`sh:Literal`, `sh:BlankNode`), `sh:minCount`, `sh:maxCount`, `sh:hasValue`, `sh:in`,
`sh:minInclusive`, `sh:maxInclusive`, `sh:minLength`, `sh:maxLength`, `sh:pattern` and
`sh:message`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import UsageError
from kg.rdf.store import GraphStore
from kg.resources import ontology_dir

if TYPE_CHECKING:
    import rdflib

SH = "http://www.w3.org/ns/shacl#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"

#: Keys a property shape may have (besides sh:path): anything else is not implemented.
_PROPERTY_KEYS = {
    "class",
    "datatype",
    "nodeKind",
    "minCount",
    "maxCount",
    "hasValue",
    "in",
    "minInclusive",
    "maxInclusive",
    "minLength",
    "maxLength",
    "pattern",
    "message",
    "name",
    "description",
    "severity",
}
_TARGET_KEYS = ("targetClass", "targetSubjectsOf", "targetObjectsOf")
_NODE_KEYS = {*_TARGET_KEYS, "property", "nodeKind", "class", "message", "name", "severity"}
_NODE_KINDS = {
    f"{SH}IRI": "isIRI({v})",
    f"{SH}Literal": "isLiteral({v})",
    f"{SH}BlankNode": "isBlank({v})",
    f"{SH}BlankNodeOrIRI": "(isBlank({v}) || isIRI({v}))",
    f"{SH}IRIOrLiteral": "(isIRI({v}) || isLiteral({v}))",
    f"{SH}BlankNodeOrLiteral": "(isBlank({v}) || isLiteral({v}))",
}


@dataclass
class Violation:
    focus: str
    path: str
    message: str
    shape: str
    severity: str


@dataclass
class ValidationReport:
    conforms: bool
    violations: list[Violation] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    """One compiled constraint: a SELECT of (?f, ?v) rows that violate it.

    `focus` is the shape's target as a graph pattern binding ?f (the instances of a class
    and its subclasses, or the subjects or objects of a property): when set, the query scans
    the path over the whole store (an index scan, no join) and only rows whose ?f is a focus
    node are violations; the focus nodes are looked up once per target. Joining every check
    with `?f rdf:type C` in SPARQL made each one take seconds on the README store.
    """

    shape: str  # the node shape's IRI
    path: str  # the path as reported: an IRI, or ^IRI for an inverse path
    component: str  # e.g. "MaxCountConstraintComponent"
    message: str
    sparql: str
    focus: str = ""


def _term(node: Any) -> str:
    """An rdflib term in SPARQL syntax."""
    return str(node.n3())


def _key(predicate: Any) -> str:
    text = str(predicate)
    if not text.startswith(SH):
        raise UsageError(f"shapes: {text} is not a SHACL term kg's validator implements")
    return text[len(SH) :]


def _one(values: list[Any], shape: str, key: str) -> Any:
    if len(values) != 1:
        raise UsageError(f"shapes: {shape} has {len(values)} values for sh:{key}; expected 1")
    return values[0]


def _typed(var: str, classes: tuple[str, ...]) -> str:
    """`var` has one of `classes` as rdf:type (a plain index lookup, no property path)."""
    if len(classes) == 1:
        return f"{var} <{RDF_TYPE}> <{classes[0]}>"
    options = " ".join(f"<{c}>" for c in classes)
    return f"{var} <{RDF_TYPE}> ?class_ . VALUES ?class_ {{ {options} }}"


def _focus(key: str, node: Any, closure: Callable[[Any], tuple[str, ...]]) -> str:
    """The focus nodes of one target (`key` is one of _TARGET_KEYS) as a pattern binding ?f."""
    import rdflib

    if not isinstance(node, rdflib.URIRef):
        raise UsageError(f"shapes: sh:{key} {node} is not an IRI")
    if key == "targetClass":
        return _typed("?f", closure(node))
    if key == "targetSubjectsOf":
        return f"?f <{node}> ?target_"
    return f"?target_ <{node}> ?f"


def compile_shapes(
    shapes: rdflib.Graph, subclasses: Callable[[str], list[str]] | None = None
) -> list[Check]:
    """The shapes graph as SPARQL checks; a construct outside the subset is an error.

    `subclasses(C)` lists the data's subclasses of C (rdfs:subClassOf+): SHACL counts their
    instances as C's. None: no subclasses (the kg ontology declares none among its classes).
    """
    import rdflib

    sh = rdflib.Namespace(SH)

    def closure(cls: Any) -> tuple[str, ...]:
        return tuple(sorted({str(cls), *(subclasses(str(cls)) if subclasses else [])}))

    checks: list[Check] = []
    for shape in sorted(set(shapes.subjects(rdflib.RDF.type, sh.NodeShape)), key=str):
        name = str(shape)
        props: dict[str, list[Any]] = {}
        for p, o in shapes.predicate_objects(shape):
            if p == rdflib.RDF.type:
                continue
            props.setdefault(_key(p), []).append(o)
        unknown = set(props) - _NODE_KEYS
        if unknown:
            raise UsageError(f"shapes: {name} uses sh:{min(unknown)}, not implemented")
        targets = [
            _focus(key, node, closure) for key in _TARGET_KEYS for node in props.get(key, [])
        ]
        if not targets:
            raise UsageError(f"shapes: {name} has no target ({', '.join(_TARGET_KEYS)})")
        message = str(props.get("message", [""])[0])
        for focus in targets:
            for kind in props.get("nodeKind", []):
                test = _NODE_KINDS.get(str(kind))
                if test is None:
                    raise UsageError(f"shapes: {name}: sh:nodeKind {kind} is not implemented")
                checks.append(
                    Check(
                        name,
                        "",
                        "NodeKindConstraintComponent",
                        message or f"Focus node is not a {str(kind).rsplit('#', 1)[-1]}",
                        f"SELECT DISTINCT ?f ?v WHERE {{ {focus} BIND(?f AS ?v) "
                        f"FILTER(!{test.format(v='?f')}) }}",
                    )
                )
            for cls in props.get("class", []):
                checks.append(
                    Check(
                        name,
                        "",
                        "ClassConstraintComponent",
                        message or f"Focus node is not an instance of {cls}",
                        f"SELECT DISTINCT ?f ?v WHERE {{ {{ {focus} BIND(?f AS ?v) }} "
                        f"MINUS {{ {_typed('?f', closure(cls))} }} }}",
                    )
                )
            for prop in props.get("property", []):
                checks.extend(_property_checks(shapes, name, focus, prop, closure))
    return checks


def _property_checks(
    shapes: rdflib.Graph,
    name: str,
    focus: str,
    prop: Any,
    closure: Callable[[Any], tuple[str, ...]],
) -> Iterator[Check]:
    import rdflib

    sh = rdflib.Namespace(SH)
    keys: dict[str, list[Any]] = {}
    for p, o in shapes.predicate_objects(prop):
        keys.setdefault(_key(p), []).append(o)
    path_node = _one(keys.pop("path", []), name, "path")
    unknown = set(keys) - _PROPERTY_KEYS
    if unknown:
        raise UsageError(f"shapes: a property of {name} uses sh:{min(unknown)}, not implemented")
    if isinstance(path_node, rdflib.URIRef):
        triple, shown = f"?f <{path_node}> ?v", str(path_node)
    else:
        inverse = list(shapes.objects(path_node, sh.inversePath))
        others = set(shapes.predicates(path_node)) - {sh.inversePath}
        if len(inverse) != 1 or others or not isinstance(inverse[0], rdflib.URIRef):
            raise UsageError(f"shapes: {name}: only IRI and sh:inversePath paths are supported")
        triple, shown = f"?v <{inverse[0]}> ?f", f"^{inverse[0]}"
    message = str(keys.get("message", [""])[0])

    def check(component: str, default: str, sparql: str, scan: bool = True) -> Check:
        return Check(name, shown, component, message or default, sparql, focus if scan else "")

    def each_value(component: str, default: str, violates: str) -> Check:
        return check(
            component, default, f"SELECT DISTINCT ?f ?v WHERE {{ {triple} FILTER({violates}) }}"
        )

    for cls in keys.get("class", []):
        yield check(
            "ClassConstraintComponent",
            f"Value is not an instance of {cls}",
            f"SELECT DISTINCT ?f ?v WHERE {{ {{ {triple} }} "
            f"MINUS {{ {_typed('?v', closure(cls))} }} }}",
        )
    for datatype in keys.get("datatype", []):
        yield each_value(
            "DatatypeConstraintComponent",
            f"Value does not have datatype {datatype}",
            f"!isLiteral(?v) || datatype(?v) != {_term(datatype)}",
        )
    for kind in keys.get("nodeKind", []):
        test = _NODE_KINDS.get(str(kind))
        if test is None:
            raise UsageError(f"shapes: {name}: sh:nodeKind {kind} is not implemented")
        yield each_value(
            "NodeKindConstraintComponent",
            f"Value is not a {str(kind).rsplit('#', 1)[-1]}",
            f"!{test.format(v='?v')}",
        )
    for count in keys.get("minCount", []):
        n = int(count)
        if n == 1:
            sparql = f"SELECT DISTINCT ?f ?v WHERE {{ {{ {focus} }} MINUS {{ {triple} }} }}"
        else:
            sparql = (
                f"SELECT ?f (COUNT(DISTINCT ?v) AS ?n) WHERE {{ {focus} "
                f"OPTIONAL {{ {triple} }} }} GROUP BY ?f HAVING (COUNT(DISTINCT ?v) < {n})"
            )
        if n > 0:
            yield check("MinCountConstraintComponent", f"Fewer than {n} values", sparql, False)
    for count in keys.get("maxCount", []):
        n = int(count)
        yield check(
            "MaxCountConstraintComponent",
            f"More than {n} values",
            f"SELECT ?f (COUNT(DISTINCT ?v) AS ?n) WHERE {{ {triple} }} "
            f"GROUP BY ?f HAVING (COUNT(DISTINCT ?v) > {n})",
        )
    for value in keys.get("hasValue", []):
        yield check(
            "HasValueConstraintComponent",
            f"Missing the value {value}",
            f"SELECT DISTINCT ?f ?v WHERE {{ {{ {focus} }} MINUS "
            f"{{ {triple.replace('?v', _term(value))} }} }}",
            False,
        )
    for head in keys.get("in", []):
        members = list(rdflib.collection.Collection(shapes, head))
        allowed = " || ".join(f"sameTerm(?v, {_term(m)})" for m in members) or "false"
        yield each_value(
            "InConstraintComponent",
            "Value is not one of " + ", ".join(_term(m) for m in members),
            f"!({allowed})",
        )
    # value-range and length bounds: (key, component, message, violation test)
    for key, component, default, test in (
        ("minInclusive", "MinInclusive", "Value is not >= {b}", "!COALESCE(?v >= {b}, false)"),
        ("maxInclusive", "MaxInclusive", "Value is not <= {b}", "!COALESCE(?v <= {b}, false)"),
        ("minLength", "MinLength", "Value is shorter than {b}", "!(STRLEN(STR(?v)) >= {b})"),
        ("maxLength", "MaxLength", "Value is longer than {b}", "!(STRLEN(STR(?v)) <= {b})"),
    ):
        for bound in keys.get(key, []):
            b = str(int(bound)) if "Length" in key else _term(bound)
            violates = test.format(b=b)
            if "Length" in key:
                violates = f"isBlank(?v) || {violates}"
            yield each_value(f"{component}ConstraintComponent", default.format(b=bound), violates)
    for pattern in keys.get("pattern", []):
        yield each_value(
            "PatternConstraintComponent",
            f"Value does not match {pattern}",
            f"isBlank(?v) || !REGEX(STR(?v), {_term(pattern)})",
        )


def load_shapes(shapes: Path | None = None) -> rdflib.Graph:
    import rdflib

    return rdflib.Graph().parse(shapes or ontology_dir() / "shapes.ttl", format="turtle")


def validate(store: GraphStore, shapes: Path | None = None) -> ValidationReport:
    """Validate the union of all graphs with the compiled checks; every violation found."""

    def subclasses(cls: str) -> list[str]:
        rows = store.select_values(f"SELECT DISTINCT ?c WHERE {{ ?c <{SUBCLASS}>+ <{cls}> }}")
        return [c for (c,) in rows if c is not None]

    instances: dict[str, set[str]] = {}

    def focus_nodes(pattern: str) -> set[str]:
        if pattern not in instances:
            rows = store.select_values(f"SELECT DISTINCT ?f WHERE {{ {pattern} }}")
            instances[pattern] = {f for (f,) in rows if f is not None}
        return instances[pattern]

    # Scans without a focus join are the same text for every shape with that constraint
    # (rdfs:label as xsd:string, say): run each once.
    answers: dict[str, list[tuple[str | None, ...]]] = {}
    violations: list[Violation] = []
    for chk in compile_shapes(load_shapes(shapes), subclasses):
        if chk.sparql not in answers:
            answers[chk.sparql] = list(store.select_values(chk.sparql))
        for focus, value in answers[chk.sparql]:
            if chk.focus and focus not in focus_nodes(chk.focus):
                continue
            detail = chk.message
            if chk.component == "MaxCountConstraintComponent":
                detail = f"{chk.message} ({value} given)"
            violations.append(
                Violation(
                    focus=str(focus),
                    path=chk.path,
                    message=detail,
                    shape=f"{chk.shape} sh:{chk.component}",
                    severity="Violation",
                )
            )
    violations.sort(key=lambda v: (v.focus, v.path, v.message))
    return ValidationReport(not violations, violations)


def validate_pyshacl(store: GraphStore, shapes: Path | None = None) -> ValidationReport:
    """The reference: pyshacl over an rdflib copy of the union (slow: minutes at 1 M quads)."""
    import io

    import rdflib
    from pyshacl import validate as shacl_validate

    data = rdflib.Graph()
    buf = io.BytesIO()
    store.dump(buf, "ntriples")
    data.parse(data=buf.getvalue().decode("utf-8"), format="nt")
    conforms, report, _ = shacl_validate(data, shacl_graph=load_shapes(shapes), inference="none")
    sh = rdflib.Namespace(SH)
    violations = []
    for result in report.subjects(rdflib.RDF.type, sh.ValidationResult):
        path = report.value(result, sh.resultPath)
        inverse = report.value(path, sh.inversePath) if path is not None else None
        violations.append(
            Violation(
                focus=str(report.value(result, sh.focusNode)),
                path=f"^{inverse}" if inverse is not None else str(path or ""),
                message=str(report.value(result, sh.resultMessage) or ""),
                shape=str(report.value(result, sh.sourceShape) or ""),
                severity=str(report.value(result, sh.resultSeverity) or "").rsplit("#", 1)[-1],
            )
        )
    violations.sort(key=lambda v: (v.focus, v.path, v.message))
    return ValidationReport(bool(conforms), violations)
