"""Reading inputs: every container format, and bad bytes that must not hide good records."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import pytest

from kg.ingest.reader import expand, read_items

GOOD = {"url": "/paper/a", "title": "A"}


def values(path: Path | str, **kw: int) -> list[tuple[str, object, str | None]]:
    return [(i.locator, i.value, str(i.error) if i.error else None) for i in read_items(str(path), **kw)]


def test_single_object_pretty_printed(tmp_path: Path) -> None:
    p = tmp_path / "one.json"
    p.write_text(json.dumps(GOOD, indent=2))
    assert values(p) == [("", GOOD, None)]


def test_array_is_streamed_item_by_item(tmp_path: Path) -> None:
    p = tmp_path / "many.json"
    p.write_text(json.dumps([GOOD, {"url": "/paper/b"}]))
    assert [v for _, v, _ in values(p)] == [GOOD, {"url": "/paper/b"}]
    assert [loc for loc, _, _ in values(p)] == ["item 0", "item 1"]


def test_json_lines_with_a_bad_line_keep_the_good_ones(tmp_path: Path) -> None:
    p = tmp_path / "recs.jsonl"
    p.write_bytes(b'{"url": "/paper/a"}\n{"url": \n\n{"url": "/paper/\xff"}\n{"url": "/paper/c"}\n')
    got = values(p)
    assert got[0] == ("line 1", {"url": "/paper/a"}, None)
    assert got[1][0] == "line 2" and "malformed JSON" in str(got[1][2])
    assert got[2][0] == "line 4" and "not valid UTF-8 (byte 0xff" in str(got[2][2])
    assert got[3] == ("line 5", {"url": "/paper/c"}, None)
    assert str(p) in str(got[1][2])


def test_json_file_holding_json_lines_is_sniffed(tmp_path: Path) -> None:
    p = tmp_path / "actually-lines.json"
    p.write_text('{"url": "/paper/a"}\n{"url": "/paper/b"}\n')
    assert [loc for loc, _, _ in values(p)] == ["line 1", "line 2"]


def test_gzip_by_magic_bytes_not_name(tmp_path: Path) -> None:
    p = tmp_path / "records.jsonl.gz"
    p.write_bytes(gzip.compress(b'{"url": "/paper/a"}\n'))
    assert values(p) == [("line 1", {"url": "/paper/a"}, None)]
    q = tmp_path / "dump.json"  # gzip data behind a plain name, as in the raw slices
    q.write_bytes(gzip.compress(json.dumps([GOOD]).encode()))
    assert values(q) == [("item 0", GOOD, None)]


def test_overlong_line_is_skipped_without_reading_it_whole(tmp_path: Path) -> None:
    p = tmp_path / "big.jsonl"
    p.write_bytes(b'{"a": "' + b"x" * 5000 + b'"}\n' + b'{"url": "/paper/b"}\n')
    got = values(p, limit=1000)
    assert got[0][0] == "line 1" and "longer than the record limit of 1,000 bytes" in str(got[0][2])
    assert got[1] == ("line 2", {"url": "/paper/b"}, None)


def test_truncated_array_reports_where_reading_stopped(tmp_path: Path) -> None:
    p = tmp_path / "cut.json"
    p.write_text('[{"url": "/paper/a"}, {"url": "/pa')
    got = values(p)
    assert got[0] == ("item 0", {"url": "/paper/a"}, None)
    assert "malformed JSON, so the rest of the file was not read" in str(got[1][2])


def test_byte_order_mark_and_blank_lead(tmp_path: Path) -> None:
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert values(p) == [("line 1", GOOD, None)]


def test_not_json_at_all(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text("hello")
    assert "is not JSON" in str(values(p)[0][2])


def test_directories_are_walked_in_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    for name in ("b/2.json", "1.jsonl", "b/3.ndjson.gz", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert [Path(p).relative_to(tmp_path).as_posix() for p in expand([str(tmp_path)])] == [
        "1.jsonl", "b/2.json", "b/3.ndjson.gz"]


def test_a_missing_path_is_one_error_item_naming_it() -> None:
    assert list(expand(["/nonexistent/file.json"])) == ["/nonexistent/file.json"]
    (item,) = read_items("/nonexistent/file.json")
    assert item.error is not None and item.source == "/nonexistent/file.json"
    assert "no such file" in str(item.error)


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(b'{"url": "/paper/a"}\n{"url": "/paper/b"}\n'))
    monkeypatch.setattr(sys, "stdin", fake)
    assert [i.source for i in read_items("-")] == ["<stdin>", "<stdin>"]


def test_real_methods_dump_streams(tmp_path: Path) -> None:
    from tests.conftest import RAW_DIR

    items = list(read_items(str(RAW_DIR / "pwc-methods-2022" / "methods.json.gz")))
    assert len(items) == 1924
    assert all(i.error is None for i in items)
