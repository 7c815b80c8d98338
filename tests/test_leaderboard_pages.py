"""Leaderboard pages: the page, chart.svg and history.json, on the README store (read-only)
and on a small table with hostile names; checked against `kg leaderboard` and the raw JSON."""

from __future__ import annotations

import gzip
import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.ingest.ingestor import ingest
from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from kg.serve.pages.leaderboard import split_path
from tests.conftest import run
from tests.query_data import build, write_mini
from tests.serve_support import BASE, TestClient, client_for

SVG = "{http://www.w3.org/2000/svg}"
HTML = {"accept": "text/html"}
IMAGENET = "/leaderboard/image-classification/imagenet"


class _Page(HTMLParser):
    """The parts of a leaderboard page the tests read: each section's heading, its table
    rows (cell texts) and the <title>s inside its chart."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict[str, Any]] = []
        self.footer = ""
        self.tags: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in.append(tag)
        if tag == "section":
            self.sections.append({"h2": "", "rows": [], "titles": [], "svg": 0})
        elif tag == "svg" and self.sections:
            self.sections[-1]["svg"] += 1
        elif tag == "tr":
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row and self.sections:
            self.sections[-1]["rows"].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if not self._in:
            return
        if self._in[-1] == "h2" and self.sections:
            self.sections[-1]["h2"] += data
        elif self._in[-1] == "title" and "svg" in self._in and self.sections:
            self.sections[-1]["titles"].append(data)
        if "footer" in self._in:
            self.footer += data


def _page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def readme_client(readme_store: Path) -> Iterator[TestClient]:
    store = GraphStore.open(readme_store, read_only=True)
    try:
        with client_for(store) as client:
            yield client
    finally:
        store.close()


def test_split_path() -> None:
    assert split_path(IMAGENET) == ("image-classification", "imagenet", None)
    assert split_path(IMAGENET + "/history.json") == ("image-classification", "imagenet", "history.json")
    assert split_path("/leaderboard/t/d/result/ab12") == ("t", "d", "result/ab12")


def test_the_imagenet_page_ranks_top_1_accuracy_with_its_chart(
    readme_client: TestClient, readme_store: Path, cli: CliRunner
) -> None:
    response = readme_client.get(IMAGENET, headers=HTML)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src" not in response.headers["content-security-policy"]
    page = _page(response.text)
    assert "script" not in page.tags  # no JavaScript on the page
    # the sort metric's chart, the table, then the other metrics' charts
    assert [s["h2"] for s in page.sections] == [
        "Top 1 Accuracy", "Results", "Top 5 Accuracy", "Number of params",
    ]
    top1, table = page.sections[0], page.sections[1]
    first = table["rows"][0]
    # rank, model, then a column per metric: Top 1 and Top 5 Accuracy side by side
    assert first[:5] == ["1", "FixEfficientNet-L2", "88.5%", "98.7%", "480M"]
    assert "FixEfficientNet" in first[5] and "2020-03-18" in first[5]
    assert "facebookresearch/fixres" in first[6]
    noisy = next(r for r in table["rows"] if r[1] == "NoisyStudent (EfficientNet-L2)")
    assert noisy[6].startswith("tensorflow/tpu") and "google-research/noisystudent" in noisy[6]
    assert table["svg"] == 0 and top1["svg"] == 1
    history = json.loads(
        run(cli, "--store", str(readme_store), "leaderboard", "image-classification", "imagenet",
            "--metric", "Top 1 Accuracy", "--history", "-f", "json").stdout
    )
    # every point has a <title>; the chart's own, and the step line's, come first
    assert len(top1["titles"]) == len(history) + 2
    assert any(t.startswith("FixEfficientNet-L2: 88.5 (2020-03-18)") and "a new best" in t for t in top1["titles"])
    assert "Data as of 2020-08-28" in " ".join(page.footer.split())
    assert "CC BY-SA 4.0" in page.footer
    assert "lower is better: lowest first" in response.text  # Number of params
    # the 2020 tables never say whether a result used extra training data: no such filter
    assert 'name="code"' in response.text and 'name="hide_extra"' not in response.text

    as_json = readme_client.get(IMAGENET + "/history.json", params={"metric": "top 1 accuracy"})
    assert as_json.status_code == 200 and as_json.headers["content-type"] == "application/json"
    assert as_json.json() == history


def _raw_imagenet_rows() -> list[dict[str, Any]]:
    from tests.raw_tables import RAW_TABLES

    data = json.loads(gzip.decompress(RAW_TABLES.read_bytes()))
    for task in data:
        if task["task"] == "Image Classification":
            for d in task["datasets"]:
                if d["dataset"] == "ImageNet":
                    return list(d["sota"]["rows"])
    raise AssertionError("no ImageNet table in the bundled tables")


def test_one_row_per_table_row_sorted_and_filtered_server_side(
    readme_client: TestClient, readme_store: Path, cli: CliRunner
) -> None:
    """A row per row of the raw table, a column per metric; a column's link re-sorts by
    that metric in its direction; the filters drop the rows without code and the flagged
    ones, as the JSON of `kg leaderboard` says they should."""
    raw = _raw_imagenet_rows()
    rows = _page(readme_client.get(IMAGENET, headers=HTML).text).sections[1]["rows"]
    assert len(rows) == len(raw) == 199
    raw_top1 = sorted(
        (float(r["metrics"]["Top 1 Accuracy"].rstrip("%")) for r in raw
         if (r["metrics"].get("Top 1 Accuracy") or "").rstrip("%").replace(".", "", 1).isdigit()),
        reverse=True,
    )
    shown = [float(r[2].rstrip("%")) for r in rows if r[2]]
    assert shown == raw_top1  # the default sort: Top 1 Accuracy, reported by the most rows

    by_params = _page(readme_client.get(IMAGENET, params={"sort": "number of params"}, headers=HTML).text)
    params_rows = by_params.sections[1]["rows"]
    board = json.loads(
        run(cli, "--store", str(readme_store), "leaderboard", "image-classification",
            "imagenet", "--format", "json").stdout
    )
    (params,) = (s for s in board["sections"] if s["metric"] == "Number of params")
    assert len(params_rows) == 199 and params_rows[0][0] == "1"
    # lower is better: in the metric's own ranking, then the rows that report none
    assert [r[4] for r in params_rows] == [e["value"] for e in params["entries"]] + [""] * (
        199 - len(params["entries"])
    )
    assert by_params.sections[0]["h2"] == "Number of params"  # its chart comes first
    with_code = _page(readme_client.get(IMAGENET, params={"code": "1"}, headers=HTML).text)
    (top1,) = (s for s in board["sections"] if s["metric"] == "Top 1 Accuracy")
    coded = sum(1 for e in top1["entries"] if board["code"].get(e["paper"] or ""))
    kept = with_code.sections[1]["rows"]
    assert all(r[6] for r in kept) and sum(1 for r in kept if r[2]) == coded
    unflagged = _page(readme_client.get(IMAGENET, params={"hide_flagged": "1"}, headers=HTML).text)
    flagged_rows = {
        (e["model"], e["paper"]) for s in board["sections"] for e in s["entries"] if e["flags"]
    }
    assert len(unflagged.sections[1]["rows"]) == 199 - len(flagged_rows)
    assert not any("⚑" in " ".join(r) for r in unflagged.sections[1]["rows"])

    bad = readme_client.get(IMAGENET, params={"code": "maybe"}, headers=HTML)
    assert bad.status_code == 400 and "1 or 0" in bad.text
    unknown = readme_client.get(IMAGENET, params={"sort": "BLEU"}, headers=HTML)
    # a browser gets the 404 page (kg.serve.pages.not_found), the message escaped in its HTML
    assert unknown.status_code == 404 and "'Top 1 Accuracy'" in html.unescape(unknown.text)
    stray = readme_client.get(IMAGENET, params={"top": "3"}, headers=HTML)
    assert stray.status_code == 400 and "'top'" in stray.text


def test_the_page_and_chart_svg_label_the_same_new_bests_and_link_each_point(
    readme_client: TestClient,
) -> None:
    """ImageNet Top 1 Accuracy has 17 new bests (a day counts its best value only): every one labelled, in the page's chart
    and in chart.svg alike (one renderer), each point a link to its paper's page."""
    svg = ET.fromstring(
        readme_client.get(IMAGENET + "/chart.svg", params={"metric": "Top 1 Accuracy"}).content
    )
    history = readme_client.get(IMAGENET + "/history.json", params={"metric": "Top 1 Accuracy"}).json()
    best: float | None = None
    news = []
    for p in history:
        if best is None or p["value"] > best:
            best = p["value"]
            news.append(p["model"])
    assert len(news) == 17
    labels = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "ch-lbl"]
    assert labels == [m if len(m) <= 30 else m[:29].rstrip() + "…" for m in news]
    page = readme_client.get(IMAGENET, headers=HTML).text
    inline = page[page.index('<section id="metric-1"'):]
    inline = inline[inline.index("<svg"): inline.index("</svg>") + 6]
    root = ET.fromstring(inline)
    assert [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "ch-lbl"] == labels
    titles = [t.text for t in root.iter(f"{SVG}text") if "ch-title" in (t.get("class") or "")]
    assert titles == ["Top 1 Accuracy (%)", "date of the paper"]  # the axes, with the unit
    links = [a for a in root.iter(f"{SVG}a")]
    circles = list(root.iter(f"{SVG}circle"))
    assert len(circles) == len(history) and sum(len(list(a.iter(f"{SVG}circle"))) for a in links) == len(history)
    assert all((a.get("href") or "").startswith("/paper/") for a in links)
    assert readme_client.get(links[0].get("href") or "", headers=HTML).status_code == 200


