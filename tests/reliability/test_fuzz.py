"""Fuzzed input: malformed and hostile records (hypothesis-generated, a list of known
mutations, and hand-made lines) mixed with good ones. Every bad one is rejected with one
error naming the file, the record and the field; every good one lands; nothing escapes as a
traceback (the real CLI runs as a subprocess); memory stays bounded on a 100 MB one-line
string and on deeply nested JSON."""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from kg.errors import RecordError
from kg.ingest.identity import Iris
from kg.ingest.mapping import Context, map_record
from kg.rdf.results import AskResult
from kg.rdf.store import GraphStore
from kg.testing.records import records
from tests.reliability.fuzz_corpus import (
    RESULT_LINE,
    Case,
    Line,
    all_known_cases,
    hand_made_lines,
    hostile_case,
    numbered,
    placeholder,
)
from tests.reliability.helpers import (
    BASE,
    RECORD_GRAPHS,
    record_figures,
    run_measured,
    start_kg,
    write_jsonl,
)

pytestmark = pytest.mark.reliability
CTX = Context(Iris(BASE), source_file="fuzz.jsonl", ingested_at="2026-01-01T00:00:00+00:00")
ENTITIES = Iris(BASE).entities_graph()
#: Problems of a whole record (or line), which have no field to name.
WHOLE_RECORD = re.compile(
    r"must be a JSON object|names no paper|nested too deeply|not valid UTF-8|malformed JSON"
    r"|longer than the record limit|duplicate record"
)


def outcome(record: Any) -> tuple[str, str, str]:
    """("land", graph, "") after loading the record's N-Quads strictly, or ("reject", field,
    message)."""
    record = json.loads(json.dumps(record))  # as it arrives: keys are strings
    try:
        mapped = map_record(record, CTX)
    except RecordError as exc:
        return "reject", exc.field, exc.message
    GraphStore.memory().write_batch(mapped.nquads(ENTITIES).encode("utf-8"), [mapped.graph])
    return "land", mapped.graph, ""


def check(case: Case, got: tuple[str, str, str]) -> None:
    kind, field, message = got
    if kind == "reject":
        assert field or WHOLE_RECORD.search(message), f"no field named: {message} ({case.why})"
    if case.expect == "land":
        assert kind == "land", f"rejected {field!r}: {message} ({case.why})"
    elif case.expect == "reject":
        assert kind == "reject", f"landed: {case.why}"
        assert field == case.field, f"named {field!r}, not {case.field!r}: {message} ({case.why})"


def test_every_known_mutation_is_rejected_naming_its_field_or_lands() -> None:
    cases = all_known_cases()
    assert len(cases) >= 500
    for case in cases:
        check(case, outcome(case.record))


@settings(
    max_examples=1500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_case())
def test_hypothesis_records_are_rejected_naming_a_field_or_land_whole(case: Case) -> None:
    check(case, outcome(case.record))


def generated_cases(n: int) -> list[Case]:
    """`n` hypothesis cases, generated deterministically (to write into a file)."""
    found: list[Case] = []

    @settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(hostile_case())
    def collect(case: Case) -> None:
        found.append(case)

    collect()
    return found


