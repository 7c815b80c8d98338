"""The graphs a run has written (kg.ingest.seen): a repeated graph is told apart by its
content, and a conflicting one names where its first record was read, whatever the text."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from kg.ingest.seen import SeenGraphs

texts = st.text(max_size=12)  # any code points, lone surrogates included (JSON may hold them)
records = st.tuples(st.sampled_from(["g1", "g2", "g3"]), st.sampled_from(["a", "b"]),
                    st.sampled_from(["x.jsonl", "y/z.json.gz", "-"]), texts)


@given(st.lists(records, max_size=30))
def test_what_a_run_has_seen(run: list[tuple[str, str, str, str]]) -> None:
    seen = SeenGraphs()
    first: dict[str, tuple[str, str, str]] = {}
    for graph, content, source, locator in run:
        earlier = seen.see(graph, content, source, locator)
        if graph not in first:
            assert earlier is None
            first[graph] = (content, source, locator)
            continue
        assert earlier is not None
        assert earlier.same == (content == first[graph][0])
        if not earlier.same:
            assert earlier.where == f"{first[graph][1]}:{first[graph][2]}".rstrip(":")
    assert len(seen) == len(first)  # one entry a graph, however often it was seen
    # each graph holds a 16-byte key and a value of 20 bytes or more, Python objects both
    assert seen.nbytes() >= len(first) * (sys.getsizeof(b"k" * 16) + sys.getsizeof(b"v" * 20))
    seen.clear()
    assert all(seen.see(g, "a", "x", "") is None for g in first)
