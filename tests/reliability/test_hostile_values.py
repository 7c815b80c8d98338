"""Metric values beyond float range are data: ±Infinity, NaN, 1e309, 1e9999999 and spans
wider than a float. A leaderboard holding them renders (page, chart, history) and every JSON
face writes standard JSON: `null` where no float holds the number, never a bare `Infinity`.

The property test drives the pipeline in process (ingest, `kg.query.leaderboard`, the chart,
the page's template, the JSON writer); the face test sends the worst values through a real
`kg serve` (page, chart.svg, history.json, /mcp with the SDK's client) and the real CLI.
"""

from __future__ import annotations

import json
import math
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.ingest.ingestor import ingest
from kg.library.results import json_text
from kg.query.leaderboard import load
from kg.rdf.store import GraphStore
from kg.serve.chart import best_so_far_chart
from kg.serve.pages.leaderboard import page_context
from kg.serve.render import render
from tests.serve_support import BASE, KG_BIN, STOPPED, ServeProcess

BOARD = "/leaderboard/image-classification/imagenet"
#: The values of the hostile run, and their neighbours at the edges of a float.
WORST = (
    "1e309", "-1e309", "1e308", "-1e308", "1.7976931348623157e308", "4.9e-324", "1e-400",
    "Infinity", "-Infinity", "NaN", "inf", "1e9999999", "-0", "88.5",
)


def strict_json(text: str) -> Any:
    """Parse `text` as standard JSON: Infinity, -Infinity and NaN are refused."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"not standard JSON: {constant} in {text[:300]}")

    return json.loads(text, parse_constant=refuse)


def table(values: list[Any]) -> list[dict[str, Any]]:
    """An evaluation table of one leaderboard, a row per value (a string or a JSON number)."""
    rows = [
        {"model_name": f"M{i}", "paper_title": f"Paper {i}", "paper_date": f"{2000 + i % 25}-01-01",
         "paper_url": f"https://arxiv.org/abs/20{i % 10}1.{i:05d}",
         "metrics": {"Top 1 Accuracy": v, "Error": v}}
        for i, v in enumerate(values)
    ]
    return [{"task": "Image Classification", "datasets": [
        {"dataset": "ImageNet", "sota": {"metrics": ["Top 1 Accuracy", "Error"], "rows": rows}}
    ], "subtasks": []}]


def write_table(directory: Path, values: list[Any]) -> Path:
    path = directory / "evaluation-tables.json"
    path.write_text(json.dumps(table(values)), encoding="utf-8")  # floats: Infinity, NaN too
    return path


def _finite(chart: Any) -> list[float]:
    numbers = [*chart.plot, *(t.at for t in chart.x_ticks), *(t.at for t in chart.y_ticks)]
    for p in chart.points:
        numbers += [p.x, p.y]
        if p.label is not None:
            numbers += [p.label.x, p.label.y, *p.label.leader]
    return numbers


VALUES = st.one_of(
    st.sampled_from(WORST),
    st.floats(),  # written as JSON numbers: Infinity, NaN and 1e308 among them
    st.floats().map(repr),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(-(10**6), 10**6), st.integers(-2000, 2000)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(values=st.lists(VALUES, min_size=1, max_size=6))
def test_any_metric_value_gives_a_page_a_chart_and_standard_json(
    tmp_path: Path, values: list[Any]
) -> None:
    store = GraphStore.memory()
    report = ingest(store, [str(write_table(tmp_path, values))], base_iri=BASE)
    assert report.rejected == 0, report.errors
    board = load(store, "image-classification", "imagenet", BASE)
    data = board.as_json()
    data["sections"] = [s.as_json() for s in board.sections]
    strict_json(json_text(data))
    assert sum(len(s.entries) for s in board.sections) == 2 * len(values)  # none lost
    for section in board.sections:
        strict_json(json_text([p.as_json() for p in section.history]))
        chart = best_so_far_chart(section)
        assert all(math.isfinite(n) for n in _finite(chart)), chart
        assert "inf" not in chart.step and "nan" not in chart.step
        ET.fromstring(render("_chart.svg", chart=chart, chart_id="c", standalone=True))
    html = render("leaderboard.html", page_context(board, BASE))
    assert "Image Classification" in html


# --- every face, through real processes -------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-values")
    values: list[Any] = [*WORST, float("inf"), float("nan"), 1e308, -1e308]
    path = write_table(root, values)
    store = root / "store"
    done = subprocess.run([KG_BIN, "--store", str(store), "ingest", "-q", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return store


@pytest.fixture(scope="module")
def server(hostile_store: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(["--store", str(hostile_store)], ["--workers", "1"])
    try:
        yield proc
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


def test_the_cli_writes_standard_json(hostile_store: Path) -> None:
    for extra in ([], ["--history", "--metric", "Error"]):
        done = subprocess.run(
            [KG_BIN, "--store", str(hostile_store), "leaderboard", "image-classification",
             "imagenet", "-f", "json", *extra],
            capture_output=True, text=True, check=False,
        )
        assert done.returncode == 0, done.stderr
        data = strict_json(done.stdout)
        if not extra:
            values = {e["value"]: e["number"] for e in data["sections"][0]["entries"]}
            assert values["1e309"] is None and values["88.5"] == 88.5  # the text stays
            assert values["1e308"] == 1e308


def test_the_pages_answer_and_the_json_is_standard(server: ServeProcess) -> None:
    page = server.get(BOARD, headers={"accept": "text/html"})
    assert page.status_code == 200, page.text[-2000:]
    assert "1e309" in page.text and "beyond ±1e300 left out of the chart" in page.text
    for metric in ("Top 1 Accuracy", "Error"):
        svg = server.get(f"{BOARD}/chart.svg", params={"metric": metric})
        assert svg.status_code == 200, svg.text[-2000:]
        ET.fromstring(svg.content)
        history = server.get(f"{BOARD}/history.json", params={"metric": metric})
        assert history.status_code == 200
        points = strict_json(history.text)
        assert None in [p["value"] for p in points]  # 1e309: a null, its text on the page
    for feed in ("/feeds/sota.atom", "/task/image-classification/sota.atom"):
        atom = server.get(feed)
        assert atom.status_code == 200, atom.text[-2000:]
        text = "".join(ET.fromstring(atom.content).itertext())
        assert "1e309" in text and "None" not in text and "inf)" not in text


def test_mcp_writes_standard_json(server: ServeProcess) -> None:
    from mcp import Client

    async def main() -> Any:
        async with Client(f"{server.url}/mcp", read_timeout_seconds=120) as client:
            return await client.call_tool(
                "leaderboard", {"task": "image-classification", "dataset": "imagenet"}
            )

    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    strict_json(result.content[0].text)
    strict_json(json.dumps(result.structured_content, allow_nan=False))
