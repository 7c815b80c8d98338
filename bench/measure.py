"""What the benchmarks measure about their own process."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def peak_rss_mb() -> float:
    """This process's own peak RSS in MB.

    Not `ru_maxrss`: Linux carries a parent's peak across fork and exec, so a child the
    benchmark starts after building a big store would report the parent's peak as its own.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: Oxigraph's column families (its storage layout), grouped by what they hold: a quad of a
#: named graph is a key in six indexes, a triple of the default graph in three, and each
#: IRI or literal of over 16 bytes is stored once in id2str.
INDEX_GROUPS = {
    "named_graphs": ("spog", "posg", "ospg", "gspo", "gpos", "gosp"),
    "default_graph": ("dspo", "dpos", "dosp"),
    "strings": ("id2str",),
}


def table_bytes(store: Path) -> dict[str, dict[str, int]] | None:
    """Bytes of table files per column family and level of the RocksDB store `store`, read
    from its manifest by RocksDB's own `ldb manifest_dump` (Debian's rocksdb-tools); None
    when ldb is not installed. (The table files themselves do not all say their column
    family: the bulk loader's do not.)"""
    ldb = shutil.which("ldb")
    if ldb is None:
        return None
    manifest = store / (store / "CURRENT").read_text().strip()
    dump = subprocess.run(
        [ldb, "manifest_dump", f"--path={manifest}"], capture_output=True, check=True
    ).stdout
    sizes: dict[str, dict[str, int]] = {}
    family, level = "", ""
    for line in dump.splitlines():
        if m := re.match(rb'-+ Column family "([^"]+)"', line):
            family = m.group(1).decode()
        elif m := re.match(rb"--- level (\d+) ", line):
            level = m.group(1).decode()
        elif m := re.match(rb" (\d+):(\d+)\[", line):
            by_level = sizes.setdefault(family, {})
            by_level[level] = by_level.get(level, 0) + int(m.group(2))
    return sizes


def index_bytes(store: Path) -> dict[str, int] | None:
    """Bytes of the store's tables per group of INDEX_GROUPS (and "other")."""
    sizes = table_bytes(store)
    if sizes is None:
        return None
    group_of = {family: group for group, families in INDEX_GROUPS.items() for family in families}
    out = dict.fromkeys([*INDEX_GROUPS, "other"], 0)
    for family, by_level in sizes.items():
        out[group_of.get(family, "other")] += sum(by_level.values())
    return out


def _children(pid: int) -> list[int]:
    """The children of `pid`, whichever of its threads started them."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                found.extend(int(p) for p in f.read().split())
        except OSError:
            continue
    return found


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss_kb(pid: int) -> int:
    """The resident set of process `pid` and all its descendants now, in KB."""
    return sum(tree_rss_by_process(pid).values())


def tree_rss_by_process(pid: int) -> dict[str, int]:
    """The resident set now of process `pid` and of each of its descendants, in KB, by
    "pid command" (the command's first words after the interpreter)."""
    found: dict[str, int] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        found[f"{p} {_command(p)}"] = _rss_kb(p)
        todo.extend(_children(p))
    return found


def rss_kinds_kb(pid: int) -> dict[str, int]:
    """A process's resident set by kind, in KB (/proc/PID/status): `anon` (its heap),
    `file` (mapped files: read-only pages the kernel may drop, a search index's segments)."""
    kinds: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("RssAnon", "RssFile", "RssShmem"):
                kinds[name[3:].lower()] = int(value.split()[0])
    return kinds


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return "?"
    words = [w for w in words if w and not w.endswith(("python", "python3", "time"))]
    return " ".join(Path(w).name if w.startswith("/") else w for w in words[:3])[:60]


def load_average() -> float:
    """The machine's load average over the last minute."""
    return os.getloadavg()[0]


def run_command(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    """Run `argv` as a command, start-up to exit, and measure it from outside: its wall
    time, its stdout, and the peak resident set of its whole process tree, two ways:
    `tree_peak_rss_mb`, the largest sum over the tree, sampled every 50 ms, and
    `maxrss_mb`, the kernel's largest single process of the tree (its ru_maxrss, which
    counts the command's children and theirs once they are waited for), read by GNU
    time (/usr/bin/time), which starts the command from its own small process: a child
    started straight from this one would report this process's peak if larger (Linux
    carries it across fork and exec). `peak_rss_mb` is the larger of the two. The load
    average is read at the start and at the end (the machine may be shared)."""
    load = load_average()
    gnu_time = Path("/usr/bin/time")
    maxrss_file = None
    if gnu_time.exists():
        fd, name = tempfile.mkstemp(suffix=".maxrss")
        os.close(fd)
        maxrss_file = Path(name)
        argv = [str(gnu_time), "-f", "%M", "-o", str(maxrss_file), *argv]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=cwd)
    peak = 0
    at_peak: dict[str, int] = {}  # each process's share of the tree's peak
    peak_at = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, at_peak, peak_at
        while not stop.wait(0.05):
            now = tree_rss_by_process(proc.pid)
            if sum(now.values()) > peak:
                peak, at_peak = sum(now.values()), now
                kinds = {k: rss_kinds_kb(int(k.split()[0])) for k in now}
                at_peak = {f"{k} ({', '.join(f'{n} {v // 1024}' for n, v in kinds[k].items())})":
                           v for k, v in now.items()}
                peak_at = time.perf_counter() - start

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=lambda s=s, b=b: b.append(s.read()), daemon=True)
        for s, b in ((proc.stdout, out), (proc.stderr, err))
    ]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    for reader in readers:
        reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    maxrss_kb = None
    if maxrss_file is not None:
        with contextlib.suppress(ValueError):
            maxrss_kb = int(maxrss_file.read_text().split()[-1])
        maxrss_file.unlink()
    return {
        "returncode": proc.returncode,
        "wall_seconds": wall,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "tree_peak_rss_mb": peak / 1024,
        # who held the tree's peak, and when (the share of the wall time)
        "tree_peak_by_process_mb": {k: round(v / 1024) for k, v in at_peak.items() if v},
        "tree_peak_at": round(peak_at / wall, 3) if wall else 0.0,
        "maxrss_mb": None if maxrss_kb is None else maxrss_kb / 1024,
        "peak_rss_mb": max(peak, maxrss_kb or 0) / 1024,
        "load_before": load,
        "load_after": load_average(),
        "stdout": b"".join(out).decode("utf-8", "replace"),
        "stderr": b"".join(err).decode("utf-8", "replace"),
    }


