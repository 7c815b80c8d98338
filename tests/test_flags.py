"""Flags on doubtful results (`leaderboard-flags`), each kind checked against plain Python over
the raw JSON: the bundled 2020 tables (README store) and, for dates before a dataset's
introduction, generated dumps (the bundled examples hold no datasets dump). Then the flags
on the leaderboard page, in `kg leaderboard` and its JSON."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.ingest.ingestor import ingest
from kg.query.flags import KINDS
from kg.query.named import bind, find_query, run_local
from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.testing.dumps import write_archive
from tests.conftest import run
from tests.raw_tables import RawResult, raw_results, read_results
from tests.serve_support import BASE, TestClient, client_for

#: The counts docs/dumps.md gives for the bundled 2020 tables.
README_COUNTS = {
    "no-paper": 1093,
    "duplicate-model": 352,
    "out-of-range": 1,
    "mixed-scale": 3,
    "before-dataset": 0,
}
PROPORTION = re.compile(
    r"accuracy|precision|recall|\bf1\b|f-measure|f-score|\bmap\b|\bap\b|\biou\b|miou|hits@|\bauc\b"
)
DIFFERENCE = re.compile(
    r"decay|drop|gap|delta|\bstd|stdev|deviation|change|difference|improvement"
)
NON_NEGATIVE = re.compile(
    r"error|\bwer\b|\bcer\b|perplexity|\bfid\b|rmse|\bmae\b|\bmse\b|distance|param|flops"
    r"|\bsize\b|time|latency|count|number of"
)
Row = tuple[str, str, str, str, str]  # task, dataset, metric, model, value


def _row(r: RawResult) -> Row:
    return (r.task, r.dataset, r.metric, r.model or "", r.value)


def raw_flags(results: list[RawResult]) -> dict[str, Counter[Row]]:
    """Each kind's flagged results, by the rules of queries/leaderboard-flags.rq's header,
    over the plain numbers of the raw JSON."""
    flags: dict[str, Counter[Row]] = {kind: Counter() for kind in KINDS}
    flags["no-paper"].update(_row(r) for r in results if not r.titled and not r.page)
    by_model: dict[tuple[str, str, str, str], list[RawResult]] = defaultdict(list)
    by_metric: dict[tuple[str, str, str], list[RawResult]] = defaultdict(list)
    for r in results:
        if r.model:
            by_model[(r.task, r.dataset, r.metric, r.model.lower())].append(r)
        by_metric[(r.task, r.dataset, r.metric)].append(r)
    for same in by_model.values():
        if len(same) > 1:
            flags["duplicate-model"].update(_row(r) for r in same)
    for (_, _, metric), on_metric in by_metric.items():
        name = metric.lower()
        if DIFFERENCE.search(name):
            continue
        proportion = bool(PROPORTION.search(name))
        numbered = [(r, r.number) for r in on_metric if r.number is not None]
        for r, n in numbered:
            if (proportion and n > 100) or (n < 0 and (proportion or NON_NEGATIVE.search(name))):
                flags["out-of-range"][_row(r)] += 1
        if not proportion:
            continue
        fractions = [r for r, n in numbered if 0 < n <= 1 and not r.percent]
        percents = [r for r, n in numbered if n > 1 or r.percent]
        if fractions and percents and max(n for _, n in numbered) >= 10:
            smaller = fractions if len(fractions) <= len(percents) else percents
            flags["mixed-scale"].update(_row(r) for r in smaller)
    return flags


def kg_flags(result: SelectResult) -> dict[str, Counter[Row]]:
    flags: dict[str, Counter[Row]] = {kind: Counter() for kind in KINDS}
    for row in result.dicts():
        flags[str(row["kind"])][(
            str(row["task"]).removeprefix(f"{BASE}task/"),
            str(row["dataset"]).removeprefix(f"{BASE}dataset/"),
            str(row["metric"]),
            str(row.get("model") or ""),
            str(row["value"]),
        )] += 1
    return flags


def _run_flags(store: GraphStore, **params: str) -> SelectResult:
    query = find_query("leaderboard-flags")
    result = run_local(store, query, bind(query, params, BASE))
    assert isinstance(result, SelectResult)
    return result


def test_each_flag_kind_on_the_readme_store_matches_the_raw_tables(readme_store: Path) -> None:
    store = GraphStore.open(readme_store, read_only=True)
    try:
        got = kg_flags(_run_flags(store))
        one_kind = kg_flags(_run_flags(store, kind="mixed-scale"))
    finally:
        store.close()
    expected = raw_flags(list(raw_results().values()))
    # kg parses more forms than plain numbers ("1.2M", "55.6 ± 0.2"); none is out of range here
    assert got == expected
    assert {kind: sum(c.values()) for kind, c in got.items()} == README_COUNTS
    assert one_kind["mixed-scale"] == got["mixed-scale"]
    assert not any(c for kind, c in one_kind.items() if kind != "mixed-scale")


def test_kg_query_lists_the_flags_with_the_documented_counts(
    readme_store: Path, cli: CliRunner
) -> None:
    result = run(cli, "--store", str(readme_store), "query", "leaderboard-flags", "-f", "json")
    assert result.exit_code == 0, result.output
    bindings = json.loads(result.stdout)["results"]["bindings"]
    counts = Counter(b["kind"]["value"] for b in bindings)
    assert {k: counts.get(k, 0) for k in KINDS} == README_COUNTS
    docs = (Path(__file__).resolve().parent.parent / "docs" / "dumps.md").read_text("utf-8")
    for kind, count in README_COUNTS.items():
        assert f"| `{kind}` | {count:,} |" in docs, kind


# --- dates before the dataset, on generated dumps -----------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GraphStore, dict[str, Path]]]:
    paths = write_archive(tmp_path_factory.mktemp("dumps"), scale=0.002, seed=5)
    store = GraphStore.memory()
    ingest(store, [str(p) for p in paths.values()], base_iri=BASE)
    yield store, paths


def _load(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data: list[dict[str, object]] = json.load(f)
    return data


def test_results_dated_before_their_dataset_are_flagged(
    generated: tuple[GraphStore, dict[str, Path]],
) -> None:
    store, paths = generated
    paper_dates = {
        str(p["paper_url"]).rsplit("/", 1)[-1]: str(p["date"])
        for p in _load(paths["papers-with-abstracts"])
    }
    introduced: dict[str, str] = {}
    for d in _load(paths["datasets"]):
        slug = str(d["url"]).rsplit("/", 1)[-1]
        paper = d.get("paper")
        dates = [str(d["introduced_date"])] if d.get("introduced_date") else []
        if isinstance(paper, dict) and paper.get("url"):
            dates += [paper_dates[str(paper["url"]).rsplit("/", 1)[-1]]]
        if dates:
            introduced[slug] = min(dates)
    expected: Counter[Row] = Counter(
        _row(r)
        for r in read_results(paths["evaluation-tables"]).values()
        if r.date and r.dataset in introduced and r.date < introduced[r.dataset]
    )
    got = kg_flags(_run_flags(store, kind="before-dataset"))["before-dataset"]
    assert sum(expected.values()) >= 5  # the generated dumps do hold such results
    assert got == expected
    rows = _run_flags(store, kind="before-dataset").dicts()
    assert all(str(r["detail"]).split(" ")[0] < str(r["detail"]).split(" ")[1] for r in rows)


# --- where the flags show ----------------------------------------------------------------------


def test_flags_show_on_the_page_in_kg_leaderboard_and_its_json(
    readme_store: Path, cli: CliRunner
) -> None:
    board = ("hypernym-discovery", "medical-domain")
    as_json = json.loads(
        run(cli, "--store", str(readme_store), "leaderboard", *board, "-f", "json").stdout
    )
    (map_section,) = [s for s in as_json["sections"] if s["metric"] == "MAP"]
    flagged = {e["model"]: [f["kind"] for f in e["flags"]] for e in map_section["entries"] if e["flags"]}
    assert flagged == {"MFH": ["no-paper"], "balAPInc": ["mixed-scale"]}
    balapinc = next(e for e in map_section["entries"] if e["model"] == "balAPInc")
    assert balapinc["value"] == "0.91" and "fraction" in balapinc["flags"][0]["reason"]
    table = run(cli, "--store", str(readme_store), "leaderboard", *board, "--metric", "MAP",
                "--no-chart", "-f", "table")
    assert table.exit_code == 0, table.output
    assert "2 flagged as doubtful" in table.stdout and "mixed scale" in table.stdout
    csv_out = run(cli, "--store", str(readme_store), "leaderboard", *board, "--metric", "MAP",
                  "-f", "csv").stdout
    assert "mixed-scale: a fraction (0-1)" in csv_out

    store = GraphStore.open(readme_store, read_only=True)
    try:
        with client_for(store, workers=1) as client:
            _check_page(client)
    finally:
        store.close()


def _check_page(client: TestClient) -> None:
    page = client.get("/leaderboard/hypernym-discovery/medical-domain", headers={"accept": "text/html"})
    assert page.status_code == 200
    marks = re.findall(r'<span class="doubt flag-([a-z-]+)" title="([^"]+)">⚑ ([^<]+)</span>', page.text)
    kinds = Counter(kind for kind, _, _ in marks)
    assert kinds["mixed-scale"] == 1 and kinds["no-paper"] >= 1
    assert all(label == KINDS[kind] for kind, _, label in marks)
    assert "a fraction (0-1) where most values of this metric are percentages" in page.text
    assert page.text.count('<tr class="doubtful">') >= 2
