"""No good record is lost to a bad file, and no one record can take the host's memory.

* A directory holding a good file, a truncated `.jsonl.gz`, a `.jsonl.gz` damaged in the
  middle, and another good file: every record before each damage lands, the error names the
  file and the byte, the files after it are read, exit code 1. What "before the damage"
  means is computed independently, by decompressing the bytes with zlib until it fails.
* JSON Lines on standard input and in a `.json` file whose first line is broken: one
  error for that line, every other record lands.
* A record with 250,000 authors (a 5.9 MB line; it took 2.3 GB before) is rejected naming
  the field and the limit, beside good records that land; the peak RSS of `kg ingest` is
  measured (wait4).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from kg.ingest.reader import ReadPosition, read_items
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.reliability.helpers import (
    record_figures,
    run_kg,
    run_measured,
    select,
    write_jsonl,
)

pytestmark = pytest.mark.reliability
PAPERS = """SELECT ?slug WHERE { GRAPH ?g { ?p <https://w3id.org/kg/ontology#pwcSlug> ?slug }
  FILTER(STRSTARTS(STR(?g), "https://w3id.org/kg/id/graph/record/")) }"""


def _lines(items: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in items)


def _slugs(items: list[dict[str, Any]]) -> list[str]:
    return [str(r["url"]).rstrip("/").rsplit("/", 1)[-1] for r in items]


def _intact_prefix(compressed: bytes, originals: list[bytes]) -> int:
    """How many of `originals` zlib recovers, whole and unchanged, before the data fails."""
    inflater = zlib.decompressobj(wbits=31)
    out = b""
    for start in range(len(compressed)):  # a byte at a time: all it yields before failing
        try:
            out += inflater.decompress(compressed[start : start + 1])
        except zlib.error:
            break
    count = 0
    for line, original in zip(out.split(b"\n")[:-1], originals, strict=False):
        if line + b"\n" != original:
            break
        count += 1
    return count


def _stored_slugs(store_path: Path) -> set[str]:
    with GraphStore.open(store_path, read_only=True) as store:
        return {row[0] for row in select(store, PAPERS) if row[0] is not None}


def test_damaged_gzip_files_keep_every_record_before_the_damage(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    items = list(records(800, seed=15))
    assert all("url" in r for r in items)
    parts = [items[i : i + 200] for i in range(0, 800, 200)]
    lines = [[json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in p] for p in parts]
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "1-good.jsonl").write_bytes(_lines(parts[0]))
    whole = gzip.compress(_lines(parts[1]), mtime=0)
    truncated = whole[: len(whole) * 3 // 5]
    (folder / "2-truncated.jsonl.gz").write_bytes(truncated)
    damaged = bytearray(gzip.compress(_lines(parts[2]), mtime=0))
    middle = len(damaged) // 2
    damaged[middle : middle + 64] = b"\xff" * 64
    (folder / "3-damaged.jsonl.gz").write_bytes(bytes(damaged))
    (folder / "4-good.jsonl").write_bytes(_lines(parts[3]))
    kept_truncated = _intact_prefix(truncated, lines[1])
    kept_damaged = _intact_prefix(bytes(damaged), lines[2])
    assert 0 < kept_truncated < 200 and 0 < kept_damaged < 200

    store = tmp_path / "store"
    result = run_kg("--store", str(store), "ingest", str(folder))
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("rejected")]
    where = {}
    for name in ("2-truncated.jsonl.gz", "3-damaged.jsonl.gz"):
        found = [e for e in errors if f"{name}:byte " in e]
        assert len(found) == 1, errors
        at = re.search(r"stopped at byte ([\d,]+) of the compressed file, after line \d+", found[0])
        assert at, found[0]
        where[name] = int(at.group(1).replace(",", ""))
    assert where["2-truncated.jsonl.gz"] == len(truncated)  # the end of what is there
    assert middle <= where["3-damaged.jsonl.gz"] <= middle + 64  # inside the damaged bytes
    expected = (
        set(_slugs(parts[0]))
        | set(_slugs(parts[1][:kept_truncated]))
        | set(_slugs(parts[2][:kept_damaged]))
        | set(_slugs(parts[3]))
    )
    landed = _stored_slugs(store)
    assert landed == expected, (sorted(expected - landed)[:5], sorted(landed - expected)[:5])
    record_figures(
        request.config,
        "damaged_gzip",
        {
            "records_in_files": 800,
            "landed": len(landed),
            "kept_before_truncation": kept_truncated,
            "kept_before_damage": kept_damaged,
            "errors": len(errors),
        },
    )


def test_json_lines_on_stdin_with_a_broken_first_line_lose_one_record(tmp_path: Path) -> None:
    items = list(records(200, seed=16))
    data = "broken…\n" + _lines(items).decode()
    store = tmp_path / "store"
    result = run_kg("--store", str(store), "ingest", "-", input=data)
    assert result.returncode == 1, result.stderr[-2000:]
    rejected = [line for line in result.stderr.splitlines() if line.startswith("rejected")]
    assert rejected == [rejected[0]] and "<stdin>:line 1:" in rejected[0], rejected
    assert _stored_slugs(store) == set(_slugs(items))


@pytest.mark.parametrize("first", ['{"title": "cut short', "{broken", '{"a": 1,'])
def test_a_json_file_of_json_lines_with_a_broken_first_line_loses_one_record(
    tmp_path: Path, first: str
) -> None:
    items = list(records(50, seed=17))
    path = tmp_path / "records.json"
    path.write_text(first + "\n" + _lines(items).decode(), encoding="utf-8")
    store = tmp_path / "store"
    result = run_kg("--store", str(store), "ingest", str(path))
    rejected = [line for line in result.stderr.splitlines() if line.startswith("rejected")]
    assert result.returncode == 1, result.stderr[-2000:]
    assert len(rejected) == 1 and f"{path}:line 1:" in rejected[0], rejected
    assert _stored_slugs(store) == set(_slugs(items))


def test_a_record_with_250000_authors_is_rejected_in_bounded_memory(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    good = list(records(20, seed=18))
    huge = dict(next(iter(records(1, seed=19))))
    huge["url"] = "/paper/two-hundred-fifty-thousand-authors"
    huge["authors"] = [f"Author Number {i:06d}" for i in range(250_000)]
    path = write_jsonl(tmp_path / "records.jsonl", [good[0], huge, *good[1:]])
    size_mb = path.stat().st_size / 1_048_576
    small = write_jsonl(tmp_path / "small.jsonl", good)

    code, _, err, peak = run_measured(
        ["--store", str(tmp_path / "store"), "ingest", str(path)], tmp_path / "r.json", 600
    )
    base_code, _, _, base_peak = run_measured(
        ["--store", str(tmp_path / "store2"), "ingest", str(small)], tmp_path / "r2.json", 600
    )
    assert base_code == 0
    assert code == 1, err[-2000:]
    rejected = [line for line in err.splitlines() if line.startswith("rejected")]
    assert len(rejected) == 1, rejected
    assert (
        f"{path}:line 2: field 'authors': has 250,000 items, over the limit of 10,000"
        in rejected[0]
    )
    assert _stored_slugs(tmp_path / "store") == set(_slugs(good))
    assert peak < base_peak + 250, (peak, base_peak)  # it was 2.3 GB
    record_figures(
        request.config,
        "fanout_record",
        {
            "line_mb": round(size_mb, 1),
            "peak_rss_mb": round(peak),
            "small_input_peak_rss_mb": round(base_peak),
        },
    )


def test_the_array_limit_is_configurable(tmp_path: Path) -> None:
    items = list(records(10, seed=20))
    many = [r for r in items if len(r.get("authors") or []) > 2]
    assert many
    path = write_jsonl(tmp_path / "records.jsonl", items)
    result = run_kg("--store", str(tmp_path / "store"), "ingest", str(path), "--max-items", "2")
    assert result.returncode == 1
    rejected = [line for line in result.stderr.splitlines() if line.startswith("rejected")]
    assert len(rejected) >= len(many)
    assert any("over the limit of 2 per array" in r for r in rejected)


#: One gzip member of 16 MiB of newlines (16 KB compressed); members one after another are
#: one gzip stream, so 64 of them make the issue's bomb: a 1 MB file of 1 GiB of newlines.
_BLANK_MEMBER_BYTES = 16 << 20


def test_a_gzip_bomb_of_blank_lines_stops_at_the_record_limit(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A 1 MB gzip of 1 GiB of newlines (17 min of CPU before, read a line at a time) stops
    after the record limit's worth (16 MiB) with one error naming the file and the line; the
    record before it lands, the one behind it does not, and the next file is read."""
    before, behind, next_file = records(3, seed=30)
    member = gzip.compress(b"\n" * _BLANK_MEMBER_BYTES, mtime=0)
    folder = tmp_path / "in"
    folder.mkdir()
    bomb = folder / "1-bomb.jsonl.gz"
    bomb.write_bytes(
        gzip.compress(_lines([before]), mtime=0) + member * 64
        + gzip.compress(_lines([behind]), mtime=0)
    )  # fmt: skip
    (folder / "2-good.jsonl").write_bytes(_lines([next_file]))
    assert bomb.stat().st_size < 1_100_000

    store = tmp_path / "store"
    result = run_kg("--store", str(store), "ingest", str(folder), timeout=120)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("rejected")]
    assert len(errors) == 1, errors
    assert f"{bomb}:line 2: begins more than 16,777,216 bytes of blank lines" in errors[0]
    assert _stored_slugs(store) == set(_slugs([before, next_file]))
    # the bound, read in process: how far into the compressed file reading went
    position = ReadPosition([str(bomb)])
    seen, stopped_at = [], None
    for item in read_items(str(bomb), position=position):
        seen.append(item)
        if item.error is not None:
            stopped_at = position.read()
    assert [i.value for i in seen[:1]] == [before] and len(seen) == 2
    assert stopped_at is not None
    # one 64 KiB read of the compressed file past the 16 MiB (one member), not the 1 MB file
    assert stopped_at <= len(member) + (1 << 16) < bomb.stat().st_size // 10

    record_figures(
        request.config,
        "gzip_bomb",
        {"bomb_bytes": bomb.stat().st_size, "inflated_bytes": 64 * _BLANK_MEMBER_BYTES,
         "compressed_bytes_read_when_stopped": stopped_at},
    )  # fmt: skip


