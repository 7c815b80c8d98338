"""One node per paper across the dumps and the seed-format records, whatever the order of
loading (docs/identity.md): by slug, else arXiv id (version dropped), else title and year."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kg.ingest.ingestor import IngestReport, ingest
from kg.rdf.store import GraphStore
from tests import dump_samples
from tests.conftest import BASE, RAW_DIR, select

METHODS_GZ = RAW_DIR / "pwc-methods-2022" / "methods.json.gz"
EVALUATION_GZ = RAW_DIR / "pwc-evaluation-tables-2020" / "evaluation-tables.json.gz"
SLUG, ARXIV, TITLE, DATE = (
    dump_samples.SLUG,
    dump_samples.ARXIV,
    dump_samples.TITLE,
    dump_samples.DATE,
)


def load(store: GraphStore, *paths: Path, **options: Any) -> IngestReport:
    report = ingest(store, [str(p) for p in paths], base_iri=BASE, **options)
    assert report.rejected == 0, report.errors[:3]
    return report


def graph(store: GraphStore) -> list[str]:
    """The store's quads without the load times (which differ from run to run)."""
    return sorted(q for q in store.quads_nquads() if "#ingestedAt>" not in q)


def papers_with(store: GraphStore, arxiv: str) -> list[str]:
    rows = select(store, f'SELECT DISTINCT ?p WHERE {{ ?p kg:arxivId "{arxiv}" }}')
    return sorted(str(r["p"]) for r in rows)


def mentions(store: GraphStore, fragment: str) -> int:
    return sum(1 for q in store.quads_nquads() if fragment in q)


# --- the real slices ------------------------------------------------------------------------

_ARXIV_ID = re.compile(r"\d{4}\.\d{4,5}")


def _rows_naming(entry: dict[str, Any], arxivs: set[str], titles: set[str]) -> dict[str, Any] | None:
    """The task entry with only the leaderboard rows that name one of the papers (by arXiv
    id or title), its datasets and subtasks left without rows dropped; None if nothing is
    left."""
    datasets = []
    for dataset in entry.get("datasets") or []:
        rows = [
            row
            for row in (dataset.get("sota") or {}).get("rows") or []
            if arxivs & set(_ARXIV_ID.findall(str(row.get("paper_url"))))
            or str(row.get("paper_title", "")).casefold() in titles
        ]
        if rows:
            datasets.append({**dataset, "sota": {**dataset["sota"], "rows": rows}})
    subtasks = [
        kept
        for kept in (_rows_naming(s, arxivs, titles) for s in entry.get("subtasks") or [])
        if kept
    ]
    if not datasets and not subtasks:
        return None
    return {**entry, "datasets": datasets, "subtasks": subtasks}


