"""Atom feeds of new bests, parsed with feedparser and checked against the raw 2020 tables.

The README store (`readme_store`, read-only) is served in process; every page of
`/feeds/sota.atom`, a task's and a dataset's feed are read by following their RFC 5005
`next` links and compared with the new bests computed here from the raw JSON
(tests/raw_tables.py). Ids, dates and rights are checked on each entry, the ids across a
re-ingest, and hostile names on a generated table.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import feedparser
import pytest

from kg.ingest.ingestor import ingest
from kg.query.directions import metric_direction
from kg.query.feeds import PAGE_SIZE, boards, feed_queries, load
from kg.query.leaderboard import RESULTS, SOURCE
from kg.rdf.store import GraphStore
from kg.serve.pages.feeds import feed_context
from kg.serve.render import render
from tests.raw_tables import RawResult, plain_number, raw_results
from tests.serve_support import BASE, TestClient, client_for

ATOM = "{http://www.w3.org/2005/Atom}"
KGF = "{https://w3id.org/kg/feed#}"
HTML = {"accept": "text/html"}
#: (task, dataset, metric, date, value, model) of a new best (value None: no plain number)
Point = tuple[str, str, str, str, Decimal | None, str]


@pytest.fixture(scope="module")
def readme_client(readme_store: Path) -> Iterator[TestClient]:
    store = GraphStore.open(readme_store, read_only=True)
    try:
        with client_for(store, workers=1, timeout=120.0) as client:
            yield client
    finally:
        store.close()


# --- the new bests, from the raw JSON -----------------------------------------------------------


def _date(text: str | None) -> str | None:
    try:
        return dt.date.fromisoformat(text).isoformat() if text else None
    except ValueError:
        return None


#: one point of a history as the raw tables give it: (date, value, model, best, new best)
RawPoint = tuple[str, Decimal, str, Decimal | None, bool]


def raw_histories() -> tuple[dict[tuple[str, str, str], list[RawPoint]], set[tuple[str, str, str]]]:
    """The best-so-far series of every (task, dataset, metric) whose values this test can
    read, and the series it cannot (a value with digits that is no plain number, such as
    "1.2M" or "55.6 ± 0.2"). Points by date; on one date the best value first in the
    metric's direction, then by model (the result IRI, kg's last key, cannot change a tuple
    here: two results alike in date, value and model give the same point). A metric of
    unknown direction has no best and no new best."""
    series: dict[tuple[str, str, str], list[RawResult]] = defaultdict(list)
    for r in raw_results().values():
        series[(r.task, r.dataset, r.metric)].append(r)
    out: dict[tuple[str, str, str], list[RawPoint]] = {}
    unreadable: set[tuple[str, str, str]] = set()
    for key, results in series.items():
        if any(r.number is None and any(c.isdigit() for c in r.value) for r in results):
            unreadable.add(key)
            continue
        direction = metric_direction(key[2])
        sign = 1 if direction == "lower" else -1
        dated = sorted(
            (d, sign * r.number, r.model or "")
            for r in results
            if r.number is not None and (d := _date(r.date))
        )
        best: Decimal | None = None
        points: list[RawPoint] = []
        for date, signed, model in dated:
            value = sign * signed
            new = direction != "unknown" and (best is None or sign * value < sign * best)
            if new:
                best = value
            points.append((date, value, model, best, new))
        out[key] = points
    return out, unreadable


def raw_new_bests() -> tuple[set[Point], set[tuple[str, str, str]]]:
    """The new bests of every series this test can read, and the series it cannot."""
    histories, unreadable = raw_histories()
    found = {
        (*key, date, value, model)
        for key, points in histories.items()
        for date, value, model, _, new in points
        if new
    }
    return found, unreadable


# --- reading a feed -------------------------------------------------------------------------------


def read_feed(client: TestClient, path: str) -> tuple[list[Any], list[feedparser.FeedParserDict]]:
    """Every entry of a feed, page after page by its `next` links; each page parsed strictly
    (ElementTree) and by feedparser, and its Atom structure checked."""
    entries: list[Any] = []
    pages: list[feedparser.FeedParserDict] = []
    url: str | None = path
    while url:
        response = client.get(url)
        assert response.status_code == 200, (url, response.text)
        assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
        root = ET.fromstring(response.content)  # well-formed XML, or this raises
        assert root.tag == f"{ATOM}feed"
        parsed = feedparser.parse(response.content)
        assert not parsed.bozo, (url, parsed.get("bozo_exception"))
        assert parsed.version == "atom10"
        feed = parsed.feed
        assert feed.id and feed.updated_parsed and feed.rights and feed.title
        rels = {link.rel: link.href for link in feed.links}
        assert {"self", "first", "last", "alternate"} <= set(rels), rels
        assert len(parsed.entries) <= PAGE_SIZE
        for xml_entry, entry in zip(root.findall(f"{ATOM}entry"), parsed.entries, strict=True):
            assert entry.id and entry.updated_parsed and entry.rights and entry.title
            assert entry.links[0].rel == "alternate"
            entries.append((entry, xml_entry))
        pages.append(parsed)
        next_url = rels.get("next")
        url = next_url.removeprefix("http://kg.test") if next_url else None
        if url:
            assert len(parsed.entries) == PAGE_SIZE  # only the last page is short
    return entries, pages


def _point(xml_entry: ET.Element, base: str = BASE) -> Point:
    board = xml_entry.findtext(f"{KGF}leaderboard") or ""
    task, _, dataset = board.removeprefix(f"{base}leaderboard/").partition("/")
    value = plain_number(xml_entry.findtext(f"{KGF}value") or "")
    model = xml_entry.findtext(f"{KGF}model") or ""
    date = (xml_entry.findtext(f"{ATOM}updated") or "")[:10]
    metric = xml_entry.findtext(f"{KGF}metric") or ""
    return (task, dataset, metric, date, value, "" if model == "(no model name)" else model)


def _newest_first(entries: list[Any]) -> None:
    dates = [e.updated for e, _ in entries]
    assert dates == sorted(dates, reverse=True)
    ids = [e.id for e, _ in entries]
    assert len(ids) == len(set(ids)), "an entry id is repeated"


# --- the feeds on the README store ---------------------------------------------------------------


def test_the_feed_of_every_leaderboard_lists_the_new_bests_of_the_raw_tables(
    readme_client: TestClient,
) -> None:
    entries, pages = read_feed(readme_client, "/feeds/sota.atom")
    _newest_first(entries)
    expected, unreadable = raw_new_bests()
    assert len(unreadable) < 0.1 * (len(unreadable) + len({p[:3] for p in expected}))
    got = [_point(x) for _, x in entries]
    readable = [p for p in got if p[:3] not in unreadable]
    assert len(readable) == len(set(readable))
    assert set(readable) == expected
    assert len(entries) == 9935  # docs/leaderboards.md
    # no entry rests on a metric whose direction kg cannot tell
    assert all(metric_direction(p[2]) != "unknown" for p in got)
    assert not any("direction unknown" in e.summary for e, _ in entries)
    first = pages[0]
    rels = {link.rel: link.href for link in first.feed.links}
    assert rels["last"].endswith(f"?page={len(pages) - 1}") and "previous" not in rels
    assert "CC BY-SA 4.0" in first.feed.rights and "Papers with Code" in first.feed.rights
    assert rels["license"] == "https://creativecommons.org/licenses/by-sa/4.0/"
    last = {link.rel for link in pages[-1].feed.links}
    assert "next" not in last and "previous" in last
    bad = readme_client.get("/feeds/sota.atom?page=100000")
    assert bad.status_code == 400 and "past the last page" in bad.text
    assert readme_client.get("/feeds/sota.atom?pge=1").status_code == 400


def test_every_history_of_the_readme_store_is_the_one_the_raw_tables_give(
    readme_store: Path,
) -> None:
    """All the best-so-far series, as the feed builds them (the leaderboard pages, the CLI
    and MCP build theirs with the same `build`), equal those recomputed from the raw JSON:
    dates, values, models, bests and new bests, in order."""
    expected, unreadable = raw_histories()
    store = GraphStore.open(readme_store, read_only=True)
    try:
        rows = {}
        for name, sparql in feed_queries({}).items():
            rows[name] = store.query(sparql)
        built = list(boards(BASE, rows[RESULTS], rows[SOURCE]))
    finally:
        store.close()
    got: dict[tuple[str, str, str], list[RawPoint]] = {}
    for board in built:
        task, _, dataset = board.iri.removeprefix(f"{BASE}leaderboard/").partition("/")
        for s in board.sections:
            if (task, dataset, s.metric) not in unreadable:
                got[(task, dataset, s.metric)] = [
                    (p.date, p.value, p.model or "", p.best, p.new_best) for p in s.history
                ]
    expected = {k: v for k, v in expected.items() if v or k in got}
    assert len(got) > 4000
    assert got == expected
    # the audit's cases: one new best per model and day on crag and kumar ...
    for key in (
        ("colorectal-gland-segmentation", "crag", "F1-score"),
        ("multi-tissue-nucleus-segmentation", "kumar", "Dice"),
    ):
        per_day = Counter((d, m) for d, _, m, _, new in got[key] if new)
        assert per_day and max(per_day.values()) == 1, key
    # ... and PSPNet's 81.2 first of its day on cityscapes-test, the one point that can set
    # a best on 2016-12-04 (its own 78.4 comes after it)
    day = [
        p
        for p in got[("semantic-segmentation", "cityscapes-test", "Mean IoU (class)")]
        if p[0] == "2016-12-04"
    ]
    assert day[0][1:3] == (Decimal("81.2"), "PSPNet (ResNet-101)"), day
    assert not any(new for *_, new in day[1:])


def test_a_task_and_a_dataset_feed_list_their_own_new_bests(readme_client: TestClient) -> None:
    expected, unreadable = raw_new_bests()
    for path, side, key in (
        ("/task/image-classification/sota.atom", 0, "image-classification"),
        ("/dataset/imagenet/sota.atom", 1, "imagenet"),
    ):
        entries, pages = read_feed(readme_client, path)
        _newest_first(entries)
        got = {_point(x) for _, x in entries}
        assert got and {p[side] for p in got} == {key}
        assert {p for p in got if p[:3] not in unreadable} == {
            p for p in expected if p[side] == key
        }
        assert pages[0].feed.id == f"{BASE}{path.strip('/').removesuffix('/sota.atom')}/sota.atom"
    imagenet, _ = read_feed(readme_client, "/task/image-classification/sota.atom")
    top1 = [
        (e, x) for e, x in imagenet
        if x.findtext(f"{KGF}metric") == "Top 1 Accuracy"
        and x.findtext(f"{KGF}leaderboard") == f"{BASE}leaderboard/image-classification/imagenet"
    ]
    newest, xml_newest = top1[0]
    assert xml_newest.findtext(f"{KGF}model") == "FixEfficientNet-L2"
    assert xml_newest.findtext(f"{KGF}value") == "88.5%"
    assert newest.link == "http://kg.test/leaderboard/image-classification/imagenet#metric-1"
    page = readme_client.get(newest.link.removeprefix("http://kg.test"), headers=HTML)
    assert page.status_code == 200 and 'id="metric-1"' in page.text
    assert [t.term for t in newest.tags] == ["Top 1 Accuracy"]
    related = [link for link in newest.links if link.rel == "related"]
    assert related and related[0].href.startswith("http://kg.test/paper/")
    assert "88.5%" in newest.summary and "beating the best so far" in newest.summary
    assert readme_client.get("/task/no-such-task/sota.atom").status_code == 404
    assert readme_client.get("/dataset/imagenet/sota.atom?page=x").status_code == 400


def test_pages_link_their_feeds(readme_client: TestClient) -> None:
    """The home, task, dataset and leaderboard pages name their feeds in
    <link rel="alternate" type="application/atom+xml">, and each one answers."""
    import re

    pattern = re.compile(r'<link rel="alternate" type="application/atom\+xml"[^>]*href="([^"]+)"')
    pages = {
        "/": ["/feeds/sota.atom"],
        "/task/image-classification": ["/task/image-classification/sota.atom"],
        "/dataset/imagenet": ["/dataset/imagenet/sota.atom"],
        "/leaderboard/image-classification/imagenet": [
            "/task/image-classification/sota.atom", "/dataset/imagenet/sota.atom",
        ],
    }
    for path, feeds in pages.items():
        page = readme_client.get(path, headers=HTML)
        assert page.status_code == 200
        assert pattern.findall(page.text) == feeds, path
        for href in feeds:
            assert readme_client.get(href).status_code == 200


# --- ids across a re-ingest, and hostile names -------------------------------------------------


HOSTILE_MODEL = '<script>alert("m")</script> ]]> & \x01\x1b end'
HOSTILE_TITLE = "Title ]]><![CDATA[ <b>bold</b> \x0b\ufffe"


def _table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"task": "Task <i>", "datasets": [{"dataset": "Set ]]>", "sota": {
        "metrics": ["Acc <%>"], "rows": rows}}]}]


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(8):
        rows.append({
            "model_name": HOSTILE_MODEL if i == 5 else f"Model {i}",
            "paper_title": HOSTILE_TITLE if i == 5 else f"Paper {i}",
            "paper_url": f"https://arxiv.org/abs/2001.{i:05d}",
            "paper_date": f"2020-0{i + 1}-01",
            "metrics": {"Acc <%>": "99" if i == 5 else str(50 + (i * 7) % 11)},
        })
    return rows


def _feed_text(store: GraphStore) -> str:
    found = load(store, "all", None, BASE)
    return render("sota.atom", feed_context(found, 0, "http://kg.test", BASE, "t", "/feeds/sota.atom", "/"))


def test_entry_ids_survive_a_reingest_in_another_order(tmp_path: Path) -> None:
    first = tmp_path / "a" / "evaluation-tables.json"
    second = tmp_path / "b" / "evaluation-tables.json"
    first.parent.mkdir()
    second.parent.mkdir()
    rows = _rows()
    first.write_text(json.dumps(_table(rows)), encoding="utf-8")
    random.Random(7).shuffle(rows)
    second.write_text(json.dumps(_table(rows)), encoding="utf-8")
    texts = []
    for paths in ([first], [second], [first, second]):  # the last: ingested again, reordered
        store = GraphStore.memory()
        for path in paths:
            ingest(store, [str(path)], base_iri=BASE)
        texts.append(_feed_text(store))
    entries = [feedparser.parse(t).entries for t in texts]
    assert [e.id for e in entries[0]] == [e.id for e in entries[1]] == [e.id for e in entries[2]]
    assert len(entries[0]) == 4  # 50 (January), 57, 60 and 99 (June): see _rows
    assert all(e.id.startswith(f"{BASE}paper/") and "/result/" in e.id for e in entries[0])


def test_hostile_names_are_escaped_in_the_feed(tmp_path: Path) -> None:
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(_table(_rows())), encoding="utf-8")
    store = GraphStore.memory()
    ingest(store, [str(path)], base_iri=BASE)
    text = _feed_text(store)
    root = ET.fromstring(text.encode("utf-8"))  # strict: control characters would fail here
    parsed = feedparser.parse(text.encode("utf-8"))
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert "<script>" not in text and "<b>" not in text and "\x01" not in text
    hostile = [x for x in root.findall(f"{ATOM}entry") if "script" in (x.findtext(f"{KGF}model") or "")]
    assert len(hostile) == 1
    assert hostile[0].findtext(f"{KGF}model") == '<script>alert("m")</script> ]]> &  end'
    related = hostile[0].find(f"{ATOM}link[@rel='related']")
    assert related is not None
    assert (related.get("title") or "").startswith("Title ]]><![CDATA[ <b>bold</b>")
    assert "Task <i> on Set ]]>" in (hostile[0].findtext(f"{ATOM}title") or "")
