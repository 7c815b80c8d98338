"""What an entity page tells a reader, above its property table.

A paper's page: its bibliographic data, authors, tasks and methods (linked to their pages
here), its repositories with the official and framework flags and the execution status of
the harvested samples, its leaderboard results with its rank on each leaderboard, its
similar papers with the shared items that explain each (kg.graph.similarity, the JSON of
`/similar`), and its provenance (which record or dump said it, licence and attribution).
A method, task, dataset, author or repository page: its papers, newest first, paged, with
the count.

The functions here build query text (IRIs through `sparql_term`, so a path cannot inject
SPARQL) and render rows into HTML sections with `linked_data`'s escaping page helpers;
the server runs the queries in its worker pool.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from kg.graph.relations import RELATIONS
from kg.query.named import sparql_term
from kg.rdf.results import AskResult, SelectResult, Term
from kg.rdf.vocab import PAPER_TO
from kg.serve.linked_data import _esc, _Page

KG_NS = "https://w3id.org/kg/ontology#"
PAGE_SIZE = 50
MAX_REPOSITORIES = 60
MAX_RESULTS = 200
SIMILAR_TOP = 10
SIMILAR_EXPLAIN = 4
_PREFIXES = (
    "PREFIX kg: <https://w3id.org/kg/ontology#>\n"
    "PREFIX dcterms: <http://purl.org/dc/terms/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    "PREFIX foaf: <http://xmlns.com/foaf/0.1/>\n"
    "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
)
#: Entity kinds whose pages list papers, and the relation that reaches them from a paper.
PAPER_LISTS = {
    "method": "methods",
    "task": "tasks",
    "dataset": "datasets",
    "author": "authors",
    "repository": "repositories",
}
#: Metric names where a lower value is the better one (errors, distances, losses, time).
_LOWER_IS_BETTER = re.compile(
    r"error|loss|\bmae\b|\bmse\b|rmse|\bfid\b|\bkid\b|perplexity|\bppl\b|\bwer\b|\bcer\b|"
    r"\bter\b|distance|\beer\b|\bfar\b|\bfrr\b|latency|time|\bnll\b|bits.per|\bbpc\b|\bbpd\b|"
    r"miss rate|\bmr\b|abs ?rel|sq ?rel|chamfer|\bepe\b|params|flops|\bmde\b",
    re.IGNORECASE,
)


def lower_is_better(metric: str) -> bool:
    """Whether a leaderboard metric ranks its lowest value first.

    >>> lower_is_better("Top 1 Accuracy"), lower_is_better("MAE"), lower_is_better("FID")
    (False, True, True)
    """
    return bool(_LOWER_IS_BETTER.search(metric))


def _iri(iri: str) -> str:
    return sparql_term(Term("uri", iri))


# --- paper queries --------------------------------------------------------------------------


def paper_queries(iri: str) -> dict[str, str]:
    """The SELECT queries behind a paper's sections, by section name."""
    p = _iri(iri)
    return {
        "biblio": _PREFIXES
        + f"""SELECT ?p ?o WHERE {{
  VALUES ?p {{ dcterms:title dcterms:issued kg:arxivId kg:pwcSlug dcterms:abstract
              rdfs:seeAlso kg:abstractPage kg:pdfPage kg:venue kg:conference kg:proceeding }}
  {p} ?p ?o }} LIMIT 50""",
        "authors": _PREFIXES
        + f"""SELECT ?author (MIN(?n) AS ?name) (MIN(?pos) AS ?position) WHERE {{
  {p} dcterms:creator ?author .
  OPTIONAL {{ ?author foaf:name ?n }}
  OPTIONAL {{ {p} kg:authorship ?ship . ?ship kg:author ?author ; kg:position ?pos }}
}} GROUP BY ?author ORDER BY ?position ?name LIMIT 200""",
        "topics": _PREFIXES
        + f"""SELECT ?role ?item (MIN(?l) AS ?label) WHERE {{
  {{ {p} {PAPER_TO.task} ?item BIND("task" AS ?role) }}
  UNION {{ {p} kg:introducesMethod ?item BIND("introduces" AS ?role) }}
  UNION {{ {p} kg:usesMethod ?item BIND("method" AS ?role) }}
  UNION {{ {p} kg:introducesDataset ?item BIND("dataset" AS ?role) }}
  OPTIONAL {{ ?item rdfs:label ?l }}
}} GROUP BY ?role ?item ORDER BY ?role ?label LIMIT 500""",
        "code": _PREFIXES
        + f"""SELECT ?repo (MIN(?u) AS ?url) (MAX(?off) AS ?official) (MIN(?fw) AS ?framework)
WHERE {{
  {p} kg:codeLink ?c . ?c kg:repository ?repo .
  OPTIONAL {{ ?c kg:linkedUrl ?u }} OPTIONAL {{ ?c kg:isOfficial ?off }}
  OPTIONAL {{ ?c kg:framework ?fw }}
}} GROUP BY ?repo ORDER BY DESC(?official) ?repo LIMIT {MAX_REPOSITORIES + 1}""",
        "samples": _PREFIXES
        + f"""SELECT ?repo ?status (COUNT(DISTINCT ?s) AS ?n) WHERE {{
  {p} kg:hasSample ?s . ?s kg:repository ?repo .
  OPTIONAL {{ ?s kg:executionStatus ?st }} BIND(COALESCE(STR(?st), "unknown") AS ?status)
}} GROUP BY ?repo ?status LIMIT 1000""",
        "code_count": _PREFIXES
        + f"SELECT (COUNT(DISTINCT ?repo) AS ?n) WHERE {{ {p} kg:hasRepository ?repo }}",
        # Each result's own triples, pivoted in Python (faster than an OPTIONAL per field).
        # The default graph is the merge, each triple once: no GRAPH ?g needed.
        "results": _PREFIXES
        + f"""SELECT DISTINCT ?result ?p ?o WHERE {{
  {p} kg:hasResult ?result . ?result ?p ?o }} LIMIT {MAX_RESULTS * 12}""",
        # For each leaderboard the paper is on, and each metric there: the entries, and
        # each entry's highest and lowest number (add_ranks places the paper's own).
        # Each entry is read once per leaderboard, not once per result of the paper.
        "ranks": _PREFIXES
        + f"""SELECT ?lb ?metric (COUNT(?other) AS ?entries) (GROUP_CONCAT(STR(?hi)) AS ?highs)
       (GROUP_CONCAT(STR(?lo)) AS ?lows) WHERE {{
  {{ SELECT ?lb ?metric ?other (MAX(?on) AS ?hi) (MIN(?on) AS ?lo) WHERE {{
    {{ SELECT DISTINCT ?lb WHERE {{ {p} kg:hasResult ?r . ?r kg:inLeaderboard ?lb }} }}
    ?other kg:inLeaderboard ?lb ; kg:metricName ?metric ; kg:metricNumber ?on
  }} GROUP BY ?lb ?metric ?other }}
}} GROUP BY ?lb ?metric""",
        "labels": _PREFIXES
        + f"""SELECT ?x (MIN(?l) AS ?label) WHERE {{
  {{ SELECT DISTINCT ?x WHERE {{ {p} kg:hasResult ?r . ?r kg:onTask|kg:onDataset ?x }} }}
  ?x rdfs:label ?l }} GROUP BY ?x""",
        "provenance": _PREFIXES
        + f"""SELECT ?graph ?kind ?origin (MIN(?f) AS ?file) (MIN(?a) AS ?archive)
       (MIN(?sn) AS ?snapshot) (MIN(?lic) AS ?licence) (MIN(?att) AS ?attribution)
       (MIN(?rep) AS ?republished) (MIN(?at) AS ?ingested) WHERE {{
  {{ SELECT DISTINCT ?graph WHERE {{ GRAPH ?graph {{ {p} ?pp ?oo }} }} }}
  OPTIONAL {{ ?graph prov:wasDerivedFrom ?dump }}
  BIND(COALESCE(?dump, ?graph) AS ?origin)
  BIND(IF(BOUND(?dump), "dump", "record") AS ?kind)
  OPTIONAL {{ ?origin kg:sourceFile ?f }} OPTIONAL {{ ?origin kg:sourceArchive ?a }}
  OPTIONAL {{ ?origin kg:snapshot ?sn }} OPTIONAL {{ ?origin dcterms:license ?lic }}
  OPTIONAL {{ ?graph kg:attribution ?att }} OPTIONAL {{ ?graph kg:republishedBy ?rep }}
  OPTIONAL {{ ?origin kg:ingestedAt ?at }}
}} GROUP BY ?graph ?kind ?origin ORDER BY ?kind ?graph LIMIT 100""",
    }


