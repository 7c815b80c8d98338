"""The graph out of a `KnowledgeGraph`: exports in every RDF format, the VoID description,
SHACL validation, and a push to another store."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from kg.errors import UsageError
from kg.library.base import GraphBase, ParamValue, param_text

if TYPE_CHECKING:
    from kg.export.exporter import ExportReport
    from kg.export.push import PushReport
    from kg.export.validate import ValidationReport
    from kg.export.void import VoidDescription


class Exports(GraphBase):
    """The graph out: exports, VoID, validation, push."""

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


    def void(
        self,
        *,
        dumps: Sequence[str] | None = None,
        dumps_url: str | None = None,
        sparql_endpoint: str | None = None,
        exports: str | os.PathLike[str] | None = None,
    ) -> VoidDescription:
        """The dataset's VoID description (`kg void`): triples, entities per class,
        properties, vocabularies, example resources, dump locations and licence; its counts
        match `stats`. `dumps` are the dump URLs to list (void:dataDump); by default the
        kg.* exports found in `exports` (default: exports/), under `dumps_url` (default:
        <base IRI>dumps/). `serialize(format)` gives it as bytes.

        >>> d = g.void(dumps=["https://example.org/kg.nt.gz"])
        >>> d.triples == g.stats().triples, d.dumps
        (True, ['https://example.org/kg.nt.gz'])
        """
        from kg.export.void import describe, dump_files, dump_urls
        from kg.rdf.engine import iri_error
        from kg.resources import exports_dir

        given = [*(dumps or []), *(u for u in (dumps_url, sparql_endpoint) if u is not None)]
        for url in given:
            if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url) or iri_error(url):
                raise UsageError(
                    f"{url!r} is not an absolute URL (like https://example.org/kg.nt.gz)"
                )
        urls = list(dumps or [])
        if not urls:
            found = dump_files(Path(exports) if exports is not None else exports_dir())
            urls = dump_urls(found, dumps_url or f"{self.base_iri}dumps/")
        return describe(self.store, self.base_iri, dumps=urls, sparql_endpoint=sparql_endpoint)

    def validate(self) -> ValidationReport:
        """Check the graph against the SHACL shapes of ontology/shapes.ttl (`kg validate`):
        whether it conforms, and each violation (focus node, path, message, severity).

        >>> report = g.validate()
        >>> report.conforms, len(report.violations)
        (True, 0)
        """
        from kg.export.validate import validate

        return validate(self.store)

    def push(
        self,
        endpoint: str,
        *,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        state_path: str | os.PathLike[str] | None = None,
        chunk_bytes: int = 4096 * 1024,
        retries: int = 5,
        timeout: float = 120.0,
        restart: bool = False,
        on_progress: Callable[[PushReport, int], None] | None = None,
    ) -> PushReport:
        """Send the store to a SPARQL 1.1 Graph Store Protocol `endpoint`, graph by graph
        (`kg push`): each graph replaces the endpoint's graph of that name. `user` and
        `password` (HTTP Basic, or Digest where the server asks for it) or a bearer `token`.
        Which graphs are sent is kept in `state_path` (default: `push_state_path`), so an
        interrupted push resumes; `restart` sends every graph again. `on_progress(report,
        triples)` hears each chunk and graph. A closed port fails before the store is opened.

        >>> g.push("http://127.0.0.1:9/store")
        Traceback (most recent call last):
        ...
        kg.errors.EndpointError: the endpoint http://127.0.0.1:9/store is unreachable ...
        """
        from kg.export.push import PushAuth, check_reachable, push

        auth = PushAuth(user=user, password=password, token=token)
        check_reachable(endpoint)  # a closed port fails before the store is opened
        return push(
            self.store,
            endpoint,
            state_path=Path(state_path) if state_path else push_state_path(self.path, endpoint),
            auth=auth,
            chunk_bytes=chunk_bytes,
            retries=retries,
            timeout=timeout,
            restart=restart,
            on_progress=on_progress,
        )


def push_state_path(store: Path | None, endpoint: str) -> Path:
    """Where a push of the store at `store` (None: a memory store) to `endpoint` records its
    progress: beside the store, one file per endpoint."""
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", endpoint.split("://", 1)[-1]).strip("_")[:120]
    if store is None:
        return Path(f"kg-push-{slug}.state")
    return store.parent / f"{store.name}.push" / f"{slug}.state"


def save(data: bytes, path: str | os.PathLike[str]) -> Path:
    """Write `data` to the file `path` whole or not at all (beside it first, then moved in
    place); a directory is refused. Returns the path written."""
    from kg.export.exporter import check_destination

    where = Path(path)
    check_destination(where)
    where.parent.mkdir(parents=True, exist_ok=True)
    partial = where.with_name(f".{where.name}.part")
    partial.write_bytes(data)
    partial.replace(where)
    return where
