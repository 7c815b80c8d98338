"""Every named query, with every parameter set the tests know, on other SPARQL engines.

A slice of the README's example store (`engines_slice`) is exported as N-Quads (`kg export
--format nquads`) and bulk-loaded into each engine with that engine's own loader, the
recipe docs/scale-out.md gives: Virtuoso (ld_dir + rdf_loader_run), Jena TDB2
(tdb2.tdbloader), the `oxigraph` server (`oxigraph load`); `kg serve` serves the store
itself. Each query then runs through `kg query NAME --endpoint URL` and its answer is
compared with the local one (`kg query NAME` on the store): row for row in order where the
query has an ORDER BY, as a multiset where it has none; the parts of a GROUP_CONCAT cell in
any order; numbers by value.

The outcome of each engine × query is written as a Markdown table (docs/scale-out.md) to
`engines-table.md` in pytest's temporary directory and, when KG_ENGINES_TABLE names a file,
there too: `bench/engines.py` runs this module and copies the table into the docs.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.errors import NotFoundError
from kg.query.binding import resolve_values
from kg.query.named import NamedQuery, bind, load_queries, parse_assignments, run_local
from kg.query.remote import Endpoint, parse_sparql_json
from kg.rdf.engine import parse_to_ntriples
from kg.rdf.results import GraphResult, QueryResult, SelectResult, Term
from kg.rdf.sparql_scan import located_tokens, scan
from kg.rdf.store import GraphStore
from kg.search.sparql import uses_search
from tests.conftest import ROOT, _shared_dir, build_once, run
from tests.engines_support import (
    Engine,
    Jena,
    OxigraphServer,
    Virtuoso,
    jena_missing,
    oxigraph_load,
    virtuoso_missing,
)
from tests.query_data import BASE
from tests.serve_support import ServeProcess
from tests.test_queries import CASES

pytestmark = pytest.mark.engines

ENGINES = ("virtuoso", "jena", "oxigraph", "kg-serve")
QUERIES = load_queries()
XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC = {
    XSD + t
    for t in [
        "integer",
        "decimal",
        "double",
        "float",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "negativeInteger",
        "nonPositiveInteger",
        "unsignedInt",
        "unsignedLong",
    ]
}

#: Where an engine's answer is known to differ, and why: the test checks that it still
#: differs in exactly that way (so a fix shows), and the table gives the reason.
KNOWN: dict[tuple[str, str], tuple[str, str]] = {
    ("virtuoso", "leaderboard-results"): (
        "differs",
        "Virtuoso 7.2.5 writes the boolean false as \"0\"^^xsd:boolean (not the canonical "
        "\"false\"); the rows are otherwise the same. Jena, Oxigraph and kg serve answer as "
        "kg does",
    ),
    ("virtuoso", "leaderboard-flags"): (
        "error",
        "Virtuoso 7.2.5's SPARQL compiler fails on the query with the same internal error "
        "(SQ156) on this slice; on the whole README store it answers, but finds 272 of the "
        "352 same-model-twice flags. kg's 352 equal plain Python over the raw tables "
        "(tests/test_flags.py), and Jena answers as kg does",
    ),
}

#: engine × query -> (outcome, detail), filled as the tests run, written as the table.
OUTCOMES: dict[tuple[str, str], tuple[str, str]] = {}
TIMINGS: dict[str, dict[str, float]] = {}


def parameter_sets(query: NamedQuery) -> list[dict[str, str]]:
    """The header's example, every parameter's own example, and every case of
    tests/test_queries.py, once each."""
    words = shlex.split(query.example)
    example = parse_assignments(
        w for i, w in enumerate(words) if i and words[i - 1] in ("--param", "-p")
    )
    sets = [example, {p.name: p.example for p in query.params}]
    sets += [dict(case.params) for case in CASES.get(query.name, [])]
    unique: list[dict[str, str]] = []
    for params in sets:
        if params not in unique:
            unique.append(params)
    return unique


def has_order_by(sparql: str) -> bool:
    """Whether the outer query orders its rows (an ORDER BY outside every group)."""
    depth = 0
    for kind, text, _ in located_tokens(sparql):
        if kind == "other" and text in "{}":
            depth += 1 if text == "{" else -1
        elif kind == "word" and depth == 0 and text.upper() == "ORDER":
            return True
    return False


def _cell(term: Term | None) -> str:
    if term is None:
        return ""
    if term.kind == "uri":
        return f"<{term.value}>"
    if term.kind == "bnode":
        return "_:b"
    value, datatype = term.value, term.datatype
    if datatype in NUMERIC:
        try:
            return format(Decimal(value).normalize(), "f")
        except InvalidOperation:
            pass
    if " | " in value:  # a GROUP_CONCAT: its parts come in any order
        value = " | ".join(sorted(value.split(" | ")))
    if term.lang:
        return f"{value!r}@{term.lang.lower()}"
    if datatype and datatype != XSD + "string":
        return f"{value!r}^^{datatype}"
    return repr(value)


Answer = list[tuple[str, ...]]


def answer(result: QueryResult) -> Answer:
    if isinstance(result, GraphResult):
        return sorted((line,) for line in result.ntriples.splitlines() if line.strip())
    assert isinstance(result, SelectResult), result
    return [tuple(_cell(t) for t in row) for row in result.rows]


def _longest_common_run(local: Answer, remote: Answer) -> int:
    """The length of the longest subsequence the two orders share (rows are unique keys
    here: each query orders by an IRI last), so len - it rows are out of place."""
    import bisect

    position = {row: i for i, row in enumerate(local)}
    tails: list[int] = []
    for row in remote:
        i = position.get(row)
        if i is None:
            continue
        k = bisect.bisect_left(tails, i)
        tails[k : k + 1] = [i]
    return len(tails)


def difference(local: Answer, remote: Answer, ordered: bool) -> str | None:
    """None when the answers agree; else what differs, in a few words."""
    if (local == remote) if ordered else (Counter(local) == Counter(remote)):
        return None
    if Counter(local) == Counter(remote):
        moved = len(local) - _longest_common_run(local, remote)
        return f"same {len(local)} rows, {moved} of them out of place"
    missing = list((Counter(local) - Counter(remote)).elements())
    extra = list((Counter(remote) - Counter(local)).elements())
    text = f"{len(remote)} rows instead of {len(local)}: {len(missing)} missing, {len(extra)} other"
    if missing:
        text += f"; e.g. missing {missing[0]}"
    if extra:
        text += f"; e.g. got {extra[0]}"
    return text


# --- the store, its export, the engines ------------------------------------------------------


#: The top-level tasks of the bundled evaluation tables the engines' store keeps: every
#: header example and parameter set names one of them (or a seed, a method or an author).
SLICE_TASKS = ("Image Classification", "Machine Translation")
#: Methods a parameter set names that neither the seeds nor the kept tables reach.
SLICE_METHODS = {"adam"}
_ARXIV_ID = re.compile(r"\d{4}\.\d{4,5}")


def engines_slice(folder: Path) -> Path:
    """The README's inputs cut to size, as a folder of two dumps: the entries of
    `SLICE_TASKS` from the 2020 evaluation tables (with their subtasks), and the methods of
    the methods dump that a seed record names, that a paper cited by those tables
    introduced (by arXiv id), or that `SLICE_METHODS` lists (the whole dump was a third of
    the quads every engine loaded)."""
    pwc = ROOT / "examples" / "pwc"
    with gzip.open(pwc / "evaluation-tables.json.gz", "rt", encoding="utf-8") as f:
        tables = [entry for entry in json.load(f) if entry["task"] in SLICE_TASKS]
    assert len(tables) == len(SLICE_TASKS)
    cited = set(_ARXIV_ID.findall(json.dumps(tables)))
    named = set(SLICE_METHODS)
    for record in (ROOT / "examples" / "records").glob("*.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        for key in ("methods", "methods_introduced"):
            named |= {m.get("method_slug") for m in data.get(key) or [] if isinstance(m, dict)}
    with gzip.open(pwc / "methods.json.gz", "rt", encoding="utf-8") as f:
        methods = [
            m
            for m in json.load(f)
            if m["url"].rstrip("/").rsplit("/", 1)[-1] in named
            or cited & set(_ARXIV_ID.findall(m.get("source_url") or ""))
        ]
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in (("evaluation-tables.json", tables), ("methods.json", methods)):
        partial = folder / f"{name}.{os.getpid()}.tmp"  # workers may race: same bytes
        partial.write_text(json.dumps(content), encoding="utf-8")
        partial.replace(folder / name)
    return folder


@pytest.fixture(scope="module")
def example_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A slice of the README's example store (`engines_slice`: a tenth of its quads, every
    named query still answering) and its N-Quads export, made by the real CLI, and beside
    the export (`kg.nt`) the merge as N-Triples, for a server's default graph."""
    dumps = engines_slice(_shared_dir(tmp_path_factory) / "engines-slice")
    store = build_once(
        tmp_path_factory, "engines-store", "ingest", "-q", str(ROOT / "examples" / "records"),
        str(dumps),
    )  # fmt: skip
    directory = tmp_path_factory.mktemp("engines")
    nquads = directory / "kg.nq"
    kg = [sys.executable, "-m", "kg", "--store", str(store)]
    for args in (
        ["export", "--format", "nquads", "--out", str(nquads)],
        ["export", "--format", "ntriples", "--out", str(nquads.with_suffix(".nt"))],
    ):
        done = subprocess.run([*kg, *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    yield store, nquads


@pytest.fixture(scope="module")
def local(example_store: tuple[Path, Path]) -> Iterator[GraphStore]:
    store = GraphStore.open(example_store[0], read_only=True)
    yield store
    store.close()


@pytest.fixture(scope="module", autouse=True)
def _table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    if not OUTCOMES:
        return
    text = markdown_table()
    targets = [tmp_path_factory.getbasetemp() / "engines-table.md"]
    if os.environ.get("KG_ENGINES_TABLE"):
        targets.append(Path(os.environ["KG_ENGINES_TABLE"]))
    for target in targets:
        target.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module", params=ENGINES)
def engine(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    example_store: tuple[Path, Path],
) -> Iterator[Engine]:
    name: str = request.param
    store, nquads = example_store
    directory = tmp_path_factory.mktemp(name)
    started = time.monotonic()
    server: Engine | ServeProcess
    if name == "virtuoso":
        reason = virtuoso_missing()
        if reason:
            pytest.skip(reason)
        server = Virtuoso(directory)
        server.load(nquads)
    elif name == "jena":
        reason = jena_missing()
        if reason:
            pytest.skip(reason)
        server = Jena(directory, nquads)
    elif name == "oxigraph":
        # kg's layout: the named graphs, and their merge as the real default graph
        oxigraph_load(directory / "store", nquads)
        oxigraph_load(directory / "store", nquads.with_suffix(".nt"))
        server = OxigraphServer(directory / "store")
    else:
        server = ServeProcess(["--store", str(store)], ["--timeout", "300"])
    TIMINGS[name] = {"load": time.monotonic() - started, "queries": 0.0}
    try:
        if isinstance(server, ServeProcess):
            yield Engine(name, server.sparql, server.proc, directory / "kg-serve.log")
        else:
            yield server
    finally:
        server.stop()


# --- the tests -------------------------------------------------------------------------------


def remote_answer(cli: CliRunner, query: NamedQuery, params: dict[str, str], url: str) -> Answer:
    """`kg query NAME -p … --endpoint URL` as a user runs it; AssertionError on failure."""
    graph = scan(query.sparql).is_graph_query
    fmt = "ntriples" if graph else "json"
    args = [arg for k, v in params.items() for arg in ("-p", f"{k}={v}")]
    result = run(
        cli, "query", query.name, *args, "--endpoint", url, "--format", fmt, "--timeout", "300"
    )
    if result.exit_code != 0:
        raise AssertionError(" ".join(result.output.split())[:300])
    if graph:
        lines = result.stdout.splitlines()
        return sorted((line,) for line in lines if line.strip())
    return answer(parse_sparql_json(result.stdout.encode("utf-8"), url))


#: The local answers, by (query, parameter set): the same for every engine, computed once.
LOCAL: dict[tuple[str, str], Answer] = {}


def local_answer(
    local: GraphStore, query: NamedQuery, params: dict[str, str], resolved: dict[str, str]
) -> Answer:
    key = (query.name, json.dumps(params, sort_keys=True))
    if key not in LOCAL:
        LOCAL[key] = answer(run_local(local, query, bind(query, resolved, BASE)))
    return LOCAL[key]


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_named_query_answers_as_locally(
    engine: Engine, name: str, local: GraphStore, cli: CliRunner
) -> None:
    query = QUERIES[name]
    if uses_search(query.sparql):
        # Another engine would call the SERVICE itself (over the network), and the store
        # alone runs it the same way: only kg's query path evaluates the block.
        OUTCOMES[(engine.name, name)] = ("needs kg", "")
        pytest.skip(f"{name} holds kg's search block (docs/search.md): only kg runs it")
    ordered = has_order_by(query.sparql)
    sets = parameter_sets(query)
    outcome, detail = "same", ""
    rows = 0
    started = time.monotonic()
    for params in sets:
        try:  # names, slugs and ids become IRIs, as `kg query` resolves them
            resolved = resolve_values(local, query, params, BASE)
        except NotFoundError as exc:
            # A value that names nothing here (the cases of tests/test_queries.py are about
            # its small graphs): the endpoint must refuse it in the same words.
            try:
                remote_answer(cli, query, params, engine.url)
                outcome, detail = "differs", f"{params}: answered where kg refuses: {exc}"
                break
            except AssertionError as refused:
                # (each face names the parameter its own way: the library 'metric', the CLI
                # --param metric; the rest of the sentence is the same)
                said = re.sub(r"^'\w+' ", "", str(exc).split(";")[0])
                if said not in str(refused):
                    outcome, detail = "error", f"{params}: {refused}"
                    break
            continue
        mine = local_answer(local, query, params, resolved)
        rows += len(mine)
        try:
            theirs = remote_answer(cli, query, params, engine.url)
        except AssertionError as exc:
            outcome, detail = "error", f"{params}: {exc}"
            break
        why = difference(mine, theirs, ordered)
        if why is not None:
            outcome, detail = "differs", f"{params}: {why}"
            break
    TIMINGS[engine.name]["queries"] += time.monotonic() - started
    if outcome == "same":
        detail = f"{len(sets)} parameter sets, {rows} rows"
    OUTCOMES[(engine.name, name)] = (outcome, detail)
    known = KNOWN.get((engine.name, name))
    if known is None:
        assert outcome == "same", f"{engine.name} {name}: {outcome}: {detail}"
    else:
        assert outcome == known[0], f"{engine.name} {name}: {outcome}: {detail}; known: {known}"


#: Queries about data the README's examples do not hold (tests/test_queries.py covers them).
EMPTY_ON_EXAMPLES = {"datasets-introduced": "the examples hold no datasets dump"}


def test_parameter_sets_find_rows(local: GraphStore) -> None:
    """The comparison means something: every query but those listed has a parameter set
    with rows on the example store, and those listed have none."""
    for name, query in QUERIES.items():
        if uses_search(query.sparql):
            continue
        found = [
            answer(run_local(local, query, bind(query, params, BASE)))
            for params in parameter_sets(query)
        ]
        assert any(found) == (name not in EMPTY_ON_EXAMPLES), name


def test_order_by_is_recognised() -> None:
    assert has_order_by("SELECT ?a { ?a ?b ?c } ORDER BY ?a")
    assert not has_order_by("SELECT ?a { { SELECT ?a { ?a ?b ?c } ORDER BY ?a LIMIT 1 } }")
    assert not has_order_by('SELECT ?a { ?a ?b "ORDER BY" } # ORDER BY')


def test_differences_are_described() -> None:
    a, b = [("1",), ("2",)], [("2",), ("1",)]
    assert difference(a, b, ordered=False) is None
    assert difference(a, b, ordered=True) == "same 2 rows, 1 of them out of place"
    assert _longest_common_run([("1",), ("2",), ("3",)], [("2",), ("3",), ("1",)]) == 2
    assert "1 missing" in (difference(a, [("1",), ("3",)], ordered=False) or "")
    assert _cell(Term("literal", "b | a")) == _cell(Term("literal", "a | b"))
    assert _cell(Term("literal", "8.84E1", XSD + "double")) == _cell(
        Term("literal", "88.40", XSD + "decimal")
    )


# --- the table -------------------------------------------------------------------------------


def markdown_table() -> str:
    """Engine × named query, as docs/scale-out.md shows it."""
    engines = [e for e in ENGINES if any(k[0] == e for k in OUTCOMES)]
    lines = [
        "| query | " + " | ".join(engines) + " |",
        "| --- | " + " | ".join("---" for _ in engines) + " |",
    ]
    notes: list[str] = []
    for name in sorted(QUERIES):
        cells = []
        for e in engines:
            outcome, detail = OUTCOMES.get((e, name), ("not run", ""))
            if outcome in ("differs", "error"):
                why = KNOWN.get((e, name), (outcome, detail))[1]
                notes.append(f"{len(notes) + 1}. {e}, `{name}`: {why}")
                cells.append(f"{outcome} ({len(notes)})")
            else:
                cells.append(outcome)
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    timing = ", ".join(
        f"{e}: load {t['load']:.0f} s, queries {t['queries']:.0f} s" for e, t in TIMINGS.items()
    )
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + "\n".join(notes) + "\n"
    return text + f"\nTimes on the run that made this table: {timing}.\n"


@pytest.mark.parametrize("fmt", ["turtle", "jsonld", "rdfxml"])
def test_paper_card_in_rdf_formats_as_locally(
    engine: Engine, fmt: str, example_store: tuple[Path, Path], cli: CliRunner
) -> None:
    """`kg query paper-card --format turtle` (and the other RDF formats) gives the same
    triples from the engine as from the store."""
    args = ["query", "paper-card", "-p", "paper=self-attention-attribution-interpreting"]
    remote = run(cli, *args, "--format", fmt, "--endpoint", engine.url)
    here = run(cli, "--store", str(example_store[0]), *args, "--format", fmt)
    assert remote.exit_code == 0, remote.output
    assert here.exit_code == 0, here.output
    theirs = set(parse_to_ntriples(remote.stdout.encode(), fmt).splitlines())
    mine = set(parse_to_ntriples(here.stdout.encode(), fmt).splitlines())
    assert theirs == mine and len(mine) > 50


#: Engines whose default graph, loaded as docs/scale-out.md says, is the set merge of the
#: graphs. Virtuoso's default graph (no FROM) ranges over the quads of every graph.
SET_DEFAULT_GRAPH = ("jena", "oxigraph", "kg-serve")
COUNTS = [
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "SELECT (COUNT(?p) AS ?n) WHERE { ?p a <https://w3id.org/kg/ontology#Paper> }",
]


@pytest.mark.parametrize("query", COUNTS, ids=["triples", "papers"])
def test_the_default_graph_counts_each_fact_once(
    engine: Engine, local: GraphStore, query: str
) -> None:
    """Issue 13 on every engine: a count without DISTINCT sees each fact once."""
    if engine.name not in SET_DEFAULT_GRAPH:
        pytest.skip(f"{engine.name}'s default graph is a bag of every graph's quads")
    theirs = Endpoint(engine.url, timeout=300).query(query)
    mine = local.query(query)
    assert isinstance(theirs, SelectResult) and isinstance(mine, SelectResult)
    assert int(theirs.rows[0][0].value) == int(mine.rows[0][0].value) > 0  # type: ignore[union-attr]


# --- kg push ---------------------------------------------------------------------------------


GRAPH_COUNTS = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"


def graph_counts(url: str) -> dict[str, int]:
    """Triples per named graph, as the endpoint counts them."""
    result = Endpoint(url, timeout=300).query(GRAPH_COUNTS)
    assert isinstance(result, SelectResult)
    return {row[0].value: int(row[1].value) for row in result.rows if row[0] and row[1]}


def local_counts(store: GraphStore) -> dict[str, int]:
    result = store.query(GRAPH_COUNTS, union=False)
    assert isinstance(result, SelectResult)
    return {row[0].value: int(row[1].value) for row in result.rows if row[0] and row[1]}


def kg_push(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kg", "--store", str(store), "push", *args],
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.fixture(scope="module")
def push_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A smaller store to push (the seed records and the methods dump: about 1,930 graphs),
    built once per run: enough graphs to interrupt a push, a sixth of the README store's."""
    return build_once(
        tmp_path_factory, "push-store", "ingest", "-q",
        str(ROOT / "examples" / "records"), str(ROOT / "examples" / "pwc" / "methods.json.gz"),
    )  # fmt: skip


@pytest.fixture(scope="module")
def push_local(push_store: Path) -> Iterator[GraphStore]:
    store = GraphStore.open(push_store, read_only=True)
    yield store
    store.close()


def test_push_to_the_oxigraph_server_resumes_after_a_kill(
    push_store: Path, push_local: GraphStore, tmp_path: Path
) -> None:
    """`kg push` into a writable `oxigraph serve`, killed halfway and run again: the second
    run skips what the first sent, and the server ends with every graph, triple for triple."""
    server = OxigraphServer(tmp_path / "target", writable=True)
    state = tmp_path / "push.state"
    try:
        args = ["--endpoint", server.graph_store, "--state", str(state), "--chunk-kb", "16"]
        first = subprocess.Popen(
            [sys.executable, "-m", "kg", "--store", str(push_store), "push", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and first.poll() is None:
            if state.exists() and state.read_text().count("\n") > 300:
                break
            time.sleep(0.05)
        first.kill()
        first.wait()
        done_before = state.read_text().count("\n") - 1
        assert 300 <= done_before < 2000, "the kill came too late to interrupt the push"
        second = kg_push(push_store, *args)
        assert second.returncode == 0, second.stderr
        skipped = re.search(r"([\d,]+) unchanged since the last push", second.stderr)
        assert skipped and int(skipped.group(1).replace(",", "")) >= done_before - 1
        expected = local_counts(push_local)
        assert graph_counts(server.url) == expected
        assert sum(expected.values()) == push_local.count()
        third = kg_push(push_store, *args)
        assert "pushed 0 triples in 0 graph(s)" in third.stderr, third.stderr
    finally:
        server.stop()


def test_push_to_virtuoso_with_digest_auth(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """`kg push` into a fresh Virtuoso through its authenticated Graph Store endpoint. The
    seed records' graphs prove the authentication and the pushed triples (resuming a push
    needs more: the Oxigraph test above); the methods dump as well cost 24 s of CPU."""
    reason = virtuoso_missing()
    if reason:
        pytest.skip(reason)
    push_store = build_once(
        tmp_path_factory, "seeds-store", "ingest", "-q", str(ROOT / "examples" / "records")
    )
    with GraphStore.open(push_store, read_only=True) as push_local:
        expected = local_counts(push_local)
    server = Virtuoso(tmp_path / "virtuoso")
    try:
        base = ["--endpoint", server.graph_store, "--state", str(tmp_path / "v.state")]
        refused = kg_push(push_store, *base, "--user", "dba", "--password", "wrong")
        assert refused.returncode == 1
        assert "HTTP 401" in refused.stderr and "--user/--password" in refused.stderr
        pushed = kg_push(push_store, *base, "--user", "dba", "--password", "dba")
        assert pushed.returncode == 0, pushed.stderr
        assert sum("/graph/record/" in g for g in expected) == 2  # both seed records
        counts = graph_counts(server.url)
        assert {g: n for g, n in counts.items() if g in expected} == expected
        assert set(expected) <= set(counts)
    finally:
        server.stop()
