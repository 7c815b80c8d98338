"""Ingest semantics: unchanged, updated, rejected, strict, duplicates, crash recovery."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.cli.app import as_flag
from kg.errors import KgError, Param
from kg.ingest.identity import Iris
from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.rdf.vocab import JOURNAL_GRAPH
from kg.testing.records import records
from tests.conftest import BASE, run, select


def write_jsonl(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_reingest_changes_nothing(seed_paths: list[Path]) -> None:  # even across seconds
    store = GraphStore.memory()
    first = ingest(store, [str(p) for p in seed_paths], base_iri=BASE)
    before = store.canonical_digest()
    again = ingest(store, [str(p) for p in seed_paths], base_iri=BASE)
    assert (first.added, again.added, again.unchanged, again.quads) == (2, 0, 2, 0)
    assert store.canonical_digest() == before


def test_changed_record_replaces_its_graph_whole(tmp_path: Path, seed_records: list[dict[str, Any]]) -> None:
    store = GraphStore.memory()
    ingest(store, [str(write_jsonl(tmp_path / "a.jsonl", seed_records))], base_iri=BASE)
    changed = copy.deepcopy(seed_records[0])
    changed["title"] = "A New Title"
    changed["methods"] = changed["methods"][:2]
    changed["code_links"] = []
    report = ingest(store, [str(write_jsonl(tmp_path / "b.jsonl", [changed]))], base_iri=BASE)
    assert (report.updated, report.added) == (1, 0)
    slug = "attention-module-is-not-only-a-weight"
    rows = select(store, f"SELECT ?t WHERE {{ <{BASE}paper/{slug}> dcterms:title ?t }}")
    assert rows == [{"t": "A New Title"}]
    methods = select(store, f"SELECT (COUNT(?m) AS ?n) WHERE {{ <{BASE}paper/{slug}> kg:usesMethod ?m }}")
    assert methods == [{"n": 2}]
    links = select(store, f"SELECT ?l WHERE {{ <{BASE}paper/{slug}> kg:codeLink ?l }}")
    assert links == []
    # The graph equals a fresh ingest of the new version (no stale triples).
    fresh = GraphStore.memory()
    ingest(fresh, [str(tmp_path / "b.jsonl")], base_iri=BASE)
    graph = Iris(BASE).record_graph(f"paper/{slug}")
    ingested_at = "https://w3id.org/kg/ontology#ingestedAt"
    strip = lambda s: sorted(q for q in s.quads_nquads(graph) if ingested_at not in q)  # noqa: E731
    assert strip(store) == strip(fresh)


def test_bad_records_are_rejected_and_good_neighbours_land(tmp_path: Path, seed_records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(seed_records[1])
    bad["date"] = "2020-13-45"
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(seed_records[0]) + "\n{broken\n" + json.dumps(bad) + "\n")
    errors: list[str] = []
    store = GraphStore.memory()
    report = ingest(store, [str(path)], base_iri=BASE, on_error=lambda e: errors.append(str(e)))
    assert (report.read, report.added, report.rejected) == (3, 1, 2)
    assert errors[0].startswith(f"{path}:line 2:") and "malformed JSON" in errors[0]
    assert errors[1] == f"{path}:line 3: field 'date': '2020-13-45' is not a date (YYYY-MM-DD)"
    # Nothing of the rejected record was written, not even shared entities only it names.
    titles = select(store, "SELECT ?t WHERE { ?p dcterms:title ?t }")
    assert titles == [{"t": seed_records[0]["title"]}]
    assert select(store, f"SELECT ?o WHERE {{ <{BASE}task/attribute> ?p ?o }}") == []


def test_duplicates_in_one_batch(tmp_path: Path, seed_records: list[dict[str, Any]]) -> None:
    conflicting = copy.deepcopy(seed_records[0])
    conflicting["title"] = "Another title"
    path = write_jsonl(tmp_path / "dups.jsonl", [seed_records[0], seed_records[0], conflicting])
    errors: list[str] = []
    report = ingest(GraphStore.memory(), [str(path)], base_iri=BASE, on_error=lambda e: errors.append(str(e)))
    assert (report.added, report.unchanged, report.rejected) == (1, 1, 1)
    assert "duplicate record for paper/attention-module-is-not-only-a-weight" in errors[0]
    assert f"the first one ({path}:line 1) was kept" in errors[0]
    assert errors[0].startswith(f"{path}:line 3")


def test_a_duplicate_in_another_file_names_the_first_file(
    tmp_path: Path, seed_records: list[dict[str, Any]]
) -> None:
    conflicting = copy.deepcopy(seed_records[0])
    conflicting["title"] = "Another title"
    first = write_jsonl(tmp_path / "a.jsonl", [seed_records[1], seed_records[0]])
    second = write_jsonl(tmp_path / "b.jsonl", [conflicting])
    errors: list[str] = []
    report = ingest(GraphStore.memory(), [str(first), str(second)], base_iri=BASE,
                    on_error=lambda e: errors.append(str(e)))
    assert (report.added, report.rejected) == (2, 1)
    assert errors == [
        f"{second}:line 1: duplicate record for paper/attention-module-is-not-only-a-weight "
        f"with different content; the first one ({first}:line 2) was kept"
    ]


def test_strict_writes_nothing_on_error(tmp_path: Path, seed_records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(seed_records[1])
    bad["authors"] = "nobody"
    path = write_jsonl(tmp_path / "x.jsonl", [seed_records[0], bad])
    store = GraphStore.memory()
    with pytest.raises(KgError, match=r"line 2: field 'authors'.*'strict': nothing was written") as info:
        ingest(store, [str(path)], base_iri=BASE, strict=True)
    assert info.value.parameter == Param("strict")
    assert "(--strict: nothing was written)" in info.value.worded(as_flag)
    assert len(store) == 0


def test_strict_ingests_everything_when_clean(tmp_path: Path, seed_records: list[dict[str, Any]]) -> None:
    path = write_jsonl(tmp_path / "ok.jsonl", seed_records)
    report = ingest(GraphStore.memory(), [str(path)], base_iri=BASE, strict=True)
    assert (report.read, report.added) == (2, 2)


def test_batches_and_formats_give_the_same_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764460800")  # same ingest time in both runs
    recs = list(records(300, seed=7))
    jsonl = write_jsonl(tmp_path / "r.jsonl", recs)
    gz = tmp_path / "r.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(recs).encode()))
    a, b = GraphStore.memory(), GraphStore.memory()
    ingest(a, [str(jsonl)], base_iri=BASE, batch_size=7)
    ingest(b, [str(gz)], base_iri=BASE, batch_size=1000)
    skip = ["https://w3id.org/kg/ontology#sourceFile"]
    assert a.canonical_digest(skip) == b.canonical_digest(skip)
    assert select(a, "SELECT (COUNT(*) AS ?n) WHERE { ?p a kg:Paper }") == [{"n": 300}]


def test_recovery_drops_a_half_loaded_batch(tmp_path: Path, seed_paths: list[Path]) -> None:
    """A crash between journalling and clearing the journal leaves no partial record."""
    path = tmp_path / "store"
    with GraphStore.open(path) as store:
        ingest(store, [str(seed_paths[0])], base_iri=BASE)
        before = store.canonical_digest()
        graph = Iris(BASE).record_graph("paper/half-loaded")
        # What a kill inside write_batch leaves: the journal names the graph, part of it is loaded.
        store.load(
            f'<{BASE}paper/half-loaded> <http://purl.org/dc/terms/title> "half" <{graph}> .\n'
            f'<{graph}> <https://w3id.org/kg/ontology#pendingLoad> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> <{JOURNAL_GRAPH}> .\n'.encode(),
            "nquads")
    with GraphStore.open(path) as store:
        assert not store.has_graph(graph)
        assert not store.has_graph(JOURNAL_GRAPH)
        assert store.canonical_digest() == before


def test_second_writer_gets_a_clear_busy_error(tmp_path: Path) -> None:
    from kg.errors import StoreBusyError

    path = tmp_path / "store"
    with GraphStore.open(path):
        with pytest.raises(StoreBusyError, match="busy: another kg process is writing"):
            GraphStore.open(path)
        reader = GraphStore.open(path, read_only=True)  # a snapshot beside the writer
        assert len(reader) == 0


def test_unknown_kind_is_a_usage_error() -> None:
    from kg.errors import UsageError

    with pytest.raises(UsageError, match="unknown 'kind' 'nope'") as info:
        ingest(GraphStore.memory(), ["x"], base_iri=BASE, kind="nope")
    assert info.value.worded(as_flag).startswith("unknown --kind 'nope'; use one of:")


def test_quads_written_counts_each_shared_declaration_once(tmp_path: Path) -> None:
    """Generated records share authors, tasks and methods: the report counts what was sent
    to the store (each entities-graph triple once per run), so a fresh store holds it all."""
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(300, seed=3)), encoding="utf-8")
    store = GraphStore.memory()
    report = ingest(store, [str(path)], base_iri=BASE, batch_size=50)
    assert report.added == 300 and report.rejected == 0
    assert report.quads == store.count()  # the named graphs' quads (not the merge's copies)
    assert store.merge_size() == store.count()  # records and the entities graph never repeat a triple


def test_the_wide_generator_keeps_its_distributions_and_maps_whole(tmp_path: Path) -> None:
    """The benchmarks' second generator: 1–12 authors, 0–25 methods, 0–6 tasks, 0–8 code
    links a paper, one record in WIDE_EVERY of 100 authors and 200 methods; the same records
    for the same seed; every value lands (nothing rejected or left unmapped), and the report
    says where the time went."""
    from kg.testing.records import WIDE_EVERY, WideRecordFactory

    recs = list(records(50, seed=5, generator="wide"))
    assert recs == list(records(50, seed=5, generator="wide"))
    assert recs != list(records(50, seed=6, generator="wide"))
    assert all(1 <= len(r["authors"]) <= 12 and len(r["methods"]) <= 25 for r in recs)
    assert all(len(r["tasks"]) <= 6 and len(r["code_links"]) <= 8 for r in recs)
    assert {len(r["code_links"]) for r in recs} >= {0, 8} and max(len(r["methods"]) for r in recs) > 15
    wide = WideRecordFactory(5).record(WIDE_EVERY - 1)
    assert (len(wide["authors"]), len(wide["methods"])) == (100, 200)
    path = write_jsonl(tmp_path / "wide.jsonl", [*recs, wide])
    store = GraphStore.memory()
    report = ingest(store, [str(path)], base_iri=BASE, batch_size=20)
    assert (report.added, report.rejected, dict(report.not_mapped)) == (51, 0, {})
    creators = select(store, "SELECT ?slug (COUNT(?a) AS ?n) WHERE { ?p kg:pwcSlug ?slug ; "
                      "dcterms:creator ?a } GROUP BY ?slug")
    by_slug = {r["url"].removeprefix("/paper/"): len(set(r["authors"])) for r in [*recs, wide]}
    assert {row["slug"]: row["n"] for row in creators} == by_slug
    assert report.timings["loading"] > 0 and report.timings["mapping"] > 0
    assert set(report.as_dict()["timings"]) >= {
        "loading", "waiting_for_load", "mapping", "publishing", "ending"
    }


def test_the_compaction_runs_beside_the_end_of_the_run(
    tmp_path: Path, seed_paths: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's last steps (the search index's finish, `on_written`) and the compaction that
    ends it run side by side: the compaction (one core) starts before the finish is over,
    and the run's `ending` covers both."""
    import threading
    import time

    from kg.ingest.ingestor import Ingestor

    seen: dict[str, float] = {}
    path = tmp_path / "store"
    with GraphStore.open(path) as store:
        optimize = store.optimize

        def timed_optimize() -> None:
            seen["compaction_from"] = time.perf_counter()
            seen["compaction_thread"] = threading.get_ident()
            optimize()  # the store's own compaction, timed

        def finish() -> None:
            seen["finish_from"] = time.perf_counter()
            time.sleep(0.5)  # a finish that takes a while: the compaction starts meanwhile
            seen["finish_to"] = time.perf_counter()

        monkeypatch.setattr(store, "optimize", timed_optimize)
        report = Ingestor(
            store, Iris(BASE), on_written=finish, compact_from=0, first_load=False
        ).run(list(map(str, seed_paths)))
        assert store.count() == report.store_quads > 400
    assert report.compaction is not None  # it grew from nothing: the compaction ran
    assert seen["compaction_from"] < seen["finish_to"]  # after it, before: side by side
    assert seen["compaction_thread"] != threading.get_ident()
    assert report.timings["ending"] >= 0.5


