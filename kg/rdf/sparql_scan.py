"""What a SPARQL request is, read from its tokens: query form, update, SERVICE and LOAD targets.

The server must refuse updates on its read-only endpoint and federated `SERVICE` calls (and
`LOAD`s) to hosts it was not told to trust, before anything runs. A substring test is easy
to fool (`# SERVICE` in a comment, `"SERVICE"` in a string, `ex:SERVICE` as a name), so this
module tokenises the text the way the SPARQL grammar does: comments, strings, IRIs,
variables and prefixed names are single tokens, and only a bare word is a keyword.
Prefixed names are resolved against the request's PREFIX and BASE declarations, so a
target written `e:sparql` is checked by its real host.

SPARQL 1.1 says `\\uXXXX` escapes are processed before parsing; Oxigraph does not do that for
keywords, but another reading of the text could. The text is therefore scanned twice, as
given and with escapes processed, and the findings are merged: whatever either reading
sees counts (fail closed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from kg.errors import ForbiddenError
from kg.rdf.vocab import QUERY_PREFIXES

QUERY_FORMS = frozenset({"SELECT", "ASK", "CONSTRUCT", "DESCRIBE"})
UPDATE_KEYWORDS = frozenset(
    {"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"}
)

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<string>\"\"\"(?:(?:\"|\"\")?(?:[^"\\]|\\.))*(?:\"\"\"|\Z)
             |'''(?:(?:'|'')?(?:[^'\\]|\\.))*(?:'''|\Z)
             |"(?:[^"\\\n\r]|\\.)*(?:"|\Z)
             |'(?:[^'\\\n\r]|\\.)*(?:'|\Z))
  | (?P<var>[?$][^\W][\w\u00b7\u0300-\u036f\u203f-\u2040]*)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<pname>(?:[^\W\d][\w\-.\u00b7]*)?:(?:[\w\-.:%\u00b7]|\\[^\s])*)
  | (?P<word>[^\W\d][\w\-]*)
  | (?P<number>\d[\w.+\-]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


@dataclass(frozen=True)
class Target:
    """Where a SERVICE or LOAD points: the resolved IRI, or None when it cannot be known."""

    iri: str | None

    @property
    def host(self) -> str | None:
        if self.iri is None:
            return None
        try:
            return urlsplit(self.iri).hostname
        except ValueError:
            return None


@dataclass(frozen=True)
class Shape:
    """What a SPARQL request is, as far as the endpoint needs to know before running it."""

    form: str | None  # SELECT, ASK, CONSTRUCT, DESCRIBE; None for updates or unreadable text
    is_update: bool
    services: tuple[Target, ...] = field(default=())
    loads: tuple[Target, ...] = field(default=())
    has_dataset: bool = False  # FROM / FROM NAMED in a query, USING in an update

    @property
    def is_graph_query(self) -> bool:
        return self.form in ("CONSTRUCT", "DESCRIBE")


def unescape_codepoints(text: str) -> str:
    r"""Process `\uXXXX` and `\UXXXXXXXX` escapes, as SPARQL 1.1 (section 19.2) describes.

    >>> unescape_codepoints(r"\u0053ERVICE")
    'SERVICE'
    """

    def one(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"

    return _UNICODE_ESCAPE.sub(one, text)


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens, without whitespace and comments.

    >>> tokens('SELECT * { ?s ?p "# SERVICE" } # SERVICE <x>')
    [('word', 'SELECT'), ('other', '*'), ('other', '{'), ('var', '?s'), ('var', '?p'), \
('string', '"# SERVICE"'), ('other', '}')]
    """
    return [(kind, value) for kind, value, _ in located_tokens(text)]