_RESULT_FIELDS = {
    KG_NS + "inLeaderboard": "lb",
    KG_NS + "onTask": "task",
    KG_NS + "onDataset": "dataset",
    KG_NS + "metricName": "metric",
    KG_NS + "metricValue": "value",
    KG_NS + "metricNumber": "num",
    KG_NS + "modelName": "model",
}


def result_rows(triples: Sequence[Mapping[str, Term]]) -> list[dict[str, Term]]:
    """The `results` query's triples as one row per result (metric and value required)."""
    by: dict[str, dict[str, Term]] = {}
    for t in triples:
        key = _RESULT_FIELDS.get(t["p"].value)
        if key is not None:
            by.setdefault(t["result"].value, {"result": t["result"]}).setdefault(key, t["o"])
    rows = [r for r in by.values() if "metric" in r and "value" in r]
    return sorted(rows, key=lambda r: (_text(r, "task"), _text(r, "dataset"), _text(r, "metric")))[
        :MAX_RESULTS
    ]


def _number(text: str) -> Decimal | None:
    """A numeric literal's value, to compare as SPARQL does (None: NaN, or not a number).

    >>> _number("78.57"), _number("1.5E2"), _number("NaN"), _number("n/a")
    (Decimal('78.57'), Decimal('1.5E+2'), None, None)
    """
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return None if value.is_nan() else value


