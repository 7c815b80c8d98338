"""SHACL validation of the store against ontology/shapes.ttl (pyshacl over rdflib)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kg.rdf.store import GraphStore
from kg.resources import ontology_dir


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


def validate(store: GraphStore, shapes: Path | None = None) -> ValidationReport:
    """Validate the union of all graphs; returns every violation found."""
    import io

    import rdflib
    from pyshacl import validate as shacl_validate

    data = rdflib.Graph()
    buf = io.BytesIO()
    store.dump(buf, "ntriples")
    data.parse(data=buf.getvalue().decode("utf-8"), format="nt")
    shapes_graph = rdflib.Graph().parse(shapes or ontology_dir() / "shapes.ttl", format="turtle")
    conforms, report, _ = shacl_validate(data, shacl_graph=shapes_graph, inference="none")
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    violations = []
    for result in report.subjects(rdflib.RDF.type, sh.ValidationResult):
        violations.append(
            Violation(
                focus=str(report.value(result, sh.focusNode)),
                path=str(report.value(result, sh.resultPath) or ""),
                message=str(report.value(result, sh.resultMessage) or ""),
                shape=str(report.value(result, sh.sourceShape) or ""),
                severity=str(report.value(result, sh.resultSeverity) or "").rsplit("#", 1)[-1],
            )
        )
    violations.sort(key=lambda v: (v.focus, v.path, v.message))
    return ValidationReport(bool(conforms), violations)
