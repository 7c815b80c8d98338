"""What the benchmarks measure about their own process."""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
from pathlib import Path


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
