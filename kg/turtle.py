"""Turtle and TriG text written straight from sorted N-Triples lines.

N-Triples is a subset of Turtle: every N-Triples term is a valid Turtle term, escapes
included. So grouping the lines of a subject into one statement (`;` between predicates,
`,` between objects), writing `a` for rdf:type, prefixed names for IRIs in a known
namespace and bare numbers and booleans is text work on the lines, several times faster
than parsing them into terms and serialising again. The input comes from Oxigraph's
N-Triples writer, so its shape is fixed: `S P O .` with single spaces, S and P without
spaces, and every line ending in " .\\n".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kg.store import BinaryWriter

_RDF_TYPE = b"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
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
        self.graph: bytes | None = None
        self.subject = b""
        self.block: list[tuple[bytes, bytes]] = []  # the current subject's (predicate, object)
        out.write(b"".join(b"@prefix " + name + b" " + ns + b"> .\n" for ns, name in self.prefixes))

    # -- terms --------------------------------------------------------------------------------
    def iri(self, token: bytes) -> bytes:
        """An N-Triples IRI token as a prefixed name when one reads back the same."""
        if not token.startswith(self.namespaces):
            return token
        name = self.names.get(token)
        if name is None:
            name = token
            for ns, prefix in self.prefixes:
                if token.startswith(ns):
                    local = token[len(ns) : -1]
                    if _LOCAL.match(local):
                        name = prefix + local
                        break
            self.names[token] = name
        return name

    def term(self, token: bytes) -> bytes:
        if token[:1] == b"<":
            return self.iri(token)
        if token[:1] != b'"':
            return token  # a blank node (or an RDF 1.2 triple term, the same in Turtle)
        close = token.rindex(b'"')
        suffix = token[close + 1 :]
        if not suffix.startswith(b"^^"):
            return token  # a plain string or a language-tagged one
        datatype = suffix[2:]
        bare = _BARE.get(datatype)
        lexical = token[1:close]
        if bare is not None and bare.match(lexical):
            return lexical
        return token[: close + 1] + b"^^" + self.iri(datatype)

    # -- statements ---------------------------------------------------------------------------
    def _flush(self) -> list[bytes]:
        """The current subject's statement: rdf:type first, then by predicate, objects by ','."""
        if not self.block:
            return []
        indent = b"\t" if self.graph is not None else b""
        types = [po for po in self.block if po[0] == _RDF_TYPE]
        rest = [po for po in self.block if po[0] != _RDF_TYPE] if types else self.block
        parts = [indent, self.term(self.subject)]
        predicate = b""
        for p, o in (*types, *rest):
            if p == predicate:
                parts += (b" , ", self.term(o))
                continue
            parts.append(b" ;\n\t" + indent if predicate else b" ")
            parts += (b"a" if p == _RDF_TYPE else self.iri(p), b" ", self.term(o))
            predicate = p
        parts.append(b" .\n")
        self.block = []
        return parts

    def write(self, lines: Iterable[bytes], graph: str | None = None) -> None:
        """Add sorted N-Triples lines (a subject's lines together) of `graph`."""
        parts: list[bytes] = []
        name = None if graph is None else f"<{graph}>".encode()
        if name != self.graph:
            parts += self._flush()
            if self.graph is not None:
                parts.append(b"}\n")
            if name is not None:
                parts += (b"\n", name, b" {\n")
            self.graph, self.subject = name, b""
        subject, block = self.subject, self.block
        for line in lines:
            s_end = line.index(b" ")
            p_end = line.index(b" ", s_end + 1)
            s = line[:s_end]
            if s != subject:
                self.block = block
                parts += self._flush()
                block = self.block
                subject = self.subject = s
            block.append((line[s_end + 1 : p_end], line[p_end + 1 : -3]))
        self.block = block
        self.out.write(b"".join(parts))

    def close(self) -> None:
        parts = self._flush()
        if self.graph is not None:
            parts.append(b"}\n")
        self.out.write(b"".join(parts))
