"""`kg validate` on the README store: the SPARQL checks compiled from shapes.ttl against
pyshacl over an rdflib copy of the same store (the reference), side by side (issue 14).

    python bench/validate.py [--store PATH] [--skip-reference]

Builds the README store (`kg ingest examples/`) in a temporary directory unless --store
names one. Prints each engine's wall and CPU time, their ratio, and whether they agree.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.export.validate import validate, validate_pyshacl  # noqa: E402
from kg.ingest.ingestor import ingest  # noqa: E402
from kg.rdf.store import GraphStore  # noqa: E402

BASE = "https://w3id.org/kg/id/"


def timed(label: str, run: object) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()  # type: ignore[operator]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{label}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return wall, cpu, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path)
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.store or Path(tmp) / "store"
        if args.store is None:
            with GraphStore.open(path) as store:
                ingest(store, [str(ROOT / "examples")], base_iri=BASE)
        store = GraphStore.open(path, read_only=True)
        print(f"store: {store.count():,} quads")
        wall, cpu, report = timed("compiled SPARQL checks", lambda: validate(store))
        print(f"  conforms={report.conforms} violations={len(report.violations)}")  # type: ignore[attr-defined]
        if args.skip_reference:
            return
        ref_wall, ref_cpu, ref = timed("pyshacl (reference)", lambda: validate_pyshacl(store))
        print(f"  conforms={ref.conforms} violations={len(ref.violations)}")  # type: ignore[attr-defined]
        ours = {(v.focus, v.path) for v in report.violations}  # type: ignore[attr-defined]
        theirs = {(v.focus, v.path) for v in ref.violations}  # type: ignore[attr-defined]
        print(f"agree: {ours == theirs}")
        print(f"ratio compiled/pyshacl: wall {wall / ref_wall:.3f}, CPU {cpu / ref_cpu:.3f}")


if __name__ == "__main__":
    main()