@pytest.fixture(scope="module")
def shared_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real 2020 tables cut to the rows that name a paper of the real methods dump (by
    arXiv id or title): every row where the two sources meet, and 14 % of the rows in all,
    so that loading them four times stays cheap."""
    methods = json.loads(gzip.decompress(METHODS_GZ.read_bytes()))
    arxivs = {a for m in methods for a in _ARXIV_ID.findall(m.get("source_url") or "")}
    titles = {
        str((m.get("paper") or {}).get("title") or m.get("source_title") or "").casefold()
        for m in methods
    } - {""}
    roots = json.loads(gzip.decompress(EVALUATION_GZ.read_bytes()))
    kept = [e for e in (_rows_naming(r, arxivs, titles) for r in roots) if e]
    path = tmp_path_factory.mktemp("tables") / "evaluation-tables.json.gz"
    path.write_bytes(gzip.compress(json.dumps(kept).encode(), compresslevel=1))
    return path


@pytest.fixture(scope="module")
def both_orders(shared_tables: Path) -> tuple[GraphStore, GraphStore, IngestReport]:
    """methods.json (slugs, and arXiv ids through source_url) and the 2020 tables (arXiv URLs
    with versions), loaded in one order and in separate runs in the other."""
    forward = GraphStore.memory()
    load(forward, METHODS_GZ)
    load(forward, shared_tables)
    backward = GraphStore.memory()
    load(backward, shared_tables)
    late = load(backward, METHODS_GZ)
    return forward, backward, late


def test_real_slices_give_one_graph_in_either_order(
    both_orders: tuple[GraphStore, GraphStore, IngestReport],
) -> None:
    forward, backward, late = both_orders
    assert late.renamed >= 395  # the tables' arXiv IRIs, renamed when methods.json came
    assert graph(forward) == graph(backward)


def test_real_slices_merge_the_papers_they_share(
    both_orders: tuple[GraphStore, GraphStore, IngestReport],
) -> None:
    store = both_orders[1]
    rows = select(
        store,
        """SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p kg:introducesMethod ?m ; kg:hasResult ?r ;
                                                     kg:pwcSlug ?slug }""",
    )
    assert rows == [{"n": 395}]  # papers that introduce a method and top a leaderboard
    # ... for instance the Transformer: its slug node carries the tables' results
    assert papers_with(store, "1706.03762") == [f"{BASE}paper/attention-is-all-you-need"]
    assert mentions(store, f"<{BASE}paper/arxiv/1706.03762") == 0


def test_records_overlapping_the_real_tables_join_the_same_node(tmp_path: Path) -> None:
    """A record names the paper by slug and arXiv id; the 2020 table by an arXiv URL with a
    version. The real first top-level task of the 2020 dump, and a record about its first row."""
    roots = json.loads(gzip.decompress(EVALUATION_GZ.read_bytes()))
    table = tmp_path / "tables" / "evaluation-tables.json"
    table.parent.mkdir()
    table.write_text(json.dumps(roots[:1]))
    slug = "attention-based-extraction-of-structured"
    record = {
        "url": f"/paper/{slug}",
        "arxiv_id": "1704.03549",
        "title": "Attention-based Extraction of Structured Information from Street View Imagery",
        "date": "2017-04-11",
        "code_links": [
            {
                "repo_url": "https://github.com/tensorflow/models/tree/master/research/attention_ocr",
                "is_official": 1,
            }
        ],
    }
    record_file = tmp_path / "records" / "record.json"
    record_file.parent.mkdir()
    record_file.write_text(json.dumps(record))
    stores = []
    for first, second in ((record_file, table), (table, record_file)):
        store = GraphStore.memory()
        load(store, first)
        load(store, second)
        stores.append(store)
        node = f"{BASE}paper/{slug}"
        assert papers_with(store, "1704.03549") == [node]
        link = f"{node}/code/github.com/tensorflow/models/-/research/attention_ocr"
        facts = select(
            store,
            f"""SELECT DISTINCT ?official ?title WHERE {{ <{node}> kg:codeLink <{link}> ;
                  kg:hasResult ?r . <{link}> kg:isOfficial ?official ; rdfs:label ?title }}""".replace(
                "SELECT", "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nSELECT", 1
            ),
        )
        assert facts == [{"official": True, "title": "tensorflow/models"}]  # record + table
    assert graph(stores[0]) == graph(stores[1])


# --- the five dumps and a record, hand-made --------------------------------------------------


def _record(tmp_path: Path) -> Path:
    """A record that names the paper by arXiv id only (no `url`)."""
    path = tmp_path / "records" / "by-arxiv.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"arxiv_id": f"{ARXIV}v2", "title": TITLE, "date": DATE}))
    return path


@pytest.fixture
def sources(tmp_path: Path) -> list[Path]:
    return [*dump_samples.write_all(tmp_path / "dumps"), _record(tmp_path)]


@pytest.mark.parametrize("order", ["as listed", "reversed", "tables first"])
def test_one_node_whatever_the_order_of_the_runs(order: str, sources: list[Path]) -> None:
    sequence = {
        "as listed": sources,
        "reversed": sources[::-1],
        "tables first": [sources[4], sources[5], *sources[:4]],
    }[order]
    reference = GraphStore.memory()
    load(reference, *sources, snapshot="2025-01-01")  # one run: slug sources go first
    assert reference.count() > 0
    store = GraphStore.memory()
    for path in sequence:  # one run per file, in this order
        load(store, path, snapshot="2025-01-01")
    assert papers_with(store, ARXIV) == [f"{BASE}paper/{SLUG}"]
    assert mentions(store, f"<{BASE}paper/arxiv/") == 0
    titled = select(
        store,
        'SELECT DISTINCT ?p WHERE { ?p a kg:Paper FILTER(CONTAINS(STR(?p), "/paper/title/")) }',
    )
    assert len(titled) == 1  # ImageNet's paper, named by a title with no year
    assert graph(store) == graph(reference)


def test_one_run_reads_slug_sources_before_the_tables(sources: list[Path]) -> None:
    store = GraphStore.memory()
    report = load(store, sources[4], sources[5], *sources[:4])  # tables and record first
    assert report.renamed == 0  # nothing had to be renamed: the files were reordered
    assert papers_with(store, ARXIV) == [f"{BASE}paper/{SLUG}"]


def test_renaming_moves_the_nodes_beneath_the_paper(tmp_path: Path) -> None:
    tables = dump_samples.write(tmp_path, "evaluation-tables")
    store = GraphStore.memory()
    load(store, tables)
    fallback = f"{BASE}paper/arxiv/{ARXIV}"
    results = mentions(store, f"<{fallback}/result/")
    links = mentions(store, f"<{fallback}/code/")
    assert results and links
    report = load(store, dump_samples.write(tmp_path, "papers-with-abstracts"))
    # one rename: the ReaL row (title and date only) already joined the arXiv IRI, which
    # an earlier row of the same table linked to that title
    assert report.renamed == 1
    assert mentions(store, f"<{fallback}") == 0
    assert mentions(store, f"<{BASE}paper/{SLUG}/result/") == results
    assert mentions(store, f"<{BASE}paper/{SLUG}/code/") == links
    # loading everything again finds every unit unchanged: the renamed graphs are what the
    # mapping now gives
    again = load(store, tables, tmp_path / "papers-with-abstracts.json")
    assert (again.added, again.updated) == (0, 0)


def test_title_and_year_match_but_title_alone_does_not(tmp_path: Path) -> None:
    row = dump_samples.EVALUATION[0]["datasets"][0]["subdatasets"][0]["sota"]["rows"][0]
    assert row["paper_url"].startswith("https://openaccess.thecvf.com/")  # neither slug nor arXiv
    undated = json.loads(json.dumps(dump_samples.EVALUATION))
    undated[0]["datasets"][0]["subdatasets"][0]["sota"]["rows"][0]["paper_date"] = None
    for items, expected in ((dump_samples.EVALUATION, 1), (undated, 2)):
        store = GraphStore.memory()
        load(store, dump_samples.write(tmp_path, "papers-with-abstracts"))
        load(store, dump_samples.write(tmp_path, "evaluation-tables", items))
        titled = select(store, f'SELECT DISTINCT ?p WHERE {{ ?p dcterms:title "{TITLE}" }}')
        assert len(titled) == expected


def test_two_slugs_claiming_one_arxiv_id_resolve_to_the_smallest(tmp_path: Path) -> None:
    twin = {**dump_samples.PAPERS[0], "paper_url": f"{dump_samples.PWC}/paper/a-duplicate-entry"}
    store = GraphStore.memory()
    load(
        store, dump_samples.write(tmp_path, "papers-with-abstracts", [dump_samples.PAPERS[0], twin])
    )
    load(store, dump_samples.write(tmp_path, "evaluation-tables"))
    holders = select(store, "SELECT DISTINCT ?p WHERE { ?p kg:hasResult ?r ; kg:pwcSlug ?s }")
    assert holders == [{"p": f"{BASE}paper/a-duplicate-entry"}]
    assert len(papers_with(store, ARXIV)) == 2  # both slug nodes keep their arXiv id


def test_strict_mode_maps_dumps_without_writing_twice(sources: list[Path]) -> None:
    store = GraphStore.memory()
    report = load(store, *sources, strict=True)
    assert report.added > 10 and report.renamed == 0
    assert papers_with(store, ARXIV) == [f"{BASE}paper/{SLUG}"]


def test_rename_is_one_atomic_update_over_every_graph() -> None:
    store = GraphStore.memory()
    old, new = "http://x.org/paper/arxiv/1", "http://x.org/paper/s"
    store.write_batch(
        (
            f"<{old}> <http://x.org/p> <{old}/result/a> <http://x.org/g1> .\n"
            f'<{old}/result/a> <http://x.org/v> "1\\n\\"x" <http://x.org/g1> .\n'
            f'<{old}> <http://x.org/t> "T" <http://x.org/g2> .\n'
            f"<http://x.org/o> <http://x.org/cites> <{old}> <http://x.org/g3> .\n"
            f'<{old}0> <http://x.org/t> "a neighbour, not beneath" <http://x.org/g3> .\n'
        ).encode(),
        ["http://x.org/g1", "http://x.org/g2", "http://x.org/g3"],
    )
    assert store.rename_iris({old: new}) == 4
    assert sorted(store.quads_nquads()) == [
        f"<http://x.org/o> <http://x.org/cites> <{new}> <http://x.org/g3> .\n",
        f'<{old}0> <http://x.org/t> "a neighbour, not beneath" <http://x.org/g3> .\n',
        f'<{new}/result/a> <http://x.org/v> "1\\n\\"x" <http://x.org/g1> .\n',
        f"<{new}> <http://x.org/p> <{new}/result/a> <http://x.org/g1> .\n",
        f'<{new}> <http://x.org/t> "T" <http://x.org/g2> .\n',
    ]


def test_a_rename_beneath_another_takes_the_longest_old_iri() -> None:
    """Two renamed IRIs, one beneath the other: a node under both moves by the longer."""
    store = GraphStore.memory()
    a, b = "http://x.org/paper/arxiv/1", "http://x.org/paper/arxiv/1/result/a"
    g = "http://x.org/g1"
    store.write_batch(
        (
            f"<{a}> <http://x.org/p> <{b}> <{g}> .\n"
            f"<{b}> <http://x.org/p> <{b}/x> <{g}> .\n"
            f"<{a}> <http://x.org/p> <{a}/result/b> <{g}> .\n"
        ).encode(),
        [g],
    )
    store.rename_iris({a: "http://x.org/paper/s", b: "http://x.org/r"})
    assert sorted(store.quads_nquads()) == [
        f"<http://x.org/paper/s> <http://x.org/p> <http://x.org/paper/s/result/b> <{g}> .\n",
        f"<http://x.org/paper/s> <http://x.org/p> <http://x.org/r> <{g}> .\n",
        f"<http://x.org/r> <http://x.org/p> <http://x.org/r/x> <{g}> .\n",
    ]


_NLP = re.compile(r"natural.language.processing|\bnlp\b", re.IGNORECASE)


def _categories(entry: dict[str, Any]) -> list[Any]:
    """The categories of a task entry and of every subtask beneath it."""
    found = list(entry.get("categories") or [])
    for sub in entry.get("subtasks") or []:
        found.extend(_categories(sub))
    return found


def test_an_area_abbreviation_joins_the_area_it_stands_for(
    shared_tables: Path, tmp_path: Path
) -> None:
    """The sota-extractor leaderboards file tasks under "NLP"; the 2020 tables under
    "Natural Language Processing". One area, with "NLP" as an alternative label."""
    # the tables' task trees that file a task under NLP, by either name: every place the
    # 2020 side of the join can come from (the other areas' trees have no part in it)
    nlp_trees = [
        root
        for root in json.loads(gzip.decompress(shared_tables.read_bytes()))
        if _NLP.search(json.dumps(_categories(root)))
    ]
    assert len(nlp_trees) > 10
    tables = tmp_path / "evaluation-tables.json"
    tables.write_text(json.dumps(nlp_trees), encoding="utf-8")
    store = GraphStore.memory()
    load(store, tables, RAW_DIR / "sota-extractor-tasks" / "redditsota.json")
    nlp = f"{BASE}area/natural-language-processing"
    assert mentions(store, f"<{BASE}area/nlp>") == 0
    labels = select(
        store,
        f"SELECT ?p ?l WHERE {{ <{nlp}> ?p ?l FILTER(isLiteral(?l)) }} ORDER BY ?p ?l",
    )
    assert [(str(r["p"]).rsplit("#", 1)[-1], str(r["l"])) for r in labels] == [
        ("label", "Natural Language Processing"),  # rdfs: sorts before skos:
        ("altLabel", "NLP"),
    ]
    reddit_tasks = select(
        store,
        f"""SELECT DISTINCT ?t WHERE {{ GRAPH ?g {{ ?t kg:area <{nlp}> }}
            FILTER(CONTAINS(STR(?g), "redditsota")) }}""",
    )
    assert len(reddit_tasks) == 6  # every task redditsota files under "NLP"