@dataclass(frozen=True)
class Board:
    """The entries for one metric on one leaderboard: how many, and their numbers (an
    entry's highest and lowest, sorted, to count the entries above and below a value)."""

    entries: int
    highs: list[Decimal]
    lows: list[Decimal]

    def place(self, number: str) -> tuple[int, int, int]:
        """(entries, above, below) for a value: the entries with a number above it, below it.

        >>> numbers = [Decimal(n) for n in (1, 2, 2, 5)]
        >>> Board(4, numbers, numbers).place("2"), Board(4, numbers, numbers).place("-")
        ((4, 1, 1), (4, 0, 0))
        """
        value = _number(number)
        if value is None:  # SPARQL's comparison would be an error: counted neither way
            return self.entries, 0, 0
        above = len(self.highs) - bisect.bisect_right(self.highs, value)
        return self.entries, above, bisect.bisect_left(self.lows, value)


def boards(rows: Sequence[Mapping[str, Term]]) -> dict[tuple[str, str], Board]:
    """The `ranks` query's rows as Boards, by (leaderboard IRI, metric name)."""

    def numbers(row: Mapping[str, Term], key: str) -> list[Decimal]:
        found = (_number(text) for text in _text(row, key).split())
        return sorted(n for n in found if n is not None)

    return {
        (r["lb"].value, r["metric"].value): Board(
            _int(r, "entries"), numbers(r, "highs"), numbers(r, "lows")
        )
        for r in rows
        if "lb" in r and "metric" in r
    }


def add_ranks(results: Sequence[dict[str, Term]], ranks: Sequence[Mapping[str, Term]]) -> None:
    """Give each result with a number its entries, and the entries above and below it, on
    its leaderboard for its metric (as `entries`, `above`, `below` literals, for rank_of)."""
    by = boards(ranks)
    for r in results:
        if "lb" not in r or "num" not in r or r["num"].kind != "literal":
            continue
        board = by.get((r["lb"].value, r["metric"].value))
        if board is not None:
            entries, above, below = board.place(r["num"].value)
            r.update(
                entries=Term("literal", str(entries)),
                above=Term("literal", str(above)),
                below=Term("literal", str(below)),
            )