def test_a_batchs_default_graph_lines_are_its_quads_without_their_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ingest hands the store each part's merge lines, made by a join instead of the
    store's regular expression: they must be exactly `merge_lines` of the part (else the
    default graph would not be the merge), on records with shared entities and odd text."""
    from kg.rdf.merge import merge_lines

    recs = list(records(240, seed=8, generator="wide"))
    recs[3]["abstract"] = 'Ends with a graph-like tail <urn:x:g> .\n and "quotes" \\ here'
    recs[5]["title"] = "Zoë's 🙂 astral title"  # units are encoded one by one, then joined
    recs[130]["authors"] = [*recs[130]["authors"], "Ça Ñu"]
    path = write_jsonl(tmp_path / "r.jsonl", recs)
    store = GraphStore.open(tmp_path / "store")
    sent: list[tuple[list[bytes], list[bytes]]] = []
    write_batch = store.write_batch

    def writing(nquads: Any, graphs: Any, replace: Any = (), shared: Any = (), **options: Any) -> None:
        sent.append((list(nquads), list(options["merges"])))
        write_batch(nquads, graphs, replace, shared, **options)

    monkeypatch.setattr(store, "write_batch", writing)
    try:
        report = ingest(store, [str(path)], base_iri=BASE, batch_size=120, first_load=False)
        assert (report.added, report.rejected) == (240, 0)
        assert len(sent) == 2
        assert any(len(parts) > 1 for parts, _ in sent) == (GraphStore.part_count(20_000) > 1)
        for parts, merges in sent:
            assert merges == [merge_lines(part) for part in parts]
        assert store.merge_size() == store.count()
    finally:
        store.close()


# What a thread's priority reads as: its nice value, by thread name, from /proc.
_NICE_BY_THREAD = """
import os
def nice_by_thread():
    found = {}
    for tid in os.listdir("/proc/self/task"):
        stat = open(f"/proc/self/task/{tid}/stat").read()
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        found.setdefault(name, set()).add(int(stat[stat.rindex(")") + 2 :].split()[16]))
    return {name: sorted(values) for name, values in found.items()}