def cli_rejections(stderr: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(file, record) -> (field, message) from the CLI's `rejected …` lines; nothing else may
    be printed."""
    found = {}
    for line in stderr.splitlines():
        match = RESULT_LINE.match(line)
        assert match, f"unexpected output on stderr: {line[:300]!r}"
        field = match["field"]
        found[(match["source"], match["locator"])] = (
            "" if field is None else ast.literal_eval(field),
            match["message"],
        )
    return found


def test_cli_rejects_every_bad_record_and_lands_every_good_one(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(8)
    good_base = placeholder(next(records(1, seed=3)))
    known = all_known_cases()
    generated = generated_cases(600)  # hypothesis tests more shapes in-process (cheaper)
    goods = [Case(r, "land", why="generated good record") for r in records(400, seed=11)]
    cases: list[Case | Line] = [*known, *generated, *goods, *hand_made_lines(good_base)]
    rng.shuffle(cases)
    lines_file = tmp_path / "corpus.jsonl"
    with lines_file.open("wb") as out:
        for number, case in enumerate(cases, start=1):
            raw = case.raw if isinstance(case, Line) else numbered(json.dumps(case.record), number)
            out.write((raw.encode() if isinstance(raw, str) else raw) + b"\n")
    # The same kinds of records as items of one JSON array (a dump's shape), on one line.
    array_cases = [*rng.sample(known, 200), *rng.sample(goods, 50)]
    array_file = tmp_path / "corpus.json"
    items = [
        json.loads(numbered(json.dumps(c.record), 100_000 + i)) for i, c in enumerate(array_cases)
    ]
    array_file.write_text(json.dumps(items))

    store_dir = tmp_path / "store"
    proc = start_kg("--store", str(store_dir), "ingest", str(lines_file), str(array_file), "--json")
    stdout, stderr = proc.communicate(timeout=900)
    text = stderr.decode()
    assert "Traceback" not in text, text[-5000:]
    assert "please report" not in text, text[-2000:]
    assert proc.returncode == 1, text[-2000:]  # some were rejected
    rejected = cli_rejections(text)
    report = json.loads(stdout)

    landed: set[str] = set()
    tried = hostile = 0
    for source, locator, case, record in [
        *((str(lines_file), f"line {n}", c, None) for n, c in enumerate(cases, start=1)),
        *((str(array_file), f"item {i}", c, items[i]) for i, c in enumerate(array_cases)),
    ]:
        tried += 1
        got = rejected.get((source, locator))
        if isinstance(case, Line):
            hostile += 1
            if case.expect == "reject":
                assert got, f"{locator} ({case.why}) was not rejected"
                assert case.message in got[1] or case.message in f"'{got[0]}'", (case.why, got)
            else:
                assert got is None, f"{locator} ({case.why}) was rejected: {str(got)[:300]}"
                landed.add(outcome(json.loads(case.raw))[1])
            continue
        if record is None:
            record = json.loads(numbered(json.dumps(case.record), int(locator.split()[1])))
        hostile += case.why != "generated good record"
        expected = outcome(record)
        if got is None:
            assert case.expect != "reject", f"{locator} landed: {case.why}"
            assert expected[0] == "land", f"{locator} landed in the CLI only: {expected}"
            landed.add(expected[1])
        else:
            check(case, ("reject", *got))
            if expected[0] == "land":  # the CLI refuses only what the library refuses
                assert "duplicate record" in got[1], (locator, got, case.why)
    with GraphStore.open(store_dir, read_only=True) as store:
        stored = {g for g in store.named_graphs() if g.startswith(RECORD_GRAPHS)}
    assert stored == landed
    assert report["rejected"] == len(rejected)
    assert report["read"] == tried
    record_figures(
        request.config,
        "fuzz",
        {
            "records_tried": tried,
            "malformed_or_hostile": hostile,
            "hypothesis_generated": len(generated),
            "known_mutations": len(known),
            "hand_made_lines": sum(isinstance(c, Line) for c in cases),
            "rejected_with_a_clear_error": len(rejected),
            "rejected_naming_a_field": sum(1 for f, _ in rejected.values() if f),
            "landed": len(landed),
            "tracebacks": 0,
        },
    )


def test_memory_stays_bounded_on_huge_and_deep_json(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    good = [numbered(json.dumps(placeholder(r)), i) for i, r in enumerate(records(3, seed=4))]
    huge = "x" * (100 * 1024 * 1024)
    deep = 200_000
    files = {
        "huge.jsonl": f'{{"url": "/paper/huge", "abstract": "{huge}"}}\n{good[0]}\n',
        "huge-array.json": f'[{good[1]}, {{"abstract": "{huge}"}}, {good[2]}]',
        "huge-object.json": f'{{"url": "/paper/huge", "abstract": "{huge}"}}\n{good[0]}\n',
        "deep.jsonl": "[" * deep + "]" * deep + f"\n{good[0]}\n" + '{"a":' * deep + "}" * deep,
        "deep-array.json": f"[{good[1]}, " + "[" * deep + "]" * deep + f", {good[2]}]",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    del huge, files
    small = write_jsonl(tmp_path / "small.jsonl", [json.loads(g) for g in good])
    peaks = {}
    for name in ["small.jsonl", "huge.jsonl", "huge-array.json", "huge-object.json",
                 "deep.jsonl", "deep-array.json"]:  # fmt: skip
        store = tmp_path / f"store-{name}"
        code, _, stderr, peaks[name] = run_measured(
            ["--store", str(store), "ingest", str(tmp_path / name), "-q"],
            tmp_path / f"{name}.rss",
            timeout=300,
        )
        assert "Traceback" not in stderr, stderr[-3000:]
        rejected = cli_rejections(stderr)
        assert code == (1 if rejected else 0), stderr[-3000:]
        assert all(f == "" for f, _ in rejected.values()), rejected
        assert len(rejected) == (0 if name == small.name else 2 if name == "deep.jsonl" else 1)
        with GraphStore.open(store, read_only=True) as opened:
            landed = [g for g in opened.named_graphs() if g.startswith(RECORD_GRAPHS)]
        assert landed, f"no good record of {name} landed"
        # Bounded: a 100 MB value costs at most a few record limits (16 MB), never its size.
        assert peaks[name] < peaks["small.jsonl"] + 100, (name, peaks)
    record_figures(request.config, "memory", {k: round(v) for k, v in peaks.items()})


class CountingStore(GraphStore):
    """A real memory store that counts its bulk loads."""

    loads = 0

    def write_batch(self, nquads: bytes | list[bytes], *args: Any, **kwargs: Any) -> None:
        CountingStore.loads += 1
        super().write_batch(nquads, *args, **kwargs)


def test_one_unstorable_record_is_isolated_by_bisection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the mapping ever produced RDF the loader refuses, that record alone is rejected,
    the rest of its batch lands, and finding it takes log2(batch) loads, not one per record
    (a 2,000-record batch took 2,000 bulk loads, each writing a dozen files)."""
    import kg.ingest.ingestor

    def broken(value: Any, ctx: Context) -> list[Any]:
        mapped = map_record(value, ctx)
        if value["url"].endswith("-77"):  # a triple no N-Quads parser accepts
            mapped.triples.append("<not an iri> <urn:p> <urn:o>")
        return [mapped]

    kind = kg.ingest.ingestor.Kind("record", kg.ingest.ingestor.KINDS["record"].detect, broken)
    monkeypatch.setitem(kg.ingest.ingestor.KINDS, "record", kind)
    path = write_jsonl(tmp_path / "r.jsonl", records(256, seed=2))
    store = CountingStore.memory()
    CountingStore.loads = 0
    # one batch of 256 records (a run's first batches are capped lower by quads)
    report = kg.ingest.ingestor.ingest(
        store, [str(path)], base_iri=BASE, batch_size=256, batch_quads=10**8
    )
    assert (report.added, report.rejected) == (255, 1)
    assert "synthetic-paper-77" not in " ".join(store.named_graphs())
    assert "kg produced invalid RDF" in str(report.errors[0])
    assert CountingStore.loads <= 2 * 8 + 2  # 1 + 2 per halving level (256 = 2^8)


def test_what_an_isolated_record_shared_lands_with_the_next_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entity only a refused record (isolated from its batch) and a record of the next
    batch name keeps its name: the next batch does not take the refused batch's shared
    triples for written."""
    import kg.ingest.ingestor

    def broken(value: Any, ctx: Context) -> list[Any]:
        mapped = map_record(value, ctx)
        if value["url"].endswith("-5"):
            mapped.triples.append("<not an iri> <urn:p> <urn:o>")
        return [mapped]

    kind = kg.ingest.ingestor.Kind("record", kg.ingest.ingestor.KINDS["record"].detect, broken)
    monkeypatch.setitem(kg.ingest.ingestor.KINDS, "record", kind)
    recs = list(records(20, seed=2))
    for rec in (recs[5], recs[15]):  # batch 1 (refused) and batch 2 (good)
        rec["authors"] = [*rec["authors"], "Ada Only-Here"]
    path = write_jsonl(tmp_path / "r.jsonl", recs)
    store = GraphStore.memory()
    report = kg.ingest.ingestor.ingest(store, [str(path)], base_iri=BASE, batch_size=10)
    assert (report.added, report.rejected) == (19, 1)
    named = store.query(f'ASK {{ GRAPH <{ENTITIES}> {{ ?author ?p "Ada Only-Here" }} }}')
    assert named == AskResult(value=True)
