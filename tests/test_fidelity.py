"""Issue 14: one identity per thing, numbers where there are numbers, honest licences,
nothing dropped silently, and `kg validate` passing on every real file.

Expected counts are computed here with plain Python over the raw JSON (and a plain
reference slug rule), not by kg's code.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.export.validate import validate
from kg.ingest.identity import clean_name, licence_iri, pwc_slug, repository
from kg.ingest.ingestor import IngestReport, ingest
from kg.ingest.values import metric_value
from kg.rdf.store import GraphStore
from tests.conftest import BASE, RAW_DIR
from tests.conftest import select as _select
from tests.test_merge import _check_counts as check_counts
from tests.test_merge import _kg_rows as kg_rows

RDFS = "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"


def select(store: GraphStore, query: str) -> list[dict[str, object]]:
    return _select(store, RDFS + query)


EVALUATION_GZ = RAW_DIR / "pwc-evaluation-tables-2020" / "evaluation-tables.json.gz"
SOTA_DIR = RAW_DIR / "sota-extractor-tasks"
RAW_FILES = sorted(p for p in RAW_DIR.rglob("*") if p.suffix in (".json", ".gz"))
ASCII_ALNUM = set("abcdefghijklmnopqrstuvwxyz0123456789")


# --- plain reference implementations ---------------------------------------------------------


def reference_slug(name: str) -> str:
    """PwC's rule, one character at a time: accents folded, then every run of characters
    that are not ASCII letters or digits is one '-'."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKD", name.lower()):
        if unicodedata.combining(ch):
            continue
        if ch in ASCII_ALNUM:
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")