# --- paper lists (method, task, dataset, author, repository pages) -------------------------


def papers_path(kind: str) -> str | None:
    relation = PAPER_LISTS.get(kind)
    return RELATIONS[relation].path if relation else None


def papers_count_query(iri: str, kind: str) -> str:
    return (
        f"SELECT (COUNT(DISTINCT ?paper) AS ?n) WHERE {{ ?paper {papers_path(kind)} {_iri(iri)} }}"
    )


def papers_page_query(iri: str, kind: str, page: int) -> str:
    return (
        _PREFIXES
        + f"""SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) WHERE {{
  ?paper {papers_path(kind)} {_iri(iri)} .
  OPTIONAL {{ ?paper dcterms:title ?t }} OPTIONAL {{ ?paper dcterms:issued ?d }}
}} GROUP BY ?paper ORDER BY DESC(?date) ?title ?paper
LIMIT {PAGE_SIZE} OFFSET {PAGE_SIZE * page}"""
    )


# --- rendering ------------------------------------------------------------------------------


def _rows(result: Any) -> list[dict[str, Term]]:
    if not isinstance(result, SelectResult):
        return []
    return [
        {v: t for v, t in zip(result.variables, row, strict=True) if t is not None}
        for row in result.rows
    ]


def _text(row: Mapping[str, Term], key: str) -> str:
    term = row.get(key)
    return term.value if term is not None else ""


def _int(row: Mapping[str, Term], key: str) -> int:
    text = _text(row, key)
    return int(text) if text.isdigit() else 0


def _section(slug: str, title: str, body: str) -> str:
    return f'<section id="{slug}"><h2>{_esc(title)}</h2>{body}</section>'


def _link(page: _Page, iri: str, label: str | None = None) -> str:
    if label:
        page.desc.labels.setdefault(iri, label)
    return page.link(Term("uri", iri))


@dataclass
class PaperStory:
    """The rows behind a paper's sections (query results, and `similar`'s JSON)."""

    rows: dict[str, Any]
    similar: Mapping[str, Any] | None = None
    similar_error: str | None = None


def _biblio(page: _Page, rows: list[dict[str, Term]]) -> str:
    by: dict[str, list[Term]] = {}
    for row in rows:
        by.setdefault(row["p"].value, []).append(row["o"])
    dc, kg, rdfs = "http://purl.org/dc/terms/", KG_NS, "http://www.w3.org/2000/01/rdf-schema#"
    items = []
    for key, name in (
        (dc + "issued", "published"),
        (kg + "arxivId", "arXiv"),
        (kg + "venue", "venue"),
        (kg + "conference", "conference"),
        (kg + "proceeding", "proceedings"),
    ):
        for term in by.get(key, []):
            items.append(f"<dt>{name}</dt><dd>{page.value(term)}</dd>")
    links = [
        page.value(t)
        for k in (rdfs + "seeAlso", kg + "abstractPage", kg + "pdfPage")
        for t in by.get(k, [])
    ]
    if links:
        items.append(f"<dt>elsewhere</dt><dd>{' · '.join(links)}</dd>")
    body = f'<dl class="facts">{"".join(items)}</dl>' if items else ""
    for term in by.get(dc + "abstract", [])[:1]:
        body += f'<p class="abstract">{_esc(term.value)}</p>'
    return body


def _authors(page: _Page, rows: list[dict[str, Term]]) -> str:
    if not rows:
        return ""
    links = [_link(page, r["author"].value, _text(r, "name") or None) for r in rows]
    return _section("authors", f"Authors ({len(rows)})", f'<p class="list">{", ".join(links)}</p>')