@pytest.mark.parametrize("blank", [b"\n", b" ", b"\r\n", b" \t\n"])
def test_blank_runs_are_read_up_to_the_limit_and_stopped_past_it(
    tmp_path: Path, blank: bytes
) -> None:
    """The bound is exact: a run of blank text as long as the limit is skipped (the record
    behind it is read), one byte more stops the file, for JSON Lines, a `.json` file of JSON
    Lines, and the items of an array."""
    limit = 1000
    first, second = ({"title": "one", "n": 1}, {"title": "two", "n": 2})
    line1, line2 = (json.dumps(r).encode() + b"\n" for r in (first, second))
    for extra in (0, 1):
        # with the newline that ends it: `limit` bytes of blank text, or one more
        run = (blank * (limit // len(blank) + 1))[: limit - 1 + extra]
        cases = {
            "lines.jsonl": line1 + run + b"\n" + line2,
            "lines.json.gz": gzip.compress(line1 + run + b"\n" + line2, mtime=0),
            "array.json": b"[" + line1[:-1] + b"," + run + b" " + line2[:-1] + b"]",
            "leading.json": run + b"\n" + line1,
        }
        for name, data in cases.items():
            path = tmp_path / f"{extra}-{name}"
            path.write_bytes(data)
            items = list(read_items(str(path), limit=limit))
            values = [i.value for i in items if i.error is None]
            errors = [str(i.error) for i in items if i.error is not None]
            if name == "leading.json":
                expected: list[Any] = [first] if not extra else []
            else:
                expected = [first, second] if not extra else [first]
            assert values == expected, (name, extra, values, errors)
            assert len(errors) == extra, (name, errors)
            if extra:
                assert str(path) in errors[0] and "blank" in errors[0], errors
