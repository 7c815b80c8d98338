"""Which text of the graph is searchable, and reading it from the store.

The index is a function of the store: an entity's document is rebuilt from what the store
says about it (the union of all graphs), so text that several sources give (a paper's title
from the evaluation tables, its abstract from a record) lands in one document, and a
document whose text is gone leaves the index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.rdf.terms import safe_iri
from kg.rdf.vocab import KG, PAPER_TO, STD
from kg.search.index import Document
from kg.search.query import Hit
from kg.search.text import DOI_IRI, entity_ids, plain_text

#: Searchable classes: the name used by `--type`, and the class IRI.
CLASSES: dict[str, str] = {
    "paper": KG.Paper[1:-1],
    "method": KG.Method[1:-1],
    "task": KG.Task[1:-1],
    "dataset": KG.Dataset[1:-1],
    "area": KG.Area[1:-1],
    "collection": KG.Collection[1:-1],
    "author": KG.Author[1:-1],
    "repository": KG.Repository[1:-1],
}
_TYPE_OF = {iri: name for name, iri in CLASSES.items()}

#: Text predicates by role: the name (label), other names (alt), prose (body; a description
#: is Markdown, read as plain text), and identifiers (literals; a DOI is an rdfs:seeAlso
#: address at doi.org).
LABEL = (STD.title[1:-1], STD.label[1:-1], STD.foaf_name[1:-1])
ALT = (KG.fullName[1:-1], STD.altLabel[1:-1])
BODY = (STD.abstract[1:-1],)
MARKDOWN = (STD.description[1:-1],)
ARXIV, SLUG, SEE_ALSO = KG.arxivId[1:-1], KG.pwcSlug[1:-1], STD.seeAlso[1:-1]
_ROLE = (
    {p: "label" for p in LABEL} | {p: "alt" for p in ALT} | {p: "body" for p in BODY}
    | {p: "markdown" for p in MARKDOWN} | {ARXIV: "arxiv", SLUG: "slug", SEE_ALSO: "doi"}
)
_LITERAL_ROLES = [p for p in _ROLE if p != SEE_ALSO]
RDF_TYPE = STD.type[1:-1]
#: N-Triples forms, for picking the subjects with text out of a batch's lines.
TEXT_PREDICATES = frozenset(f"<{p}>" for p in _LITERAL_ROLES)
CLASS_OBJECTS = frozenset(f"<{iri}>" for iri in CLASSES.values())

#: Subjects per query when reading a batch's entities back, and characters of IRIs per query
#: (a record may mint IRIs of a million characters: such a one goes in a query of its own).
_CHUNK = 2_000
_CHUNK_CHARS = 200_000
_PREDICATE_LIST = ", ".join(f"<{p}>" for p in _LITERAL_ROLES)
#: Which objects of each predicate are read: literals, and DOI addresses for rdfs:seeAlso.
_DOI_FILTER = f'STRSTARTS(STR(?o), "{DOI_IRI}")'
_OBJECT_FILTER = {p: "isLiteral(?o)" for p in _LITERAL_ROLES} | {SEE_ALSO: _DOI_FILTER}


def _anywhere(pattern: str) -> str:
    """`pattern` in any named graph (binding ?g) or in the default graph itself."""
    return f"{{ GRAPH ?g {{ {pattern} }} }} UNION {{ {pattern} }}"


def _select(store: GraphStore, sparql: str) -> Iterator[tuple[str | None, ...]]:
    # the real default graph, not the union: named graphs are read through GRAPH ?g
    return store.select_values(sparql, union=False)


def _values(subjects: list[str]) -> str:
    return "VALUES ?s { " + " ".join(f"<{safe_iri(s)}>" for s in subjects) + " }"


def _chunks(subjects: list[str]) -> Iterator[list[str]]:
    """`subjects` in runs of at most `_CHUNK` IRIs and `_CHUNK_CHARS` characters (or one IRI)."""
    chunk: list[str] = []
    size = 0
    for s in subjects:
        if chunk and (len(chunk) >= _CHUNK or size + len(s) > _CHUNK_CHARS):
            yield chunk
            chunk, size = [], 0
        chunk.append(s)
        size += len(s)
    if chunk:
        yield chunk


def _documents(
    rows: Iterable[tuple[str | None, ...]], types: dict[str, str]
) -> Iterator[Document]:
    """Documents from (s, p, o, g) rows and each subject's class (subjects of no searchable
    class are skipped); rows of one subject need not be adjacent.

    Every row is read before the first document is made, so what is kept per subject is
    kept small (it is the whole store's text when the index is built whole): only the
    roles a subject has, each graph name once, and a subject's parts let go once its
    document is made."""
    parts: dict[str, dict[str, dict[str, None]]] = {}
    graphs: dict[str, set[str]] = {}
    graph_names: dict[str, str] = {}  # one string per graph name (the entities graph's is in most)
    for s, p, o, g in rows:
        if s is None or p is None or o is None or s not in types:
            continue
        role = _ROLE[p]
        if role == "doi" and not o.startswith(DOI_IRI):
            continue
        parts.setdefault(s, {}).setdefault(role, {})[o.strip()] = None
        if g is not None:
            graphs.setdefault(s, set()).add(graph_names.setdefault(g, g))
    for s in list(parts):
        doc = document(s, types[s], parts.pop(s), graphs.pop(s, set()))
        if doc is not None:
            yield doc


def document(
    s: str, kind: str, roles: dict[str, dict[str, None]], graphs: set[str]
) -> Document | None:
    """The document of `s` from its texts by role (each stripped), or None when it has no
    name and no body. Canonical: the same texts give the same document in any order (the
    index built beside the load reads them in the order they were written, a rebuild in the
    store's order)."""
    labels, alts = roles.get("label", {}), roles.get("alt", {})
    names = sorted(n for n in labels if n) or sorted(n for n in alts if n)
    body = sorted(b for b in roles.get("body", ()) if b)
    body += sorted({t for t in (plain_text(m) for m in roles.get("markdown", ())) if t})
    if not names and not body:
        return None
    label = min(names, key=len) if names else ""
    alt = [a for a in dict.fromkeys([*names, *sorted(alts)]) if a and a != label]
    return Document(
        key=s,
        type=kind,
        label=label,
        alt=alt,
        body=body,
        graphs=graphs,
        ids=entity_ids(s, kind, label, list(roles.get("arxiv", ())),
                       list(roles.get("slug", ())), list(roles.get("doi", ()))),
    )


def _types(rows: Iterable[tuple[str | None, ...]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for s, t in rows:
        kind = _TYPE_OF.get(t or "")
        if s is not None and kind is not None:
            out.setdefault(s, kind)  # two searchable classes (never in kg's data): the first
    return out


def all_documents(store: GraphStore) -> Iterator[Document]:
    """Every searchable entity of the store (but what a half-loaded batch wrote).

    Read predicate by predicate and class by class: Oxigraph answers a constant-predicate
    pattern from its index, where a VALUES list of predicates makes it scan every quad.
    """
    types: dict[str, str] = {}
    for iri in CLASSES.values():
        pattern = f"?s a <{iri}>"
        types.update(_types(_select(store, f"SELECT DISTINCT ?s ?t WHERE {{ {_anywhere(pattern)} "
                                           f"BIND(<{iri}> AS ?t) }}")))
    # the graphs of a batch a killed writer left half-loaded: the next writer drops them
    pending = store.pending_graphs()

    def rows() -> Iterator[tuple[str | None, ...]]:
        # streamed into the documents, not kept: the whole archive's text rows took GBs
        for p in _ROLE:
            found = _select(store, f"SELECT ?s ?o ?g WHERE {{ {_anywhere(f'?s <{p}> ?o')} "
                                   f"FILTER ({_OBJECT_FILTER[p]}) }}")
            yield from ((s, p, o, g) for s, o, g in found if g not in pending)

    return _documents(rows(), types)


def documents_of(store: GraphStore, subjects: Iterable[str]) -> tuple[list[Document], set[str]]:
    """The documents of `subjects` as the store has them now, and the subjects that have none
    (their text is gone: their documents leave the index)."""
    wanted = sorted(set(subjects))
    docs: list[Document] = []
    for chunk in _chunks(wanted):
        values = _values(chunk)
        types = _types(
            _select(store, f"SELECT DISTINCT ?s ?t WHERE {{ {values} {_anywhere('?s a ?t')} }}")
        )
        rows = _select(
            store,
            f"SELECT ?s ?p ?o ?g WHERE {{ {values} {_anywhere('?s ?p ?o')} "
            f"FILTER ((?p IN ({_PREDICATE_LIST}) && isLiteral(?o)) "
            f"|| (?p = <{SEE_ALSO}> && {_DOI_FILTER})) }}",
        )
        docs.extend(_documents(rows, types))
    found = {d.key for d in docs}
    return docs, set(wanted) - found


_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "uU" and len(code) > 1:
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, code)


def literal_texts(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(subject, text) for each N-Triples line whose object is a literal on a text predicate."""
    for line in lines:
        parts = line.split(" ", 2)
        if len(parts) < 3 or parts[1] not in TEXT_PREDICATES or not parts[2].startswith('"'):
            continue
        lexical = parts[2].rstrip(" .")
        end = lexical.rfind('"')
        if end <= 0:
            continue
        yield parts[0][1:-1], _ESCAPE.sub(_unescape, lexical[1:end]).strip()


def text_subjects(lines: Iterable[str]) -> set[str]:
    """The subjects of N-Triples lines that carry searchable text, an identifier or a
    searchable class."""
    out: set[str] = set()
    for line in lines:
        parts = line.split(" ", 2)
        if len(parts) < 3 or not parts[0].startswith("<"):
            continue
        if parts[1] in TEXT_PREDICATES or (
            parts[1] == STD.type and parts[2].rstrip(" .") in CLASS_OBJECTS
        ) or (parts[1] == STD.seeAlso and parts[2].startswith(f"<{DOI_IRI}")):
            out.add(parts[0][1:-1])
    return out


_SEP = "\u001f"


def details_query(papers: list[str]) -> str:
    """SPARQL for each paper's year, task labels and whether it has code (one row each)."""
    values = "VALUES ?p { " + " ".join(f"<{safe_iri(p)}>" for p in papers) + " }"
    return (
        f"SELECT ?p (MIN(STR(?d)) AS ?date) (COUNT(DISTINCT ?r) AS ?code) "
        f'(GROUP_CONCAT(DISTINCT ?l; separator="{_SEP}") AS ?tasks) WHERE {{ {values} '
        f"OPTIONAL {{ ?p {STD.issued} ?d }} "
        f"OPTIONAL {{ ?p {KG.hasRepository}|{KG.codeLink} ?r }} "
        f"OPTIONAL {{ ?p ({PAPER_TO.task})/{STD.label} ?l }} }} GROUP BY ?p"
    )


def with_details(hits: list[Hit], rows: SelectResult) -> list[dict[str, object]]:
    """Hits as JSON objects, papers with `year`, `tasks` and `has_code` from `details_query`."""
    details: dict[str, dict[str, object]] = {}
    for p, date, code, tasks in rows.rows:
        if p is None:
            continue
        year = date.value[:4] if date is not None else ""
        details[p.value] = {
            "year": int(year) if year.isdigit() else None,
            "tasks": sorted(t for t in (tasks.value if tasks else "").split(_SEP) if t),
            "has_code": code is not None and code.value not in ("", "0"),
        }
    return [{**h.as_json(), **details.get(h.iri, {})} for h in hits]