def _topics(page: _Page, rows: list[dict[str, Term]]) -> str:
    groups: dict[str, list[str]] = {}
    for r in rows:
        groups.setdefault(_text(r, "role"), []).append(
            _link(page, r["item"].value, _text(r, "label") or None)
        )
    names = (
        ("task", "Tasks"),
        ("introduces", "Methods introduced"),
        ("method", "Methods used"),
        ("dataset", "Datasets introduced"),
    )
    out = []
    for role, title in names:
        if role in groups:
            links = ", ".join(groups[role])
            out.append(f'<h3>{title} ({len(groups[role])})</h3><p class="list">{links}</p>')
    return _section("topics", "Tasks and methods", "".join(out)) if out else ""


def _status_summary(statuses: str) -> str:
    counts: dict[str, int] = {}
    for pair in statuses.split():
        status = pair.rsplit("=", 1)[-1]
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} {_esc(s.replace('_', ' '))}" for s, n in sorted(counts.items()))


def _code(page: _Page, rows: list[dict[str, Term]], total: int) -> str:
    if not rows:
        return ""
    shown = rows[:MAX_REPOSITORIES]
    lines = []
    for r in shown:
        flags = []
        if _text(r, "official") == "true":
            flags.append('<span class="flag official">official</span>')
        if _text(r, "framework"):
            flags.append(f'<span class="flag">{_esc(_text(r, "framework"))}</span>')
        samples = _status_summary(_text(r, "statuses"))
        url = r.get("url")
        out_link = (
            f' <a class="out" href="{_esc(url.value)}">code</a>'
            if url and url.value.startswith(("https://", "http://"))
            else ""
        )
        lines.append(
            f"<tr><td>{_link(page, r['repo'].value)}{out_link}</td><td>{' '.join(flags)}</td>"
            f"<td>{'samples: ' + samples if samples else ''}</td></tr>"
        )
    count = max(total, len(rows))
    more = (
        f'<p class="meta">the first {len(shown)} of {count:,}, official ones first</p>'
        if count > len(shown)
        else ""
    )
    return _section(
        "code",
        f"Code ({count:,} repositor{'y' if count == 1 else 'ies'})",
        f'<table class="rows"><tr><th>repository</th><th>flags</th><th>harvested samples</th></tr>'
        f"{''.join(lines)}</table>{more}",
    )


def rank_of(row: Mapping[str, Term]) -> tuple[int, int] | None:
    """(rank, entries) of a result on its leaderboard for its metric, best first."""
    entries = _int(row, "entries")
    if not entries or "lb" not in row:
        return None
    ahead = _int(row, "below") if lower_is_better(_text(row, "metric")) else _int(row, "above")
    return ahead + 1, entries


def _results(page: _Page, rows: list[dict[str, Term]]) -> str:
    if not rows:
        return ""
    lines = []
    for r in rows:
        rank = rank_of(r)
        rank_text = f"#{rank[0]} of {rank[1]}" if rank else "–"
        where = []
        if "task" in r:
            where.append(_link(page, r["task"].value, _text(r, "task_label") or None))
        if "dataset" in r:
            where.append(_link(page, r["dataset"].value, _text(r, "dataset_label") or None))
        lines.append(
            f"<tr><td>{' on '.join(where)}</td><td>{_esc(_text(r, 'metric'))}</td>"
            f"<td>{_esc(_text(r, 'value'))}</td><td>{_esc(_text(r, 'model'))}</td>"
            f'<td class="rank">{rank_text}</td></tr>'
        )
    return _section(
        "results",
        f"Leaderboard results ({len(rows)})",
        '<table class="rows"><tr><th>task on dataset</th><th>metric</th><th>value</th>'
        f"<th>model</th><th>rank</th></tr>{''.join(lines)}</table>",
    )


