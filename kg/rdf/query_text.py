"""Query text as a user writes it: the prefixes kg knows without declarations, and parse
errors worded in one line.

The engine itself applies kg's usual prefixes (`QUERY_PREFIXES`, passed to Oxigraph's
parser by kg.rdf.store), so no second parser decides what a query means. Only a query sent
to another endpoint needs text added: the declarations of the prefixes it uses and does not
declare (`with_declarations`). Both read the text with kg's SPARQL tokeniser, so a `kg:` in a
string, an IRI or a comment is not a use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kg.rdf.sparql_scan import located_tokens
from kg.rdf.vocab import QUERY_PREFIXES

_POSITION = re.compile(r"^error at (\d+):(\d+): (.*)$", re.DOTALL)
#: Longest message part quoted from the engine or the query.
_MAX_DETAIL = 160


def declared_prefixes(sparql: str) -> dict[str, str]:
    """The prefixes a query declares itself (`PREFIX p: <iri>`), in order."""
    toks = located_tokens(sparql)
    found: dict[str, str] = {}
    for i, (kind, value, _) in enumerate(toks):
        if (
            kind == "word"
            and value.upper() == "PREFIX"
            and i + 2 < len(toks)
            and toks[i + 1][0] == "pname"
            and toks[i + 2][0] == "iri"
        ):
            found[toks[i + 1][1].partition(":")[0]] = toks[i + 2][1][1:-1]
    return found


def _used(sparql: str) -> list[tuple[str, int, int]]:
    """(prefix, start, end) of each prefixed name the query uses (not its declarations)."""
    toks = located_tokens(sparql)
    used = []
    for i, (kind, value, start) in enumerate(toks):
        if kind != "pname" or value.startswith("_:"):
            continue
        if i > 0 and toks[i - 1][0] == "word" and toks[i - 1][1].upper() == "PREFIX":
            continue
        used.append((value.partition(":")[0], start, start + len(value)))
    return used


def with_declarations(sparql: str, prefixes: Mapping[str, str] = QUERY_PREFIXES) -> str:
    """The query with a PREFIX line for each of kg's prefixes it uses but does not declare,
    for an endpoint that knows none of them. Its own declarations are left as they are.

    >>> print(with_declarations("SELECT * { ?p a kg:Paper ; rdfs:label 'kg:x' }"))
    PREFIX kg: <https://w3id.org/kg/ontology#>
    PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
    SELECT * { ?p a kg:Paper ; rdfs:label 'kg:x' }
    >>> with_declarations("PREFIX kg: <http://x/> ASK { ?p a kg:Paper }")
    'PREFIX kg: <http://x/> ASK { ?p a kg:Paper }'
    """
    declared = declared_prefixes(sparql)
    missing: dict[str, str] = {}
    for prefix, _, _ in _used(sparql):
        if prefix not in declared and prefix in prefixes and prefix not in missing:
            missing[prefix] = prefixes[prefix]
    if not missing:
        return sparql
    head = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in missing.items())
    return head + sparql


def _offset(sparql: str, line: int, column: int) -> int:
    lines = sparql.split("\n")
    line = min(max(line, 1), len(lines))
    return sum(len(x) + 1 for x in lines[: line - 1]) + max(column - 1, 0)


def _line_column(sparql: str, offset: int) -> tuple[int, int]:
    before = sparql[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _expected(detail: str) -> str:
    """The engine's 'expected one of …' list without its character classes."""
    _, sep, rest = detail.partition("expected one of ")
    if not sep:
        _, sep, rest = detail.partition("expected ")
        if not sep:
            return " ".join(detail.split())[:_MAX_DETAIL]
    items = [i.strip() for i in re.split(r",\s*(?![^\[]*\])", rest)]
    words = [i for i in items if i and not i.startswith("[") and i != "Prefix not found"]
    if not words:
        return "unexpected text"
    shown = ", ".join(words[:12]) + (", …" if len(words) > 12 else "")
    return f"expected {'one of ' if len(words) > 1 else ''}{shown}"


