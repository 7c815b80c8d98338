"""The Python library (`kg.open`, docs/python.md): a light import, a pinned public surface,
doctested examples, a CLI that goes through it, and answers checked against independent
computations (rdflib over an export, NetworkX over raw pairs, Python over the raw JSON)."""

from __future__ import annotations

import ast
import doctest
import gzip
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from itertools import combinations
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import rdflib
from rdflib.compare import isomorphic

import kg
from kg.library import base, exports, knowledge_graph, loading, named, results, views
from tests.conftest import BASE, ROOT, SEEDS_DIR, build_once

HEAVY = ("pyoxigraph", "scipy", "numpy", "networkx", "tantivy", "rdflib", "starlette", "mcp")
SNAPSHOT = ROOT / "tests" / "data" / "api_signatures.json"
DCT = rdflib.Namespace("http://purl.org/dc/terms/")
KGO = rdflib.Namespace("https://w3id.org/kg/ontology#")


# --- the import ---------------------------------------------------------------------------


def test_import_kg_loads_none_of_the_heavy_libraries() -> None:
    probe = (
        "import sys, kg\n"
        "kg.open, kg.KnowledgeGraph, kg.SparqlResult, kg.SearchPage, kg.KgError\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"import kg loaded: {done.stdout}"


def test_every_public_name_resolves_and_dir_lists_it() -> None:
    for name in kg.__all__:
        assert getattr(kg, name) is not None, name
    assert set(kg.__all__) <= set(dir(kg))
    with pytest.raises(AttributeError):
        kg.no_such_name  # noqa: B018


# --- the contract: names and signatures ---------------------------------------------------


def _public_methods(cls: type) -> dict[str, Any]:
    """The public methods and properties `cls` defines or takes from its kg.library bases
    (KnowledgeGraph is put together from one class per job)."""
    own: dict[str, Any] = {}
    for parent in reversed(cls.__mro__):
        if parent.__module__.startswith("kg.library"):
            own.update(vars(parent))
    return {
        n: m
        for n, m in own.items()
        if not n.startswith("_") and (callable(m) or isinstance(m, property))
    }


def surface() -> dict[str, str]:
    """Each public name's signature; for KnowledgeGraph, each public method's too."""
    out: dict[str, str] = {}
    for name in kg.__all__:
        value = getattr(kg, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            out[name] = f"error({', '.join(c.__name__ for c in value.__mro__[1:-3])})"
        else:
            out[name] = str(inspect.signature(value))
    for name, method in _public_methods(kg.KnowledgeGraph).items():
        out[f"KnowledgeGraph.{name}"] = (
            "property" if isinstance(method, property) else str(inspect.signature(method))
        )
    return out


def test_the_public_surface_matches_its_snapshot() -> None:
    """A name removed or a signature changed fails here: deprecate it first, then update
    the snapshot (KG_UPDATE_API_SNAPSHOT=1 pytest tests/test_library.py -k surface)."""
    now = surface()
    if os.environ.get("KG_UPDATE_API_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    gone = sorted(set(pinned) - set(now))
    changed = {k: (pinned[k], now[k]) for k in pinned if k in now and pinned[k] != now[k]}
    assert not gone, f"public names removed: {gone}"
    assert not changed, f"public signatures changed: {changed}"
    assert set(now) == set(pinned), f"new public names to pin: {sorted(set(now) - set(pinned))}"


def test_every_public_method_has_a_docstring_with_an_example() -> None:
    methods = {"open": kg.open, **_public_methods(kg.KnowledgeGraph)}
    missing = [
        n
        for n, m in methods.items()
        if not isinstance(m, property) and n not in ("close",) and ">>>" not in (m.__doc__ or "")
    ]
    assert missing == []


# --- the doctests, on the README store -----------------------------------------------------


@pytest.fixture(scope="module")
def graph(readme_store: Path) -> Iterator[kg.KnowledgeGraph]:
    with kg.open(readme_store) as g:
        yield g


def test_the_docstring_examples_run_on_the_readme_store(
    graph: kg.KnowledgeGraph, readme_store: Path, tmp_path: Path
) -> None:
    globs = {"kg": kg, "g": graph, "store_path": readme_store, "seeds": SEEDS_DIR, "tmp": tmp_path}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    finder = doctest.DocTestFinder()
    tests = [
        test
        for module in (knowledge_graph, base, views, exports, loading, named, results)
        for test in finder.find(module, globs={**vars(module), **globs})
    ]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert result.attempted >= 30


# --- the CLI goes through the library ------------------------------------------------------

#: What the library offers, by the internal module and name it wraps: the CLI must call the
#: library for these, never the module (kg/library/knowledge_graph.py).
COVERED = {
    "kg.rdf.store": {"GraphStore"},
    "kg.query.stats": {"compute"},
    "kg.query.resolve": {"resolve", "resolve_values", "bind_resolved"},
    "kg.query.binding": {"bind", "resolve_values", "bind_resolved"},
    "kg.query.named": {
        "stream_local", "run_local", "prepare_local", "bind", "load_queries", "find_query",
        "parse_assignments", "markdown_list", "with_values", "run_remote",
    },
    "kg.query.rewrite": {"prepare_local", "with_values"},
    "kg.query.remote": {"Endpoint"},
    "kg.query.leaderboard": {"load", "metric_param", "resolve_board"},
    "kg.search": {"StoreSearch", "rebuild", "Upkeep"},
    "kg.search.sparql": {"expand"},
    "kg.graph.similarity": {"similar", "shared", "resolve_paper"},
    "kg.graph.cache": {"similarity_index", "suggest_model", "has_suggest_model"},
    "kg.graph.suggest": {"suggest"},
    "kg.graph.projections": {"project", "write_graph"},
    "kg.graph.analytics": {"communities", "components", "describe", "pagerank"},
    "kg.graph.incidence": {"load_incidence", "labels"},
    "kg.export.exporter": {
        "export", "export_file", "construct", "subset_query", "default_path", "output_stream",
        "resolve_graph",
    },
    "kg.export.void": {"describe", "dump_files", "dump_urls"},
    "kg.export.validate": {"validate"},
    "kg.export.push": {"push", "check_reachable", "PushAuth"},
    "kg.rdf.limits": {"run_limited", "default_memory_mb", "memory_message"},
    "kg.ingest.ingestor": {"Ingestor", "ingest", "KINDS"},
    "kg.ingest.identity": {"Iris"},
    "kg.sources.pwc_api": {"Pull"},
    "kg.sources.http": {"PoliteClient"},
}
#: Commands the library does not offer yet, and what they may import meanwhile
#: ((file, module, name) triples).
NOT_YET: set[tuple[str, str, str]] = set()


def cli_reaches_around(folder: Path = ROOT / "kg" / "cli") -> list[str]:
    """Each import in `folder`'s modules of something the library offers (imports for
    type annotations only, under `if TYPE_CHECKING:`, call nothing and do not count)."""
    found = []
    for path in sorted(folder.glob("*.py")):
        rel = f"kg/cli/{path.name}"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module in COVERED:
                for alias in node.names:
                    if alias.name in COVERED[node.module] and (
                        (rel, node.module, alias.name) not in NOT_YET
                    ):
                        found.append(f"{rel}:{node.lineno} imports {node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{rel}:{node.lineno} imports {a.name}" for a in node.names if a.name in COVERED
                ]
    return found


def test_the_cli_calls_the_library_for_what_it_offers() -> None:
    assert cli_reaches_around() == []


def test_the_reach_around_check_sees_a_reach_around(tmp_path: Path) -> None:
    (tmp_path / "similar.py").write_text(
        "def f():\n    from kg.graph.similarity import similar, SharedItem\n"
        "    import kg.query.stats\n"
        "    from kg.graph.projections import write_graph\n"
        "if TYPE_CHECKING:\n    from kg.rdf.store import GraphStore\n",
        encoding="utf-8",
    )
    assert cli_reaches_around(tmp_path) == [
        "kg/cli/similar.py:2 imports kg.graph.similarity.similar",
        "kg/cli/similar.py:3 imports kg.query.stats",
        "kg/cli/similar.py:4 imports kg.graph.projections.write_graph",
    ]


# --- answers checked against independent computations --------------------------------------


@pytest.fixture(scope="module")
def seed_json() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SEEDS_DIR.glob("*.json"))]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kg.KnowledgeGraph]:
    store = build_once(tmp_path_factory, "seeds-store", "ingest", "-q", str(SEEDS_DIR))
    with kg.open(store) as g:
        yield g


