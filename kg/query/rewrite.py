"""Parameters into query text: values as SPARQL terms in one-variable VALUES blocks.

Values never enter a query as text: they are serialised here (`sparql_term`), escaped
for SPARQL, into one-variable `VALUES` blocks (Virtuoso fails on a block of several
variables followed by OPTIONAL), opening the WHERE group and each nested group evaluated
on its own (UNION branch, subquery …) that uses the variable, so the value reaches every
part of the query as a substitution would (`with_values`). That text is what a remote
endpoint receives, and by default what the embedded store runs too; pyoxigraph's
`substitutions` are the other local binding (`prepare_local`). `portability_problems`
says why a query may not run alike on every SPARQL 1.1 engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kg.errors import ParameterError
from kg.query.binding import VARIABLE, iri_term
from kg.rdf.engine import select_variables
from kg.rdf.results import Term
from kg.rdf.sparql_scan import located_tokens
from kg.rdf.vocab import XSD_NS

_LANG = re.compile(r"^[A-Za-z]+(?:-[A-Za-z0-9]+)*$")


def sparql_term(term: Term) -> str:
    """A term in SPARQL syntax, safe to place in a VALUES block: its IRIs, language tag and
    datatype are checked, and its string escaped by kg.rdf.terms.escape_string."""
    if term.kind == "uri":
        return iri_term(term.value, "IRI").n3()
    if term.kind != "literal":
        raise ParameterError(f"a {term.kind} cannot be a query parameter")
    if term.lang and not _LANG.match(term.lang):
        raise ParameterError(f"{term.lang!r} is not a language tag")
    if term.datatype:
        iri_term(term.datatype, "datatype")
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
        if not VARIABLE.match(name):
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

