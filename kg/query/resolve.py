"""Names wherever a slug is asked: one resolver from what a user types to the thing it names.

Every face uses it (the CLI's `kg query --param`, `kg similar` and `kg shared`, the server's
query parameters and the query page's forms, the library), so a task named on one is named
the same way on all. For a kind of thing (task, dataset, method, paper, author, area,
repository, venue) it takes, in this order:

1. an IRI, a compact `:kind/<key>` or a local key `kind/<key>` (`task/image-classification`);
2. a Papers-with-Code page (`https://paperswithcode.com/task/<slug>`), an arXiv id with or
   without version and `arXiv:` prefix, or an arxiv.org URL (papers), a repository's web
   URL or `owner/name` for GitHub (repositories);
3. a slug (`image-classification`), or a name from which the slug rule gives one
   (`Image Classification`), an author's name as printed, an area's abbreviation (`NLP`);
4. a name or label in any case (a task's or dataset's label, a paper's title, an author's
   name): `image classification` finds Image Classification.

The first step that names a thing of that kind in the store wins. A name that names several
things raises `AmbiguousNameError` listing them; a miss raises `UnknownNameError` with the
nearest keys and labels ("no task named 'image-clasification'; did you mean:
image-classification (Image Classification)?"). Lookups are SPARQL, so the resolver works
on the embedded store and on a remote endpoint alike (`Source`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from kg.errors import AmbiguousNameError, Param, ParameterError, UnknownNameError
from kg.ingest.identity import (
    AREA_ABBREVIATIONS,
    Iris,
    arxiv_id,
    pwc_slug,
    repository,
    slug_from_url,
)
from kg.rdf.engine import iri_error
from kg.rdf.results import QueryResult, SelectResult, Term
from kg.rdf.terms import is_absolute_iri, safe_iri
from kg.rdf.vocab import KG, STD


class Source(Protocol):
    """Where names are looked up: a `GraphStore` or a remote `Endpoint`."""

    def query(self, sparql: str) -> QueryResult: ...


@dataclass(frozen=True)
class Kind:
    """One kind of thing a name can stand for."""

    name: str  # "task": the word in messages and the `class` of a query parameter
    cls: str  # its rdf:type, as an N-Triples IRI
    labels: tuple[str, ...]  # the properties that name it, in order of preference


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("task", KG.Task, (STD.label,)),
        Kind("dataset", KG.Dataset, (STD.label, KG.fullName)),
        Kind("method", KG.Method, (STD.label, KG.fullName)),
        Kind("paper", KG.Paper, (STD.title,)),
        Kind("author", KG.Author, (STD.foaf_name,)),
        Kind("area", KG.Area, (STD.label,)),
        Kind("repository", KG.Repository, (STD.codeRepository,)),
        Kind("venue", KG.Venue, (STD.label,)),
    )
}
#: How many near names a miss suggests.
SUGGESTIONS = 5
#: How many candidates an ambiguous name lists.
CANDIDATES = 10


@dataclass(frozen=True)
class Thing:
    """What a name resolved to: its IRI, its kind, its key (the IRI after `<base><kind>/`)
    and a label to show (None when the store has none)."""

    iri: str
    kind: str
    key: str
    label: str | None = None

    def shown(self) -> str:
        """`key (Label)`, as misses and ambiguities list it."""
        if self.label and self.label != self.key:
            return f"{self.key} ({self.label})"
        return self.key


def kind_of(name: str) -> Kind:
    kind = KINDS.get(name.strip().lower())
    if kind is None:
        raise ParameterError(f"cannot name a {name!r}; kinds of things: {', '.join(KINDS)}")
    return kind


def _key(iri: str, kind: str, base: str) -> str:
    local = iri.removeprefix(base)
    return local.removeprefix(f"{kind}/")


def _select(source: Source, sparql: str) -> list[tuple[str | None, ...]]:
    result = source.query(sparql)
    if not isinstance(result, SelectResult):  # pragma: no cover - the texts are SELECTs
        return []
    return [tuple(None if t is None else t.value for t in row) for row in result.rows]


def _label_path(kind: Kind) -> str:
    return "|".join(kind.labels)


def _things(source: Source, kind: Kind, iris: list[str], base: str) -> list[Thing]:
    """The IRIs among `iris` that are things of `kind`, in the given order, with a label."""
    unique = [i for i in dict.fromkeys(iris) if iri_error(i) is None]  # no IRI, no thing
    if not unique:
        return []
    values = " ".join(Term("uri", i).n3() for i in unique)
    rows = _select(
        source,
        f"SELECT ?x (MIN(STR(?l)) AS ?label) WHERE {{ VALUES ?x {{ {values} }} "
        f"?x a {kind.cls} . OPTIONAL {{ ?x {_label_path(kind)} ?l }} }} GROUP BY ?x",
    )
    found = {r[0]: r[1] for r in rows if r[0]}
    return [Thing(i, kind.name, _key(i, kind.name, base), found[i]) for i in unique if i in found]


def _by_literal(source: Source, kind: Kind, predicate: str, value: str, base: str) -> list[Thing]:
    """Things of `kind` whose `predicate` is exactly `value` (an index lookup)."""
    rows = _select(
        source,
        f"SELECT DISTINCT ?x WHERE {{ ?x {predicate} {Term('literal', value).n3()} ; "
        f"a {kind.cls} }} ORDER BY ?x",
    )
    return _things(source, kind, [r[0] for r in rows if r[0]], base)


def _by_label(
    source: Source, kind: Kind, text: str, base: str, *, scan: bool = True
) -> list[Thing]:
    """Things of `kind` with a name or label equal to `text`, ignoring case and spacing
    (without `scan`, only the exact spelling: index lookups, no pass over every name)."""
    for predicate in kind.labels:  # the exact spelling first: an index lookup
        exact = _by_literal(source, kind, predicate, text, base)
        if exact:
            return exact
    if not scan:
        return []
    wanted = " ".join(text.split()).casefold()
    hits: list[str] = []
    for iri, label in _names(source, kind):
        if label is not None and " ".join(label.split()).casefold() == wanted:
            hits.append(iri)
    return _things(source, kind, sorted(set(hits)), base)


def _names(source: Source, kind: Kind) -> list[tuple[str, str | None]]:
    rows = _select(
        source,
        f"SELECT ?x ?l WHERE {{ ?x a {kind.cls} . OPTIONAL {{ ?x {_label_path(kind)} ?l }} }}",
    )
    return [(r[0], r[1]) for r in rows if r[0]]


def _candidate_iris(kind: Kind, text: str, iris: Iris) -> list[str]:
    """IRIs `text` may name by its syntax alone (no lookup), most literal first."""
    out: list[str] = []
    base = iris.base
    if text.startswith(":"):  # the compact form kg's tables print, `:task/<slug>`
        text = text[1:]
    if is_absolute_iri(text):
        if text.startswith(base):
            out.append(text)
        elif kind.name == "repository":
            ref = repository(text)
            if ref is not None:
                out.append(iris.repository(ref))
        elif kind.name in ("task", "dataset", "method", "paper"):
            slug = slug_from_url(text, kind.name) if "paperswithcode.com" in text else None
            if slug:
                out.append(getattr(iris, kind.name)(slug))
        out.append(text)
        return out
    if text.startswith(f"{kind.name}/"):
        out.append(safe_iri(base + text))
    name = kind.name
    if name == "repository":
        ref = repository(text)
        if ref is not None:
            out.append(iris.repository(ref))
    elif name == "author":
        out.append(iris.author(text))
    elif name == "venue":
        out.append(iris.venue(text))
    elif name == "area":
        slug = pwc_slug(text)
        full = AREA_ABBREVIATIONS.get(slug)
        if full:
            out.append(iris.area(pwc_slug(full)))
        if slug:
            out.append(iris.area(slug))
    else:  # task, dataset, method, paper: a slug, or a name the slug rule turns into one
        if "/" not in text and " " not in text:
            out.append(getattr(iris, name)(text))
        if name == "paper":
            arxiv = arxiv_id(text.removeprefix("arXiv:").removeprefix("arxiv:"))
            if arxiv:
                out.append(iris.paper_by_arxiv(arxiv))
        slug = pwc_slug(text)
        if slug and name != "paper":
            out.append(getattr(iris, name)(slug))
    return out


#: What a local key `<kind>/<…>` may start with: the kinds of thing, and the other things
#: kg gives a key (an `iri` query parameter without a `class:` takes any of them).
KEY_KINDS: tuple[str, ...] = (*KINDS, "repo-kind", "graph", "collection", "leaderboard", "dump")


def iri_of(kind_name: str | None, text: str, base_iri: str) -> str | None:
    """The IRI `text` names by its syntax alone, without a lookup: a local key of any kind,
    else the most literal reading of `_candidate_iris` for `kind_name` (a Papers-with-Code
    URL gives the thing's IRI, an area's abbreviation the area's), else the slug rule's;
    an absolute IRI for no kind. None when `text` reads as no IRI (a bad repository)."""
    iris = Iris(base_iri)
    if text.startswith(":"):  # the compact form kg's tables print, `:paper/<slug>`
        text = text[1:]
    if not is_absolute_iri(text) and "/" in text and text.split("/", 1)[0] in KEY_KINDS:
        return safe_iri(iris.base + text)
    if kind_name is None:
        return text if is_absolute_iri(text) else None
    found = _candidate_iris(kind_of(kind_name), text, iris)
    if found:
        return found[0]
    if kind_name in ("paper", "method", "task", "dataset", "area"):
        return str(getattr(iris, kind_name)(text))
    return None


def _check_text(text: str, kind: Kind, parameter: str | None) -> str:
    value = text.strip()
    if not value:
        raise ParameterError(
            f"{{parameter}} is empty; give a {kind.name} by name, slug or IRI",
            parameter=Param(parameter or kind.name, "query"),
        )
    if len(value) > 2000 or any(ord(c) < 0x20 for c in value):
        raise ParameterError(
            f"{{parameter}}: {value[:60]!r} cannot name a {kind.name} (too long, or control "
            "characters)",
            parameter=Param(parameter or kind.name, "query"),
        )
    return value


def candidates(
    source: Source, kind_name: str, text: str, base_iri: str, *, scan: bool = True
) -> list[Thing]:
    """Every thing `text` may name, by the first step that finds any (see the module doc;
    without `scan`, step 4 takes only the exact spelling)."""
    kind = kind_of(kind_name)
    iris = Iris(base_iri)
    value = text.strip()
    found = _things(source, kind, _candidate_iris(kind, value, iris), iris.base)
    if found:
        return found[:1]  # an IRI or key names one thing: the most literal reading wins
    if kind.name == "paper":
        bare = value.removeprefix("arXiv:").removeprefix("arxiv:").strip()
        arxiv = arxiv_id(bare)
        if arxiv:
            hits = _by_literal(source, kind, KG.arxivId, arxiv, iris.base)
            if hits:
                return hits
        slug = slug_from_url(value, "paper") or (value if "/" not in value else None)
        if slug:
            hits = _by_literal(source, kind, KG.pwcSlug, slug, iris.base)
            if hits:
                return hits
    return _by_label(source, kind, value, iris.base, scan=scan)


def near(
    source: Source, kind_name: str, text: str, base_iri: str, n: int = SUGGESTIONS
) -> list[Thing]:
    """The things whose key or label looks most like `text`, closest first."""
    kind = kind_of(kind_name)
    base = Iris(base_iri).base
    by_word: dict[str, tuple[str, str | None]] = {}
    labels: dict[str, str | None] = {}
    for iri, label in _names(source, kind):
        labels.setdefault(iri, label)
        by_word.setdefault(_key(iri, kind.name, base).casefold(), (iri, label))
        if label:
            by_word.setdefault(label.casefold(), (iri, label))
    wanted = text.strip().casefold()
    hits = difflib.get_close_matches(wanted, list(by_word), n=n * 2, cutoff=0.6)
    out: list[Thing] = []
    for word in hits:
        iri, _ = by_word[word]
        if all(t.iri != iri for t in out):
            out.append(Thing(iri, kind.name, _key(iri, kind.name, base), labels.get(iri)))
    return out[:n]


def resolve(
    source: Source, kind_name: str, text: str, base_iri: str, *, parameter: str | None = None
) -> Thing:
    """The one thing of kind `kind_name` that `text` names, or a domain error saying why not.

    `parameter` names the setting the text came from (a query parameter, a flag), for the
    front end to word the error in its own terms.
    """
    kind = kind_of(kind_name)
    value = _check_text(text, kind, parameter)
    param = Param(parameter, "query") if parameter else None
    found = candidates(source, kind.name, value, base_iri)
    if len(found) == 1:
        return found[0]
    if found:
        listed = ", ".join(t.shown() for t in found[:CANDIDATES])
        more = f" and {len(found) - CANDIDATES} more" if len(found) > CANDIDATES else ""
        raise AmbiguousNameError(
            f"{value[:80]!r} names {len(found)} {kind.name}s: {listed}{more}; give one of "
            "these keys instead",
            parameter=param,
            candidates=tuple(t.iri for t in found),
        )
    close = near(source, kind.name, value, base_iri)
    ways = "slug, name or IRI" + (" (or an arXiv id)" if kind.name == "paper" else "")
    hint = (
        f"; did you mean: {', '.join(t.shown() for t in close)}?"
        if close
        else f"; give a {kind.name} by its {ways}"
    )
    raise UnknownNameError(
        f"no {kind.name} named {value[:80]!r}{hint}",
        parameter=param,
        candidates=tuple(t.iri for t in close),
    )


#: Kinds too many to read every name of for a page's miss (576,261 papers in the archive):
#: their paths resolve by index lookups alone and offer no nearest names.
LARGE_KINDS = frozenset({"paper", "author", "repository"})


def lookup(source: Source, kind: str, text: str, base_iri: str) -> dict[str, object]:
    """What a page's path names, as plain data that crosses a process boundary: {"thing":
    {iri, key, label}} when `text` names one thing of `kind`, else {"candidates": [...]}
    (the things it may name, or the nearest ones: a page's "did you mean"). Any path may
    ask, so a kind in `LARGE_KINDS` is looked up by its indexes only."""
    try:
        value = _check_text(text, kind_of(kind), None)
    except ParameterError:
        return {"candidates": []}
    small = kind not in LARGE_KINDS
    found = candidates(source, kind, value, base_iri, scan=small)
    if len(found) == 1:
        return {"thing": _plain(found[0])}
    if not found and small:
        found = near(source, kind, value, base_iri)
    return {"candidates": [_plain(t) for t in found[:CANDIDATES]]}


def _plain(thing: Thing) -> dict[str, str | None]:
    return {"iri": thing.iri, "key": thing.key, "label": thing.label}


# --- metrics: names, not things ------------------------------------------------------------

#: The kinds of names that are literals, not things: a parameter of `class: metric` takes a
#: metric's name as the store spells it.
METRIC = "metric"


def metric_key(name: str) -> str:
    """What two spellings of one metric share: `Top-1 Accuracy`, `top 1 accuracy` and
    `Top 1 Accuracy` all give `top 1 accuracy` (case, spacing and punctuation ignored)."""
    kept = "".join(c if c.isalnum() or c in "%@" else " " for c in name)
    return " ".join(kept.split()).casefold()


def match_metric(text: str, names: list[str], *, where: str = "",
                 parameter: str | Param | None = None) -> str:
    """The one of `names` (metric names as the store spells them) that `text` names, by
    `metric_key`; else UnknownNameError with the nearest names ("did you mean").
    `where` words the scope in the message (" on Image Classification on ImageNet")."""
    value = text.strip()
    param = Param(parameter, "query") if isinstance(parameter, str) else parameter
    if not value:
        raise ParameterError("{parameter} is empty; give a metric by its name",
                             parameter=param or Param(METRIC, "query"))
    exact = [n for n in names if n == value]
    if exact:
        return exact[0]
    wanted = metric_key(value)
    same = sorted({n for n in names if metric_key(n) == wanted})
    if len(same) == 1:
        return same[0]
    if same:
        raise AmbiguousNameError(
            f"{value[:80]!r} names {len(same)} metrics{where}: "
            f"{', '.join(repr(n) for n in same[:CANDIDATES])}; give one as written",
            parameter=param, candidates=tuple(same),
        )
    keys: dict[str, str] = {}
    for n in sorted(names):
        keys.setdefault(metric_key(n), n)
    close = [keys[k] for k in difflib.get_close_matches(wanted, list(keys), n=SUGGESTIONS,
                                                        cutoff=0.6)]
    hint = (f"; did you mean: {', '.join(repr(n) for n in close)}?" if close
            else f"; the metrics: {', '.join(repr(n) for n in sorted(names)[:20])}")
    named = "{parameter} " if param else ""
    raise UnknownNameError(
        f"{named}{value[:80]!r} is no metric{where or ' of these results'}{hint}",
        parameter=param, candidates=tuple(close),
    )


def metric_names(source: Source, task: str | None = None, dataset: str | None = None) -> list[str]:
    """The metric names of the results in `source`, of `task` and `dataset` (IRIs) if given."""
    scope = "".join(
        f" ?r {p} {Term('uri', v).n3()} ." for p, v in ((KG.onTask, task), (KG.onDataset, dataset))
        if v
    )
    rows = _select(source, f"SELECT DISTINCT ?m WHERE {{ ?r {KG.metricName} ?m .{scope} }}")
    return [r[0] for r in rows if r[0]]


def resolve_metric(
    source: Source, text: str, *, task: str | None = None, dataset: str | None = None,
    parameter: str | None = None,
) -> str:
    """The metric name, as the store spells it, that `text` names among the results of
    `task` and `dataset` (IRIs, when given): see `match_metric`."""
    return match_metric(text, metric_names(source, task, dataset), parameter=parameter)


def resolve_all(
    source: Source, kinds: Mapping[str, str], values: Mapping[str, str], base_iri: str
) -> dict[str, str]:
    """Each value of `values` named in `kinds` (parameter -> kind) resolved: a thing to its
    IRI, then a metric to its name among the results of the task and dataset resolved."""
    out: dict[str, str] = {}
    for name, kind in kinds.items():
        if kind != METRIC and name in values:
            out[name] = resolve(source, kind, values[name], base_iri, parameter=name).iri
    scope = {kinds[n]: iri for n, iri in out.items() if kinds[n] in ("task", "dataset")}
    for name, kind in kinds.items():
        if kind == METRIC and name in values:
            out[name] = resolve_metric(source, values[name], task=scope.get("task"),
                                       dataset=scope.get("dataset"), parameter=name)
    return out


def resolved_reply(
    source: Source, kinds: Mapping[str, str], values: Mapping[str, str], base_iri: str
) -> dict[str, object]:
    """`values` (parameter -> text) resolved as `kinds` (parameter -> kind), as plain data
    that crosses a process boundary: {"values": {...}} or, on a miss or an ambiguity,
    {"error": class name, "message", "parameter", "candidates"} (see `raise_reply`)."""
    try:
        return {"values": resolve_all(source, kinds, values, base_iri)}
    except (UnknownNameError, AmbiguousNameError) as exc:
        return {
            "error": type(exc).__name__,
            "message": exc.template,
            "parameter": exc.parameter.name if isinstance(exc.parameter, Param) else None,
            "candidates": list(exc.candidates),
        }


def raise_reply(reply: Mapping[str, object]) -> dict[str, str]:
    """The values of a `resolved_reply`, or its error raised again."""
    if "error" not in reply:
        values = reply.get("values")
        return dict(values) if isinstance(values, dict) else {}
    cls = AmbiguousNameError if reply["error"] == "AmbiguousNameError" else UnknownNameError
    candidates = reply.get("candidates")
    raise cls(
        str(reply.get("message", "")),
        parameter=Param(str(reply.get("parameter")), "query"),
        candidates=tuple(str(c) for c in candidates) if isinstance(candidates, list) else (),
    )