def _similar(page: _Page, story: PaperStory) -> str:
    if story.similar_error:
        return _section(
            "similar", "Similar papers", f'<p class="meta">{_esc(story.similar_error)}</p>'
        )
    data = story.similar or {}
    results: Sequence[Mapping[str, Any]] = data.get("results", [])
    if not results:
        return _section(
            "similar",
            "Similar papers",
            '<p class="meta">No paper shares an item with this one.</p>',
        )
    lines = []
    for m in results:
        shared = m.get("shared", [])
        why = ", ".join(
            f'{_link(page, s["iri"], s["label"])} <span class="dt">{_esc(s["relation"])}, '
            f"{s['papers']:,} paper{'s' if s['papers'] != 1 else ''}</span>"
            for s in shared[:SIMILAR_EXPLAIN]
        )
        more = len(shared) - SIMILAR_EXPLAIN
        tail = f" and {more} more" if more > 0 else ""
        lines.append(
            f'<li>{_link(page, m["paper"], m["title"])} <span class="dt">score '
            f'{m["score"]:.3f}</span><br><span class="why">shares {why}{tail}</span></li>'
        )
    note = (
        f'<p class="meta">By {_esc(", ".join(data.get("by", [])))}, metric '
        f"{_esc(str(data.get('metric')))} (rarer shared items weigh more); as JSON at "
        f'<a href="/similar/{_esc(_paper_key(page))}">/similar</a>.</p>'
    )
    return _section("similar", "Similar papers", f'<ol class="similar">{"".join(lines)}</ol>{note}')


def _paper_key(page: _Page) -> str:
    iri = page.desc.iri
    return iri[len(page.base) :] if iri.startswith(page.base + "paper/") else iri


def _provenance(page: _Page, rows: list[dict[str, Term]]) -> str:
    if not rows:
        return ""
    lines = []
    for r in rows:
        bits = []
        origin = r.get("origin")
        if _text(r, "kind") == "dump" and origin is not None:
            bits.append(f"from the dump {_link(page, origin.value)}")
        for key, name in (("file", "file"), ("archive", "source"), ("snapshot", "snapshot")):
            if _text(r, key):
                bits.append(f"{name} {_esc(_text(r, key))}")
        for key, name in (
            ("licence", "licence"),
            ("attribution", "attribution"),
            ("republished", "republished by"),
        ):
            if key in r:
                bits.append(f"{name} {page.value(r[key])}")
        if _text(r, "ingested"):
            bits.append(f"ingested {_esc(_text(r, 'ingested'))}")
        lines.append(
            f'<li>{_link(page, r["graph"].value)}<br><span class="dt">{"; ".join(bits)}</span></li>'
        )
    return _section("provenance", "Provenance", f"<ul>{''.join(lines)}</ul>")


def paper_sections(page: _Page, story: PaperStory) -> list[str]:
    """The paper's sections, in reading order (empty ones left out)."""
    rows = {
        name: result if isinstance(result, list) else _rows(result)
        for name, result in story.rows.items()
    }
    results = rows.get("results", [])
    shown = {r[k].value for r in results for k in ("task", "dataset") if k in r}
    for r in rows.get("labels", []):  # the labels of the results' tasks and datasets shown
        if r["x"].value in shown:
            page.desc.labels.setdefault(r["x"].value, _text(r, "label"))
    add_ranks(results, rows.get("ranks", []))
    total = _int(rows["code_count"][0], "n") if rows.get("code_count") else 0
    parts = [
        _biblio(page, rows.get("biblio", [])),
        _authors(page, rows.get("authors", [])),
        _topics(page, rows.get("topics", [])),
        _code(page, rows.get("code", []), total),
        _results(page, rows.get("results", [])),
        _similar(page, story),
        _provenance(page, rows.get("provenance", [])),
    ]
    return [p for p in parts if p]