def test_chart_svg_stands_alone_with_its_attribution(readme_client: TestClient) -> None:
    response = readme_client.get(IMAGENET + "/chart.svg", params={"metric": "Top 1 Accuracy"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{SVG}svg"
    texts = [" ".join("".join(t.itertext()).split()) for t in root.iter(f"{SVG}text")]
    assert any("Papers with Code" in t and "CC BY-SA 4.0" in t and "2020-08-28" in t for t in texts)
    labels = {t.text for t in root.iter(f"{SVG}text") if t.get("class") == "ch-lbl"}
    assert "FixEfficientNet-L2" in labels
    circles = list(root.iter(f"{SVG}circle"))
    assert circles and all(c.find(f"{SVG}title") is not None for c in circles)
    assert not any(e.tag == f"{SVG}script" for e in root.iter())


def test_a_metric_of_unknown_direction_charts_no_best(readme_client: TestClient) -> None:
    board = "/leaderboard/point-cloud-generation/shapenet-car"
    svg = readme_client.get(board + "/chart.svg", params={"metric": "1-NNA-CD"})
    assert svg.status_code == 200
    root = ET.fromstring(svg.content)
    assert not any(p.get("class") == "ch-step" for p in root.iter(f"{SVG}path"))
    assert not any(c.get("class") == "ch-best" for c in root.iter(f"{SVG}circle"))
    texts = " ".join(" ".join("".join(t.itertext()).split()) for t in root.iter(f"{SVG}text"))
    assert "direction unknown" in texts
    history = readme_client.get(board + "/history.json", params={"metric": "1-NNA-CD"}).json()
    assert len(history) == 2 and all(p["best"] is None for p in history)
    # its other metric, MMD-CD (a distance), keeps its best so far
    known = readme_client.get(board + "/history.json", params={"metric": "MMD-CD"}).json()
    assert known and all(p["best"] is not None for p in known)


def test_a_dataset_page_links_the_dataset_under_its_other_name(readme_client: TestClient) -> None:
    flowers = readme_client.get("/dataset/flowers-102", headers=HTML)
    assert flowers.status_code == 200
    alike = flowers.text.split("possibly the same as", 1)[1].split("</dd>", 1)[0]
    assert 'href="/dataset/oxford-102-flowers"' in alike and "Oxford 102 Flowers" in alike
    oxford = readme_client.get("/dataset/oxford-102-flowers", headers=HTML)
    assert 'href="/dataset/flowers-102"' in oxford.text.split("possibly the same as", 1)[1]
    imagenet = readme_client.get("/dataset/imagenet", headers=HTML)
    assert imagenet.status_code == 200 and "possibly the same as" not in imagenet.text


def test_leaderboard_errors_and_other_forms(readme_client: TestClient) -> None:
    missing = readme_client.get(IMAGENET + "/chart.svg", params={"metric": "BLEU"})
    assert missing.status_code == 404 and "'Top 1 Accuracy'" in missing.text
    assert "metric 'BLEU' is no metric" in missing.text
    unknown = readme_client.get(IMAGENET + "/history.json", params={"top": "3"})
    assert unknown.status_code == 400 and "'top'" in unknown.text
    nothing = readme_client.get("/leaderboard/image-classification/no-such-set", headers=HTML)
    assert nothing.status_code == 404 and "no leaderboard" in nothing.text
    turtle = readme_client.get(IMAGENET, params={"format": "turtle"})
    assert turtle.status_code == 200 and "kg:Leaderboard" in turtle.text


def test_every_leaderboard_link_of_the_task_and_dataset_pages_answers(
    readme_client: TestClient, readme_store: Path
) -> None:
    """The ImageNet dataset page and the image-classification task page link their
    leaderboards; each link answers 200, and so does every 100th leaderboard of the store."""
    links: set[str] = set()
    for path in ("/dataset/imagenet", "/task/image-classification"):
        response = readme_client.get(path, headers=HTML)
        assert response.status_code == 200
        links.update(
            href for tag, attrs in _anchors(response.text) for key, href in attrs
            if tag == "a" and key == "href" and href and href.startswith("/leaderboard/")
        )
    assert "/leaderboard/image-classification/imagenet" in links
    store = GraphStore.open(readme_store, read_only=True)
    try:
        result = store.query(  # every 100th leaderboard (the 2020 tables have no subdatasets)
            "PREFIX kg: <https://w3id.org/kg/ontology#> SELECT ?b WHERE { ?b a kg:Leaderboard } ORDER BY ?b"
        )
        assert isinstance(result, SelectResult) and len(result.rows) == 2729
        links.update("/" + str(row[0].value).removeprefix(BASE) for row in result.rows[::100] if row[0])
    finally:
        store.close()
    assert len(links) > 28
    for link in sorted(links):
        assert readme_client.get(link, headers=HTML).status_code == 200, link


def _anchors(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, attrs))

    Collect().feed(html)
    return found


def test_a_paper_page_groups_its_results_per_benchmark(
    readme_client: TestClient, readme_store: Path, cli: CliRunner
) -> None:
    """2003.08237's 32 results: one benchmark (Image Classification on ImageNet), a row per
    model, the metrics as columns, each value with the rank `kg leaderboard` gives it."""
    html = readme_client.get("/paper/arxiv/2003.08237", headers=HTML).text
    section = html[html.index('<section id="results"'):]
    section = section[: section.index("</section>")]
    assert "32 results in 1 benchmark" in section
    assert section.count('<h3 class="benchmark">') == 1
    heads = re.findall(r'<th class="num">([^<]*)</th>', section)
    assert heads == ["Top 1 Accuracy", "Top 5 Accuracy", "Number of params"]  # most reported first
    got = {
        (model, metric): (value, rank)
        for model, row in re.findall(r'<tr><td class="model">([^<]*)</td>(.*?)</tr>', section, re.S)
        for metric, value, rank in re.findall(
            r'<td class="num" data-label="([^"]*)">([^<]*) <span class="rank"[^>]*>([^<]*)</span>', row
        )
    }
    board = json.loads(
        run(cli, "--store", str(readme_store), "leaderboard", "image-classification",
            "imagenet", "--format", "json").stdout
    )
    want = {}
    for s in board["sections"]:
        scored = sum(1 for e in s["entries"] if e["number"] is not None)
        for e in s["entries"]:
            if (e["paper"] or "").endswith("/paper/arxiv/2003.08237"):
                want[(e["model"], s["metric"])] = (e["value"], f"#{e['rank']} of {scored}")
    assert len(want) == 32 and got == want
    models = re.findall(r'<tr><td class="model">([^<]*)</td>', section)
    assert models[0] == "FixEfficientNet-L2"  # rows by their rank on the first metric


# --- hostile names ------------------------------------------------------------------------------

HOSTILE_MODEL = "<script>alert('m')</script><svg onload=alert(1)> ]]> & \"q\""
HOSTILE_TITLE = "</title><script>alert('t')</script> & Zoë"


def _hostile_store(tmp_path: Path) -> GraphStore:
    rows = [
        {"model_name": "Plain", "paper_title": "Plain Paper", "paper_date": "2019-01-01",
         "paper_url": "https://arxiv.org/abs/1901.00001", "metrics": {"Top 1 Accuracy": "70.0"}},
        {"model_name": HOSTILE_MODEL, "paper_title": HOSTILE_TITLE, "paper_date": "2020-01-01",
         "paper_url": "https://arxiv.org/abs/2001.00001", "metrics": {"Top 1 Accuracy": "80.1"}},
        {"model_name": "Later", "paper_title": "Later Paper", "paper_date": "2020-06-01",
         "paper_url": "https://arxiv.org/abs/2006.00001", "metrics": {"Top 1 Accuracy": "75"}},
    ]
    table = [{"task": "Image Classification", "datasets": [
        {"dataset": "ImageNet", "sota": {"metrics": ["Top 1 Accuracy"], "rows": rows}}
    ], "subtasks": []}]
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    store = GraphStore.memory()
    report = ingest(store, [str(path)], base_iri=BASE)
    assert report.rejected == 0
    return store


def test_hostile_model_names_render_inert(tmp_path: Path) -> None:
    with client_for(_hostile_store(tmp_path), workers=1) as client:
        svg = client.get(IMAGENET + "/chart.svg")
        assert svg.status_code == 200
        root = ET.fromstring(svg.content)  # well-formed: nothing closed the markup early
        elements = list(root.iter())
        assert not any(e.tag.endswith("script") for e in elements)
        assert [e.tag for e in elements].count(f"{SVG}svg") == 1
        assert not any(k.lower().startswith("on") for e in elements for k in e.attrib)
        titles = [t.text or "" for t in root.iter(f"{SVG}title")]
        assert any(t.startswith(HOSTILE_MODEL + ": 80.1 (2020-01-01) · " + HOSTILE_TITLE) for t in titles)
        labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "ch-lbl"]
        assert labels == ["Plain", HOSTILE_MODEL[:29].rstrip() + "…"]
        assert "<script>" not in svg.text and "&lt;script&gt;" in svg.text

        page = client.get(IMAGENET, headers=HTML)
        assert page.status_code == 200
        parsed = _page(page.text)
        assert "script" not in parsed.tags and parsed.tags.count("svg") == 1
        assert parsed.sections[1]["rows"][0][1] == HOSTILE_MODEL
        assert any(t.startswith(HOSTILE_MODEL) for t in parsed.sections[0]["titles"])

        history = client.get(IMAGENET + "/history.json").json()
        assert [(p["date"], p["value"], p["model"], p["best"]) for p in history] == [
            ("2019-01-01", 70, "Plain", 70),
            ("2020-01-01", 80.1, HOSTILE_MODEL, 80.1),
            ("2020-06-01", 75, "Later", 80.1),
        ]


