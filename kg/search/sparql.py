"""Search inside SPARQL: a SERVICE-style block that kg evaluates before the engine runs.

    PREFIX kgs: <https://w3id.org/kg/search#>
    SELECT ?paper ?score WHERE {
      SERVICE <https://w3id.org/kg/search> {
        [] kgs:query "graph neural network" ; kgs:type "paper" ; kgs:limit 100 ;
           kgs:hit ?paper ; kgs:score ?score .
      }
      ?paper kg:usesMethod <https://w3id.org/kg/id/method/gcn> .
    } ORDER BY DESC(?score)

The block is found with kg's SPARQL tokeniser (kg.rdf.sparql_scan: comments, strings and
IRIs are single tokens, prefixed names resolve against the query's PREFIX/BASE), the search
runs, and the block's text is replaced by a VALUES block of the hits: `VALUES (?paper
?score) { (<iri> 12.5e0) … }`. The search text is read from the string token (or from a
named query's parameter) and is only ever data: nothing of it reaches the query text. Hit
IRIs and labels are written with kg's term escaper. pyoxigraph would otherwise run the
SERVICE itself, over HTTP, so a kg search block that cannot be read is an error, never
passed on.

Properties of the block (`kgs:` is `https://w3id.org/kg/search#`):

| property | object | meaning |
| --- | --- | --- |
| `kgs:query` | string, or a named query's parameter variable | the search (kg search syntax) |
| `kgs:hit` | variable | bound to each hit's IRI |
| `kgs:score` | variable | its score (xsd:double), higher is better |
| `kgs:label` | variable | its label (title or name) |
| `kgs:type` | string or class | only hits of this class (`"paper"` or `kg:Paper`, `"method"`, …) |
| `kgs:limit` | integer | at most this many hits (default 100) |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from kg.errors import QuerySyntaxError, QueryTooComplexError
from kg.rdf.results import Term
from kg.rdf.sparql_scan import located_tokens, unescape_codepoints
from kg.rdf.terms import literal, safe_iri, typed
from kg.rdf.vocab import QUERY_PREFIXES, XSD
from kg.search.documents import CLASSES
from kg.search.query import MAX_LIMIT, Hit

SERVICE_IRI = "https://w3id.org/kg/search"
NS = "https://w3id.org/kg/search#"
DEFAULT_LIMIT = 100
#: At most this many kg search blocks in one query, and this many hits asked by all of them
#: together: both are checked before any search runs (issue 31: 1,500 blocks once took
#: minutes and a gigabyte in the server). The expanded text is also capped as it grows.
MAX_BLOCKS = 64
MAX_TOTAL_HITS = 20_000
MAX_EXPANDED_CHARS = 16 * 1_048_576
_PROPERTIES = ("query", "hit", "score", "label", "type", "limit")
_STRING_ESCAPES = {
    "t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\",
}
_STRING_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_CLASS_NAMES = {iri: name for name, iri in CLASSES.items()}

#: (query text, class or None, limit) -> hits, best first
SearchFn = Callable[[str, str | None, int], list[Hit]]


@dataclass
class Block:
    """One kg search block: where it is in the text, and what it asks."""

    start: int
    end: int
    query: str
    type: str | None
    limit: int
    hit: str | None
    score: str | None
    label: str | None


def _string_value(token: str) -> str:
    """The value of a SPARQL string token (quotes off, escapes processed)."""
    quote = token[:3] if token[:3] in ('"""', "'''") else token[0]
    inner = token[len(quote) : len(token) - len(quote)]
    return _STRING_ESCAPE.sub(lambda m: _STRING_ESCAPES.get(m.group(1), m.group(0)),
                              unescape_codepoints(inner))


def _resolve(kind: str, value: str, prefixes: dict[str, str]) -> str | None:
    value = unescape_codepoints(value)
    if kind == "iri":
        return value[1:-1]
    if kind == "pname":
        prefix, _, local = value.partition(":")
        ns = prefixes.get(prefix)
        return None if ns is None else ns + local.replace("\\", "")
    return None


def _searches(toks: list[tuple[str, str, int]]) -> Iterator[tuple[int, int, dict[str, str]]]:
    """(index of SERVICE, index past its target, prefixes) of each kg search block."""
    prefixes: dict[str, str] = dict(QUERY_PREFIXES)  # as the engine reads the query
    n = len(toks)
    for i, (kind, value, _) in enumerate(toks):
        word = value.upper() if kind == "word" else ""
        if word == "PREFIX" and i + 2 < n and toks[i + 1][0] == "pname" and toks[i + 2][0] == "iri":
            prefixes[toks[i + 1][1].partition(":")[0]] = unescape_codepoints(toks[i + 2][1])[1:-1]
        elif word == "SERVICE":
            j = i + 1
            if j < n and toks[j][0] == "word" and toks[j][1].upper() == "SILENT":
                j += 1
            if j < n and _resolve(toks[j][0], toks[j][1], prefixes) == SERVICE_IRI:
                yield i, j + 1, dict(prefixes)