"""


def _nice_after(code: str, cwd: Path) -> dict[str, list[int]]:
    """Run `code` in a fresh Python, then report each thread name's nice values."""
    program = _NICE_BY_THREAD + code + "\nimport json; print(json.dumps(nice_by_thread()))\n"
    done = subprocess.run([sys.executable, "-c", program], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=True)
    result: dict[str, list[int]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="thread priorities via /proc")
def test_kg_ingest_compacts_at_a_low_priority_and_a_library_caller_keeps_its_own(
    tmp_path: Path, seed_paths: list[Path]
) -> None:
    # the command: `kg ingest` lowers the engine's compaction threads, and only them
    paths = ", ".join(repr(str(p)) for p in seed_paths)
    command = _nice_after(
        "import sys\nfrom kg.cli import main\n"
        f"sys.argv = ['kg', '--store', {str(tmp_path / 'a')!r}, 'ingest', '--quiet', {paths}]\n"
        "try:\n    main()\nexcept SystemExit as end:\n    assert not end.code, end.code\n",
        tmp_path,
    )
    assert command["rocksdb:low"] == [10]
    assert command["rocksdb:high"] == [0]  # flushes keep their priority: writes wait on them
    assert {v for name, values in command.items() if name != "rocksdb:low" for v in values} == {0}
    # the same ingest through the library, not asked: a caller's process stays as it was
    library = _nice_after(
        f"import kg\nwith kg.open({str(tmp_path / 'b')!r}, read_only=False) as graph:\n"
        f"    assert graph.ingest([{paths}]).added == 2\n",
        tmp_path,
    )
    assert library["rocksdb:low"] == [0]


