"""Printing query results in the formats users ask for."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from kg.errors import UsageError
from kg.rdf.formats import RESULTS_FORMATS, WRITABLE_RDF, find_rdf_format
from kg.rdf.results import (
    AskResult,
    GraphResult,
    QueryResult,
    SelectResult,
    table_rows,
)
from kg.rdf.vocab import PREFIXES

TABULAR_FORMATS = ("table", *(f.name for f in RESULTS_FORMATS))


def render(result: QueryResult, fmt: str, *, base_iri: str = "") -> str | Table:
    """The text (or a rich Table) for `result` in `fmt`."""
    if isinstance(result, GraphResult):
        if fmt == "table":
            fmt = "turtle"
        spec = find_rdf_format(fmt)
        if spec is None or spec.name not in WRITABLE_RDF:
            raise UsageError(
                f"--format {fmt} is for SELECT/ASK; a CONSTRUCT/DESCRIBE result takes "
                f"one of: {', '.join(WRITABLE_RDF)}"
            )
        from kg.export.rdfio import graph_text

        return graph_text(result.ntriples, spec.name)
    if fmt not in TABULAR_FORMATS:
        raise UsageError(
            f"--format {fmt} is for CONSTRUCT/DESCRIBE; a SELECT/ASK result takes "
            f"one of: {', '.join(TABULAR_FORMATS)}"
        )
    if fmt != "table":
        from kg.rdf.engine import serialize_results

        return serialize_results(result, fmt).decode("utf-8")
    if isinstance(result, AskResult):
        return "yes" if result.value else "no"
    return as_table(result, base_iri)


def as_table(result: SelectResult, base_iri: str = "") -> Table:
    prefixes = dict(PREFIXES)
    if base_iri:
        prefixes = {"": base_iri, **prefixes}
    table = Table(*result.variables, show_lines=False, header_style="bold")
    for row in table_rows(result, prefixes):
        table.add_row(*(Text(cell) for cell in row))  # data, not markup: "[/red]" is text
    table.caption = f"{len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"
    return table