def _count(sparql: str) -> int:
    return sum(1 for _ in _searches(located_tokens(sparql)))


def uses_search(sparql: str) -> bool:
    """Whether the query holds a kg search block (only kg can run it), in either reading."""
    return bool(_count(sparql) or _count(unescape_codepoints(sparql)))


def find_blocks(sparql: str, bindings: Mapping[str, Term] | None = None) -> list[Block]:
    """The kg search blocks of a query, in text order."""
    toks = located_tokens(sparql)
    return [
        _block(toks, start, k, prefixes, bindings or {})[0]
        for start, k, prefixes in _searches(toks)
    ]


def _block(
    toks: list[tuple[str, str, int]],
    start: int,
    k: int,
    prefixes: dict[str, str],
    bindings: Mapping[str, Term],
) -> tuple[Block, int]:
    def fail(why: str) -> QuerySyntaxError:
        return QuerySyntaxError(f"the kg search block (SERVICE <{SERVICE_IRI}>) {why}")

    if k >= len(toks) or toks[k][1] != "{":
        raise fail("must be followed by { … }")
    k += 1
    local: dict[str, Term] = {}
    while k < len(toks) and toks[k][0] == "word" and toks[k][1].upper() == "VALUES":
        k = _values(toks, k + 1, local, fail)  # a named query's parameters, bound inside
    bindings = {**bindings, **local}
    # the subject: [] or a blank node label
    if k + 1 < len(toks) and toks[k][1] == "[" and toks[k + 1][1] == "]":
        k += 2
    elif k < len(toks) and toks[k][0] == "pname" and toks[k][1].startswith("_:"):
        k += 1
    else:
        raise fail("must start with [] (or a blank node) as its subject")
    found: dict[str, tuple[str, str]] = {}
    while True:
        if k >= len(toks):
            raise fail("is not closed with }")
        if toks[k][1] == "}":
            break
        kind, value, _ = toks[k]
        iri = _resolve(kind, value, prefixes)
        if iri is None or not iri.startswith(NS) or iri[len(NS):] not in _PROPERTIES:
            raise fail(f"has {value!r} where one of kgs:{', kgs:'.join(_PROPERTIES)} "
                       f"(kgs: = <{NS}>) was expected")
        name = iri[len(NS):]
        if name in found:
            raise fail(f"gives kgs:{name} twice")
        if k + 1 >= len(toks):
            raise fail("is not closed with }")
        obj_kind, obj, _ = toks[k + 1]
        found[name] = (obj_kind, obj)
        k += 2
        if k < len(toks) and toks[k][0] == "lang":
            k += 1
        if k < len(toks) and toks[k][1] in (";", "."):
            k += 1
        elif k < len(toks) and toks[k][1] != "}":
            raise fail(f"has {toks[k][1]!r} where ';', '.' or '}}' was expected")
    end = toks[k][2] + 1

    def text_of(name: str) -> str | None:
        if name not in found:
            return None
        kind, value = found[name]
        if name == "type" and kind in ("iri", "pname"):  # a class: kgs:type kg:Paper
            cls = _resolve(kind, value, prefixes)
            if cls not in _CLASS_NAMES:
                raise fail(
                    f"has kgs:type {value}, not one of the classes it searches: "
                    f"{', '.join(f'<{c}>' for c in CLASSES.values())}"
                )
            return _CLASS_NAMES[cls]
        if kind == "string":
            return _string_value(value)
        if kind == "var" and value[1:] in bindings:
            return bindings[value[1:]].value
        raise fail(f"needs a string (or a bound parameter) for kgs:{name}, not {value}")

    def var_of(name: str) -> str | None:
        if name not in found:
            return None
        kind, value = found[name]
        if kind != "var":
            raise fail(f"needs a variable for kgs:{name}, not {value}")
        return value[1:]

    query = text_of("query")
    if query is None:
        raise fail("needs kgs:query with the text to search")
    type_ = text_of("type")
    if type_ is not None and type_ not in CLASSES:
        raise fail(f"has kgs:type {type_!r}; use one of: {', '.join(CLASSES)}")
    limit = DEFAULT_LIMIT
    if "limit" in found:
        raw = text_of("limit") if found["limit"][0] != "number" else found["limit"][1]
        if raw is None or not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
            raise fail(f"needs kgs:limit to be an integer from 1 to {MAX_LIMIT}")
        limit = int(raw)
    hit, score, label = var_of("hit"), var_of("score"), var_of("label")
    if hit is None:
        raise fail("needs kgs:hit ?variable to bind the hits to")
    return Block(toks[start][2], end, query, type_, limit, hit, score, label), k + 1


