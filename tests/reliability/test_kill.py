"""kill -9 during ingest: a real `kg ingest` is SIGKILLed at random moments while it loads
1,200 generated records (20,000 in the --run-slow variant), or a slice of the bundled
Papers-with-Code dumps (100 methods and the 7 evaluation entries whose papers the run
merges by alias). After each kill the store opens, every graph is whole (the quads of a
clean run's graph) or absent, and the killed run's leftovers are gone; re-running the same
ingest converges to the clean run's graph, digest and counts.

The kill moments are random (seeded, printed): some land while the process starts up and
recovers, some just after it starts bulk-loading a batch (the loader's temporary files
appear: the only non-transactional step), the rest anywhere while it writes.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import random
import signal
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from kg.ingest.ingestor import ingest
from kg.rdf.store import GraphStore
from kg.rdf.vocab import JOURNAL_GRAPH, KG
from tests.reliability.helpers import (
    BASE,
    EPOCH,
    RECORD_GRAPHS,
    graph_sizes,
    record_figures,
    run_kg,
    start_kg,
    synth_file,
)

pytestmark = pytest.mark.reliability
ENTITIES = f"{BASE}graph/entities"
#: The graphs of evaluation-table entries and their parts (where papers merge by alias).
EVALUATION_GRAPHS = f"{BASE}graph/pwc-evaluation/"
#: Records the update test replaces (in batches of 25, so that six kills spread over 12
#: batches; it was 600 in batches of 50, 1,000 in batches of 84 and 1,500 in batches of 125,
#: the same number of batches at more CPU).
UPDATED = 300
UPDATE_BATCH = 25


@dataclass
class Reference:
    """What a clean run produces: the canonical digest and each graph's size and digest at
    the end, and every version (size, digest) each graph had after a write of the run.

    A graph can hold more than one version on the way: one that names a paper by a fallback
    IRI (`paper/title/…`) is rewritten when a later batch teaches the paper's alias (in an
    update after that batch, kg.ingest.aliases), so a kill before the rewrite leaves the
    earlier version, whole."""

    digest: str
    graphs: dict[str, tuple[int, str]]
    versions: dict[str, set[tuple[int, str]]]


def per_graph(lines: list[str]) -> dict[str, tuple[int, str]]:
    by_graph: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        graph = line[line.rindex(" <", 0, len(line) - 3) + 2 : -4]
        by_graph[graph].append(line)
    return {
        g: (len(ls), hashlib.sha256("".join(sorted(ls)).encode()).hexdigest())
        for g, ls in by_graph.items()
    }


def clean_references(
    monkeypatch: pytest.MonkeyPatch, *runs: Path, batch: int
) -> list[Reference]:
    """Clean runs (the same Ingestor, into a fresh store, no kills, batches of `batch` as
    the killed runs use) of each file in turn, with every version each graph passed
    through: after each batch's write, and after each rename of paper IRIs. One reference
    after each run: the first is what a clean run of the first file alone gives."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    store = GraphStore.memory()
    versions: dict[str, set[tuple[int, str]]] = defaultdict(set)

    def keep(lines: Iterable[str]) -> dict[str, tuple[int, str]]:
        found = per_graph(list(lines))
        for graph, version in found.items():
            versions[graph].add(version)
        return found

    write_batch, rename_iris = store.write_batch, store.rename_iris

    def writing(
        nquads: bytes, graphs: Any, replace: Any = (), shared: Any = (), **options: Any
    ) -> None:
        graphs = list(graphs)
        write_batch(nquads, graphs, replace, shared, **options)
        keep(line for g in graphs for line in store.quads_nquads(g))

    def renaming(renames: Any) -> int:
        moved = rename_iris(renames)
        keep(store.quads_nquads())  # the graphs that named an old IRI, wherever they are
        return moved

    monkeypatch.setattr(store, "write_batch", writing)
    monkeypatch.setattr(store, "rename_iris", renaming)
    references = []
    for path in runs:
        report = ingest(store, [str(path)], base_iri=BASE, batch_size=batch)
        assert report.rejected == 0
        final = keep(store.quads_nquads())
        seen = {graph: set(found) for graph, found in versions.items()}
        references.append(Reference(store.canonical_digest(), final, seen))
    return references


def version_of(graph: str, size: int, refs: list[Reference]) -> Reference | None:
    """A reference in which a record graph of this size is whole (in some version)."""
    return next(
        (r for r in refs if any(n == size for n, _ in r.versions.get(graph, ()))), None
    )


