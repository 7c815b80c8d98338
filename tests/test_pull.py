"""`kg pull` against a loopback fake of the relaunched Papers with Code API (tests/pwc_fake.py).

Each pulled graph is checked against a plain-Python reading of the fake's own JSON; the fake
counts requests (incrementality), plays faults (429, 500, a body cut short, a redirect
elsewhere, 404s) and serves a `kg pull` that is SIGKILLed mid-run; a store that holds a small
archive (a papers dump and an evaluation table) shows that the same paper, task and dataset
are one node and that the leaderboard and the feed pick up a new best only the API had.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.errors import SourceError
from kg.query.feeds import load as load_feed
from kg.rdf.store import GraphStore
from kg.rdf.vocab import KG
from tests.conftest import BASE, run, select
from tests.pwc_fake import PREFIX, FakeApi, evaluation, paper, serve
from tests.reliability.helpers import kg_env

UNTIL = "2026-06-01"
MORE = (
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
)


def ask(store: GraphStore, query: str) -> bool:
    from kg.rdf.results import AskResult
    from tests.conftest import PREFIXES

    result = store.query(PREFIXES + MORE + query)
    assert isinstance(result, AskResult)
    return result.value


@pytest.fixture
def api() -> Iterator[FakeApi]:
    yield from serve(FakeApi())


def pull(g: kg.KnowledgeGraph, api: FakeApi, **options: Any) -> Any:
    options.setdefault("until", UNTIL)
    return g.pull(base_url=api.base_url, rate=0, backoff=0.0, **options)


# --- the graph, from the fake's JSON -------------------------------------------------------------


def expected_results(api: FakeApi) -> set[tuple[str, str, str, str, str, str | None]]:
    """(task slug, dataset slug, metric, value as written, model, arXiv id) per result."""
    tasks = {str(t["id"]): t["slug"] for t in api.data["tasks"]}
    datasets = {str(d["id"]): d["slug"] for d in api.data["datasets"]}
    papers = {p["id"]: p for p in api.data["papers"]}
    return {
        (tasks[e["task_id"]], datasets[e["dataset_id"]], metric, repr(value), e["model_name"],
         papers[e["paper_id"]]["arxiv_id"])
        for e in api.data["evaluations"] for metric, value in e["metrics"].items()
    }  # fmt: skip


def pulled_results(store: GraphStore) -> set[tuple[str | None, ...]]:
    rows = select(store, MORE + """
        SELECT ?task ?dataset ?metric ?value ?model ?arxiv WHERE {
          ?r a kg:EvaluationResult ; kg:onTask ?t ; kg:onDataset ?d ; kg:metricName ?metric ;
             kg:metricValue ?value ; kg:modelName ?model .
          ?p kg:hasResult ?r . OPTIONAL { ?p kg:arxivId ?arxiv }
          BIND(STRAFTER(STR(?t), "/task/") AS ?task) BIND(STRAFTER(STR(?d), "/dataset/") AS ?dataset)
        }""")  # fmt: skip
    names = ("task", "dataset", "metric", "value", "model", "arxiv")
    return {tuple(None if row.get(n) is None else str(row[n]) for n in names) for row in rows}


def expected_papers(api: FakeApi) -> dict[str, tuple[str, list[str], set[tuple[str, bool]]]]:
    """Title, authors in order, and (repository URL, official) per paper, by title."""
    return {
        p["title"]: (p["published"], list(p["authors"]),
                     {(r["url"], r["is_official"]) for r in p["repositories"]})
        for p in api.data["papers"]
    }  # fmt: skip


def pulled_papers(store: GraphStore) -> dict[str, tuple[str, list[str], set[tuple[str, bool]]]]:
    out: dict[str, tuple[str, list[str], set[tuple[str, bool]]]] = {}
    for row in select(store, MORE + """
        SELECT ?p ?title ?date WHERE { GRAPH ?g { ?p dcterms:title ?title ; dcterms:issued ?date }
          FILTER(STRSTARTS(STR(?g), "https://w3id.org/kg/id/graph/pwc-api/paper/")) }"""):  # fmt: skip
        authors = [str(r["name"]) for r in select(store, MORE + f"""
            SELECT ?name WHERE {{ <{row['p']}> kg:authorship ?s . ?s kg:position ?i ;
              kg:authorName ?name }} ORDER BY ?i""")]  # fmt: skip
        repos = {(str(r["url"]), r["official"] in (True, "true")) for r in select(store, MORE + f"""
            SELECT ?url ?official WHERE {{ <{row['p']}> kg:codeLink ?c . ?c kg:linkedUrl ?url ;
              kg:isOfficial ?official }}""")}  # fmt: skip
        out[str(row["title"])] = (str(row["date"]), authors, repos)
    return out


def detail_requests(api: FakeApi) -> list[str]:
    return [r.path.removeprefix(PREFIX + "papers/") for r in api.requests
            if r.path.startswith(PREFIX + "papers/") and r.path != PREFIX + "papers/"]  # fmt: skip


def evaluation_requests(api: FakeApi) -> list[str]:
    return [r.path for r in api.requests if r.path.endswith("/evaluations/")]


# --- a first pull, a second, a third -------------------------------------------------------------


def test_a_first_pull_brings_the_api_as_its_json_says(api: FakeApi) -> None:
    with kg.open(memory=True) as g:
        report = pull(g, api)
        assert report.stopped is None and report.cursor == UNTIL and report.since is None
        assert pulled_results(g.store) == expected_results(api)
        assert pulled_papers(g.store) == expected_papers(api)
        assert report.ingest.rejected == 0 and not report.ingest.unknown_keys
        # every paper was read in full once; every benchmark's results once
        assert sorted(detail_requests(api)) == sorted(
            p["arxiv_id"] or p["id"] for p in api.data["papers"])  # fmt: skip
        assert len(evaluation_requests(api)) == len(api.data["datasets"])
        # polite: its own User-Agent, only below --base-url, papers before benchmarks
        assert all(r.user_agent.startswith(f"kg/{kg.__version__}") for r in api.requests)
        assert all(r.path.startswith(PREFIX) for r in api.requests)
        paths = [r.path for r in api.requests]
        assert max(i for i, p in enumerate(paths) if p.startswith(PREFIX + "papers")) < min(
            i for i, p in enumerate(paths) if p.startswith(PREFIX + "datasets"))  # fmt: skip
        # a paper's graph says where and when its facts come from, and under which terms
        rows = select(g.store, MORE + """
            SELECT ?g ?url ?at ?licence ?attribution WHERE { GRAPH ?g {
              ?g kg:sourceUrl ?url ; kg:ingestedAt ?at ; prov:wasDerivedFrom ?src }
              ?src dcterms:license ?licence ; kg:attribution ?attribution
              FILTER(CONTAINS(STR(?g), "/pwc-api/paper/arxiv/2601.00001")) }""")  # fmt: skip
        urls = {str(r["url"]) for r in rows}
        assert f"{api.base_url}/papers/2601.00001?include_resources=true" in urls
        assert {str(r["licence"]) for r in rows} == {"https://creativecommons.org/licenses/by-sa/4.0/"}
        assert {str(r["attribution"]) for r in rows} == {"https://paperswithcode.co/"}
        # tasks, methods, areas, a subtask, the HF artifact
        assert ask(g.store, f"""ASK {{
            <{BASE}task/fine-grained-image-classification> kg:subtaskOf ?parent .
            <{BASE}task/image-classification> kg:area <{BASE}area/computer-vision> .
            <{BASE}method/transformer> kg:introducedYear 2017 .
            <{BASE}paper/arxiv/2601.00001> rdfs:seeAlso ?hf .
            FILTER(?parent = <{BASE}task/image-classification>)
            FILTER(?hf = <https://huggingface.co/example/vision-giant>) }}""")
        # lineage: a paper references its predecessors; its successors reference it
        lineage = select(g.store, MORE + """SELECT ?a ?b WHERE { ?a dcterms:references ?b }""")
        assert {(str(r["a"]).rsplit("/", 1)[1], str(r["b"]).rsplit("/", 1)[1]) for r in lineage} == {
            ("2601.00001", "1905.11946"), ("2605.00005", "2601.00001")}  # fmt: skip


def test_a_second_pull_reads_only_what_is_new_or_changed(api: FakeApi) -> None:
    with kg.open(memory=True) as g:
        pull(g, api)
        first = len(api.requests)
        papers = api.data["papers"]
        papers.append(paper(6, "2605.00006", "Newer Still", "2026-05-20", ["Ken Thompson"],
                            tasks=[10], repos=[("https://github.com/example/newer", True)]))  # fmt: skip
        papers[4]["title"] = "Late Arrivals, Revised"  # within the recent window
        papers[2]["title"] = "Reading Machines, Revised"  # older: read again with --since
        api.data["evaluations"].append(
            evaluation(104, 6, 10, 20, "Newer-XL", {"Top 1 Accuracy": 92.5}))
        report = pull(g, api)
        second = api.requests[first:]
        assert report.since == "2026-05-02"  # the cursor less 30 days
        # details only for the new paper and the changed one; results only for ImageNet
        assert sorted(detail_requests(FakeApi(requests=second))) == ["2605.00005", "2605.00006"]
        assert evaluation_requests(FakeApi(requests=second)) == [f"{PREFIX}datasets/20/evaluations/"]
        assert pulled_results(g.store) == expected_results(api)
        assert report.ingest.updated >= 1
        # a change before the window shows with --since, which reads that window again
        before = len(api.requests)
        report = pull(g, api, since="2026-01-01")
        assert detail_requests(FakeApi(requests=api.requests[before:])) == ["2602.00002"]
        assert pulled_papers(g.store) == expected_papers(api)
        # the old title is replaced, not kept beside the new one
        titles = select(g.store, MORE + f"""SELECT ?t WHERE {{
            <{BASE}paper/arxiv/2602.00002> dcterms:title ?t }}""")  # fmt: skip
        assert [str(r["t"]) for r in titles] == ["Reading Machines, Revised"]
        # nothing new: no request of its own for any paper or benchmark
        before = len(api.requests)
        report = pull(g, api)
        third = FakeApi(requests=api.requests[before:])
        assert detail_requests(third) == [] and evaluation_requests(third) == []
        assert report.ingest.added == report.ingest.updated == 0


# --- politeness and faults -----------------------------------------------------------------------


def test_429_500_and_a_body_cut_short_are_retried_to_the_same_graph(api: FakeApi) -> None:
    with kg.open(memory=True) as clean:
        pull(clean, FakeApi(data=api.data, port=api.port))
        reference = clean.store.canonical_digest([KG.ingestedAt[1:-1]])
    api.requests.clear()
    api.fail("papers/2601.00001", "429")
    api.fail("datasets/", "500")
    api.fail("tasks/", "cut")
    with kg.open(memory=True) as g:
        report = pull(g, api)
        assert report.stopped is None and report.retries == 3
        assert g.store.canonical_digest([KG.ingestedAt[1:-1]]) == reference
    asked = [r for r in api.requests if r.path == f"{PREFIX}papers/2601.00001"]
    assert len(asked) == 2 and asked[1].at - asked[0].at >= 0.95  # Retry-After: 1 honoured


def test_repeated_failures_stop_with_one_line_and_keep_what_was_pulled(
    api: FakeApi, tmp_path: Path
) -> None:
    for _ in range(5):
        api.fail("datasets/", "500")
    store = tmp_path / "store"
    result = subprocess.run(
        [sys.executable, "-m", "kg", "--store", str(store), "pull", "--base-url", api.base_url,
         "--rate", "0", "--backoff", "0", "--until", UNTIL],
        capture_output=True, text=True, timeout=120, env=kg_env(),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "HTTP 500, 5 times in a row" in lines[0], result.stderr
    with kg.open(store, read_only=False) as g:
        assert len(pulled_papers(g.store)) == len(api.data["papers"])  # kept
        assert pulled_results(g.store) == set()
        report = pull(g, api)  # the cursor did not move: the rerun reads every date again
        assert report.since is None and pulled_results(g.store) == expected_results(api)


def test_a_redirect_elsewhere_is_refused(api: FakeApi) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as elsewhere:  # another port: another origin
        api.away = f"http://127.0.0.1:{elsewhere.getsockname()[1]}/api/v1/methods/"
        api.fail("methods/", "away")
        with kg.open(memory=True) as g, pytest.raises(SourceError, match="outside"):
            pull(g, api)
        elsewhere.settimeout(0.2)
        with pytest.raises(TimeoutError):  # nobody connected there
            elsewhere.accept()


def test_a_missing_sub_resource_is_counted_and_skipped(api: FakeApi) -> None:
    api.data["papers"][1]["arxiv_id"] = "2601.00001"
    api.data["datasets"].append({"id": 99, "slug": "gone", "name": "Gone"})
    original = api.answer

    def answer(path: str, query: dict[str, str]) -> tuple[int, Any]:
        if path in (f"{PREFIX}papers/2601.00001", f"{PREFIX}datasets/99/evaluations/"):
            return 404, {"detail": "Not found."}
        return original(path, query)

    api.answer = answer  # type: ignore[method-assign]
    with kg.open(memory=True) as g:
        report = pull(g, api)
        assert report.stopped is None and len(report.missing) == 2
        assert pulled_papers(g.store) == expected_papers(api)  # from its list entry


def test_an_unknown_field_is_counted_never_fatal(api: FakeApi) -> None:
    api.data["papers"][0]["shiny_new_field"] = {"x": 1}
    api.data["evaluations"][0]["reproduced"] = True
    with kg.open(memory=True) as g:
        report = pull(g, api)
        assert report.stopped is None and report.ingest.rejected == 0
        assert set(report.ingest.unknown_keys) == {"shiny_new_field", "evaluations[0].reproduced"}
        assert pulled_results(g.store) == expected_results(api)


def test_max_requests_stops_early_and_the_rerun_completes(api: FakeApi) -> None:
    with kg.open(memory=True) as g:
        report = pull(g, api, max_requests=4)
        assert report.stopped and report.requests == 4 and report.cursor is None
        report = pull(g, api)
        assert report.cursor == UNTIL and pulled_results(g.store) == expected_results(api)


# --- kill -9 -------------------------------------------------------------------------------------


def test_a_pull_killed_at_any_moment_converges_on_rerun(api: FakeApi, tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    command = ["pull", "--base-url", api.base_url, "--rate", "0", "--until", UNTIL, "-q"]
    env = kg_env()
    subprocess.run([sys.executable, "-m", "kg", "--store", str(clean), *command],
                   check=True, env=env, timeout=120, capture_output=True)  # fmt: skip
    total = len(api.requests)
    store = tmp_path / "killed"
    api.delay = 0.03
    for at in (2, total // 2, total - 2):  # in the taxonomy, among papers, among benchmarks
        api.requests.clear()
        proc = subprocess.Popen([sys.executable, "-m", "kg", "--store", str(store), *command],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 60
        while len(api.requests) < at and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    api.delay = 0.0
    subprocess.run([sys.executable, "-m", "kg", "--store", str(store), *command],
                   check=True, env=env, timeout=120, capture_output=True)  # fmt: skip
    digests = []
    for path in (clean, store):
        with kg.open(path) as g:
            digests.append(g.store.canonical_digest())
    assert digests[0] == digests[1]


# --- one identity with the archive; leaderboards and feeds ---------------------------------------

EFFICIENTNET = "EfficientNet: Rethinking Model Scaling for Convolutional Neural Networks"
SLUG = "efficientnet-rethinking-model-scaling-for"


def archive_dumps(directory: Path) -> Path:
    """A small archive: EfficientNet in the papers dump (by slug), and the ImageNet table."""
    directory.mkdir()
    papers = [{
        "paper_url": f"https://paperswithcode.com/paper/{SLUG}", "arxiv_id": "1905.11946",
        "title": EFFICIENTNET, "abstract": "Scaling.", "date": "2019-05-28",
        "authors": ["Mingxing Tan", "Quoc V. Le"], "tasks": ["Image Classification"],
        "methods": [], "url_abs": "https://arxiv.org/abs/1905.11946v5",
    }]  # fmt: skip
    row = {"paper_title": EFFICIENTNET, "paper_url": "https://arxiv.org/abs/1905.11946v5",
           "paper_date": "2019-05-28", "model_name": "EfficientNet-B7", "code_links": [],
           "model_links": [], "metrics": {"Top 1 Accuracy": "84.4"}}  # fmt: skip
    resnet = {"paper_title": "Deep Residual Learning for Image Recognition",
              "paper_url": "https://arxiv.org/abs/1512.03385v1", "paper_date": "2015-12-10",
              "model_name": "ResNet-50", "code_links": [], "model_links": [],
              "metrics": {"Top 1 Accuracy": "76.0"}}  # fmt: skip
    tables = [{"task": "Image Classification", "categories": ["Computer Vision"],
               "datasets": [{"dataset": "ImageNet", "sota": {
                   "metrics": ["Top 1 Accuracy"], "rows": [row, resnet]}}],
               "subtasks": []}]  # fmt: skip
    (directory / "papers-with-abstracts.json").write_text(json.dumps(papers))
    (directory / "evaluation-tables.json").write_text(json.dumps(tables))
    return directory


def test_the_pull_merges_with_the_archive_and_its_new_best_ranks_first(
    api: FakeApi, tmp_path: Path, cli: Any
) -> None:
    store = tmp_path / "store"
    with kg.open(store, read_only=False) as g:
        assert g.ingest([archive_dumps(tmp_path / "dumps")]).rejected == 0
        before = load_feed(g.store, "dataset", "imagenet", BASE)
        assert {e.entry.model for e in before.entries} == {"ResNet-50", "EfficientNet-B7"}
        pull(g, api)
        # one paper node: the archive's slug node holds the API's facts too
        papers = select(g.store, MORE + """SELECT DISTINCT ?p WHERE {
            ?p kg:arxivId "1905.11946" }""")  # fmt: skip
        assert [str(r["p"]) for r in papers] == [f"{BASE}paper/{SLUG}"]
        assert ask(g.store, f"""ASK {{
            GRAPH <{BASE}graph/pwc-api/paper/arxiv/1905.11946> {{
              <{BASE}paper/{SLUG}> kg:codeLink ?c . ?c kg:isOfficial true }} }}""")  # fmt: skip
        assert ask(g.store, f"ASK {{ <{BASE}paper/arxiv/2601.00001> dcterms:references "
                            f"<{BASE}paper/{SLUG}> }}")  # lineage reaches the archive's node
        # one task, one dataset, one leaderboard; the same value is one result node
        boards = select(g.store, MORE + """SELECT DISTINCT ?b WHERE {
            ?b a kg:Leaderboard ; kg:onDataset ?d . ?d rdfs:label "ImageNet" }""")
        assert [str(r["b"]) for r in boards] == [f"{BASE}leaderboard/image-classification/imagenet"]
        b7 = select(g.store, MORE + """SELECT DISTINCT ?r WHERE {
            ?r kg:modelName "EfficientNet-B7" }""")  # fmt: skip
        assert len(b7) == 1
        after = load_feed(g.store, "dataset", "imagenet", BASE)
        known = {e.id for e in before.entries}
        new = [(e.metric, e.entry.model, e.date, str(e.previous))
               for e in after.entries if e.id not in known]  # fmt: skip
        assert sorted(new) == [("Top 1 Accuracy", "Giant-H", "2026-01-10", "84.4"),
                               ("Top 5 Accuracy", "Giant-H", "2026-01-10", "None")]  # fmt: skip
        # the feed's sources name both the archive and the API
        kinds = {str(s) for s in after.sources}
        assert any("pwc-api" in k for k in kinds), kinds
    done = run(cli, "--store", str(store), "leaderboard", "image-classification", "imagenet",
               "--metric", "Top 1 Accuracy", "-f", "json")  # fmt: skip
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    ranked = [(e["model"], e["value"]) for e in out["sections"][0]["entries"]]
    assert ranked[:3] == [("Giant-H", "91.2"), ("EfficientNet-B7", "84.4"), ("ResNet-50", "76.0")]


# --- the client's bounds -------------------------------------------------------------------------


def test_a_response_over_the_bound_is_refused_and_retry_after_reads_both_forms(
    api: FakeApi,
) -> None:
    from kg.sources.http import PoliteClient, retry_after

    small = PoliteClient(api.base_url, rate=0, max_bytes=200)
    with pytest.raises(SourceError, match="over the 200-byte bound"):
        small.get_json("tasks/", {"page": 1, "page_size": 100})
    assert PoliteClient(api.base_url, rate=0).get_json("areas/")[0]["slug"] == "computer-vision"
    assert retry_after("7", 0.0) == 7.0
    assert retry_after("Thu, 01 Jan 1970 00:00:30 GMT", 10.0) == 20.0
    assert retry_after("soon", 0.0) is None and retry_after(None, 0.0) is None
    with pytest.raises(SourceError, match="not an http"):
        PoliteClient("file:///etc/passwd")