def test_kg_ingest_reports_what_the_store_holds(
    tmp_path: Path, seed_paths: list[Path], cli: CliRunner
) -> None:
    # counted beside the search index's finish: the quads of every named graph, the journal
    # and the default graph's merge aside, as a plain scan of the store's files says
    import pyoxigraph as ox

    store = tmp_path / "store"
    done = run(cli, "--store", str(store), "ingest", "--json", *map(str, seed_paths))
    assert done.exit_code == 0, done.output
    reported = json.loads(done.stdout)["store_quads"]
    raw = ox.Store.read_only(str(store))
    named = sum(
        1 for quad in raw
        if isinstance(quad.graph_name, ox.NamedNode) and quad.graph_name.value != JOURNAL_GRAPH
    )
    assert reported == named > 0


def test_an_ingest_holds_off_full_collections_and_restores_the_thresholds(
    tmp_path: Path,
) -> None:
    """CPython's full collections traverse every object the process holds, and a batch's
    units reach the oldest generation: an ingest holds them off (kg.rdf.limits
    `rare_full_collections`) and puts the caller's thresholds back."""
    import gc
    import threading

    full: list[int] = []
    main = threading.main_thread().ident

    def seen(phase: str, info: dict[str, int]) -> None:
        """A full collection while the main thread is inside the ingest's batches (the
        store's opening and counting around them may collect)."""
        if phase != "stop" or info["generation"] != 2:
            return
        frame = sys._current_frames().get(main or 0)
        while frame is not None:
            if frame.f_code.co_name == "_ingest_batches":
                full.append(info["collected"])
                return
            frame = frame.f_back

    path = write_jsonl(tmp_path / "r.jsonl", list(records(300, seed=3)))
    before = gc.get_threshold()
    gc.set_threshold(50, 2, 2)  # a full collection every few hundred objects kept
    gc.callbacks.append(seen)
    try:
        with GraphStore.open(tmp_path / "store") as store:
            ingest(store, [str(path)], base_iri=BASE, batch_size=50)
            assert full == []
            assert gc.get_threshold() == (50, 2, 2)
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*before)