def syntax_message(
    sparql: str, error: str, prefixes: Mapping[str, str] = QUERY_PREFIXES
) -> str:
    """The engine's parse error as one line: what is wrong and where (line and column).

    >>> syntax_message("SELECT * { ?p a foo:Paper }", "error at 1:26: expected Prefix not found")
    ... # doctest: +ELLIPSIS
    "unknown prefix 'foo:' at line 1, column 17; kg knows kg:, dcterms:, ...; declare it ..."
    """
    match = _POSITION.match(error.strip())
    line = column = 0
    detail = error
    if match:
        line, column, detail = int(match.group(1)), int(match.group(2)), match.group(3)
    known = {**prefixes, **declared_prefixes(sparql)}
    unknown = [(p, s, e) for p, s, e in _used(sparql) if p not in known]
    if unknown and (not match or "Prefix not found" in detail):
        at = _offset(sparql, line, column) if match else len(sparql)
        before = [u for u in unknown if u[1] <= at] or unknown
        prefix, start, _ = before[-1]
        ln, col = _line_column(sparql, start)
        names = ", ".join(f"{p}:" for p in prefixes)
        return (
            f"unknown prefix '{prefix}:' at line {ln}, column {col}; kg knows {names}; "
            f"declare it with PREFIX {prefix}: <…>"
        )
    if not match:
        return "the query does not parse: " + " ".join(error.split())[:_MAX_DETAIL]
    at = _offset(sparql, line, column)
    misspelt = _misspelt_keyword(sparql, at, detail)
    if misspelt is not None:
        word, start, keyword = misspelt
        ln, col = _line_column(sparql, start)
        return (
            f"the query does not parse at line {ln}, column {col}: {word!r} is no SPARQL "
            f"keyword; did you mean {keyword}?"
        )
    near = " ".join(sparql[at : at + 30].split())
    where = f"near {near!r}" if near else "at the end of the query"
    return (
        f"the query does not parse at line {line}, column {column} ({where}): "
        f"{_expected(detail)}"
    )


#: The words a query (or update) opens with, after its PREFIX and BASE declarations.
_FORMS = ("SELECT", "CONSTRUCT", "DESCRIBE", "ASK", "INSERT", "DELETE", "LOAD", "CLEAR",
          "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH")
_KEYWORDS = (*_FORMS, "WHERE", "DISTINCT", "REDUCED", "FROM", "NAMED", "OPTIONAL", "FILTER",
             "UNION", "MINUS", "GRAPH", "SERVICE", "BIND", "VALUES", "ORDER", "GROUP", "BY",
             "HAVING", "LIMIT", "OFFSET", "ASC", "DESC", "DATA", "PREFIX", "BASE", "EXISTS",
             "NOT", "AS", "SILENT", "INTO", "USING", "DEFAULT", "ALL", "UNDEF")


def _misspelt_keyword(sparql: str, at: int, detail: str) -> tuple[str, int, str] | None:
    """(word, where it starts, the keyword it looks like) when the parse error comes from a
    misspelt keyword: the query's first word is no query form (`SELEC ?p WHERE …`), or the
    word just before the error looks like a keyword the engine expected there."""
    import difflib

    toks = located_tokens(sparql)
    i = 0
    while i < len(toks) and toks[i][0] == "word" and toks[i][1].upper() in ("PREFIX", "BASE"):
        i += 3 if toks[i][1].upper() == "PREFIX" else 2
    if i < len(toks) and toks[i][0] == "word" and toks[i][1].upper() not in _FORMS:
        close = difflib.get_close_matches(toks[i][1].upper(), _FORMS, n=1, cutoff=0.6)
        if close:
            return toks[i][1], toks[i][2], close[0]
    before = [t for t in toks if t[2] < at]
    if before and before[-1][0] == "word" and before[-1][1].upper() not in _KEYWORDS:
        expected = [w for w in re.findall(r"[A-Za-z]+", _expected(detail)) if w.isupper()]
        close = difflib.get_close_matches(before[-1][1].upper(), expected or _KEYWORDS, n=1,
                                          cutoff=0.75)
        if close:
            return before[-1][1], before[-1][2], close[0]
    return None
