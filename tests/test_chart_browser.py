"""The leaderboard chart in a real headless Chromium: every new best labelled, and no label
over another or over the best-so-far line, measured with the browser's own boxes
(getBoundingClientRect) at 1400 and 390 px wide, on the README store's ImageNet page.
Set KG_SCREENSHOT_DIR=docs to refresh docs/leaderboard-page.png and docs/paper-page.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve_support import STOPPED, ServeProcess
from tests.test_server_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium: apt-get install -y chromium"
    ),
]

IMAGENET = "/leaderboard/image-classification/imagenet"

#: In the page: each label's box, and the points of the step line every 2 px of its length,
#: in the same (viewport) coordinates; a label's leader line ends at its label, not in it.
MEASURE = """section => {
  const svg = document.querySelector(`#${section} svg.chart`);
  const labels = [...svg.querySelectorAll('text.ch-lbl')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom};
  });
  const path = svg.querySelector('path.ch-step');
  const m = path.getScreenCTM();
  const line = [];
  for (let at = 0; at <= path.getTotalLength(); at += 2) {
    const p = path.getPointAtLength(at);
    line.push([m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]);
  }
  const box = svg.getBoundingClientRect();
  return {labels, line, width: box.width};
}"""


@pytest.fixture(scope="module")
def server(readme_store: Path) -> Iterator[str]:
    proc = ServeProcess(["--store", str(readme_store)], ["--workers", "2"])
    try:
        yield proc.url
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.parametrize("width,height", [(1400, 1000), (390, 844)])
def test_every_new_best_is_labelled_and_no_label_overlaps(
    browser: Any, server: str, width: int, height: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(server + IMAGENET)
        found = page.evaluate(MEASURE, "metric-1")
        labels = found["labels"]
        assert len(labels) == 17  # ImageNet Top 1 Accuracy's new bests (a day's best value only), each labelled
        assert all(label["right"] - label["left"] > 10 for label in labels)
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                assert not _overlap(a, b), (a["text"], b["text"])
            crossing = [
                (x, y) for x, y in found["line"]
                if a["left"] <= x <= a["right"] and a["top"] <= y <= a["bottom"]
            ]
            assert not crossing, (a["text"], crossing[:3])
        # at 390 px the chart keeps its size (the page scrolls it sideways): labels stay readable
        assert found["width"] >= 700
        font = page.eval_on_selector("#metric-1 text.ch-lbl", "t => t.getBoundingClientRect().height")
        assert font >= 10
        shots = os.environ.get("KG_SCREENSHOT_DIR")
        if shots:
            suffix = "" if width == 1400 else "-390"
            page.screenshot(path=f"{shots}/leaderboard-page{suffix}.png")
            page.goto(server + "/paper/arxiv/2003.08237#results")
            page.screenshot(path=f"{shots}/paper-page{suffix}.png")
    finally:
        page.close()