def test_a_run_starts_with_small_batches_that_double_up_to_the_cap(tmp_path: Path) -> None:
    """The writer starts while the mapping has barely begun: the first batch holds about an
    eighth of `batch_quads`, each next one about twice the last, up to `batch_quads`; every
    record lands once, whatever the batches."""
    from kg.ingest.ingestor import FIRST_BATCH_SHARE, Ingestor, WrittenBatch

    recs = list(records(400, seed=5))
    path = write_jsonl(tmp_path / "r.jsonl", recs)
    sizes: list[int] = []
    largest = 0  # a record's quads: a batch closes on the first record that reaches its cap

    def observe(batch: WrittenBatch) -> None:
        nonlocal largest
        quads = [len(m.triples) + len(m.shared) for m in batch.written]
        sizes.append(sum(quads))
        largest = max(largest, *quads)

    cap = 4_000
    with GraphStore.open(tmp_path / "store") as store:
        report = Ingestor(
            store, Iris(BASE), batch_size=10_000, batch_quads=cap, on_batch=observe
        ).run([str(path)])
        assert report.added == len(recs)
    first = cap // FIRST_BATCH_SHARE
    assert largest < first  # else the sizes below say nothing
    assert len(sizes) > 5, sizes
    caps = [first, first * 2, first * 4, *[cap] * (len(sizes) - 4)]
    for size, at_least in zip(sizes[:-1], caps, strict=True):  # the last: what is left
        assert at_least <= size < at_least + largest, (sizes, caps)
    assert 0 < sizes[-1] < cap + largest
