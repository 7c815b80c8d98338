"""The graph out of a `KnowledgeGraph`: exports in every RDF format."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from kg.errors import UsageError
from kg.library.base import GraphBase, ParamValue, param_text

if TYPE_CHECKING:
    from kg.export.exporter import ExportReport


class Exports(GraphBase):
    """The graph out: exports."""

    def export(
        self,
        path: str | os.PathLike[str] | IO[bytes] | None = None,
        format: str = "turtle",
        *,
        graph: str | None = None,
        query: str | None = None,
        params: Mapping[str, ParamValue] | None = None,
        gzip: bool = False,
    ) -> ExportReport:
        """Write the graph to `path` (a file name, or a binary stream) in `format`: turtle,
        ntriples, nquads, trig, jsonld or rdfxml (`kg export`). The same graph always gives
        the same bytes. `graph` exports one named graph; `query` (a named CONSTRUCT query or
        @file.rq, with `params`) what it returns. Without a path: exports/kg.<ext>.

        >>> report = g.export(tmp / "kg.nt", "ntriples")
        >>> distinct = "SELECT (COUNT(*) AS ?n) { SELECT DISTINCT ?s ?p ?o { ?s ?p ?o } }"
        >>> report.statements == g.sparql(distinct)[0]["n"]
        True
        """
        from kg.export.exporter import (
            check_destination,
            construct,
            default_path,
            export,
            export_file,
            export_format,
            output_stream,
            resolve_graph,
            subset_query,
        )

        spec = export_format(format)
        if graph is not None and query is not None:
            raise UsageError("{parameter} and query do not combine: a query already picks its "
                             "triples", parameter="graph")
        if params and query is None:
            raise UsageError("{parameter} binds the parameters of a query; give query too",
                             parameter="params")
        graph_iri = resolve_graph(graph, self.base_iri) if graph is not None else None
        source = self.store
        subset_name = None
        if query is not None:
            values = {k: param_text(v) for k, v in (params or {}).items()}
            subset = subset_query(query, values, self.base_iri, self.store)
            source, subset_name = construct(self.store, subset), subset.name
        if path is not None and not isinstance(path, (str, os.PathLike)):
            with output_stream(path, gzip) as stream:
                report = export(source, stream, spec.name, graph=graph_iri)
            path.flush()
            return report
        where = Path(path) if path is not None else default_path(
            spec.name, compress=gzip, graph=graph_iri, query=subset_name, base_iri=self.base_iri
        )
        check_destination(where)
        return export_file(source, spec.name, where, compress=gzip, graph=graph_iri)