def papers_section(page: _Page, kind: str, count: Any, papers: Any, number: int) -> list[str]:
    """An item's papers: this page of them, the count, and links to the pages around."""
    counted = _rows(count)
    total = _int(counted[0], "n") if counted else 0
    if not total:
        return []
    rows = _rows(papers)
    lines = "".join(
        f"<li>{_link(page, r['paper'].value, _text(r, 'title') or None)}"
        f' <span class="dt">{_esc(_text(r, "date"))}</span></li>'
        for r in rows
    )
    first = number * PAGE_SIZE + 1
    last = number * PAGE_SIZE + len(rows)
    nav = []
    if number > 0:
        nav.append(f'<a rel="prev" href="?page={number - 1}">← newer</a>')
    if last < total:
        nav.append(f'<a rel="next" href="?page={number + 1}">older →</a>')
    where = (
        f"{first:,}–{last:,} of {total:,}, newest first"
        if rows
        else f"none on this page of {total:,}"
    )
    body = (
        f'<p class="meta">{where}</p><ol start="{first}" class="papers">{lines}</ol>'
        f'<p class="nav">{" · ".join(nav)}</p>'
    )
    return [_section("papers", f"Papers ({total:,})", body)]


# --- running them ---------------------------------------------------------------------------


def _kind(iri: str, base: str) -> str | None:
    if not iri.startswith(base):
        return None
    rest = iri[len(base) :]
    head, _, tail = rest.partition("/")
    return head if tail else None


_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def _typed(page: _Page, cls: str) -> bool:
    """Whether the entity is stated to be a kg:`cls` (not a node minted under one)."""
    iri = page.desc.iri
    return any(
        s.value == iri and p.value == _RDF_TYPE and o.value == KG_NS + cls
        for s, p, o in page.desc.outgoing
    )


def page_number(value: str | None) -> int:
    from kg.errors import ParameterError

    if value is None:
        return 0
    if not value.isdigit() or int(value) > 1_000_000:
        raise ParameterError(f"page={value[:20]!r} must be a whole number (0 is the first page)")
    return int(value)


def is_paper_query(iri: str) -> str:
    return f"ASK {{ {_iri(iri)} a <{KG_NS}Paper> }}"


async def paper_story(pool: Any, iri: str, base: str) -> PaperStory:
    """Run a paper's queries and its similarity lookup in the pool, all at once."""
    import asyncio

    from kg.errors import KgError

    queries = paper_queries(iri)
    names = list(queries)

    async def similar() -> tuple[Mapping[str, Any] | None, str | None]:
        try:
            from kg.serve.similar import GRAPH_TIMEOUT

            data = await pool.graph(
                "similar",
                GRAPH_TIMEOUT,
                paper=iri,
                base_iri=base,
                by="all",
                metric="idf",
                top=SIMILAR_TOP,
            )
            return data, None
        except KgError as exc:
            return None, f"Similar papers are not available: {exc}"

    found = await asyncio.gather(*(pool.result(queries[n]) for n in names), similar())
    data, error = found[-1]
    results = dict(zip(names, found[:-1], strict=True))
    results["results"] = result_rows(_rows(results["results"]))
    return PaperStory(results, data, error)


async def early_story(pool: Any, iri: str, base: str) -> PaperStory | None:
    """A paper's story, started while the server still reads the entity's description:
    the workers that would wait for the description meanwhile run the story's queries.
    None (after one ASK) for an IRI under paper/ that is no kg:Paper."""
    if _kind(iri, base) != "paper":
        return None
    typed = await pool.result(is_paper_query(iri))
    if not (isinstance(typed, AskResult) and typed.value):
        return None
    return await paper_story(pool, iri, base)


async def sections(
    pool: Any, page: _Page, number: int, early: PaperStory | None = None
) -> list[str]:
    """Run the queries of the entity's sections in the pool (in parallel) and render them
    (a paper's from `early_story`, when that was started)."""
    import asyncio

    iri, base = page.desc.iri, page.base
    kind = _kind(iri, base)
    if kind == "paper" and _typed(page, "Paper"):
        story = early if early is not None else await paper_story(pool, iri, base)
        return paper_sections(page, story)
    if kind in PAPER_LISTS and kind != "paper":
        count, papers = await asyncio.gather(
            pool.result(papers_count_query(iri, kind)),
            pool.result(papers_page_query(iri, kind, number)),
        )
        return papers_section(page, kind, count, papers, number)
    return []