@pytest.fixture(scope="module")
def exported(seeds: kg.KnowledgeGraph, tmp_path_factory: pytest.TempPathFactory) -> rdflib.Graph:
    """The seeds store exported by the library as N-Triples, read back by rdflib."""
    path = tmp_path_factory.mktemp("export") / "seeds.nt"
    report = seeds.export(path, "ntriples")
    parsed = rdflib.Graph().parse(path, format="nt")
    assert report.statements == len(parsed) > 100
    return parsed


def _slug(record: dict[str, Any]) -> str:
    return str(record["url"]).rsplit("/", 1)[-1]


def test_stats_counts_what_rdflib_counts(seeds: kg.KnowledgeGraph, exported: rdflib.Graph) -> None:
    stats = seeds.stats()
    assert stats.triples == len(exported)
    for cls in ("Paper", "Author", "Method", "Task", "Repository"):
        subjects = set(exported.subjects(rdflib.RDF.type, KGO[cls]))
        assert stats.classes[f"kg:{cls}"] == len(subjects), cls


def test_sparql_rows_are_the_titles_and_ids_of_the_raw_records(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]]
) -> None:
    rows = seeds.sparql("SELECT ?id ?title WHERE { ?p kg:arxivId ?id ; dcterms:title ?title }")
    assert rows.variables == ("id", "title")
    assert sorted((r["id"], r["title"]) for r in rows) == sorted(
        (d["arxiv_id"], d["title"]) for d in seed_json
    )
    assert list(seeds.iter_sparql("SELECT ?p WHERE { ?p a kg:Paper } ORDER BY ?p")) == list(
        seeds.sparql("SELECT ?p WHERE { ?p a kg:Paper } ORDER BY ?p")
    )
    assert bool(seeds.sparql(f"ASK {{ ?p kg:arxivId '{seed_json[0]['arxiv_id']}' }}"))
    assert not seeds.sparql("ASK { ?p kg:arxivId '0000.00000' }")
    built = seeds.sparql("CONSTRUCT { ?p dcterms:title ?t } WHERE { ?p dcterms:title ?t }")
    assert built.form == "CONSTRUCT" and len(built) == 0 and built.ntriples
    with pytest.raises(kg.UsageError, match="SELECT"):
        list(seeds.iter_sparql("ASK { ?s ?p ?o }"))
    with pytest.raises(kg.QuerySyntaxError):
        seeds.sparql("SELECT WHERE")


