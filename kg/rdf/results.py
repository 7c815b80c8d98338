"""Query results independent of where they came from (the embedded store or an endpoint).

`Term` mirrors the SPARQL 1.1 Query Results JSON term object, so local and remote results
format the same way. Writers for table, JSON, CSV and TSV live here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from typing import Literal as TypingLiteral

from kg.rdf.terms import literal as nt_literal
from kg.rdf.vocab import XSD, shorten

TermKind = TypingLiteral["uri", "literal", "bnode", "triple"]


@dataclass(frozen=True, slots=True)
class Term:
    kind: TermKind
    value: str
    datatype: str | None = None  # absent for xsd:string and language-tagged literals
    lang: str | None = None

    def __reduce__(self) -> tuple[type[Term], tuple[str, str, str | None, str | None]]:
        # Query results cross the server's worker pipes pickled: as the constructor's
        # arguments a term pickles and loads about 3x faster than a slotted dataclass's
        # default (its state as a dict, each field set again on load).
        return (type(self), (self.kind, self.value, self.datatype, self.lang))

    def n3(self) -> str:
        """The term in N-Triples / SPARQL syntax."""
        if self.kind == "uri":
            return f"<{self.value}>"
        if self.kind == "bnode":
            return f"_:{self.value}"
        if self.kind == "triple":
            return f"<< {self.value} >>"
        text = nt_literal(self.value)
        if self.lang:
            return f"{text}@{self.lang}"
        if self.datatype and self.datatype != XSD.string:
            return f"{text}^^<{self.datatype}>"
        return text

    def to_json(self) -> dict[str, str]:
        out = {"type": self.kind, "value": self.value}
        if self.lang:
            out["xml:lang"] = self.lang
        elif self.datatype and self.datatype != XSD.string:
            out["datatype"] = self.datatype
        return out

    @classmethod
    def from_json(cls, obj: dict[str, str]) -> Term:
        kind = obj["type"]
        if kind == "typed-literal":  # SPARQL JSON from older endpoints (Virtuoso)
            kind = "literal"
        return cls(
            kind=kind,  # type: ignore[arg-type]
            value=obj["value"],
            datatype=obj.get("datatype"),
            lang=obj.get("xml:lang"),
        )

    def python(self) -> object:
        """A plain Python value for the term (numbers and booleans typed)."""
        if self.kind == "literal" and self.datatype:
            try:
                if self.datatype in (
                    XSD.integer,
                    f"{XSD.integer[:-7]}int",
                    f"{XSD.integer[:-7]}long",
                ):
                    return int(self.value)
                if self.datatype in (XSD.decimal, XSD.double, f"{XSD.double[:-6]}float"):
                    return float(self.value)
                if self.datatype == XSD.boolean:
                    return self.value in ("true", "1")
            except ValueError:
                return self.value
        return self.value


Row = tuple[Term | None, ...]


def decimal_value(text: str | None) -> Decimal | None:
    """A metric's number as kg compares and ranks it: the literal's value, None for what is
    no finite number (NaN, ±Infinity as `INF`, `-inf` or `Infinity`, text). The one reading
    of a number for the leaderboards and the pages' ranks, so both rank alike.

    >>> decimal_value("78.57"), decimal_value("1.5E2"), decimal_value("1E400") is not None
    (Decimal('78.57'), Decimal('1.5E+2'), True)
    >>> [decimal_value(t) for t in ("NaN", "INF", "-INF", "Infinity", "n/a", None)]
    [None, None, None, None, None, None]
    """
    if text is None:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


@dataclass
class SelectResult:
    variables: list[str]
    rows: list[Row] = field(default_factory=list)

    def term_rows(self) -> list[dict[str, Term]]:
        """Rows as {variable: Term}, unbound variables left out (what pages shape)."""
        return [
            {v: t for v, t in zip(self.variables, row, strict=True) if t is not None}
            for row in self.rows
        ]

    def dicts(self) -> list[dict[str, object]]:
        """Rows as {variable: python value}, unbound variables left out."""
        return [
            {v: t.python() for v, t in zip(self.variables, row, strict=True) if t is not None}
            for row in self.rows
        ]

    def column(self, name: str) -> list[object]:
        i = self.variables.index(name)
        return [row[i].python() if row[i] is not None else None for row in self.rows]  # type: ignore[union-attr]


@dataclass
class SelectStream:
    """A SELECT result whose rows come as the engine yields them (read them once)."""

    variables: list[str]
    rows: Iterator[Row]
    #: Counts the rows not read yet, reading them without building terms (when known).
    count_rest: Callable[[], int] | None = None


@dataclass
class AskResult:
    value: bool

    def term_rows(self) -> list[dict[str, Term]]:
        """No rows (a page that expected a SELECT shows none)."""
        return []


@dataclass
class GraphResult:
    """CONSTRUCT/DESCRIBE output as N-Triples text (one triple per line)."""

    ntriples: str

    def __len__(self) -> int:
        return self.ntriples.count("\n")

    def term_rows(self) -> list[dict[str, Term]]:
        """No rows (a page that expected a SELECT shows none)."""
        return []


QueryResult = SelectResult | AskResult | GraphResult

def compact(term: Term | None, prefixes: Mapping[str, str]) -> str:
    """A short human form: prefixed IRIs, bare literal values."""
    if term is None:
        return ""
    if term.kind == "uri":
        return shorten(term.value, prefixes) or f"<{term.value}>"
    return term.value


class Paged:
    """Paging over one page of a counted result (search hits): which page, how many a page
    holds, how many in all and per class. Subclasses give `page`, `limit`, `total`,
    `counts` and `hits`."""

    page: int
    limit: int
    total: int
    counts: dict[str, int]
    hits: Sequence[object]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.limit))

    @property
    def has_next(self) -> bool:
        return self.page * self.limit < self.total

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def first(self) -> int:
        """The rank of the page's first hit (1-based; 0 when it has none)."""
        return (self.page - 1) * self.limit + 1 if self.hits else 0

    def page_json(self, hits: list[dict[str, Any]]) -> dict[str, Any]:
        """The page's counts and neighbours as JSON, with `hits` as given."""
        return {
            "page": self.page,
            "limit": self.limit,
            "total": self.total,
            "pages": self.pages,
            "counts": self.counts,
            "previous": self.page - 1 if self.has_previous else None,
            "next": self.page + 1 if self.has_next else None,
            "hits": hits,
        }
