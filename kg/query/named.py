"""Named SPARQL queries: `queries/*.rq` files with a grlc-style header, bound safely.

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
terms (`kg.rdf.results.Term`) and never enter the query text as text: they are serialised
here, escaped for SPARQL, into one-variable `VALUES` blocks (Virtuoso fails on a block of
several variables followed by OPTIONAL), opening the WHERE group and each nested group
evaluated on its own (UNION branch, subquery …) that uses the
variable, so the value reaches every part of the query as a substitution would. That
text is what a remote endpoint receives, and by default what the embedded store runs too.
pyoxigraph's `substitutions` are the other local binding (`binding="substitutions"`), but
its planner does not see them: a selective parameter bound that way ran up to hundreds of
times slower than the same VALUES blocks (docs/performance.md). The tests run every query
both ways and compare. A parameter that is neither given nor defaulted stays unbound, so
it matches anything.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

import yaml

from kg.errors import InputError, NotFoundError, Param, ParameterError
from kg.ingest.identity import Iris, pwc_slug, repository
from kg.rdf.engine import select_variables
from kg.rdf.results import AskResult, GraphResult, QueryResult, SelectStream, Term
from kg.rdf.sparql_scan import located_tokens
from kg.rdf.store import GraphStore
from kg.rdf.terms import is_absolute_iri, safe_iri
from kg.rdf.vocab import XSD, XSD_NS
from kg.resources import queries_dir

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
_KEY_KINDS = (*CLASSES, "repo-kind", "graph", "collection", "leaderboard", "dump")
_HEADER_KEYS = {"name", "summary", "description", "params", "example"}
_PARAM_KEYS = {"name", "type", "class", "description", "default", "example", "required"}
_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
# Characters an IRIREF may not hold (SPARQL 1.1 grammar, production [139]).
_IRI_FORBIDDEN = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_LANG = re.compile(r"^[A-Za-z]+(?:-[A-Za-z0-9]+)*$")


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
    if not _VARIABLE.match(name):
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


# --- parameter values ----------------------------------------------------------------------


def _iri_term(value: str, what: str) -> Term:
    bad = _IRI_FORBIDDEN.search(value)
    if bad:
        raise ParameterError(
            f"{what}: {value[:80]!r} is not a valid IRI (it contains {bad.group(0)!r}); "
            "percent-encode that character"
        )
    return Term("uri", value)


def _resolve_iri(param: Parameter, value: str, iris: Iris) -> Term:
    what = f"parameter {param.name!r}"
    text = value.strip()
    if not text:
        raise ParameterError(f"{what} is empty; give an IRI or a local key like paper/<slug>")
    if text.startswith(":"):  # the compact form kg's tables print, `:paper/<slug>`
        text = text[1:]
    if is_absolute_iri(text) and not text.startswith(iris.base) and param.cls == "repository":
        ref = repository(text)  # a repository's web URL, such as https://github.com/o/n
        if ref is not None:
            return Term("uri", iris.repository(ref))
    if is_absolute_iri(text):
        return _iri_term(text, what)
    head = text.split("/", 1)[0]
    if head in _KEY_KINDS and "/" in text:
        return _iri_term(safe_iri(iris.base + text), what)
    cls = param.cls
    if cls == "author":
        return Term("uri", iris.author(text))
    if cls == "venue":
        return Term("uri", iris.venue(text))
    if cls == "area":  # areas are named by the slug of their name (docs/dumps.md)
        return Term("uri", iris.area(pwc_slug(text) or text))
    if cls == "repository":
        ref = repository(text)
        if ref is None:
            raise ParameterError(
                f"{what}: {text[:80]!r} is not a repository; give its URL, owner/name for "
                "GitHub, or a local key like repository/github.com/<owner>/<name>"
            )
        return Term("uri", iris.repository(ref))
    if cls in ("paper", "method", "task", "dataset"):
        return Term("uri", getattr(iris, cls)(text))
    raise ParameterError(
        f"{what}: {text[:80]!r} is neither an absolute IRI nor a local key such as "
        f"paper/<slug>; local keys start with one of {', '.join(_KEY_KINDS)}"
    )


def to_term(param: Parameter, value: str, iris: Iris) -> Term:
    """The RDF term for a parameter value given as text, or a ParameterError saying why not."""
    what = f"parameter {param.name!r}"
    kind = param.type
    if kind == "iri":
        return _resolve_iri(param, value, iris)
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


def bind(query: NamedQuery, values: Mapping[str, str], base_iri: str) -> dict[str, Term]:
    """Check and convert parameter values: given ones, then defaults. Unset ones stay out."""
    unknown = [k for k in values if query.param(k) is None]
    if unknown:
        known = ", ".join(p.name for p in query.params) or "none"
        raise ParameterError(
            f"query {query.name!r} has no parameter {unknown[0]!r}; its parameters: {known}"
        )
    iris = Iris(base_iri)
    bound: dict[str, Term] = {}
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
        bound[param.name] = to_term(param, value, iris)
    return bound


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


# --- binding into query text ---------------------------------------------------------------


def sparql_term(term: Term) -> str:
    """A term in SPARQL syntax, safe to place in a VALUES block: its IRIs, language tag and
    datatype are checked, and its string escaped by kg.rdf.terms.escape_string."""
    if term.kind == "uri":
        return _iri_term(term.value, "IRI").n3()
    if term.kind != "literal":
        raise ParameterError(f"a {term.kind} cannot be a query parameter")
    if term.lang and not _LANG.match(term.lang):
        raise ParameterError(f"{term.lang!r} is not a language tag")
    if term.datatype:
        _iri_term(term.datatype, "datatype")
    return term.n3()  # kg.rdf.terms.escape_string writes the string


_FORMS = ("SELECT", "ASK", "DESCRIBE", "CONSTRUCT")


@dataclass(frozen=True)
class _Token:
    kind: str  # "word" (a bare keyword or name), "var", "{", "}"
    text: str  # the word upper-cased, or the variable's name
    at: int
    depth: int  # braces open before it


def _tokens(sparql: str) -> list[_Token]:
    """The braces, bare words and variables of a query (kg.rdf.sparql_scan's tokens: comments,
    strings, IRIs and prefixed names are skipped), with their brace depth."""
    out: list[_Token] = []
    depth = 0
    for kind, text, at in located_tokens(sparql):
        if kind == "other" and text == "{":
            out.append(_Token("{", text, at, depth))
            depth += 1
        elif kind == "other" and text == "}":
            depth -= 1
            out.append(_Token("}", text, at, depth))
        elif kind == "var":
            out.append(_Token("var", text[1:], at, depth))
        elif kind == "word":
            out.append(_Token("word", text.upper(), at, depth))
    return out


def _group_end(tokens: list[_Token], k: int) -> int:
    """The index of the `}` that closes the `{` at tokens[k]."""
    depth = tokens[k].depth
    for j in range(k + 1, len(tokens)):
        if tokens[j].kind == "}" and tokens[j].depth == depth:
            return j
    raise ParameterError("the query's braces do not balance")


def _variables(tokens: list[_Token], start: int, end: int) -> set[str]:
    return {t.text for t in tokens[start:end] if t.kind == "var"}


def _groups(sparql: str) -> list[tuple[int, set[str] | None]]:
    """The graph pattern groups of a query that a VALUES block should open: where each
    opens (text index just past its `{`) and which variables it mentions (None for the
    query's own WHERE group, which takes all).

    Skipped: VALUES data blocks, a CONSTRUCT template, the `{` that wraps a subquery, and
    OPTIONAL and EXISTS groups, which are evaluated against each row of the enclosing group.
    The WHERE group of a subquery counts the variables of the whole subquery, so that one
    used only in its GROUP BY or HAVING is bound there too.
    """
    tokens = _tokens(sparql)
    form = next((t for t in tokens if t.kind == "word" and t.text in _FORMS), None)
    if form is None or form.depth != 0:
        raise ParameterError("cannot find the query form (SELECT, ASK, CONSTRUCT, DESCRIBE)")
    groups: list[tuple[int, set[str] | None]] = []
    scope_of: dict[int, int] = {}  # depth of a subquery's SELECT -> token index of its end
    pending_select: set[int] = set()  # depths where a subquery's SELECT awaits its WHERE
    skip_until = -1
    values_pending = seen_where = False
    for k, tok in enumerate(tokens):
        if k <= skip_until:
            continue
        if tok.kind == "word":
            if tok.text == "VALUES":
                values_pending = True
            elif tok.text == "WHERE" and tok.depth == 0:
                seen_where = True
            elif tok.text == "SELECT" and tok.depth > 0:
                pending_select.add(tok.depth)
            continue
        if tok.kind != "{":
            continue
        if values_pending:  # a VALUES data block
            values_pending = False
            skip_until = _group_end(tokens, k)
            continue
        if tok.depth == 0 and form.text == "CONSTRUCT" and not seen_where:
            skip_until = _group_end(tokens, k)  # the template
            continue
        if tok.depth == 0 and form.text == "CONSTRUCT" and not groups:
            previous = tokens[k - 2] if k >= 2 else None
            if previous is not None and previous.kind == "word" and previous.text == "CONSTRUCT":
                raise ParameterError(
                    "the short form CONSTRUCT WHERE { … } cannot take parameters; "
                    "write CONSTRUCT { template } WHERE { … }"
                )
        end = _group_end(tokens, k)
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        if nxt is not None and nxt.kind == "word" and nxt.text == "SELECT":
            scope_of[tok.depth + 1] = end  # `{ SELECT … }`: the subquery's extent
            continue
        before = tokens[k - 1] if k else None
        if before is not None and before.kind == "word" and before.text in ("OPTIONAL", "EXISTS"):
            # These see the value from the enclosing group already, row by row; a VALUES
            # block inside an OPTIONAL makes Oxigraph evaluate it apart, over everything.
            continue
        if tok.depth == 0:
            if groups:
                raise ParameterError("the query has more than one top-level group")
            groups.append((tok.at + 1, None))
        elif tok.depth in pending_select:  # a subquery's WHERE group
            pending_select.discard(tok.depth)
            groups.append((tok.at + 1, _variables(tokens, k, scope_of.get(tok.depth, end))))
        else:
            groups.append((tok.at + 1, _variables(tokens, k, end)))
    if not groups or groups[0][1] is not None:
        raise ParameterError("cannot find the query's WHERE clause to bind parameters into")
    return groups


def values_block(bindings: Mapping[str, Term]) -> str:
    """One one-variable VALUES block per binding, `VALUES ?v { term }`.

    Never one block of several variables: Virtuoso 7.2's SPARQL compiler fails on such a
    block followed by an OPTIONAL ("SP031 … no SPART_VARR_FIXED"), while every engine takes
    the one-variable blocks, which mean the same (docs/scale-out.md).
    """
    return "\n  ".join(f"VALUES ?{n} {{ {sparql_term(t)} }}" for n, t in bindings.items())


def with_values(sparql: str, bindings: Mapping[str, Term]) -> str:
    """The query with `bindings` as one-row VALUES blocks.

    A block opens the query's WHERE group with every binding, and every nested group that
    is evaluated on its own (a UNION branch, a MINUS, a GRAPH or plain group, a subquery's
    WHERE) and mentions one of the variables gets a block with those. The extra blocks
    change no answer, since the variable already holds that one value, but they give the
    value to each part of the query the way a substitution would: planners use it (a VALUES
    block outside a UNION or a subquery is not pushed into it), and a MINUS or a subquery
    sees it. OPTIONAL and EXISTS groups get none: they already see it, row by row.
    """
    if not bindings:
        return sparql
    for name in bindings:
        if not _VARIABLE.match(name):
            raise ParameterError(f"{name!r} is not a variable name")
    inserts: list[tuple[int, str]] = []
    for at, names in _groups(sparql):
        inner = bindings if names is None else {k: v for k, v in bindings.items() if k in names}
        if inner:
            inserts.append((at, values_block(inner)))
    out = sparql
    for at, block in sorted(inserts, reverse=True):
        out = f"{out[:at]}\n  {block}\n{out[at:]}"
    return out


def portability_problems(sparql: str) -> list[str]:
    """Why `sparql` may not run alike on every SPARQL 1.1 engine; [] when nothing is found.

    Checked: it parses under rdflib's SPARQL 1.1 grammar, a second parser beside Oxigraph's,
    so an extension one engine accepts (Oxigraph's LATERAL, Jena's LET, Virtuoso's
    `DEFINE`) fails; it calls no function by IRI but the XSD casts (no `bif:`, Jena's
    `afn:`/`apf:`, `ofn:`…); and it has no VALUES block of several variables, which
    Virtuoso 7.2 fails on when an OPTIONAL follows (one block per variable means the same).
    """
    from pyparsing import ParseException, ParseResults
    from rdflib.plugins.sparql.parser import parseQuery
    from rdflib.plugins.sparql.parserutils import CompValue

    try:
        tree = parseQuery(sparql)
    except ParseException as exc:
        return [f"not SPARQL 1.1 (rdflib's parser: {exc})"]
    nodes: list[CompValue] = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            nodes.append(node)
            stack.extend(node.values())
        elif isinstance(node, list | tuple | ParseResults):
            stack.extend(node)
    prefixes = {str(n.get("prefix") or ""): str(n["iri"]) for n in nodes if n.name == "PrefixDecl"}
    problems: list[str] = []
    for node in nodes:
        if node.name == "Function":
            iri = node["iri"]
            if isinstance(iri, CompValue):  # a prefixed name
                prefix = str(iri.get("prefix") or "")
                iri = prefixes.get(prefix, prefix + ":") + str(iri.get("localname") or "")
            if not str(iri).startswith(XSD_NS):
                problems.append(f"calls the engine-specific function <{iri}>")
        elif node.name == "InlineData":
            variables = node.get("var")
            if isinstance(variables, list | ParseResults) and len(variables) > 1:
                names = " ".join(f"?{v}" for v in variables)
                problems.append(
                    f"has a VALUES block of several variables ({names}); write one block "
                    "per variable"
                )
    return problems


Binding = Literal["values", "substitutions"]


@dataclass
class Prepared:
    """A query ready to run locally: text plus the substitutions pyoxigraph will make."""

    sparql: str
    substitutions: dict[str, Term] = field(default_factory=dict)


def prepare_local(
    sparql: str, bindings: Mapping[str, Term], binding: Binding = "values"
) -> Prepared:
    """The query with its parameters bound, by a VALUES block or by pyoxigraph substitutions.

    pyoxigraph substitutes only a SELECT's projected variables (any variable of ASK and
    CONSTRUCT), so with `substitutions` the rest still go through a VALUES block.
    """
    if binding == "values":
        return Prepared(with_values(sparql, bindings))
    projected = select_variables(sparql) if bindings else None
    subs = {k: v for k, v in bindings.items() if projected is None or k in projected}
    rest = {k: v for k, v in bindings.items() if k not in subs}
    return Prepared(with_values(sparql, rest), subs)


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
