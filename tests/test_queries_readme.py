"""The named queries' header examples on the README store, checked against the raw JSON.

The README store is `kg ingest examples/` (the session fixture `readme_store`). Each answer
here is computed straight from the files in examples/ (the two seed records and the 2020
evaluation tables), independently of kg's mapping and of the SPARQL, and compared with the
rows of the query's own header example. tests/test_queries.py checks that every example
answers at all; tests/test_queries_slices.py checks methods-per-year, tasks-per-area,
task-tree and leaderboard on the raw slices the same way.
"""

from __future__ import annotations

import gzip
import json
import re
import shlex
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.ingest.identity import arxiv_id, pwc_slug, repository, slug_from_url
from kg.query.named import find_query
from tests.conftest import BASE, ROOT, run

EXAMPLES = ROOT / "examples"
TABLES = EXAMPLES / "pwc" / "evaluation-tables.json.gz"
RECORDS = sorted((EXAMPLES / "records").glob("*.json"))


@pytest.fixture(scope="module")
def tables() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(gzip.decompress(TABLES.read_bytes()))
    return data


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in RECORDS]


def example_rows(cli: CliRunner, store: Path, name: str) -> list[dict[str, str]]:
    """The rows of the query's header example, run as written, as {variable: value}."""
    words = shlex.split(find_query(name).example)
    result = run(cli, "--store", str(store), *words[1:], "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return [{k: v["value"] for k, v in b.items()} for b in data["results"]["bindings"]]


def slug(name: str) -> str:
    return pwc_slug(name) or name.strip()


def walk(task: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield task
    for sub in task.get("subtasks") or []:
        yield from walk(sub)


def datasets(task: dict[str, Any]) -> Iterator[dict[str, Any]]:
    def go(ds: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield ds
        for sub in ds.get("subdatasets") or []:
            yield from go(sub)

    for ds in task.get("datasets") or []:
        yield from go(ds)


def rows_of(ds: dict[str, Any]) -> list[dict[str, Any]]:
    sota = ds.get("sota") or {}
    return list(sota.get("rows") or [])


def paper_key(row: dict[str, Any]) -> str | None:
    """Which paper a table row names, by kg's identity rule (docs/identity.md): its PwC slug,
    else its arXiv id, else its title."""
    url = row.get("paper_url") or ""
    pwc = slug_from_url(url, "paper") if "paperswithcode.com" in url else None
    arxiv = arxiv_id(url) if url else None
    title = row.get("paper_title")
    if pwc:
        return f"slug:{pwc}"
    if arxiv:
        return f"arxiv:{arxiv}"
    return f"title:{title_year(row)}" if title else None


def title_year(row: dict[str, Any]) -> str:
    """A row's paper title, its punctuation and case ignored, with the year of its date."""
    words = re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", row["paper_title"]).casefold())
    return f"{' '.join(words.split())}|{(row.get('paper_date') or '')[:4]}"


def same_papers(tables: list[dict[str, Any]], methods: list[dict[str, Any]]) -> dict[str, str]:
    """Paper key -> the key of the paper kg makes it one with: an arXiv id the methods dump
    gives beside a PwC slug, or a title and year another row gives beside an id."""
    out: dict[str, str] = {}
    for method in methods:
        pwc = slug_from_url((method.get("paper") or {}).get("url") or "", "paper")
        arxiv = arxiv_id(method.get("source_url") or "")
        if pwc and arxiv:
            out[f"arxiv:{arxiv}"] = f"slug:{pwc}"
    for top in tables:
        for task in walk(top):
            for ds in datasets(task):
                for row in rows_of(ds):
                    key = paper_key(row)
                    if key and not key.startswith("title:") and row.get("paper_title"):
                        out.setdefault(f"title:{title_year(row)}", out.get(key, key))
    return out


def methods_dump() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(
        gzip.decompress((EXAMPLES / "pwc" / "methods.json.gz").read_bytes())
    )
    return data


def has_result(row: dict[str, Any]) -> bool:
    metrics = row.get("metrics") or {}
    return any(v is not None for v in metrics.values())


# --- tasks-in-area: papers through results ------------------------------------------------


def test_tasks_in_area_counts_the_papers_with_results(
    readme_store: Path, cli: CliRunner, tables: list[dict[str, Any]], records: list[dict[str, Any]]
) -> None:
    """`kg query tasks-in-area -p "area=Computer Vision"`: every task under a Computer Vision
    table, with the papers that report a result on it or whose record names it."""
    papers: dict[str, set[str]] = defaultdict(set)
    same = same_papers(tables, methods_dump())
    in_area: set[str] = set()
    parents: dict[str, set[str]] = defaultdict(set)
    areas: dict[str, set[str]] = defaultdict(set)
    for top in tables:
        for task in walk(top):
            if not (task.get("task") or "").strip():  # a nameless task is no task: its
                for sub in task.get("subtasks") or []:  # subtasks take its categories
                    areas[slug(sub["task"])] |= {slug(c) for c in task.get("categories") or []}
                continue
            key = slug(task["task"])
            areas[key] |= {slug(c) for c in task.get("categories") or []}
            for sub in task.get("subtasks") or []:
                parents[slug(sub["task"])].add(key)
            for ds in datasets(task):
                for row in rows_of(ds):
                    who = paper_key(row)
                    if who and has_result(row):
                        papers[key].add(same.get(who, who))
    for record in records:
        for task in record.get("tasks") or []:
            papers[task["task_slug"]].add(f"slug:{record['url'].rsplit('/', 1)[-1]}")

    def under_cv(key: str, seen: frozenset[str] = frozenset()) -> bool:
        if "computer-vision" in areas[key]:
            return True
        return any(under_cv(p, seen | {key}) for p in parents[key] if p not in seen)

    in_area = {k for k in areas if under_cv(k)}
    got = {
        r["task"].removeprefix(f"{BASE}task/"): int(r["papers"])
        for r in example_rows(cli, readme_store, "tasks-in-area")
    }
    assert set(got) == in_area and len(got) > 700
    assert got == {k: len(papers[k]) for k in in_area}
    assert got["image-classification"] == 246  # the figure: 0 before
    assert sum(1 for n in got.values() if n) > 300


# --- leaderboard ---------------------------------------------------------------------------


def test_leaderboard_example_is_the_raw_table(
    readme_store: Path, cli: CliRunner, tables: list[dict[str, Any]]
) -> None:
    want: set[tuple[str, str]] = set()
    for top in tables:
        for task in walk(top):
            if task["task"] != "Image Classification":
                continue
            for ds in datasets(task):
                if ds["dataset"] != "ImageNet":
                    continue
                for row in rows_of(ds):
                    for metric, value in (row.get("metrics") or {}).items():
                        if metric.lower() == "top 1 accuracy" and value is not None:
                            want.add((" ".join(row["model_name"].split()), str(value).strip()))
    got = example_rows(cli, readme_store, "leaderboard")
    assert {(r["model"], r["value"]) for r in got} == want and len(want) > 150
    numbers = [float(r["number"]) for r in got if "number" in r]
    assert numbers == sorted(numbers, reverse=True)


# --- the seed records ----------------------------------------------------------------------


def test_author_queries_match_the_bylines(
    readme_store: Path, cli: CliRunner, records: list[dict[str, Any]]
) -> None:
    who = "Goro Kobayashi"
    mine = [r for r in records if who in r["authors"]]
    co = Counter(a for r in mine for a in set(r["authors"]) if a != who)
    got = example_rows(cli, readme_store, "coauthors")
    assert {r["name"]: int(r["papers"]) for r in got} == dict(co)
    by_author = example_rows(cli, readme_store, "papers-by-author")
    want = {(r["title"], r["date"], str(r["authors"].index(who) + 1)) for r in mine}
    assert {(r["title"], r["date"], r["position"]) for r in by_author} == want


def _samples(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for r in records for s in (r.get("syntology") or {}).get("samples") or []]


def _repo_iri(url: str | None) -> str:
    ref = repository(url) if url else None
    return f"{BASE}repository/{ref.key}" if ref else ""


def test_sample_queries_count_every_sample(
    readme_store: Path, cli: CliRunner, records: list[dict[str, Any]]
) -> None:
    samples = _samples(records)
    assert len(samples) == 5
    per = Counter((_repo_iri(s.get("repo")), s.get("status") or "") for s in samples)
    words = ["query", "samples-by-status", "--format", "json"]  # every repository
    result = run(cli, "--store", str(readme_store), *words)
    data = json.loads(result.stdout)["results"]["bindings"]
    got = {
        (b.get("repository", {}).get("value", ""), b.get("status", {}).get("value", "")): int(
            b["samples"]["value"]
        )
        for b in data
    }
    assert got == dict(per) and sum(got.values()) == 5
    example = example_rows(cli, readme_store, "samples-by-status")  # one repository
    attattr = _repo_iri("https://github.com/YRdddream/attattr")
    assert {(r["repository"], r["status"]): int(r["samples"]) for r in example} == {
        k: n for k, n in per.items() if k[0] == attattr
    }
    by_repo: dict[str, set[str]] = defaultdict(set)
    for s in samples:
        if s.get("repo"):
            by_repo[_repo_iri(s["repo"])].add(s.get("status") or "")
    passed = example_rows(cli, readme_store, "repositories-all-passed")  # ran_draft_wrong
    assert {r["repository"] for r in passed} == {
        r for r, statuses in by_repo.items() if statuses == {"ran_draft_wrong"}
    }
    assert passed


def test_code_queries_match_the_records(
    readme_store: Path, cli: CliRunner, records: list[dict[str, Any]]
) -> None:
    official = {
        (f"{BASE}paper/{link['paper_slug']}", _repo_iri(link["repo_url"]))
        for r in records
        for link in r.get("code_links") or []
        if link.get("is_official") and link.get("framework") == "pytorch"
    }
    got = example_rows(cli, readme_store, "official-code-by-framework")
    assert {(r["paper"], r["repository"]) for r in got} == official and official
    venue = Counter(
        (r["proceeding"].split()[0], r["proceeding"].split()[1])
        for r in records
        if (r.get("proceeding") or "").startswith("EMNLP ")
    )
    per_year = example_rows(cli, readme_store, "papers-per-venue-year")
    assert {("EMNLP", r["year"]): int(r["papers"]) for r in per_year} == dict(venue)


def test_task_methods_counts_records_and_introducers(
    readme_store: Path, cli: CliRunner, records: list[dict[str, Any]], tables: list[dict[str, Any]]
) -> None:
    """`task-methods` for machine translation: the papers that report results on it or whose
    record names it, with the methods their records name or that they introduce (the methods
    dump's `paper`, known by its PwC slug, the arXiv id of its `source_url`, or its title)."""
    methods = methods_dump()
    papers: dict[str, str] = {}  # paper key -> title, casefolded
    for top in tables:
        for task in walk(top):
            if slug(task["task"]) != "machine-translation":
                continue
            for ds in datasets(task):
                for row in rows_of(ds):
                    key = paper_key(row)
                    if key and has_result(row):
                        papers[key] = (row.get("paper_title") or "").casefold()
    uses: dict[str, set[str]] = defaultdict(set)
    for record in records:
        if any(t["task_slug"] == "machine-translation" for t in record["tasks"]):
            key = f"slug:{record['url'].rsplit('/', 1)[-1]}"
            papers[key] = record["title"].casefold()
            uses[key] |= {m["method_slug"] for m in record.get("methods") or []}
    by_title = {title: key for key, title in papers.items()}
    for method in methods:
        paper = method.get("paper") or {}
        if not paper:
            continue
        pwc = slug_from_url(paper.get("url") or "", "paper")
        arxiv = arxiv_id(method.get("source_url") or "")
        if pwc and f"slug:{pwc}" in papers:
            key = f"slug:{pwc}"
        elif arxiv and f"arxiv:{arxiv}" in papers:
            key = f"arxiv:{arxiv}"
        else:
            key = by_title.get((paper.get("title") or "").casefold(), "")
        if key:
            uses[key].add(slug_from_url(method["url"], "method") or "")
    want = Counter(m for used in uses.values() for m in used)
    got = {
        r["method"].removeprefix(f"{BASE}method/"): int(r["papers"])
        for r in example_rows(cli, readme_store, "task-methods")
    }
    assert got == dict(want) and len(got) > 40


# --- dates ---------------------------------------------------------------------------------


def test_papers_per_year_counts_each_paper_once_by_its_earliest_date(
    readme_store: Path, cli: CliRunner, records: list[dict[str, Any]], tables: list[dict[str, Any]]
) -> None:
    """18 papers have two dates (two rows date them differently), 4 of them in different
    years: each counts once, in the year of its earliest date."""
    same = same_papers(tables, methods_dump())
    earliest: dict[str, str] = {}
    dates: dict[str, set[str]] = defaultdict(set)
    for top in tables:
        for task in walk(top):
            for ds in datasets(task):
                for row in rows_of(ds):
                    key, date = paper_key(row), row.get("paper_date")
                    if key and date:
                        key = same.get(key, key)
                        dates[key].add(date)
                        earliest[key] = min(date, earliest.get(key, date))
    for record in records:
        key = f"slug:{record['url'].rsplit('/', 1)[-1]}"
        if record.get("date"):
            dates[key].add(record["date"])
            earliest[key] = min(record["date"], earliest.get(key, record["date"]))
    assert sum(1 for d in dates.values() if len({x[:4] for x in d}) > 1) == 4
    want = Counter(int(d[:4]) for d in earliest.values())
    got = {
        int(r["year"]): int(r["papers"]) for r in example_rows(cli, readme_store, "papers-per-year")
    }
    assert got == dict(want) and sum(got.values()) == len(earliest) > 4000


def test_a_result_keeps_its_own_rows_date(readme_store: Path, tables: list[dict[str, Any]]) -> None:
    """The paper 1807.06653 is dated 2018-07-17 by one row and 2019-03-26 by another; each
    of its results keeps the date of the row it came from (dcterms:issued)."""
    from kg.rdf.store import GraphStore

    want: set[tuple[str, str, str]] = set()
    for top in tables:
        for task in walk(top):
            for ds in datasets(task):
                for row in rows_of(ds):
                    if paper_key(row) == "arxiv:1807.06653" and row.get("paper_date"):
                        for metric, value in (row.get("metrics") or {}).items():
                            if value is not None:
                                want.add(
                                    (
                                        " ".join(metric.split()),
                                        str(value).strip(),
                                        row["paper_date"],
                                    )
                                )
    assert len({d for _, _, d in want}) == 2
    query = f"""SELECT ?metric ?value ?date WHERE {{
      <{BASE}paper/arxiv/1807.06653> <https://w3id.org/kg/ontology#hasResult> ?r .
      ?r <https://w3id.org/kg/ontology#metricName> ?metric ;
         <https://w3id.org/kg/ontology#metricValue> ?value ;
         <http://purl.org/dc/terms/issued> ?date }}"""
    with GraphStore.open(readme_store, read_only=True) as store:
        got = {tuple(v or "" for v in row) for row in store.select_values(query)}
    assert got == want


# --- the README's examples -----------------------------------------------------------------


def _readme_query_examples() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("### Named queries", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    out = []
    for line in block.splitlines():
        words = shlex.split(line)
        if words[:2] == ["kg", "query"] and "--endpoint" not in words and "--list" not in words:
            out.append(words[1:])
    return out


@pytest.mark.parametrize("words", _readme_query_examples(), ids=" ".join)
def test_the_readmes_query_examples_answer(
    readme_store: Path, cli: CliRunner, words: list[str]
) -> None:
    args = words if "--format" in words else [*words, "--format", "json"]
    result = run(cli, "--store", str(readme_store), *args)
    assert result.exit_code == 0, result.output
    if "turtle" in words:
        assert result.stdout.count(" .\n") + result.stdout.count(" ;\n") > 3
    elif "--format" in words:  # csv: a header and rows
        assert len(result.stdout.strip().splitlines()) > 1
    else:
        assert json.loads(result.stdout)["results"]["bindings"]
