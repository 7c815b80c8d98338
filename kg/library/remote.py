"""Another SPARQL 1.1 endpoint, read as kg reads its own store: ad-hoc SPARQL and the named
queries, their names looked up on that endpoint (`kg sparql --endpoint`, `kg query
--endpoint`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg.config import DEFAULT_BASE_IRI, base_iri_of
from kg.library.base import ParamValue, param_text

if TYPE_CHECKING:
    from kg.query.named import NamedQuery
    from kg.query.remote import Endpoint
    from kg.rdf.results import QueryResult


class RemoteGraph:
    """The SPARQL endpoint at `url`, asked over HTTP with `timeout` seconds per request;
    `base_iri` is the base of kg's IRIs there."""

    def __init__(self, url: str, *, timeout: float = 60.0, base_iri: str | None = None) -> None:
        self.url = url
        self.timeout = timeout
        self.base_iri = base_iri_of(base_iri or DEFAULT_BASE_IRI)
        self._endpoint: Endpoint | None = None

    @property
    def endpoint(self) -> Endpoint:
        if self._endpoint is None:
            from kg.query.remote import Endpoint

            self._endpoint = Endpoint(self.url, timeout=self.timeout)
        return self._endpoint

    def stream(self, text: str, *, limit: int | None = None) -> QueryResult:
        """Run SPARQL there; a SELECT's rows cut at `limit`."""
        from kg.rdf.results import SelectResult

        result = self.endpoint.query(text)
        if limit is not None and isinstance(result, SelectResult):
            result.rows = result.rows[:limit]
        return result

    def prepare(self, name: str | NamedQuery, /, **params: ParamValue) -> str:
        """The named query's SPARQL with `params` bound as VALUES, names looked up on the
        endpoint (as `KnowledgeGraph.prepare` looks them up in the store)."""
        from kg.query.binding import bind_resolved
        from kg.query.named import find_query, with_values

        named = find_query(name) if isinstance(name, str) else name
        values = {k: param_text(v) for k, v in params.items()}
        bindings = bind_resolved(self.endpoint, named, values, self.base_iri)
        return with_values(named.sparql, bindings)
