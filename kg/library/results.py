"""The library's own result types: plain, typed, printable (no numeric library needed).

The other results the library returns are the layers' own dataclasses (`SimilarResult`,
`SharedResult`, `Leaderboard`, `Stats`, …); `kg/__init__.py` lists them all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, overload

from kg.rdf.results import Paged

if TYPE_CHECKING:
    from kg.rdf.results import QueryResult, SelectStream


def plain_json(value: Any) -> Any:
    """`value` with every float JSON has no number for (±Infinity, NaN) turned into None.

    >>> plain_json({"a": [1.5, float("inf")], "b": float("nan")})
    {'a': [1.5, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value


def json_text(value: Any, *, indent: int | None = None, ascii_only: bool = False) -> str:
    """`value` as standard JSON (RFC 8259), the one way every face writes JSON: a number
    beyond float range or not a number is `null`, never the `Infinity` or `NaN` that
    Python's json module writes and no JSON parser has to accept.

    >>> json_text([float("-inf"), 2])
    '[null, 2]'
    """
    return json.dumps(plain_json(value), indent=indent, ensure_ascii=ascii_only, allow_nan=False)


#: How many rows a result shows when printed.
SHOWN_ROWS = 5


def write_answer(result: QueryResult | SelectStream, fmt: str, out: IO[bytes]) -> int | None:
    """A query's answer written to the binary stream `out` in `fmt`, as every face writes
    one: a SELECT's rows batch by batch as they come, through kg's one results writer
    (json, xml, csv, tsv; json and xml end with a newline); an ASK in a results format; a
    CONSTRUCT or DESCRIBE in an RDF format (Turtle with kg's prefixes), ending with a
    newline. Returns the number of SELECT rows, None for other results.

    >>> import io
    >>> from kg.rdf.results import AskResult
    >>> out = io.BytesIO()
    >>> write_answer(AskResult(True), "csv", out), out.getvalue()
    (None, b'true\\n')
    """
    from kg.rdf.results import AskResult, GraphResult

    if isinstance(result, GraphResult | AskResult):
        if isinstance(result, GraphResult):
            from kg.export.rdfio import graph_text

            text = graph_text(result.ntriples, fmt)
        else:
            from kg.rdf.engine import serialize_results

            text = serialize_results(result, fmt).decode("utf-8")
        out.write((text if text.endswith("\n") else text + "\n").encode("utf-8"))
        out.flush()
        return None
    from kg.rdf.stream import write_results

    n = write_results(result.variables, result.rows, fmt, out)
    if fmt in ("json", "xml"):
        out.write(b"\n")
        out.flush()
    return n


@dataclass(frozen=True)
class SparqlResult(Sequence[dict[str, object]]):
    """A SPARQL result: for SELECT, the rows as {variable: value} dicts (unbound variables
    left out; IRIs and plain literals as `str`, typed numbers as `int`/`float`, booleans as
    `bool`); for ASK, `boolean`; for CONSTRUCT and DESCRIBE, `ntriples` (N-Triples text).

    It is a sequence of its rows, so `len(result)`, `result[0]` and `for row in result`
    work; `bool(result)` is an ASK's answer, else whether there are rows.
    """

    form: str  # SELECT, ASK or CONSTRUCT (DESCRIBE results come as CONSTRUCT)
    variables: tuple[str, ...] = ()
    rows: tuple[dict[str, object], ...] = ()
    boolean: bool | None = None
    ntriples: str | None = None

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> dict[str, object]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[dict[str, object]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, object] | Sequence[dict[str, object]]:
        return self.rows[index]

    def __iter__(self) -> Iterator[dict[str, object]]:
        return iter(self.rows)

    def __bool__(self) -> bool:
        return self.boolean if self.boolean is not None else bool(self.rows)

    def column(self, name: str) -> list[object]:
        """The values of one variable, row by row (None where unbound)."""
        return [row.get(name) for row in self.rows]

    def __repr__(self) -> str:
        if self.form == "ASK":
            return f"SparqlResult(ASK: {self.boolean})"
        if self.form == "CONSTRUCT":
            n = (self.ntriples or "").count("\n")
            return f"SparqlResult(CONSTRUCT: {n:,} triples)"
        shown = ", ".join(repr(r) for r in self.rows[:SHOWN_ROWS])
        more = f", … {len(self.rows) - SHOWN_ROWS:,} more" if len(self.rows) > SHOWN_ROWS else ""
        rows = f"{len(self.rows):,} row{'' if len(self.rows) == 1 else 's'}"
        return (
            f"SparqlResult({rows} of {', '.join(self.variables)}: "
            f"[{shown}{more}])"
        )


@dataclass(frozen=True)
class SearchHit:
    """One search hit: the thing's IRI, class and label, its score, and a snippet with the
    matched spans (`marks`, [start, end) in `snippet`); papers also carry their year,
    tasks and whether they have code."""

    iri: str
    type: str
    label: str
    score: float
    snippet: str = ""
    marks: tuple[tuple[int, int], ...] = ()
    match: str = "text"  # identifier | name | text: why it ranks where it does
    year: int | None = None
    tasks: tuple[str, ...] = ()
    has_code: bool | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SearchHit:
        return cls(
            iri=str(data["iri"]),
            type=str(data["type"]),
            label=str(data["label"]),
            score=float(data["score"]),
            snippet=str(data.get("snippet") or ""),
            marks=tuple((int(a), int(b)) for a, b in data.get("marks") or ()),
            match=str(data.get("match") or "text"),
            year=data.get("year"),
            tasks=tuple(data.get("tasks") or ()),
            has_code=data.get("has_code"),
        )

    def marked(
        self, left: str = "[", right: str = "]", escape: Callable[[str], str] | None = None
    ) -> str:
        """The snippet with each matched span between `left` and `right` (the rest passed
        through `escape`, when given)."""
        from kg.search.query import mark

        return mark(self.snippet, self.marks, left, right, escape or str)

    def as_dict(self) -> dict[str, Any]:
        """The hit as `kg search --json` prints it."""
        out: dict[str, Any] = {
            "iri": self.iri,
            "type": self.type,
            "label": self.label,
            "score": self.score,
            "snippet": self.snippet,
            "marks": [list(m) for m in self.marks],
            "match": self.match,
        }
        if self.type == "paper" and self.has_code is not None:
            out |= {"year": self.year, "tasks": list(self.tasks), "has_code": self.has_code}
        return out

    def __repr__(self) -> str:
        return f"SearchHit({self.type} {self.label!r} <{self.iri}> score {self.score})"


@dataclass(frozen=True)
class SearchPage(Paged, Sequence[SearchHit]):
    """One page of search hits, best first, with how many there are in all and per class.

    It is a sequence of its hits (`page[0]`, `for hit in page`)."""

    query: str
    type: str | None
    page: int
    limit: int
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    hits: tuple[SearchHit, ...] = ()

    def __len__(self) -> int:
        return len(self.hits)

    @overload
    def __getitem__(self, index: int) -> SearchHit: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SearchHit]: ...
    def __getitem__(self, index: int | slice) -> SearchHit | Sequence[SearchHit]:
        return self.hits[index]

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def as_dict(self) -> dict[str, Any]:
        """The page as `kg search --json` prints it."""
        hits = [h.as_dict() for h in self.hits]
        return {"query": self.query, "type": self.type, **self.page_json(hits)}

    def __repr__(self) -> str:
        shown = "".join(f"\n  {h!r}" for h in self.hits)
        if not self.hits:
            return f"SearchPage({self.query!r}: no hits on page {self.page} of {self.total:,})"
        return (
            f"SearchPage({self.query!r}: hits {self.first}–{self.first + len(self.hits) - 1} "
            f"of {self.total:,}, page {self.page} of {self.pages}){shown}"
        )


@dataclass(frozen=True)
class CommunityTerm:
    """An item that characterises a community: `papers` of the community have it, of
    `overall` papers in all; `lift` is how much likelier it is inside than overall."""

    iri: str
    label: str
    relation: str
    papers: int
    overall: int
    lift: float


@dataclass(frozen=True)
class CommunityMember:
    """A central member of a community, by PageRank."""

    iri: str
    label: str
    pagerank: float


@dataclass(frozen=True)
class Community:
    """One Louvain community: its size, the papers behind it, the items that name it and
    its most central members."""

    rank: int
    size: int
    papers: int
    name: str  # its terms' labels joined by " · " ("" when none stands out)
    terms: tuple[CommunityTerm, ...] = ()
    central: tuple[CommunityMember, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "size": self.size,
            "papers": self.papers,
            "name": self.name,
            "terms": [
                {
                    "iri": t.iri,
                    "label": t.label,
                    "relation": t.relation,
                    "papers": t.papers,
                    "overall": t.overall,
                    "lift": t.lift,
                }
                for t in self.terms
            ],
            "central": [
                {"iri": m.iri, "label": m.label, "pagerank": m.pagerank} for m in self.central
            ],
        }


@dataclass(frozen=True)
class Communities:
    """The Louvain communities of a projection: counts, and the largest ones described."""

    kind: str
    nodes: int
    edges: int
    components: int
    communities: int
    single_member_communities: int
    seed: int
    top: tuple[Community, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """As `kg communities --json` prints it."""
        return {
            "kind": self.kind,
            "nodes": self.nodes,
            "edges": self.edges,
            "components": self.components,
            "communities": self.communities,
            "single_member_communities": self.single_member_communities,
            "top": [c.as_dict() for c in self.top],
        }

    def __repr__(self) -> str:
        lines = [
            f"Communities({self.kind}: {self.nodes:,} nodes, {self.edges:,} edges, "
            f"{self.communities:,} communities, seed {self.seed})"
        ]
        for c in self.top:
            name = c.name or "(no characteristic items)"
            lines.append(f"  {c.rank:>3}. {c.size:,} members, {c.papers:,} papers: {name}")
        return "\n".join(lines)