def command_phases(wall: float, report: dict[str, Any]) -> dict[str, float]:
    """The shares of a `kg ingest --json` run's wall time by phase, from its report's
    `timings`: start-up and exit (interpreter, imports, opening and closing the store:
    the wall time outside the library's ingest), the main thread's mapping, its waits for
    the writer, the search index, the compaction; and, beside the mapping on the writer
    thread, loading, of which publishing (not part of the sum). Since 61d2026 the run's
    `ending` holds the compaction and the search index's finish side by side: it is in the
    sum, and they are given beside it (the index's hand-overs during the batches are then
    in `other`)."""
    t = report.get("timings", {})
    shares = {
        "start_and_exit": wall - t.get("total", report["seconds"]),
        "mapping": t.get("mapping", 0.0),
        "waiting_for_load": t.get("waiting_for_load", 0.0),
    }
    beside = {"search_index": t.get("search_index", 0.0), "compaction": t.get("compaction", 0.0)}
    if "ending" in t:
        shares["ending"] = t["ending"]
    else:
        shares.update(beside)
    rest = wall - sum(shares.values())
    shares["other"] = rest  # the library's own bookkeeping between phases
    shares = {k: v / wall for k, v in shares.items()}
    if "ending" in t:
        shares.update({f"{k}_in_ending": v / wall for k, v in beside.items()})
    shares["writer_loading"] = t.get("loading", 0.0) / wall
    shares["writer_publishing"] = t.get("publishing", 0.0) / wall
    return shares


def format_phases(shares: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.0%}" for k, v in shares.items())


def optimize_store(path: Path) -> dict[str, Any]:
    """`Store.optimize` (RocksDB's full compaction) of the closed store at `path`, as a
    writer that leaves its readers a settled store would end: its time and CPU, its bytes
    on disk before and after (closed) and its quads."""
    import pyoxigraph as ox

    from kg.rdf.stamp import size_on_disk

    before = size_on_disk(path)
    store = ox.Store(str(path))
    quads = len(store)
    cpu, start = time.process_time(), time.perf_counter()
    store.optimize()
    store.flush()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    del store
    after = size_on_disk(path)
    return {"seconds": seconds, "compact_cpu_seconds": cpu, "quads": quads,
            "bytes_before": before, "bytes_after": after,
            "bytes_per_quad_before": before / quads, "bytes_per_quad_after": after / quads,
            "peak_rss_mb": peak_rss_mb()}


def settled(
    kg_seconds: float, kg_compaction: float | None, bulk_seconds: float, bulk_settle: float
) -> dict[str, float | None]:
    """Two ratios beside the bulk load's time over kg's command's, for a command that ends
    with a full compaction (`kg ingest` past kg.rdf.compaction.COMPACT_FROM) so that its
    readers do not merge the load's level-0 files, which the bulk load leaves them:

    - `like_for_like`: (the bulk load + the full compaction of its store, `bulk_settle`
      seconds) / kg's command: both leave a compacted store (the plain ratio when kg did
      not compact: neither does);
    - `ceiling`: the bulk load / (the bulk load + kg's own final compaction): the most kg's
      command could reach with as much left to compact at its end as this run left, were
      all else it does (mapping, search index, count) free, since that compaction can only
      start after the last write. None when kg did not compact."""
    if kg_compaction is None:
        return {"like_for_like": bulk_seconds / kg_seconds, "ceiling": None,
                "bulk_settle_seconds": bulk_settle}
    return {"like_for_like": (bulk_seconds + bulk_settle) / kg_seconds,
            "ceiling": bulk_seconds / (bulk_seconds + kg_compaction),
            "bulk_settle_seconds": bulk_settle}


def format_settled(figures: dict[str, Any]) -> str:
    ceiling = figures["ceiling"]
    return (f"like for like {figures['like_for_like']:.2f}x (the bulk load's store compacted "
            f"in {figures['bulk_settle_seconds']:.1f} s, as kg compacts its own); "
            + ("kg did not compact" if ceiling is None else
               f"ceiling {ceiling:.2f}x (the bulk load / the bulk load + kg's compaction)"))
