"""Layout that survives any text: hostile records (a 60,000-character word in an abstract,
an author's name, a task, a method and a model; a 200,000-character title; a long URL in an
abstract) leave no page wider than the viewport, at 1,280 and at 390 px, in a real headless
Chromium. One `kg serve`, one browser, the page kinds that show these texts.

Set KG_SCREENSHOT_DIR=DIR to keep a screenshot of each page at each width.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.serve_support import KG_BIN, STOPPED, ServeProcess
from tests.test_server_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]

WORD = "Supercalifragilistic" * 3000  # 60,000 characters, no break opportunity
TITLE = "Unbreakable" * 18_182  # 200,002 characters
URL = "https://example.org/" + "/".join(f"segment{i:03d}-with-no-spaces" for i in range(12))
SLUG_TITLE, SLUG_WORD = "hostile-long-title", "hostile-long-word"
WIDTHS = (1280, 390)


def _records(seed: dict[str, Any]) -> list[dict[str, Any]]:
    long_title = copy.deepcopy(seed)
    long_title.update(url=f"/paper/{SLUG_TITLE}", title=TITLE, arxiv_id="2101.00011",
                      url_abs="https://arxiv.org/abs/2101.00011", url_pdf=None, code_links=[])
    word = copy.deepcopy(seed)
    word.update(
        url=f"/paper/{SLUG_WORD}", title=f"A paper with a long word {WORD[:300]}",
        arxiv_id="2101.00012", url_abs="https://arxiv.org/abs/2101.00012", url_pdf=None,
        abstract=f"We study {WORD} and publish our code at {URL} for everyone.",
        authors=[WORD, "Ann Example"],
        tasks=[{"task_slug": "long-word-task", "task_name": f"Task {WORD}"}],
        methods=[{"method_slug": "long-word-method", "method_name": f"Method {WORD}"}],
        code_links=[{"paper_slug": SLUG_WORD, "repo_url": f"https://github.com/o/{WORD[:200]}",
                     "is_official": 1, "framework": "pytorch"}],
    )
    return [long_title, word]


def _table() -> list[dict[str, Any]]:
    rows = [
        {"model_name": WORD, "paper_title": TITLE[:5000], "paper_date": "2020-01-01",
         "paper_url": "https://arxiv.org/abs/2101.00012", "metrics": {"Accuracy": "9" * 400}},
        {"model_name": "Plain", "paper_title": "Plain", "paper_date": "2021-01-01",
         "paper_url": "https://arxiv.org/abs/2101.00013", "metrics": {"Accuracy": "70"}},
    ]
    return [{"task": "Image Classification", "datasets": [
        {"dataset": "ImageNet", "sota": {"metrics": ["Accuracy"], "rows": rows}}
    ], "subtasks": []}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, seed_records: list[dict[str, Any]]) -> Iterator[str]:
    root = tmp_path_factory.mktemp("hostile-layout")
    (root / "records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _records(seed_records[0])), encoding="utf-8"
    )
    (root / "evaluation-tables.json").write_text(json.dumps(_table()), encoding="utf-8")
    store = root / "store"
    done = subprocess.run(
        [KG_BIN, "--store", str(store), "ingest", "-q", str(root / "records.jsonl"),
         str(root / "evaluation-tables.json")],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    proc = ServeProcess(["--store", str(store)], ["--workers", "1"])
    try:
        yield proc.url
    finally:
        code, log = proc.stop()
        assert code == STOPPED and "Traceback" not in log, log


PAGES = {
    "paper-title": f"/paper/{SLUG_TITLE}",
    "paper-word": f"/paper/{SLUG_WORD}",
    "author": "/author/" + quote(WORD.lower()),
    "task": "/task/long-word-task",
    "method": "/method/long-word-method",
    "leaderboard": "/leaderboard/image-classification/imagenet",
    "search": "/search?q=supercalifragilistic",
}


def test_no_hostile_page_is_wider_than_the_viewport(server: str) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    shots = os.environ.get("KG_SCREENSHOT_DIR")
    wide: dict[str, int] = {}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": 900})
                for kind, path in PAGES.items():
                    response = page.goto(server + path, wait_until="load")
                    assert response is not None and response.status == 200, (kind, path)
                    scroll = page.evaluate("document.documentElement.scrollWidth")
                    if scroll > width:
                        wide[f"{kind} at {width}px"] = scroll
                    if shots:
                        page.screenshot(path=str(Path(shots) / f"{kind}-{width}.png"))
                page.close()
        finally:
            browser.close()
    assert not wide, f"pages wider than the viewport (scrollWidth): {wide}"
