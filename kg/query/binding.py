"""The parameters of a named query, and their values bound once as RDF terms.

A value arrives as text (`--param name=value`, a query string, a form). `to_term` reads it
as the parameter's type; an `iri` parameter's text is read by the one resolver,
kg.query.resolve: without a store by its syntax alone (`iri_of`: an IRI, a local key, a
Papers-with-Code URL, an area's abbreviation, a slug), with one (`bind(..., source=...)`)
by a lookup that also takes names and labels. Each value is converted once: the plain
ones first, so a malformed value fails before any lookup.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from kg.errors import Param, ParameterError
from kg.ingest.identity import Iris
from kg.query.resolve import KEY_KINDS, KINDS, METRIC, Source, iri_of, resolve_all
from kg.rdf.results import Term
from kg.rdf.vocab import XSD

ParamType = Literal["iri", "string", "integer", "decimal", "date", "boolean"]
PARAM_TYPES: tuple[str, ...] = ("iri", "string", "integer", "decimal", "date", "boolean")
#: Kinds of kg entity an `iri` parameter may name; each has a local key `<kind>/<…>`.
CLASSES: tuple[str, ...] = (
    "paper",
    "method",
    "task",
    "dataset",
    "author",
    "repository",
    "venue",
    "area",
)
#: The `class:` of a string parameter whose value is a name the store spells one way (the
#: resolver, kg.query.resolve, finds it: `Top-1 Accuracy` is `Top 1 Accuracy`).
NAME_CLASSES: tuple[str, ...] = ("metric",)
#: A SPARQL variable name (what a parameter binds).
VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
# Characters an IRIREF may not hold (SPARQL 1.1 grammar, production [139]).
_IRI_FORBIDDEN = re.compile(r'[\x00-\x20<>"{}|^`\\]')


@dataclass(frozen=True)
class Parameter:
    """One declared parameter of a named query."""

    name: str
    type: ParamType
    description: str
    example: str
    required: bool = False
    default: str | None = None
    cls: str | None = None  # for `iri`: the kind of entity a bare value names

    def describe(self) -> str:
        """A short human description for help and docs."""
        kind = self.cls or ("IRI" if self.type == "iri" else self.type)
        if self.required:
            return f"{kind}, required"
        if self.default is not None:
            return f"{kind}, default {self.default}"
        return f"{kind}, optional"


@dataclass(frozen=True)
class NamedQuery:
    """A parsed query file."""

    name: str
    summary: str
    description: str
    example: str
    params: tuple[Parameter, ...]
    sparql: str  # the file without its header block
    path: Path

    def param(self, name: str) -> Parameter | None:
        return next((p for p in self.params if p.name == name), None)

    def as_json(self) -> dict[str, Any]:
        """The header as JSON (what `kg query --list -f json` and `GET /queries` list)."""
        return {
            "name": self.name,
            "summary": self.summary,
            "description": self.description,
            "params": [
                {
                    "name": p.name,
                    "type": p.type,
                    "class": p.cls,
                    "required": p.required,
                    "default": p.default,
                    "example": p.example,
                    "description": p.description,
                }
                for p in self.params
            ],
            "example": self.example,
        }


# --- parameter values ----------------------------------------------------------------------


def iri_term(value: str, what: str) -> Term:
    bad = _IRI_FORBIDDEN.search(value)
    if bad:
        raise ParameterError(
            f"{what}: {value[:80]!r} is not a valid IRI (it contains {bad.group(0)!r}); "
            "percent-encode that character"
        )
    return Term("uri", value)


def _iri_value(param: Parameter, value: str, iris: Iris) -> Term:
    """An `iri` parameter's text as the IRI its syntax names (kg.query.resolve.iri_of)."""
    what = f"parameter {param.name!r}"
    text = value.strip()
    if not text:
        raise ParameterError(f"{what} is empty; give an IRI or a local key like paper/<slug>")
    iri = iri_of(param.cls, text, iris.base)
    if iri is not None:
        return iri_term(iri, what)
    if param.cls == "repository":
        raise ParameterError(
            f"{what}: {text[:80]!r} is not a repository; give its URL, owner/name for "
            "GitHub, or a local key like repository/github.com/<owner>/<name>"
        )
    raise ParameterError(
        f"{what}: {text[:80]!r} is neither an absolute IRI nor a local key such as "
        f"paper/<slug>; local keys start with one of {', '.join(KEY_KINDS)}"
    )