def located_tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) tokens, without whitespace and comments."""
    out: list[tuple[str, str, int]] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        assert kind is not None
        if kind in ("ws", "comment"):
            continue
        value = match.group(0)
        if kind == "pname":
            value = value.rstrip(".")  # a local name cannot end with '.': it ends a triple
        out.append((kind, value, match.start()))
    return out


def _resolve(kind: str, value: str, prefixes: dict[str, str], base: str) -> str | None:
    if kind == "iri":
        inner = value[1:-1]
        return urljoin(base, inner) if base else inner
    if kind == "pname":
        prefix, _, local = value.partition(":")
        ns = prefixes.get(prefix)
        return None if ns is None else ns + local.replace("\\", "")
    return None


def _scan(text: str) -> Shape:
    toks = tokens(text)
    prefixes: dict[str, str] = dict(QUERY_PREFIXES)  # as the engine reads the query
    base = ""
    form: str | None = None
    first: str | None = None
    services: list[Target] = []
    loads: list[Target] = []
    has_dataset = False
    i, n = 0, len(toks)
    while i < n:
        kind, value = toks[i]
        word = value.upper() if kind == "word" else ""
        after = toks[i + 1] if i + 1 < n else ("", "")
        if word == "BASE" and after[0] == "iri":
            base = _resolve("iri", after[1], prefixes, base) or ""
            i += 2
            continue
        if word == "PREFIX" and after[0] == "pname" and i + 2 < n and toks[i + 2][0] == "iri":
            prefixes[after[1].partition(":")[0]] = (
                _resolve("iri", toks[i + 2][1], prefixes, base) or ""
            )
            i += 3
            continue
        if word and first is None:
            first = word
        if word in ("SERVICE", "LOAD"):
            j = i + 1
            if j < n and toks[j][0] == "word" and toks[j][1].upper() == "SILENT":
                j += 1
            target = Target(_resolve(*toks[j], prefixes, base) if j < n else None)
            (services if word == "SERVICE" else loads).append(target)
        elif word in ("FROM", "USING"):
            has_dataset = True
        i += 1
    if first in QUERY_FORMS:
        form = first
    return Shape(
        form=form,
        is_update=first in UPDATE_KEYWORDS,
        services=tuple(services),
        loads=tuple(loads),
        has_dataset=has_dataset,
    )


def scan(text: str) -> Shape:
    """The shape of a SPARQL query or update, from the text as given and with escapes processed.

    >>> scan("PREFIX e: <http://evil.example/> SELECT * { SERVICE e:sparql { ?s ?p ?o } }")
    ... # doctest: +ELLIPSIS
    Shape(form='SELECT', is_update=False, services=(Target(iri='http://evil.example/sparql'),)...
    >>> scan('SELECT * { ?s ?p "SERVICE <http://x/>" } # SERVICE <http://x/>').services
    ()
    >>> scan("INSERT DATA { <a:b> <a:c> <a:d> }").is_update
    True
    """
    raw = _scan(text)
    unescaped_text = unescape_codepoints(text)
    if unescaped_text == text:
        return raw
    other = _scan(unescaped_text)
    return Shape(
        form=raw.form or other.form,
        is_update=raw.is_update or other.is_update,
        services=raw.services + tuple(t for t in other.services if t not in raw.services),
        loads=raw.loads + tuple(t for t in other.loads if t not in raw.loads),
        has_dataset=raw.has_dataset or other.has_dataset,
    )


def host_allowed(target: Target, allowed: frozenset[str]) -> bool:
    """Whether a SERVICE/LOAD target may be called: an http(s) IRI whose host is listed (or
    any host with `*`). Other schemes (`file:` …) and computed targets never are, except
    computed ones under `*`.

    >>> host_allowed(Target("http://Example.org/sparql"), frozenset({"example.org"}))
    True
    >>> host_allowed(Target(None), frozenset({"example.org"}))
    False
    >>> host_allowed(Target("file:///etc/passwd"), frozenset({"*"}))
    False
    """
    if target.iri is not None and not target.iri.lower().startswith(("http://", "https://")):
        return False
    if "*" in allowed:
        return True
    host = target.host
    return host is not None and host.lower() in allowed


def refuse_outbound(shape: Shape, allowed: frozenset[str], exempt: frozenset[str]) -> None:
    """Raise ForbiddenError for a SERVICE or LOAD the query would send to a host that is not
    `allowed` (`host_allowed`); SERVICE IRIs in `exempt` (kg's own search) stay local.
    Every face that runs a client's SPARQL (`kg serve`, `kg mcp`) checks this before it runs."""

    def refuse(target: Target, what: str) -> None:
        where = target.host or "an endpoint the query computes"
        raise ForbiddenError(
            f"{what} to {where} is refused: this endpoint does not call other hosts "
            "unless started with --allow-service HOST (or '*')"
        )

    for target in shape.services:
        if target.iri not in exempt and not host_allowed(target, allowed):
            refuse(target, "a federated SERVICE call")
    for target in shape.loads:
        if not host_allowed(target, allowed):
            refuse(target, "LOAD")
