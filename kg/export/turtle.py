"""Turtle and TriG text written straight from sorted N-Triples lines.

N-Triples is a subset of Turtle: every N-Triples term is a valid Turtle term, escapes
included. So grouping the lines of a subject into one statement (`;` between predicates,
`,` between objects), writing `a` for rdf:type (first), prefixed names for IRIs in a known
namespace and bare numbers and booleans is text work on the lines, several times faster
than parsing them into terms and serialising again. The input comes from Oxigraph's
N-Triples writer, so its shape is fixed: `S P O .` with single spaces, S and P without
spaces, and every line ending in " .\\n".
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kg.rdf.engine import BinaryWriter

_RDF_TYPE = b"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
_TYPE_SP = _RDF_TYPE + b" "
_XSD = "http://www.w3.org/2001/XMLSchema#"
# A conservative PN_LOCAL: what every Turtle parser reads back as the same local name.
_LOCAL = re.compile(rb"[A-Za-z_][A-Za-z0-9_-]*\Z")
_BARE = {
    f"<{_XSD}integer>".encode(): re.compile(rb"[+-]?[0-9]+\Z"),
    f"<{_XSD}decimal>".encode(): re.compile(rb"[+-]?[0-9]*\.[0-9]+\Z"),
    f"<{_XSD}boolean>".encode(): re.compile(rb"(?:true|false)\Z"),
}


class TurtleWriter:
    """Writes one Turtle (or TriG) document from N-Triples lines grouped by subject.

    Call `write(lines, graph)` with each graph's lines in turn (TriG wraps each named graph
    in a block; Turtle takes graph None), then `close()`.
    """

    def __init__(self, out: BinaryWriter, prefixes: Mapping[str, str]) -> None:
        self.out = out
        self.prefixes = [(f"<{ns}".encode(), f"{name}:".encode()) for name, ns in prefixes.items()]
        self.namespaces = tuple(ns for ns, _ in self.prefixes)
        self.names: dict[bytes, bytes] = {}  # IRIs in a known namespace -> prefixed names
        self.predicates: dict[bytes, bytes] = {_RDF_TYPE: b"a"}
        self.datatypes: dict[bytes, bytes] = {}
        self.typed: dict[bytes, bytes] = {}  # short typed literals -> Turtle (bounded)
        self.graph: bytes | None = None
        self.indent = b""
        self.continuation = b" ;\n\t"
        self.subject_sp = b"\0"  # the current subject and a space: never a line's start
        self.block: list[bytes] = []  # the lines of the last subject, which may go on
        out.write(b"".join(b"@prefix " + name + b" " + ns + b"> .\n" for ns, name in self.prefixes))

    # -- terms --------------------------------------------------------------------------------
    def _name(self, token: bytes) -> bytes:
        """An IRI token in a known namespace as a prefixed name, when one reads back the same."""
        name = token
        for ns, prefix in self.prefixes:
            if token.startswith(ns):
                local = token[len(ns) : -1]
                if _LOCAL.match(local):
                    name = prefix + local
                break
        self.names[token] = name
        return name

    def _predicate(self, token: bytes) -> bytes:
        name = self._name(token) if token.startswith(self.namespaces) else token
        self.predicates[token] = name
        return name

    def _typed(self, token: bytes) -> bytes:
        """A typed literal: bare when its datatype allows, else with a prefixed datatype."""
        close = token.rindex(b'"^^<')
        datatype = token[close + 3 :]
        bare = _BARE.get(datatype)
        lexical = token[1:close]
        if bare is not None and bare.match(lexical):
            turtle = lexical
        else:
            name = self.datatypes.get(datatype)
            if name is None:
                name = self.datatypes[datatype] = b"^^" + (
                    self._name(datatype) if datatype.startswith(self.namespaces) else datatype
                )
            turtle = token[: close + 1] + name
        if len(token) < 64 and len(self.typed) < 1 << 16:  # years, flags, counts repeat
            self.typed[token] = turtle
        return turtle

    # -- statements ---------------------------------------------------------------------------
    def _term(self, token: bytes) -> bytes:
        """An object token as Turtle (what `_runs` does inline)."""
        if token[0] == 60:  # '<'
            if token.startswith(self.namespaces):
                return self.names.get(token) or self._name(token)
        elif token[0] == 34 and token[-1] == 62:  # '"...">': a typed literal
            return self._typed(token)
        return token

    def _runs(self, lines: list[bytes], parts: list[bytes], start: bytes) -> bytes:
        """Sorted lines of one subject as `predicate object , object` runs; returns the
        separator for what follows.

        One pass, a few byte operations a line: a line that starts with the last line's
        subject and predicate (and its space: an IRI holds no space) adds an object.
        """
        n = len(self.subject_sp)
        namespaces, predicates, names, typed = (
            self.namespaces,
            self.predicates,
            self.names,
            self.typed,
        )
        continuation = self.continuation
        separator = start
        previous = b"\0"  # the last line's "S P ": never a line's start
        for line in lines:
            if line.startswith(previous):
                o = line[len(previous) : -3]
                parts.append(b" , ")
            else:
                cut = line.index(b" ", n)
                previous = line[: cut + 1]
                predicate = line[n:cut]
                o = line[cut + 1 : -3]
                parts += (separator, predicates.get(predicate) or self._predicate(predicate), b" ")
                separator = continuation
            if o[0] == 60:  # '<' (this is `_term`, inlined: it runs for every line)
                if o.startswith(namespaces):
                    o = names.get(o) or self._name(o)
            elif o[0] == 34 and o[-1] == 62:  # '"...">': a typed literal
                o = typed.get(o) or self._typed(o)
            parts.append(o)
        return separator

    def _statement(self, block: list[bytes], parts: list[bytes]) -> None:
        """One subject's sorted lines as one statement, rdf:type first."""
        subject_sp = self.subject_sp
        subject = subject_sp[:-1]
        if subject[:1] == b"<" and subject.startswith(self.namespaces):
            subject = self.names.get(subject) or self._name(subject)
        parts.append(self.indent + subject)
        typed = subject_sp + _TYPE_SP
        lo = bisect.bisect_left(block, typed)
        hi = lo
        if lo < len(block) and block[lo].startswith(typed):
            hi = lo + 1  # mostly one type; else the run ends where "S rdf:type" does
            if hi < len(block) and block[hi].startswith(typed):
                hi = bisect.bisect_left(block, typed[:-1] + b"!", hi)
        separator = b" "
        if lo < hi:  # the rdf:type lines are one run: write it first, as `a`
            cut = len(subject_sp) + len(_TYPE_SP)
            parts += (b" a ", b" , ".join([self._term(line[cut:-3]) for line in block[lo:hi]]))
            separator = self.continuation
            block = block[:lo] + block[hi:]  # still sorted
        self._runs(block, parts, separator)
        parts.append(b" .\n")

    def write(self, lines: list[bytes], graph: str | None = None) -> None:
        """Add sorted N-Triples lines (a subject's lines together) of `graph`."""
        parts: list[bytes] = []
        name = None if graph is None else f"<{graph}>".encode()
        if name != self.graph:
            if self.block:
                self._statement(self.block, parts)
                self.block = []
            if self.graph is not None:
                parts.append(b"}\n")
            if name is not None:
                parts += (b"\n", name, b" {\n")
            self.graph, self.subject_sp = name, b"\0"
            self.indent = b"\t" if name is not None else b""
            self.continuation = b" ;\n\t" + self.indent
        i, end = 0, len(lines)
        if self.block and end:  # the subject the previous lines ended with may go on here
            if lines[0].startswith(self.subject_sp):
                i = bisect.bisect_left(lines, self.subject_sp[:-1] + b"!")
                self.block = sorted(self.block + lines[:i])  # (the union: from two graphs)
            if i < end:
                self._statement(self.block, parts)
                self.block = []
        while i < end:
            line = lines[i]
            self.subject_sp = line[: line.index(b" ") + 1]
            j = bisect.bisect_left(lines, self.subject_sp[:-1] + b"!", i + 1)
            if j == end:  # may go on in the next lines
                self.block = lines[i:j]
                break
            self._statement(lines[i:j], parts)
            i = j
        self.out.write(b"".join(parts))

    def close(self) -> None:
        parts: list[bytes] = []
        if self.block:
            self._statement(self.block, parts)
            self.block = []
        if self.graph is not None:
            parts.append(b"}\n")
        self.out.write(b"".join(parts))