@dataclass
class Chain:
    """The state of the kill chain, and what it saw, for the report."""

    kills: list[dict[str, object]] = field(default_factory=list)
    present: int = 0


_JOURNALED = f"FILTER NOT EXISTS {{ GRAPH <{JOURNAL_GRAPH}> {{ ?g ?flag ?v }} }}"
#: A triple of the default graph that no graph states (other than the journal).
_ORPHAN = f"""ASK {{ ?s ?p ?o FILTER NOT EXISTS {{
    GRAPH ?g {{ ?s ?p ?o }} FILTER (?g != <{JOURNAL_GRAPH}>) }} }}"""
#: A triple of a graph the journal does not list that the default graph lacks.
_MISSING = f"""ASK {{ GRAPH ?g {{ ?s ?p ?o }} FILTER (?g != <{JOURNAL_GRAPH}>) {_JOURNALED}
    FILTER NOT EXISTS {{ ?s ?p ?o }} }}"""


def check_merge(store: GraphStore) -> None:
    """The default graph is exactly the merge (issue 13) once no batch is in flight: it
    holds nothing that no graph states, and every triple of every graph. Two scans of every
    triple, so run once per chain (each kill checks a sample, `merge_problems`)."""
    assert store.query(_ORPHAN).value is False, "the default graph holds a triple no graph states"  # type: ignore[union-attr]
    assert store.query(_MISSING).value is False, "a settled graph's triple is not in the merge"  # type: ignore[union-attr]


def merge_problems(store_dir: Path, graphs: list[str]) -> list[str]:
    """What the default graph lacks of these settled graphs, or says of their subjects that
    no graph states. Read through Oxigraph's own quad index (independent of kg's query
    path, and fast: a lookup per triple)."""
    store = ox.Store.read_only(str(store_dir))
    default, journal = ox.DefaultGraph(), ox.NamedNode(JOURNAL_GRAPH)
    problems = []
    for graph in graphs:
        quads = list(store.quads_for_pattern(None, None, None, ox.NamedNode(graph)))
        if not quads:
            problems.append(f"{graph} is empty")
        lookups = (
            store.quads_for_pattern(q.subject, q.predicate, q.object, default) for q in quads
        )
        if not all(any(found) for found in lookups):
            problems.append(f"a triple of {graph} is not in the merge")
        for subject in {q.subject for q in quads}:
            for t in store.quads_for_pattern(subject, None, None, default):
                stated = store.quads_for_pattern(t.subject, t.predicate, t.object, None)
                if not any(s.graph_name not in (default, journal) for s in stated):
                    problems.append(f"the merge says of {graph}'s subjects what no graph states")
                    break
    return problems


def is_unit(graph: str) -> bool:
    """A graph one record or dump entry (or a part of one) owns: all but the journal and the
    shared entities graph, which batches only merge into."""
    return graph not in (JOURNAL_GRAPH, ENTITIES)


def live_journal(store_dir: Path) -> set[str]:
    """The graphs the journal in the store's live files lists: what a killed writer left in
    flight. Read from those files with Oxigraph, as `merge_problems` reads them: a reader
    never sees the journal, as it opens only what the writer published between whole
    batches (kg.rdf.snapshots)."""
    store = ox.Store.read_only(str(store_dir))
    quads = store.quads_for_pattern(None, None, None, ox.NamedNode(JOURNAL_GRAPH))
    return {q.subject.value for q in quads if isinstance(q.subject, ox.NamedNode)}


def in_flight(listed: set[str]) -> set[str]:
    """Of the graphs the journal lists (`GraphStore.pending_graphs`: queries never see the
    journal graph), the unit graphs a batch in flight is loading (the shared entities
    graph, listed as merged into, stays)."""
    return {g for g in listed if is_unit(g)}