def _values(
    toks: list[tuple[str, str, int]],
    k: int,
    out: dict[str, Term],
    fail: Callable[[str], QuerySyntaxError],
) -> int:
    """Read a one-row VALUES block (`?v { x }` or `(?a ?b) { (x y) }`) of strings and
    integers into `out`; returns the index past it."""
    names: list[str] = []
    if k < len(toks) and toks[k][0] == "var":
        names, k, wrapped = [toks[k][1][1:]], k + 1, False
    elif k < len(toks) and toks[k][1] == "(":
        k += 1
        while k < len(toks) and toks[k][0] == "var":
            names.append(toks[k][1][1:])
            k += 1
        if k >= len(toks) or toks[k][1] != ")":
            raise fail("has a VALUES block it cannot read")
        k, wrapped = k + 1, True
    else:
        raise fail("has a VALUES block it cannot read")
    if k >= len(toks) or toks[k][1] != "{":
        raise fail("has a VALUES block it cannot read")
    k += 1
    if wrapped:
        if k >= len(toks) or toks[k][1] != "(":
            raise fail("has a VALUES block it cannot read")
        k += 1
    for name in names:
        if k >= len(toks):
            raise fail("has a VALUES block it cannot read")
        kind, value, _ = toks[k]
        if kind == "string":
            out[name] = Term("literal", _string_value(value))
        elif kind == "number" and value.isdigit():
            out[name] = Term("literal", value, XSD.integer)
        elif kind != "word" or value != "UNDEF":
            raise fail(f"can take only strings and integers in its VALUES block, not {value}")
        k += 1
        if k < len(toks) and toks[k][0] == "lang":
            k += 1
        if k + 1 < len(toks) and toks[k][1] == "^" and toks[k + 1][1] == "^":
            k += 3  # a datatype IRI or prefixed name: the lexical form is what counts
    if wrapped:
        if k >= len(toks) or toks[k][1] != ")":
            raise fail("has a VALUES block of more than one row, or one it cannot read")
        k += 1
    if k >= len(toks) or toks[k][1] != "}":
        raise fail("has a VALUES block of more than one row, or one it cannot read")
    return k + 1


def values_block(block: Block, hits: list[Hit]) -> str:
    """The hits as an inline VALUES block over the block's variables."""
    names = [v for v in (block.hit, block.score, block.label) if v is not None]
    rows = []
    for h in hits:
        cells = [f"<{safe_iri(h.iri)}>"]
        if block.score is not None:
            cells.append(typed(repr(float(h.score)), XSD.double))
        if block.label is not None:
            cells.append(literal(h.label))
        rows.append("(" + " ".join(cells) + ")")
    head = " ".join(f"?{v}" for v in names)
    return f"VALUES ({head}) {{ {' '.join(rows)} }}"


def expand(sparql: str, search: SearchFn, bindings: Mapping[str, Term] | None = None) -> str:
    """The query with each kg search block replaced by the VALUES block of its hits.

    A query without such a block comes back unchanged (and `search` is never called).
    """
    if "SERVICE" not in unescape_codepoints(sparql).upper():
        return sparql  # cheap exit: no block can be there
    blocks = find_blocks(sparql, bindings)
    unescaped = unescape_codepoints(sparql)
    if unescaped != sparql and _count(unescaped) > len(blocks):
        # pyoxigraph reads \u escapes in IRIs, so it would call this SERVICE over HTTP
        raise QuerySyntaxError(
            f"write the kg search block's SERVICE <{SERVICE_IRI}> without \\u escapes"
        )
    check_size(blocks)
    parts: list[str] = []
    size, last = 0, 0
    for block in blocks:
        hits = search(block.query, block.type, block.limit)
        values = values_block(block, hits)
        parts += [sparql[last : block.start], values]
        size += block.start - last + len(values)
        last = block.end
        if size > MAX_EXPANDED_CHARS:
            raise QueryTooComplexError(
                f"the kg search blocks expand to more than {MAX_EXPANDED_CHARS:,} characters "
                "of VALUES; ask for fewer hits (kgs:limit)"
            )
    parts.append(sparql[last:])
    return "".join(parts)


def check_size(blocks: list[Block]) -> None:
    """Refuse a query whose search blocks are too many or ask too many hits, before any
    search runs."""
    if len(blocks) > MAX_BLOCKS:
        raise QueryTooComplexError(
            f"the query has {len(blocks):,} kg search blocks (SERVICE <{SERVICE_IRI}>); "
            f"at most {MAX_BLOCKS} are run in one query"
        )
    total = sum(block.limit for block in blocks)
    if total > MAX_TOTAL_HITS:
        raise QueryTooComplexError(
            f"the query's kg search blocks ask for {total:,} hits in all; at most "
            f"{MAX_TOTAL_HITS:,} (lower kgs:limit, or use fewer blocks)"
        )