def test_result_pages_answer(readme_client: TestClient) -> None:
    """Each model on the page links its result: under the leaderboard for a row that names
    no paper (SIFT + FVs), under its paper otherwise; both answer, in HTML and Turtle."""
    page = readme_client.get(IMAGENET, headers=HTML).text
    hrefs = [href for tag, attrs in _anchors(page) for key, href in attrs
             if tag == "a" and key == "href" and href and "/result/" in href]
    under_board = [h for h in hrefs if h.startswith(IMAGENET + "/result/")]
    under_paper = [h for h in hrefs if h.startswith("/paper/")]
    assert under_board and under_paper
    for href in (*under_board, under_paper[0]):
        html = readme_client.get(href, headers=HTML)
        assert html.status_code == 200, href
        turtle = readme_client.get(href, params={"format": "turtle"})
        assert turtle.status_code == 200 and "kg:EvaluationResult" in turtle.text, href
    sift = readme_client.get(under_board[0], params={"format": "turtle"}).text
    assert "SIFT + FVs" in sift and "kg:inLeaderboard" in sift


def test_code_with_its_harvested_samples_on_a_records_leaderboard(tmp_path: Path) -> None:
    """Results from records (no evaluation table): the leaderboard still answers, ranks by
    direction (Top 5 Error lowest first) and shows each paper's code with the official flag,
    framework and the execution status of the samples harvested from that repository."""
    store = build(GraphStore.memory(), [str(write_mini(tmp_path))])
    with client_for(store, workers=1) as client:
        response = client.get(IMAGENET, headers=HTML)
        assert response.status_code == 200, response.text
        page = _page(response.text)
        top1, table, top5 = page.sections
        assert top1["h2"] == "Top 1 Accuracy" and top5["h2"] == "Top 5 Error"
        # a row per model and paper: Beta-S reports both metrics, in one row
        assert [r[:4] for r in table["rows"]] == [
            ["1", "Alpha-L", "76.5%", ""], ["2", "Gamma", "10.1", ""], ["3", "Beta-S", "9.5", "3.1"],
            ["–", "Delta-X", "-", ""],
        ]
        alpha = table["rows"][0]
        assert "org/zoo" in alpha[5] and "official" in alpha[5] and "pytorch" in alpha[5]
        assert "ran honours 2" in alpha[5]
        beta = table["rows"][2]
        # the official beta-lab/beta first, though the record lists org/zoo first
        assert beta[5].startswith("beta-lab/beta") and "ran draft wrong 1" in beta[5]
        assert "lower is better: lowest first" in response.text
        assert "No snapshot date is recorded" in page.footer