def check_after_kill(
    store_dir: Path, refs: list[Reference], rng: random.Random, sample: int, recover: bool
) -> dict[str, int]:
    """The checks the issue asks for after each kill; returns what was seen.

    Each record graph must be whole in one of `refs` (the old or the new version of an
    updated record) or absent. With `recover`, the test opens the store for writing (which
    rolls back the batch in flight); otherwise the next `kg ingest` does, and a later kill
    may land inside it.
    """
    if not (store_dir / "CURRENT").exists():
        # Killed while starting, before Oxigraph created the store (a loaded machine): there
        # is nothing to read, and the next run creates it.
        return {"present": 0, "evaluation_present": 0, "in_flight": 0, "recovered_by_test": False}
    # A reader opens the crashed store before anyone recovers it: it never sees half a
    # record, nor the batch in flight at all (it reads the last publication, made between
    # whole batches).
    listed = live_journal(store_dir)  # in flight, or loaded and not yet merged
    pending = in_flight(listed)
    with GraphStore.open(store_dir, read_only=True) as reader:
        assert not reader.pending_graphs(), "a reader saw a batch in flight"
        settled = []
        for graph, size in graph_sizes(reader).items():
            if is_unit(graph):
                assert version_of(graph, size, refs), f"a reader saw half of {graph}"
                if graph not in listed:
                    settled.append(graph)
        merge = merge_problems(store_dir, rng.sample(settled, min(sample // 5, len(settled))))
    if recover:  # a writer opens it: the journal's graphs go, and the loader's leftovers
        with GraphStore.open(store_dir) as writer:
            assert not writer.has_graph(JOURNAL_GRAPH)
        assert not list(store_dir.glob("bulk-*.sst")), "a killed bulk load left files behind"
    with GraphStore.open(store_dir, read_only=True) as store:
        sizes = graph_sizes(store)
        records = [g for g in sizes if is_unit(g)]
        listed = store.pending_graphs() | pending
        settled = [g for g in records if g not in listed]
        merge += merge_problems(store_dir, rng.sample(settled, min(sample // 5, len(settled))))
        assert not merge, merge  # each record whole or absent in the default graph too
        known = {g for r in refs for g in r.graphs}
        assert set(sizes) - {JOURNAL_GRAPH} <= known, set(sizes) - known
        for graph in records:  # wholly present (its size) ...
            assert version_of(graph, sizes[graph], refs), f"{graph} is half there"
        if recover:
            for graph in pending:  # ... or wholly absent
                assert graph not in sizes, f"{graph} was in flight and survived recovery"
        if ENTITIES in sizes:  # shared entities only ever merge in
            assert sizes[ENTITIES] <= max(r.graphs[ENTITIES][0] for r in refs)
        for graph in rng.sample(records, min(sample, len(records))):  # and quad for quad
            digest = per_graph(list(store.quads_nquads(graph)))[graph]
            assert any(digest in r.versions.get(graph, ()) for r in refs), f"{graph} differs"
    evaluation = sum(1 for g in records if g.startswith(EVALUATION_GRAPHS))
    return {
        "present": len(records),
        "evaluation_present": evaluation,
        "in_flight": len(pending),
        "recovered_by_test": recover,
    }


def wait_for_loads(
    proc: Any, store_dir: Path, loads: int, until: float = float("inf")
) -> list[float]:
    """Wait until the process has started `loads` bulk loads (their files appear), has
    exited, or the monotonic clock reaches `until`; returns when each load was seen."""
    seen: list[float] = []
    loading = False
    while proc.poll() is None and time.monotonic() < until:
        now = any(store_dir.glob("bulk-*.sst"))
        if now and not loading:
            seen.append(time.monotonic())
            if len(seen) >= loads:
                break
        loading = now
        time.sleep(0.003)
    return seen


def kill_moment(
    kind: str, proc: Any, store_dir: Path, rng: random.Random, at_once: bool = False
) -> float:
    """Wait for a random moment of the given kind; returns seconds since the start.

    Waiting for one to four batch loads lets each run of the chain get further than the
    last, so the kills spread over the whole load. `at_once`: a bulk kill lands as the
    loader's files appear (a small batch's load can end before any later moment).

    Moments are counted in batches, not seconds, so that a fast machine does not finish the
    ingest before the chain's kills are spent (a 2 s wait was ten batches of a small dump).
    """
    start = time.monotonic()
    if kind == "startup":  # while Python starts, the store opens and recovers, or skips;
        # at the latest as the first batch's load begins
        wait_for_loads(proc, store_dir, 1, until=start + rng.uniform(0.2, 3.0))
    elif kind == "bulk":  # just after the loader starts writing a batch's files
        wait_for_loads(proc, store_dir, rng.randint(1, 4))
        time.sleep(0.0 if at_once else rng.uniform(0.0, 0.3))
    else:  # anywhere in a batch (mapping, loading, or between): within one batch's time
        seen = wait_for_loads(proc, store_dir, rng.randint(2, 4))
        if len(seen) >= 2:
            time.sleep(rng.uniform(0.0, (seen[-1] - seen[0]) / (len(seen) - 1)))
    return time.monotonic() - start


def kill_chain(
    inputs: Path,
    store_dir: Path,
    refs: list[Reference],
    kills: int,
    seed: int,
    sample: int,
    batch: int = 500,
) -> Chain:
    rng = random.Random(seed)
    kinds = ["startup"] * (kills // 5) + ["bulk"] * (kills * 2 // 5)
    kinds += ["anywhere"] * (kills - len(kinds))
    rng.shuffle(kinds)
    chain = Chain()
    args = [
        "--store",
        str(store_dir),
        "ingest",
        str(inputs),
        "--batch-size",
        str(batch),
        "--in-batches",  # into the empty store too: a first load is tests/test_first_load.py's
        "-q",
    ]
    first_bulk = kinds.index("bulk") if "bulk" in kinds else -1
    for number, kind in enumerate(kinds):
        proc = start_kg(*args)
        # the first bulk kill lands inside a load, so that the rollback path surely runs
        at = kill_moment(kind, proc, store_dir, rng, at_once=number == first_bulk)
        finished = proc.poll() is not None
        if not finished:
            # Popen skips a process it already reaped; one that exits after the poll is fine too.
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
        assert b"Traceback" not in stderr, stderr.decode()[-3000:]
        if finished:  # it ended before the moment came: no kill to check
            assert proc.returncode == 0, stderr.decode()[-3000:]
            break
        seen = check_after_kill(store_dir, refs, rng, sample, recover=number % 2 == 0)
        chain.kills.append({"kind": kind, "at_s": round(at, 2), **seen})
        chain.present = int(seen["present"])
    return chain


def run_kill_test(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    inputs: Path,
    kills: int,
    seed: int,
    sample: int,
    batch: int = 500,
) -> dict[str, object]:
    """Kill `kg ingest inputs` `kills` times, then run it to the end: the clean run's store."""
    (ref,) = clean_references(monkeypatch, inputs, batch=batch)
    store_dir = tmp_path / "store"
    chain = kill_chain(inputs, store_dir, [ref], kills, seed, sample, batch)
    assert len(chain.kills) >= kills * 3 // 4, "the ingest finished before most kills"
    # the rollback path ran: some kill caught a batch in flight (bulk kills land inside one)
    assert any(x["in_flight"] for x in chain.kills), chain.kills

    result = run_kg("--store", str(store_dir), "ingest", str(inputs), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["rejected"] == 0
    # every unit of the clean run counted once, none replaced (each was whole or absent)
    assert report["added"] + report["unchanged"] == report["graphs"]
    assert report["graphs"] == sum(1 for g in ref.graphs if is_unit(g))
    with GraphStore.open(store_dir, read_only=True) as store:
        assert {g: s for g, s in graph_sizes(store).items()} == {
            g: size for g, (size, _) in ref.graphs.items()
        }
        assert store.canonical_digest() == ref.digest
        check_merge(store)
    assert not list(store_dir.glob("bulk-*.sst"))
    return {
        "items": report["read"],
        "kills": len(chain.kills),
        "kill_kinds": {
            k: sum(1 for x in chain.kills if x["kind"] == k)
            for k in ("startup", "bulk", "anywhere")
        },
        "kills_with_a_batch_in_flight": sum(1 for x in chain.kills if x["in_flight"]),
        "graphs_present_after_each_kill": [x["present"] for x in chain.kills],
        "evaluation_graphs_present_after_each_kill": [
            x["evaluation_present"] for x in chain.kills
        ],
        "evaluation_graphs": sum(1 for g in ref.graphs if g.startswith(EVALUATION_GRAPHS)),
        "graphs_compared_quad_for_quad": sample * len(chain.kills),
        "resumed_added": report["added"],
        "resumed_unchanged": report["unchanged"],
        "graphs": len(ref.graphs),
        "quads": sum(size for size, _ in ref.graphs.values()),
        "digest": ref.digest,
        "seed": seed,
    }


def test_kill_9_during_ingest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    seed = int(os.environ.get("KG_KILL_SEED", "20261130"))
    # 20 batches for 10 kills (2 at startup, 4 as a load begins, 4 anywhere); it was 1,200
    # records in batches of 60, 2,000 in batches of 100 for 12 kills, and 3,000 in batches
    # of 150, at more CPU
    records = synth_file(tmp_path / "records.jsonl", 600, seed=seed)
    figures = run_kill_test(
        tmp_path, monkeypatch, records, kills=10, seed=seed, sample=100, batch=30
    )
    record_figures(request.config, "kill", figures)


@pytest.mark.slow
def test_kill_9_during_ingest_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    seed = int(os.environ.get("KG_KILL_SEED", "7"))
    records = synth_file(tmp_path / "records.jsonl", 20_000, seed=seed)
    figures = run_kill_test(tmp_path, monkeypatch, records, kills=60, seed=seed, sample=1000)
    record_figures(request.config, "kill_long", figures)


#: The evaluation entries that cite papers the run merges by alias (a title fallback renamed
#: to the arXiv IRI after a later row taught it; tests/reliability/test_batch_independence.py)
_ALIASED = ("1908.00300", "2002.08267", "Richer Alignment Features", "Multilogue-Net",
            "1905.04266", "1906.03088")  # fmt: skip


def dump_slice(folder: Path, methods: int) -> Path:
    """`methods` entries of the bundled methods dump and the evaluation entries naming the
    aliased papers, as two dump files (the kinds are told by their content)."""
    folder.mkdir()
    pwc = Path(__file__).resolve().parents[2] / "examples" / "pwc"
    with gzip.open(pwc / "evaluation-tables.json.gz", "rt", encoding="utf-8") as f:
        tables = [e for e in json.load(f) if any(n in json.dumps(e) for n in _ALIASED)]
    with gzip.open(pwc / "methods.json.gz", "rt", encoding="utf-8") as f:
        first_methods = json.load(f)[:methods]
    (folder / "evaluation-tables.json").write_text(json.dumps(tables), encoding="utf-8")
    (folder / "methods.json").write_text(json.dumps(first_methods), encoding="utf-8")
    return folder


def test_kill_9_during_a_dump_ingest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The same promises on dump input: 107 entries (100 methods, 7 evaluation entries) in
    1,106 graphs, entries of several graphs each, parts stated once per run, papers merged
    by alias (renamed in an update after their batch: a clean run in batches of 50 renames
    after 150, 200 and 950 graphs), 6 kills."""
    seed = int(os.environ.get("KG_KILL_SEED", "20261130"))
    inputs = dump_slice(tmp_path / "dumps", methods=100)
    figures = run_kill_test(tmp_path, monkeypatch, inputs, kills=6, seed=seed, sample=40, batch=50)
    record_figures(request.config, "kill_dump", figures)
    # kills landed inside the evaluation entries (read after the methods), where the aliases
    # are taught and papers renamed, not only among the methods
    total = figures["evaluation_graphs"]
    present = figures["evaluation_graphs_present_after_each_kill"]
    assert isinstance(total, int) and isinstance(present, list)
    assert sum(1 for n in present if 0 < n < total) >= 2, (present, total)


def test_kill_9_during_an_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Killed while it replaces records with new versions, an ingest leaves each record whole
    in its old or its new version (or absent: the batch in flight is rolled back, old
    versions included), and the rerun converges to the same history run without kills."""
    old = synth_file(tmp_path / "v1.jsonl", UPDATED, seed=41)
    new = synth_file(tmp_path / "v2.jsonl", UPDATED, seed=42)  # the same papers, changed
    before, after = clean_references(monkeypatch, old, new, batch=UPDATE_BATCH)
    store_dir = tmp_path / "store"
    first = run_kg("--store", str(store_dir), "ingest", str(old), "-q")
    assert first.returncode == 0, first.stderr[-3000:]
    chain = kill_chain(
        new, store_dir, [before, after], 6, seed=4, sample=100, batch=UPDATE_BATCH
    )
    assert chain.kills, "the update finished before the first kill"
    result = run_kg("--store", str(store_dir), "ingest", str(new), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["updated"] + report["unchanged"] + report["added"] == UPDATED
    with GraphStore.open(store_dir, read_only=True) as store:
        assert graph_sizes(store) == {g: size for g, (size, _) in after.graphs.items()}
        assert store.canonical_digest() == after.digest
    record_figures(
        request.config,
        "kill_update",
        {
            "records": UPDATED,
            "kills": len(chain.kills),
            "rolled_back_old_versions_restored_by_rerun": report["added"],
            "updated_by_rerun": report["updated"],
        },
    )


def test_recovery_is_idempotent_when_killed_inside_it(tmp_path: Path) -> None:
    """The states a kill inside recovery leaves: the journal lists graphs of which some are
    already gone and one is half there (a bulk load larger than the loader's chunk). Opening
    the store finishes the job, however often it is interrupted."""
    store_dir = tmp_path / "store"
    path = synth_file(tmp_path / "r.jsonl", 30, seed=6)
    with GraphStore.open(store_dir) as store:
        ingest(store, [str(path)], base_iri=BASE, batch_size=10)
        graphs = sorted(g for g in store.named_graphs() if g.startswith(RECORD_GRAPHS))
        flag = '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>'
        journal = "".join(
            f"<{g}> {KG.pendingLoad} {flag} <{JOURNAL_GRAPH}> .\n" for g in graphs[:5]
        )
        store.load(journal.encode(), "nquads")
        store.remove_graph(graphs[0])  # recovery got this far
        half = list(store.quads_nquads(graphs[1]))[::2]
        store.remove_graph(graphs[1])
        store.load("".join(half).encode(), "nquads")  # and this one is half loaded
    for _ in range(2):  # recover, and recover again
        with GraphStore.open(store_dir) as store:
            left = set(store.named_graphs())
            assert not store.has_graph(JOURNAL_GRAPH)
            check_merge(store)
            assert left.isdisjoint(graphs[:5]) and set(graphs[5:]) <= left


def kill_after(proc: Any, begun: Callable[[], bool], delay: float) -> bool:
    """SIGKILL `proc` `delay` seconds after `begun()` holds; returns whether it was still
    running then (else it finished first). A kill leaves no traceback."""
    while proc.poll() is None and not begun():
        time.sleep(0.002)
    time.sleep(delay)
    running = proc.poll() is None
    if running:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert b"Traceback" not in stderr, stderr.decode()[-3000:]
    return running


def test_kill_9_during_a_compact_copy(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """`kg compact NEW` SIGKILLed while it dumps or loads: the store is untouched and
    NEW does not exist (the copy appears only whole); the next run removes what the killed
    one left and writes the same graph."""
    seed = int(os.environ.get("KG_KILL_SEED", "20261130"))
    rng = random.Random(seed)
    records = synth_file(tmp_path / "records.jsonl", 400, seed=seed)
    store_dir, copy = tmp_path / "store", tmp_path / "copy"
    result = run_kg("--store", str(store_dir), "ingest", str(records), "--batch-size", "50", "-q")
    assert result.returncode == 0, result.stderr[-3000:]
    with GraphStore.open(store_dir, read_only=True) as store:
        digest, graphs = store.canonical_digest(), per_graph(list(store.quads_nquads()))
    start = time.monotonic()
    result = run_kg("--store", str(store_dir), "compact", str(tmp_path / "clean"))
    assert result.returncode == 0, result.stderr[-3000:]
    clean_seconds = time.monotonic() - start
    kills = []
    for _ in range(4):
        proc = start_kg("--store", str(store_dir), "compact", str(copy))
        partial = tmp_path / f".copy.partial-{proc.pid}"  # once this run's copy has begun
        mid = kill_after(proc, partial.exists, rng.uniform(0.0, clean_seconds / 2))
        if not mid:
            break
        if copy.exists():  # killed after its rename (while the process exited): whole
            with GraphStore.open(copy, read_only=True) as store:
                assert store.canonical_digest() == digest, "a killed copy appeared half made"
            break
        left = [p.name for p in tmp_path.glob(".copy.partial-*")]
        kills.append({"left": left})
        with GraphStore.open(store_dir, read_only=True) as store:
            assert per_graph(list(store.quads_nquads())) == graphs
    assert kills, "every copy finished before its kill"
    if not copy.exists():
        result = run_kg("--store", str(store_dir), "compact", str(copy))
        assert result.returncode == 0, result.stderr[-3000:]
    assert not list(tmp_path.glob(".copy.partial-*"))
    with GraphStore.open(copy, read_only=True) as store:
        assert store.canonical_digest() == digest
        assert per_graph(list(store.quads_nquads())) == graphs
    record_figures(request.config, "kill-compact-copy", {"kills": kills, "seed": seed})
