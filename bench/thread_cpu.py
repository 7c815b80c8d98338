"""Where a `kg` command's CPU goes, thread by thread (Linux).

    python bench/thread_cpu.py --store DIR ingest --json RECORDS

Runs `kg ARGS` in this process as the `kg` command does, reads every thread's CPU time
from /proc five times a second, and at exit prints the CPU seconds by thread to stderr:
the main thread (`MAIN`: the ingest's mapping), kg's named Python threads (`kg-load`: the
parsing of each part, `kg-writer`, `kg-index-feed`), the threads Oxigraph's bulk loader
starts (`python`: encoding and sorted files), RocksDB's (`rocksdb:low`: compaction,
`rocksdb:high`: flushes), and the child processes together (the search index's). A thread
that ends between two readings loses at most 0.2 s. py-spy sees only the Python threads;
this sees them all.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")
TASKS = f"/proc/{os.getpid()}/task"
seen: dict[int, tuple[float, str]] = {}  # thread id -> (CPU seconds, OS name)
python_names: dict[int, str] = {}  # thread id -> Python thread name


def read_threads() -> None:
    for tid in os.listdir(TASKS):
        try:
            with open(f"{TASKS}/{tid}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        seen[int(tid)] = ((int(fields[11]) + int(fields[12])) / TICK, name)
    for thread in threading.enumerate():
        if thread.native_id:
            python_names[thread.native_id] = thread.name


def sample() -> None:
    while True:
        read_threads()
        time.sleep(0.2)


def report() -> None:
    read_threads()
    by_name: dict[str, float] = {}
    for tid, (cpu, name) in seen.items():
        label = "MAIN" if tid == os.getpid() else python_names.get(tid, name)
        label = label.rstrip("0123456789_-")  # kg-load_0 and kg-load_1 together
        by_name[label] = by_name.get(label, 0.0) + cpu
    children = os.times()
    by_name["children"] = children.children_user + children.children_system
    width = max(len(label) for label in by_name)
    print("CPU seconds by thread:", file=sys.stderr)
    for label, cpu in sorted(by_name.items(), key=lambda item: -item[1]):
        if cpu >= 0.05:
            print(f"  {label:<{width}}  {cpu:7.1f}", file=sys.stderr)
    print(f"  {'total':<{width}}  {sum(by_name.values()):7.1f}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: python bench/thread_cpu.py --store DIR ingest --json RECORDS "
        "(every argument goes to kg as it is)",
    )
    parser.add_argument("kg_args", nargs="*", help="the kg command's arguments")
    if sys.argv[1:] in ([], ["-h"], ["--help"]):
        parser.parse_args(["--help"])  # prints it and exits, as every bench script does
    threading.Thread(target=sample, name="sampler", daemon=True).start()
    atexit.register(report)
    from kg.cli import main as kg_main

    sys.argv = ["kg", *sys.argv[1:]]
    kg_main()


if __name__ == "__main__":
    main()
