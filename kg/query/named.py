"""Named SPARQL queries: `queries/*.rq` files with a grlc-style header, read and run.

A query file starts with a block of `#+ ` lines that, with the prefix taken off, is YAML:

    #+ name: papers-by-author
    #+ summary: One line for `kg query --list`.
    #+ description: |
    #+   What it answers, and how to read the rows.
    #+ params:
    #+   - name: author
    #+     type: iri
    #+     class: author
    #+     required: true
    #+     description: The author, by name or IRI.
    #+     example: Goro Kobayashi
    #+ example: kg query papers-by-author --param "author=Goro Kobayashi"

The rest is SPARQL. A parameter `author` binds the variable `?author`. Values become RDF
terms (kg.query.binding) and never enter the query text as text: kg.query.rewrite places
them in one-variable `VALUES` blocks. That text is what a remote endpoint receives, and by
default what the embedded store runs too. pyoxigraph's `substitutions` are the other local
binding (`binding="substitutions"`), but its planner does not see them: a selective
parameter bound that way ran up to hundreds of times slower than the same VALUES blocks
(docs/performance.md). The tests run every query both ways and compare. A parameter that
is neither given nor defaulted stays unbound, so it matches anything.

This module reads query files and runs them; it also names what kg.query.binding and
kg.query.rewrite offer, for the many callers that take a query's whole API from here.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from kg.errors import InputError, NotFoundError, ParameterError
from kg.ingest.identity import Iris
from kg.query.binding import (
    CLASSES,
    NAME_CLASSES,
    PARAM_TYPES,
    VARIABLE,
    NamedQuery,
    Parameter,
    ParamType,
    bind,
    bind_resolved,
    parse_assignments,
    resolve_values,
    to_term,
)
from kg.query.rewrite import (
    Binding,
    Prepared,
    portability_problems,
    prepare_local,
    sparql_term,
    values_block,
    with_values,
)
from kg.rdf.results import AskResult, GraphResult, QueryResult, SelectStream, Term
from kg.rdf.store import GraphStore
from kg.resources import queries_dir

__all__ = [
    "CLASSES",
    "NAME_CLASSES",
    "PARAM_TYPES",
    "Binding",
    "NamedQuery",
    "ParamType",
    "Parameter",
    "Prepared",
    "bind",
    "bind_resolved",
    "find_query",
    "load_queries",
    "load_query",
    "markdown_list",
    "parse_assignments",
    "parse_query",
    "portability_problems",
    "prepare_local",
    "resolve_values",
    "run_local",
    "run_remote",
    "sparql_term",
    "stream_local",
    "to_term",
    "values_block",
    "with_values",
]

_HEADER_KEYS = {"name", "summary", "description", "params", "example"}
_PARAM_KEYS = {"name", "type", "class", "description", "default", "example", "required"}
_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


# --- parsing query files -------------------------------------------------------------------


def _header_and_body(text: str) -> tuple[str, str]:
    """Split a file into its YAML header (the leading `#+` lines, prefix removed) and SPARQL."""
    lines = text.splitlines(keepends=True)
    header: list[str] = []
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].startswith("#+"):
        content = lines[i][2:]
        header.append(content[1:] if content.startswith(" ") else content)
        i += 1
    return "".join(header), "".join(lines[i:])


def _text(value: Any, where: str, path: Path) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float | dt.date):
        raise InputError(f"{path}: header field {where!r} must be text")
    return str(value).strip()


def _parse_param(raw: Any, index: int, path: Path, body: str) -> Parameter:
    where = f"params[{index}]"
    if not isinstance(raw, dict):
        raise InputError(f"{path}: {where} must be a mapping with name, type, description…")
    unknown = set(raw) - _PARAM_KEYS
    if unknown:
        raise InputError(
            f"{path}: {where} has unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
            f"allowed: {', '.join(sorted(_PARAM_KEYS))}"
        )
    for key in ("name", "type", "description", "example"):
        if raw.get(key) is None:
            raise InputError(f"{path}: {where} needs {key!r}")
    name = _text(raw["name"], f"{where}.name", path)
    if not VARIABLE.match(name):
        raise InputError(f"{path}: parameter name {name!r} must be a SPARQL variable name")
    ptype = _text(raw["type"], f"{where}.type", path)
    if ptype not in PARAM_TYPES:
        raise InputError(
            f"{path}: parameter {name!r} has type {ptype!r}; use one of {', '.join(PARAM_TYPES)}"
        )
    cls = raw.get("class")
    if cls is not None and not (
        (ptype == "iri" and cls in CLASSES) or (ptype == "string" and cls in NAME_CLASSES)
    ):
        raise InputError(
            f"{path}: parameter {name!r}: 'class' is for iri parameters, one of "
            f"{', '.join(CLASSES)}, or for string parameters: {', '.join(NAME_CLASSES)}"
        )
    required = raw.get("required", False)
    if not isinstance(required, bool):
        raise InputError(f"{path}: parameter {name!r}: 'required' must be true or false")
    default = raw.get("default")
    default_text = None if default is None else _yaml_scalar(default, f"{where}.default", path)
    if required and default_text is not None:
        raise InputError(f"{path}: parameter {name!r} is required, so it cannot have a default")
    if not re.search(rf"[?$]{re.escape(name)}\b", body):
        raise InputError(f"{path}: parameter {name!r} binds ?{name}, which the query never uses")
    param = Parameter(
        name=name,
        type=ptype,  # type: ignore[arg-type]
        description=_text(raw["description"], f"{where}.description", path),
        example=_yaml_scalar(raw["example"], f"{where}.example", path),
        required=required,
        default=default_text,
        cls=cls,
    )
    # The declared example and default must themselves be valid values.
    probe = Iris("https://example.org/")
    for label, value in (("example", param.example), ("default", param.default)):
        if value is not None:
            try:
                to_term(param, value, probe)
            except ParameterError as exc:
                message = f"{path}: parameter {name!r}: its {label} is invalid: {exc}"
                raise InputError(message) from None
    return param


def _yaml_scalar(value: Any, where: str, path: Path) -> str:
    """A YAML scalar as the text a user would type (YAML reads `true` and `3` as non-strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return _text(value, where, path)


def parse_query(text: str, path: Path) -> NamedQuery:
    """Parse one query file's text; `path` names it in errors."""
    header_text, body = _header_and_body(text)
    if not header_text.strip():
        raise InputError(f"{path}: no header; start the file with '#+ name:', '#+ summary:' …")
    try:
        header = yaml.safe_load(header_text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: the #+ header is not valid YAML: {exc}") from None
    if not isinstance(header, dict):
        raise InputError(f"{path}: the #+ header must be 'key: value' lines")
    missing = _HEADER_KEYS - set(header)
    if missing:
        raise InputError(f"{path}: the header lacks {', '.join(sorted(missing))}")
    unknown = set(header) - _HEADER_KEYS
    if unknown:
        raise InputError(
            f"{path}: the header has unknown key(s) {', '.join(sorted(map(str, unknown)))}"
        )
    name = _text(header["name"], "name", path)
    if not _NAME.match(name):
        raise InputError(f"{path}: query name {name!r} must be lowercase words joined by '-'")
    raw_params = header["params"] or []
    if not isinstance(raw_params, list):
        raise InputError(f"{path}: 'params' must be a list (use [] for none)")
    if not body.strip():
        raise InputError(f"{path}: the file holds a header but no SPARQL")
    params = tuple(_parse_param(p, i, path, body) for i, p in enumerate(raw_params))
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise InputError(f"{path}: a parameter is declared twice")
    return NamedQuery(
        name=name,
        summary=_text(header["summary"], "summary", path),
        description=_text(header["description"], "description", path),
        example=_text(header["example"], "example", path),
        params=params,
        sparql=body,
        path=path,
    )


def load_query(path: Path) -> NamedQuery:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the query file: {exc}") from None
    return _parsed(text, path)


@functools.lru_cache(maxsize=512)
def _parsed(text: str, path: Path) -> NamedQuery:
    """`parse_query`, once per text and path: the files are read each time (an edit shows at
    once) but their YAML headers parsed once (all of queries/ took 20 ms, and a leaderboard
    page or feed, `kg query` and the server's query list each read them all)."""
    return parse_query(text, path)


def load_queries(directory: Path | None = None) -> dict[str, NamedQuery]:
    """Every `*.rq` in the directory (default: kg's `queries/`), by name, sorted."""
    root = queries_dir() if directory is None else directory
    if not root.is_dir():
        raise NotFoundError(
            f"no query directory at {root}; point {{parameter}} at one", parameter="queries"
        )
    out: dict[str, NamedQuery] = {}
    for path in sorted(root.glob("*.rq"), key=lambda p: p.stem):  # "a" before "a-b"
        query = load_query(path)
        if query.name in out:
            raise InputError(f"{path}: query name {query.name!r} is also used by another file")
        out[query.name] = query
    return out


def find_query(name: str, directory: Path | None = None) -> NamedQuery:
    queries = load_queries(directory)
    if name not in queries:
        close = [n for n in queries if name in n or n in name]
        hint = f"did you mean {', '.join(close)}?" if close else "run `kg query --list` for all"
        raise NotFoundError(f"no query named {name!r}; {hint}")
    return queries[name]



# --- running ------------------------------------------------------------------------------


def run_local(
    store: GraphStore,
    query: NamedQuery,
    bindings: Mapping[str, Term],
    limit: int | None = None,
    binding: Binding = "values",
) -> QueryResult:
    prepared = prepare_local(query.sparql, bindings, binding)
    return store.query(prepared.sparql, substitutions=prepared.substitutions, limit=limit)


def stream_local(
    store: GraphStore,
    query: NamedQuery,
    bindings: Mapping[str, Term],
    limit: int | None = None,
    binding: Binding = "values",
) -> SelectStream | AskResult | GraphResult:
    """`run_local`, a SELECT's rows read as the engine yields them (at most `limit`)."""
    prepared = prepare_local(query.sparql, bindings, binding)
    result = store.stream(prepared.sparql, substitutions=prepared.substitutions)
    if limit is not None and isinstance(result, SelectStream):
        result.rows = itertools.islice(result.rows, limit)
    return result


def run_remote(
    url: str, query: NamedQuery, bindings: Mapping[str, Term], timeout: float = 60.0
) -> QueryResult:
    from kg.query.remote import Endpoint

    return Endpoint(url, timeout=timeout).query(with_values(query.sparql, bindings))


# --- docs ----------------------------------------------------------------------------------


def markdown_list(queries: Iterable[NamedQuery]) -> str:
    """The README's list of queries, generated from their headers."""
    lines = ["| query | what it answers | parameters |", "| --- | --- | --- |"]
    for q in queries:
        params = "<br>".join(f"`{p.name}` ({p.describe()})" for p in q.params) or "none"
        summary = q.summary.replace("|", "\\|")
        lines.append(f"| `{q.name}` | {summary} | {params} |")
    return "\n".join(lines) + "\n"
