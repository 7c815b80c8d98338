"""What the benchmarks measure about their own process."""

from __future__ import annotations

import resource


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