@cache  # the 2020 tables are parsed by three tests; they only read what they get
def load_json(path: Path) -> Any:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def tasks(task: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield task
    for sub in task.get("subtasks") or []:
        yield from tasks(sub)


def tables(
    dataset: dict[str, Any], parent: str | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(dataset key, dataset) for a dataset and its subdatasets, keyed as kg keys them."""
    name = " ".join((dataset.get("dataset") or dataset.get("subdataset") or "").split())
    key = reference_slug(name) if parent is None else f"{parent}/{reference_slug(name)}"
    yield key, dataset
    for sub in dataset.get("subdatasets") or []:
        yield from tables(sub, reference_slug(name))


def rows_of(data: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for root in data:
        for task in tasks(root):
            for dataset in task.get("datasets") or []:
                for _, table in tables(dataset):
                    yield from (table.get("sota") or {}).get("rows") or []


# --- 1. identity -----------------------------------------------------------------------------


@given(st.text(max_size=40))
def test_slug_rule_matches_the_plain_reference(name: str) -> None:
    assert pwc_slug(name) == reference_slug(name)


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("THUMOS’14", "thumos-14"),  # the real 2020 table name: one identity with the next
        ("THUMOS'14", "thumos-14"),
        ("Drug–drug interaction extraction", "drug-drug-interaction-extraction"),
        ("Dayton (256×256) - ground-to-aerial", "dayton-256-256-ground-to-aerial"),
        ("Pokémon", "pokemon"),  # accents fold to the letter
        (" FB15k", "fb15k"),
    ],
)
def test_slug_examples(name: str, slug: str) -> None:
    assert pwc_slug(name) == slug


def test_names_are_trimmed_and_collapsed() -> None:
    assert clean_name(" FB15k") == clean_name("FB15k") == "FB15k"
    assert clean_name("Speed  (FPS)") == "Speed (FPS)"


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/hangg7/deformable-kernels",
        "https://github.com/hangg7/deformable-kernels/",
        "https://github.com/hangg7/deformable-kernels.git",
        "https://GitHub.com/Hangg7/Deformable-Kernels",
        "https://github.com/hangg7/deformable-kernels/tree/master",
    ],
)
def test_repository_spellings_are_one_link(url: str) -> None:
    ref = repository(url)
    assert ref is not None
    assert ref.key == "github.com/hangg7/deformable-kernels"
    assert ref.link_url == "https://github.com/hangg7/deformable-kernels"


def test_a_path_inside_a_repository_stays_on_the_link() -> None:
    ref = repository("https://github.com/tensorflow/models/tree/master/research/attention_ocr")
    assert ref is not None and ref.path == "research/attention_ocr"
    assert ref.link_url.endswith("/tree/master/research/attention_ocr")


# --- 2. values -------------------------------------------------------------------------------

#: Every distinct value shape in the shared slices (digits as 9, words as a: see
#: docs/dumps.md), with a real value of that shape and what it becomes:
#: (number, percent, spread), or None for no number.
SHAPES: list[tuple[str, tuple[str, bool, str | None] | None]] = [
    ("15.8", ("15.8", False, None)),
    ("96.95%", ("96.95", True, None)),
    ("22", ("22", False, None)),
    ("88%", ("88", True, None)),
    ("1542M", ("1542000000", False, None)),
    ("0.57 ± 0.23", ("0.57", False, "0.23")),
    ("15.9M", ("15900000", False, None)),
    ("-", None),
    ("-1.1", ("-1.1", False, None)),
    ("Kinetics400", None),
    ("No", None),
    ("53.3m", None),  # m: million (Parameters) or SI milli? not read
    (" 0.8784", ("0.8784", False, None)),
    ("57.01 %", ("57.01", True, None)),
    ("51.5 ", ("51.5", False, None)),
    ("2,200", None),  # 2200 or 2.2: ambiguous
    ("7,537", None),  # a Mean IoU of 7.537, surely, but the rule cannot know
    ("339m", None),
    ("N/A", None),
    ("", None),
    (".931", ("0.931", False, None)),
    ("0.8B", ("800000000", False, None)),
    ("94.6 (14  gestures) , 91.9 (28 gestures )", None),
    ("78.0 (average of 3 split train/test)", None),
    ("1.82 M", ("1820000", False, None)),
    (" 9.1%", ("9.1", True, None)),
    ("54.60/55.55", None),
    ("-326", ("-326", False, None)),
    ("Multi-View", None),
    ("Please tell us", None),
    ("**55.6**", ("55.6", False, None)),
    ("63.7*", None),
    ("580k", ("580000", False, None)),
    ("--*", None),
    ("212 ± 213", ("212", False, "213")),
    ("--", None),
    ("fixed 20 per class", None),
    ("60.7+", None),
    (" 53.2 ", ("53.2", False, None)),
    ("cosine loss", None),
    ("–", None),
    ("5B", ("5000000000", False, None)),
    ("20 per node", None),
    ("20 per node with early stopping set", None),
    ("2.42±0.01", ("2.42", False, "0.01")),
    ("70.14 (measured by Ge et al., 2018)", None),
    ("8.42 ± 3", ("8.42", False, "3")),
    ("79.6%%", None),
    ("\ufeff93.3", ("93.3", False, None)),
    ("91.6/91.1*", None),
    ("-0.2 ", ("-0.2", False, None)),
    ("42.5(1080Ti)", None),
    ("11(TitanX)", None),
    ("TAS-pruned ResNet-18", None),
    ("−", None),
    ("43B?", None),
    ("?", None),
    ("**Precision**", None),
    ("(32.76 32.07 26.26 22.74)", None),
    ("(16.97 15.58)", None),
    ("0.33s/img", None),
    ("87:1", None),
    ("O.753", None),
    ("github.com/pattyhendrix/CamVid-95-accuracy/blob/master/CamVid-95.ipynb", None),
    ("53 (1080Ti)", None),
    ("18.8 (1080Ti)", None),
    ("47.6 (Titan X)", None),
    ("88%%", None),
    ("1,514,187", ("1514187", False, None)),
    (">1,400.000", None),
    ("2.2.M", None),
    ("56.4&", None),
    ("76,2%", ("76.2", True, None)),
    ("37,7", ("37.7", False, None)),
    ("improving about 0.2-0.3dB", None),
    ("~257M", None),
    ("17.1(16.1 with basic dynamic evaluation)", None),
    ("**F1**", None),
    ("---", None),
    ("Stanford conversion **v3.5.0**", None),
    # JSON numbers (eff.json) arrive as their repr; NaN and Infinity are never numbers
    ("17.3", ("17.3", False, None)),
    ("nan", None),
    ("NaN", None),
    ("inf", None),
    ("Infinity", None),
    ("-Infinity", None),
]


def shape(value: Any) -> str:
    if not isinstance(value, str):
        return type(value).__name__
    text = re.sub(r"[0-9]+", "9", value)
    return re.sub(
        r"[a-zA-Z]+", lambda m: m.group(0) if m.group(0) in ("k", "M", "B", "m") else "a", text
    )


@pytest.mark.parametrize(("raw", "expected"), SHAPES)
def test_metric_value_shapes(raw: str, expected: tuple[str, bool, str | None] | None) -> None:
    parsed = metric_value(raw)
    assert parsed.raw == raw
    if expected is None:
        assert parsed.number is None and parsed.spread is None
    else:
        assert (parsed.number, parsed.percent, parsed.spread) == expected


def test_the_shape_list_covers_every_shape_in_the_slices() -> None:
    seen: dict[str, str] = {}
    for path in [EVALUATION_GZ, *sorted(SOTA_DIR.glob("*.json"))]:
        for row in rows_of(load_json(path)):
            for value in (row.get("metrics") or {}).values():
                if isinstance(value, str):
                    seen.setdefault(shape(value), value)
    listed = {shape(raw) for raw, _ in SHAPES}
    missing = {s: v for s, v in seen.items() if s not in listed}
    assert not missing, f"value shapes with no expectation: {missing}"


# --- the real slices, ingested ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tables2020() -> tuple[GraphStore, IngestReport]:
    """`ingest(EVALUATION_GZ)` as one run, built once for every test of this file that reads
    the 2020 tables alone (their validation and the merge check included): about 18 CPU-s
    each time it is built."""
    store = GraphStore.memory()
    report = ingest(store, [str(EVALUATION_GZ)], base_iri=BASE)
    assert report.rejected == 0, report.errors[:3]
    return store, report


def count(store: GraphStore, where: str) -> int:
    rows = select(store, f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{ {where} }}")
    return int(str(rows[0]["n"]))


def test_independent_counts_of_datasets_and_leaderboards(
    tables2020: tuple[GraphStore, IngestReport],
) -> None:
    store, _ = tables2020
    data = load_json(EVALUATION_GZ)
    datasets: set[str] = set()
    boards: set[tuple[str, str]] = set()
    for root in data:
        for task in tasks(root):
            name = " ".join((task.get("task") or "").split())
            if not name:
                continue
            for dataset in task.get("datasets") or []:
                for key, table in tables(dataset):
                    datasets.add(key)
                    if table.get("sota") is not None:
                        boards.add((reference_slug(name), key))
    assert (len(datasets), len(boards)) == (2158, 2729)  # the independent count
    assert count(store, "?x a kg:Dataset") == len(datasets)
    assert count(store, "?x a kg:Leaderboard") == len(boards)
    thumos = count(store, f"?x a kg:Dataset FILTER(STRSTARTS(STR(?x), '{BASE}dataset/thumos'))")
    assert thumos == len({k for k in datasets if k.startswith("thumos")})
    assert count(store, f"<{BASE}dataset/thumos-14> a kg:Dataset BIND(1 AS ?x)") == 1


def test_stray_whitespace_makes_no_duplicate_result(
    tables2020: tuple[GraphStore, IngestReport],
) -> None:
    """ " FB15k" and "FB15k" are one dataset: a value shows once on its leaderboard."""
    store, _ = tables2020
    rows = select(
        store,
        f"""SELECT ?p ?task ?model ?metric ?value ?r WHERE {{
          ?r kg:onDataset <{BASE}dataset/fb15k> ; kg:onTask ?task ; kg:modelName ?model ;
             kg:metricName ?metric ; kg:metricValue ?value . ?p kg:hasResult ?r }}""",
    )
    keys = [(r["p"], r["task"], r["model"], r["metric"], r["value"]) for r in rows]
    assert len(keys) == len(set(keys)) > 0
    labels = select(store, f"SELECT ?l WHERE {{ <{BASE}dataset/fb15k> rdfs:label ?l }}")
    assert {r["l"] for r in labels} == {"FB15k"}


def test_one_url_per_code_link(tables2020: tuple[GraphStore, IngestReport]) -> None:
    store, _ = tables2020
    rows = select(
        store,
        """SELECT ?link (COUNT(DISTINCT ?url) AS ?n) WHERE { ?link kg:linkedUrl ?url }
           GROUP BY ?link HAVING (COUNT(DISTINCT ?url) > 1)""",
    )
    assert rows == []
    kernels = select(
        store,
        """SELECT DISTINCT ?url WHERE { ?p kg:codeLink ?link . ?link kg:linkedUrl ?url
             FILTER(CONTAINS(LCASE(STR(?url)), "deformable-kernels")) }""",
    )
    # written with and without a trailing slash in the 2020 tables: one URL
    assert kernels == [{"url": "https://github.com/hangg7/deformable-kernels"}]


def test_pm_values_are_ranked_by_their_mean() -> None:
    store = GraphStore.memory()
    ingest(store, [str(SOTA_DIR / "ogb.json")], base_iri=BASE)
    raw = load_json(SOTA_DIR / "ogb.json")
    values = [v for row in rows_of(raw) for v in (row.get("metrics") or {}).values()]
    numeric = [v for v in values if metric_value(v if isinstance(v, str) else repr(v)).number]
    assert len(numeric) > 241  # was 241 of 729 before "x ± y" was read
    rows = select(
        store,
        "SELECT (COUNT(DISTINCT ?r) AS ?n) WHERE { ?r kg:metricNumber ?x ; kg:metricSpread ?s }",
    )
    pm = {v for v in values if isinstance(v, str) and "±" in v}
    assert int(str(rows[0]["n"])) > 0 and pm


def test_rows_naming_another_page_keep_it(tables2020: tuple[GraphStore, IngestReport]) -> None:
    """A paper_url that is neither arXiv nor PwC, with no title, lands as kg:paperUrl."""
    store = GraphStore.memory()
    ingest(store, [str(SOTA_DIR)], base_iri=BASE)
    expected: set[str] = set()
    rows = 0
    for path in [EVALUATION_GZ, *sorted(SOTA_DIR.glob("*.json"))]:
        for row in rows_of(load_json(path)):
            url = (row.get("paper_url") or "").strip()
            if (
                url
                and not (row.get("paper_title") or "").strip()
                and "arxiv.org" not in url
                and ("paperswithcode.com" not in url)
            ):
                rows += 1
                if path != EVALUATION_GZ:
                    expected.add(url)
    assert rows == 85  # the count, over both slices
    found = select(store, "SELECT DISTINCT ?u WHERE { ?r kg:paperUrl ?u }")
    landed = {str(r["u"]) for r in found}
    assert len(landed) >= len(expected) - 2  # a page that is not a URL is reported instead
    adamic = select(
        store,
        """SELECT ?u WHERE { ?r kg:modelName "Adamic Adar" ; kg:paperUrl ?u }""",
    )
    assert adamic, "ogb's Adamic Adar keeps its reference"


def test_evaluation_tables_state_each_result_once(
    tables2020: tuple[GraphStore, IngestReport],
) -> None:
    """Issue 13, on the real 2020 tables (moved here from test_merge.py, whose helpers it
    uses, so that the tables are ingested once for both files' checks): the same table under
    several top-level tasks was restated in each task's graph; the merge counts it once, and
    each result is stated in exactly one graph."""
    store, _ = tables2020
    check_counts(store)
    many = kg_rows(
        store,
        """SELECT ?r (COUNT(?g) AS ?n) WHERE { GRAPH ?g { ?r a kg:EvaluationResult } }
           GROUP BY ?r HAVING (COUNT(?g) > 1)""",
    )
    results = kg_rows(store, "SELECT (COUNT(DISTINCT ?r) AS ?n) WHERE { ?r a kg:EvaluationResult }")
    # One exception is allowed for: a paper that a row names by title and a later row by
    # arXiv id gets its IRIs merged (a rename), after which two copies of a table that
    # differed only in that IRI coincide (1 result of the 2020 file).
    assert len(many) <= float(results[0][0]) / 1000, many[:5]
    tree = kg_rows(store, "SELECT (COUNT(*) AS ?n) WHERE { ?t kg:subtaskOf ?p }")
    assert float(tree[0][0]) > 100  # the task tree is still there


def test_unnamed_root_task_is_reported_as_an_entry(
    tables2020: tuple[GraphStore, IngestReport],
) -> None:
    store, report = tables2020
    assert not any(k.startswith("subtasks") for k in report.unknown_keys), report.unknown_keys
    assert not any("categories" in k for k in report.unknown_keys)
    [entry] = report.entries_not_mapped
    assert "item 845" in entry and "Video Reconstruction" in entry
    assert "Grasp Contact Prediction" in entry and "Miscellaneous" in entry
    areas = select(store, f"SELECT ?a WHERE {{ <{BASE}task/grasp-contact-prediction> kg:area ?a }}")
    assert {r["a"] for r in areas} == {f"{BASE}area/miscellaneous", f"{BASE}area/computer-vision"}


def test_papers_have_labels(tables2020: tuple[GraphStore, IngestReport]) -> None:
    store, _ = tables2020
    unlabelled = count(store, "?x dcterms:title ?t FILTER NOT EXISTS { ?x rdfs:label ?t }")
    assert unlabelled == 0
    assert count(store, "?x a kg:Repository FILTER NOT EXISTS { ?x rdfs:label ?l }") == 0


# --- 4. licences -----------------------------------------------------------------------------


def test_one_iri_per_licence() -> None:
    assert (
        licence_iri("https://creativecommons.org/licenses/by-sa/4.0/legalcode")
        == licence_iri("https://creativecommons.org/licenses/by-sa/4.0/")
        == "https://creativecommons.org/licenses/by-sa/4.0/"
    )


def dump_licences(store: GraphStore) -> dict[str, tuple[str | None, str | None, str | None]]:
    rows = select(
        store,
        """SELECT ?name ?licence ?attribution ?archive WHERE { ?d a kg:Dump ; kg:dumpName ?name
           OPTIONAL { ?d dcterms:license ?licence } OPTIONAL { ?d kg:attribution ?attribution }
           OPTIONAL { ?d kg:sourceArchive ?archive } }""",
    )
    return {
        str(r["name"]): tuple(r.get(k) for k in ("licence", "attribution", "archive"))  # type: ignore[misc]
        for r in rows
    }


def test_sota_extractor_files_are_not_stamped_pwc_cc_by_sa() -> None:
    store = GraphStore.memory()
    report = ingest(store, [str(SOTA_DIR / "squad.json")], base_iri=BASE)
    assert dump_licences(store) == {"squad": (None, None, None)}
    assert any("licence of squad.json" in k for k in report.not_mapped)
    said = GraphStore.memory()
    ingest(
        said,
        [str(SOTA_DIR / "squad.json")],
        base_iri=BASE,
        licence="https://www.apache.org/licenses/LICENSE-2.0",
        attribution="https://github.com/paperswithcode/sota-extractor",
    )
    assert dump_licences(said) == {
        "squad": (
            "https://www.apache.org/licenses/LICENSE-2.0",
            "https://github.com/paperswithcode/sota-extractor",
            None,
        )
    }


def test_record_licences_are_two_properties(seed_store: GraphStore) -> None:
    rows = select(
        seed_store,
        """SELECT DISTINCT ?archive ?republisher WHERE {
             ?g a kg:Record ; kg:archiveLicence ?archive ; dcterms:license ?republisher }""",
    )
    assert rows == [
        {
            "archive": "https://creativecommons.org/licenses/by-sa/4.0/",
            "republisher": "https://creativecommons.org/licenses/by-sa/4.0/",
        }
    ]
    authors = select(
        seed_store, "SELECT ?a WHERE { ?a a kg:Author FILTER NOT EXISTS { ?a rdfs:label ?l } }"
    )
    assert authors == []


# --- 7. validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", RAW_FILES, ids=[p.name for p in RAW_FILES])
def test_every_raw_file_validates(path: Path, request: pytest.FixtureRequest) -> None:
    if path == EVALUATION_GZ:  # the 2020 tables alone: the store the tests above read
        store, report = request.getfixturevalue("tables2020")
    else:
        store = GraphStore.memory()
        report = ingest(store, [str(path)], base_iri=BASE)
    assert report.rejected == 0, report.errors[:3]
    result = validate(store)
    assert result.conforms, result.violations[:5]


def test_examples_and_seeds_validate(seed_store: GraphStore, readme_store: Path) -> None:
    assert validate(seed_store).conforms
    with GraphStore.open(readme_store, read_only=True) as store:  # `kg ingest examples/`
        result = validate(store)
    assert result.conforms, result.violations[:5]