def to_term(param: Parameter, value: str, iris: Iris) -> Term:
    """The RDF term for a parameter value given as text, or a ParameterError saying why not."""
    what = f"parameter {param.name!r}"
    kind = param.type
    if kind == "iri":
        return _iri_value(param, value, iris)
    if kind == "string":
        return Term("literal", value)
    text = value.strip()
    if kind == "integer":
        if not _INTEGER.match(text):
            raise ParameterError(f"{what} takes an integer such as 3, not {value[:40]!r}")
        return Term("literal", str(int(text)), XSD.integer)
    if kind == "decimal":
        try:
            number = Decimal(text.replace("_", "-"))  # `_` is no digit separator here
        except InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            raise ParameterError(f"{what} takes a decimal number such as 0.5, not {value[:40]!r}")
        lexical = format(number, "f")
        return Term("literal", lexical if "." in lexical else lexical + ".0", XSD.decimal)
    if kind == "date":
        try:
            parsed = dt.date.fromisoformat(text) if len(text) == 10 else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise ParameterError(f"{what} takes a date as YYYY-MM-DD, not {value[:40]!r}")
        return Term("literal", parsed.isoformat(), XSD.date)
    flag = _BOOLEANS.get(text.lower())
    if flag is None:
        raise ParameterError(f"{what} takes true or false, not {value[:40]!r}")
    return Term("literal", "true" if flag else "false", XSD.boolean)


def bind(
    query: NamedQuery,
    values: Mapping[str, str],
    base_iri: str,
    *,
    source: Source | None = None,
) -> dict[str, Term]:
    """Check and convert parameter values: given ones, then defaults. Unset ones stay out.

    With `source`, each given value of a `class:` parameter is looked up there first
    (kg.query.resolve): a name, slug or id becomes the thing's IRI, a metric the name as
    the store spells it. Every value is converted once, the plain ones before any lookup.
    """
    unknown = [k for k in values if query.param(k) is None]
    if unknown:
        known = ", ".join(p.name for p in query.params) or "none"
        raise ParameterError(
            f"query {query.name!r} has no parameter {unknown[0]!r}; its parameters: {known}"
        )
    iris = Iris(base_iri)
    bound: dict[str, Term] = {}
    looked: dict[str, str] = {}  # parameter -> the kind its value is looked up as
    for param in query.params:
        value = values.get(param.name, param.default)
        if value is None:
            if param.required:
                raise ParameterError(
                    f"query {query.name!r} needs {{parameter}}=… "
                    f"({param.describe()}; e.g. {param.name}={param.example})",
                    parameter=Param(param.name, "query"),
                )
            continue
        if source is not None and param.name in values and _looked_up(param):
            looked[param.name] = str(param.cls)
            continue
        bound[param.name] = to_term(param, value, iris)
    if looked and source is not None:
        given = {name: values[name] for name in looked}
        for name, text in resolve_all(source, looked, given, base_iri).items():
            declared = query.param(name)
            assert declared is not None
            bound[name] = to_term(declared, text, iris)
    return {p.name: bound[p.name] for p in query.params if p.name in bound}


def _looked_up(param: Parameter) -> bool:
    return param.cls is not None and (param.cls in KINDS or param.cls == METRIC)


def bind_resolved(
    source: Source, query: NamedQuery, values: Mapping[str, str], base_iri: str
) -> dict[str, Term]:
    """The query's parameters bound as terms, each name, slug or id of a `class:` parameter
    looked up in `source` (`bind` with a source)."""
    return bind(query, values, base_iri, source=source)


def resolve_values(
    source: Source, query: NamedQuery, values: Mapping[str, str], base_iri: str
) -> dict[str, str]:
    """`values` with each value of a query parameter that names a kind of thing (`class:`)
    replaced by that thing's IRI, and each metric by its name as the store spells it, found
    in `source`; other values as given."""
    kinds = {
        name: str(param.cls) for name in values
        if (param := query.param(name)) is not None and _looked_up(param)
    }
    return {**values, **resolve_all(source, kinds, values, base_iri)}


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """`key=value` strings (from `--param`) as a dict; the value may itself hold '='."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParameterError(f"parameter {item[:60]!r} must look like name=value")
        if key in out:
            raise ParameterError("{parameter} is given twice", parameter=Param(key, "query"))
        out[key] = value
    return out