def test_query_finds_each_authors_papers_as_the_raw_records_list_them(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]]
) -> None:
    for record in seed_json:
        for author in record["authors"]:
            titles = [r["title"] for r in seeds.query("papers-by-author", author=author)]
            expected = [d["title"] for d in seed_json if author in d["authors"]]
            assert sorted(titles) == sorted(expected), author
    with pytest.raises(kg.UnknownNameError, match="no author named"):
        seeds.query("papers-by-author", author="Nobody At All")
    with pytest.raises(kg.NotFoundError, match="no query named"):
        seeds.query("no-such-query")


def test_resolve_takes_a_title_an_arxiv_id_and_a_slug(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]]
) -> None:
    for record in seed_json:
        iri = f"{BASE}paper/{_slug(record)}"
        assert seeds.resolve("paper", record["title"].upper()).iri == iri
        assert seeds.resolve("paper", f"arXiv:{record['arxiv_id']}v1").iri == iri
        assert seeds.resolve("paper", _slug(record)).label == record["title"]
    with pytest.raises(kg.UnknownNameError):
        seeds.resolve("paper", "a paper nobody wrote")


def test_search_finds_each_record_by_its_title(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]]
) -> None:
    for record in seed_json:
        page = seeds.search(record["title"], type="paper", top=5)
        assert page[0].iri == f"{BASE}paper/{_slug(record)}"
        assert page[0].year == int(record["date"][:4])
        tasks = sorted(t["task_name"] for t in record["tasks"])
        assert list(page[0].tasks) == tasks
    with pytest.raises(kg.UsageError):
        seeds.search("x", type="nothing")


def _methods(record: dict[str, Any]) -> set[str]:
    return {f"{BASE}method/{m['method_slug']}" for m in record["methods"]}


def test_shared_and_similar_agree_with_the_raw_method_lists(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]]
) -> None:
    a, b = seed_json
    both = _methods(a) & _methods(b)
    result = seeds.shared(a["arxiv_id"], b["title"], by="methods")
    (methods,) = result.relations
    assert {i.iri for i in methods.items} == both
    assert (methods.count_a, methods.count_b) == (len(_methods(a)), len(_methods(b)))
    assert all(i.label for i in methods.items)
    ranked = seeds.similar(_slug(a), by="methods", metric="jaccard", top=5)
    (match,) = ranked.matches
    assert match.paper == f"{BASE}paper/{_slug(b)}" and match.label == b["title"]
    assert match.score == pytest.approx(len(both) / len(_methods(a) | _methods(b)))
    assert ranked.as_dict()["results"][0]["shared_count"] == len(both)