def test_the_extra_training_data_filter_where_the_source_says_so(tmp_path: Path) -> None:
    """Rows that say `uses_additional_data`: the page offers the filter, marks the row, and
    `?hide_extra=1` hides it; a row that says false, or nothing, stays. Where no row says,
    the filter is not offered (the README store's ImageNet table)."""
    rows = [
        {"model_name": "Big", "paper_title": "Big Data Net", "paper_date": "2020-01-01",
         "paper_url": "https://arxiv.org/abs/2001.00002", "uses_additional_data": True,
         "metrics": {"Top 1 Accuracy": "90.0", "Top 5 Accuracy": "99.0"}},
        {"model_name": "Lean", "paper_title": "Lean Net", "paper_date": "2019-01-01",
         "paper_url": "https://arxiv.org/abs/1901.00002", "uses_additional_data": False,
         "metrics": {"Top 1 Accuracy": "80.0"}},
        {"model_name": "Quiet", "paper_title": "Quiet Net", "paper_date": "2018-01-01",
         "paper_url": "https://arxiv.org/abs/1801.00002", "metrics": {"Top 1 Accuracy": "70.0"}},
    ]
    table = [{"task": "Image Classification", "datasets": [
        {"dataset": "ImageNet", "sota": {"metrics": ["Top 1 Accuracy"], "rows": rows}}
    ], "subtasks": []}]
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    store = GraphStore.memory()
    assert ingest(store, [str(path)], base_iri=BASE).rejected == 0
    with client_for(store, workers=1) as client:
        page = client.get(IMAGENET, headers=HTML).text
        assert 'name="hide_extra"' in page
        shown = _page(page).sections[1]["rows"]
        assert [r[1] for r in shown] == ["Big extra data", "Lean", "Quiet"]
        assert shown[0][2:4] == ["90.0", "99.0"]  # one row, both metrics
        hidden = _page(client.get(IMAGENET, params={"hide_extra": "1"}, headers=HTML).text)
        assert [r[1] for r in hidden.sections[1]["rows"]] == ["Lean", "Quiet"]


def test_a_leaderboard_with_a_non_ascii_key_answers(tmp_path: Path) -> None:
    """A dataset whose name has no ASCII letter keys on the name itself (dataset/数据集); the
    browser sends it percent-encoded, and the page still finds it."""
    rows = [{"model_name": "M", "paper_title": "P", "paper_date": "2020-01-01",
             "paper_url": "https://arxiv.org/abs/2001.00001", "metrics": {"BLEU": "30.5"}}]
    table = [{"task": "Machine Translation", "datasets": [{"dataset": "数据集", "sota": {"rows": rows}}]}]
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    store = GraphStore.memory()
    assert ingest(store, [str(path)], base_iri=BASE).rejected == 0
    with client_for(store, workers=1) as client:
        href = "/leaderboard/machine-translation/%E6%95%B0%E6%8D%AE%E9%9B%86"
        page = client.get(href, headers=HTML)
        assert page.status_code == 200, page.text
        assert _page(page.text).sections[1]["rows"][0][:3] == ["1", "M", "30.5"]
        assert client.get(href + "/history.json").json()[0]["value"] == 30.5