def test_the_method_projection_is_networkx_s_projection_of_the_raw_pairs(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]]
) -> None:
    bipartite = nx.Graph()
    for record in seed_json:
        for method in _methods(record):
            bipartite.add_edge(record["url"], method)
    methods = set().union(*(_methods(r) for r in seed_json))
    expected = nx.bipartite.weighted_projected_graph(bipartite, methods)
    got = seeds.projection("method-cooccurrence")
    assert set(got.nodes) == set(expected.nodes)
    assert {frozenset(e): w for *e, w in got.edges(data="weight")} == {
        frozenset(e): w for *e, w in expected.edges(data="weight")
    }
    pairs = sum(len(list(combinations(_methods(r), 2))) for r in seed_json)
    assert got.number_of_edges() == pairs - len(list(combinations(
        _methods(seed_json[0]) & _methods(seed_json[1]), 2)))


def test_the_leaderboard_ranks_the_raw_table(graph: kg.KnowledgeGraph) -> None:
    with gzip.open(ROOT / "examples" / "pwc" / "evaluation-tables.json.gz") as raw:
        tables = json.load(raw)

    def tasks(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for t in items:
            yield t
            yield from tasks(t.get("subtasks") or [])

    rows = [
        row
        for t in tasks(tables)
        if t["task"] == "Image Classification"
        for d in t["datasets"]
        if d["dataset"] == "ImageNet"
        for row in d["sota"]["rows"]
        if "Top 1 Accuracy" in row["metrics"]
    ]
    board = graph.leaderboard("image classification", "ImageNet", metric="TOP 1 accuracy")
    (section,) = board.sections
    assert len(section.entries) == len(rows)
    best = max(rows, key=lambda r: Decimal(r["metrics"]["Top 1 Accuracy"].rstrip("%")))
    assert (section.entries[0].model, section.entries[0].value) == (
        best["model_name"], best["metrics"]["Top 1 Accuracy"]
    )
    with pytest.raises(kg.NotFoundError, match="no metric"):
        graph.leaderboard("image classification", "ImageNet", metric="speed")


def test_export_in_two_formats_gives_one_graph(
    seeds: kg.KnowledgeGraph, exported: rdflib.Graph, tmp_path: Path,
    seed_json: list[dict[str, Any]],
) -> None:
    report = seeds.export(tmp_path / "seeds.ttl", "turtle")
    turtle = rdflib.Graph().parse(tmp_path / "seeds.ttl", format="turtle")
    assert report.path == tmp_path / "seeds.ttl"
    assert isomorphic(turtle, exported)
    assert {str(t) for t in turtle.objects(None, DCT.title)} >= {d["title"] for d in seed_json}
    with pytest.raises(kg.UsageError):
        seeds.export(tmp_path / "x.ttl", "turtle", graph="graph/entities", query="paper-card")


def test_ingest_needs_a_writable_store_and_reports_what_it_read(
    seeds: kg.KnowledgeGraph, seed_json: list[dict[str, Any]], tmp_path: Path
) -> None:
    with pytest.raises(kg.StoreError, match="read-only"):
        seeds.ingest([SEEDS_DIR])
    with pytest.raises(kg.StoreMissingError):
        kg.open(tmp_path / "none")
    with kg.open(tmp_path / "new", read_only=False) as fresh:
        report = fresh.ingest([SEEDS_DIR])
        assert (report.added, report.rejected) == (len(seed_json), 0)
        again = fresh.ingest(sorted(SEEDS_DIR.glob("*.json")))
        assert (again.added, again.unchanged) == (0, len(seed_json))
        assert fresh.search(seed_json[1]["title"], type="paper")[0].label == seed_json[1]["title"]
        with pytest.raises(kg.UsageError, match="unknown 'kind'"):
            fresh.ingest([SEEDS_DIR], kind="nope")
    typo = kg.KnowledgeGraph(tmp_path / "typo", read_only=False)  # opens on first use
    with pytest.raises(kg.UsageError, match="'snapshot' '2020-13-01' is not a date"):
        typo.ingest([SEEDS_DIR], snapshot="2020-13-01")
    assert not (tmp_path / "typo").exists()  # a bad option creates no store
