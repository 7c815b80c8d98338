"""The path one entity-page request takes through kg's modules (the rooms of kg/serve).

    python bench/request_path.py --store kg-store [--path /paper/arxiv/1711.04434] [--all]

Serves one page request with the real app (kg.serve.app, its lifespan, an httpx ASGI client)
in process, in one thread, and follows it with `sys.setprofile`. The work the workers would do (each query, the
similar/suggest/list operations) runs in process here too, by the same code the worker
runs (the store's `query`; the worker's table of graph operations), so it is traced as
well: the pool of the served app is swapped for `InProcessPool` for the timed request.

What it prints, from the request's first kg function to its response:

* the modules of kg/serve the request enters, in order (a module's consecutive calls
  collapsed into one step), each with the lower layers it calls (kg.rdf, kg.graph …);
* for each module, how often it is entered;
* the **rooms path**: the same order with the helper modules (those that call no other
  module of kg/serve in this request: rows, labels, render …) folded into their callers,
  and how often the request steps back into a room it already passed;
* the **returns**: the times the request comes back into a module it left while that module
  is still on the request's stack below another one (A -> B -> A: a callback, a piece
  that sits in the wrong room).
  An asyncio task's caller is the function that made its coroutine
  (`sys.set_coroutine_origin_tracking_depth`), so a query gathered by a page counts as the
  page's call, not the event loop's.

`--all` prints every kg module on the path (the lower layers too), not only kg/serve's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from kg.rdf.store import GraphStore  # noqa: E402
from kg.serve.app import ServerConfig, create_app  # noqa: E402
from kg.serve.pool import Source  # noqa: E402

BASE = "https://w3id.org/kg/id/"
SCOPE = "kg.serve"


class InProcessPool:
    """The pool's `result` and `graph`, run here by the code a worker runs (for tracing)."""

    def __init__(self, store: GraphStore, generation: int) -> None:
        self.store = store
        self.generation = generation
        self.size = 1
        self.libraries: dict[str | None, Any] = {}

    async def result(
        self,
        sparql: str,
        substitutions: Mapping[str, Any] | None = None,
        limit: int | None = None,
        search_bindings: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        return self.store.query(sparql, substitutions=substitutions, limit=limit)

    async def call(self, name: str, timeout: float | None = None, /, **kwargs: Any) -> Any:
        from kg.mcp.calls import run_call  # the one table of worker operations
        from kg.serve.worker import _worker_graph  # the library over the worker's snapshot

        base_iri = kwargs.pop("base_iri", None)
        if base_iri not in self.libraries:
            self.libraries[base_iri] = _worker_graph(self.store, None, base_iri)
        library = self.libraries[base_iri]
        return self.store.reading(lambda: run_call(library, name, kwargs))

    graph = call


@dataclass
class Node:
    module: str
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)

    def ancestors(self) -> list[str]:
        out, node = [], self.parent
        while node is not None:
            out.append(node.module)
            node = node.parent
        return out


class Tracer:
    """The module call tree of what runs while `active`."""

    def __init__(self) -> None:
        self.root = Node("(request)")
        self.active = False
        self.nodes: dict[FrameType, Node] = {}  # every kg frame seen (kept alive: no id reuse)
        self.by_code: dict[tuple[str, str], Node] = {}  # (file, function) -> its last node
        self.lock = threading.Lock()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.active or event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("kg.") or frame in self.nodes:
            return  # not kg's, or a coroutine resumed
        with self.lock:
            parent = self._caller(frame)
            if parent is self.root and self.root.children:
                return  # a background task (the pool's watcher), not the request's
            node = parent if parent.module == module else Node(module, parent)
            if node is not parent:
                parent.children.append(node)
            self.nodes[frame] = node
            self.by_code[(frame.f_code.co_filename, frame.f_code.co_name)] = node

    def _caller(self, frame: FrameType) -> Node:
        back = frame.f_back
        while back is not None:
            found = self.nodes.get(back)
            if found is not None:
                return found
            back = back.f_back
        try:  # a task's coroutine: its caller is where the coroutine was made
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        origin = getattr(task.get_coro(), "cr_origin", None) if task is not None else None
        for filename, _, function in origin or ():
            found = self.by_code.get((filename, function))
            if found is not None:
                return found
        return self.root


def _collapse(node: Node, scope: str) -> list[tuple[Node, Counter[str]]]:
    """The in-scope nodes in call order, each with the out-of-scope modules under it."""
    out: list[tuple[Node, Counter[str]]] = []

    def lower(n: Node, into: Counter[str]) -> None:
        for c in n.children:
            if c.module.startswith(scope):
                walk(c)
            else:
                into[c.module.rsplit(".", 1)[0] if c.module.count(".") > 1 else c.module] += 1
                lower(c, into)

    def walk(n: Node) -> None:
        below: Counter[str] = Counter()
        out.append((n, below))
        lower(n, below)

    for child in node.children:
        if child.module.startswith(scope):
            walk(child)
        else:
            lower(child, Counter())
    return out


def _scope_below(node: Node, scope: str) -> bool:
    return any(c.module.startswith(scope) or _scope_below(c, scope) for c in node.children)


def report(tracer: Tracer, scope: str) -> dict[str, Any]:
    steps = _collapse(tracer.root, scope)
    # helpers: modules that call no other module of the scope in this request (rows,
    # labels, render …): tools used in a room, folded into their callers on the rooms path
    calls_on = {n.module for n, _ in steps if _scope_below(n, scope)}
    helpers = {n.module for n, _ in steps} - calls_on
    rooms: list[str] = []
    for node, _ in steps:
        if node.module not in helpers and (not rooms or rooms[-1] != node.module):
            rooms.append(node.module)
    path: list[tuple[str, Counter[str]]] = []
    for node, below in steps:
        if path and path[-1][0] == node.module:
            path[-1][1].update(below)
        else:
            path.append((node.module, Counter(below)))
    entered = Counter(node.module for node, _ in steps)
    returns = [
        node.module
        for node, _ in steps
        if node.module in [a for a in node.ancestors() if a.startswith(scope)]
    ]
    return {
        "path": path,
        "entered": entered,
        "returns": returns,
        "rooms": rooms,
        "helpers": sorted(helpers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--path", default="/paper/arxiv/1711.04434")
    parser.add_argument("--all", action="store_true", help="every kg module, not only kg/serve")
    args = parser.parse_args()
    store = GraphStore.open(args.store, read_only=True)
    app = create_app(Source(path=args.store), ServerConfig(base_iri=BASE, workers=1))
    tracer = Tracer()

    async def serve() -> httpx.Response:
        server = app.state.server
        async with server.lifespan(app):
            real = server.pool
            assert real is not None  # the lifespan started it
            holders: list[Any] = [
                h for h in (server, getattr(server, "pages", None)) if hasattr(h, "pool")
            ]
            for holder in holders:  # the server's pool, and the pages' where they hold it
                holder.pool = InProcessPool(store, real.generation)
            transport = httpx.ASGITransport(app=app)
            try:
                async with httpx.AsyncClient(transport=transport, base_url="http://kg") as client:
                    headers = {"Accept": "text/html"}
                    warm = await client.get(args.path, headers=headers)  # caches loaded
                    assert warm.status_code == 200, (warm.status_code, warm.text[:300])
                    sys.set_coroutine_origin_tracking_depth(32)
                    sys.setprofile(tracer)
                    tracer.active = True
                    try:
                        return await client.get(args.path + "?page=0", headers=headers)
                    finally:
                        tracer.active = False
                        sys.setprofile(None)
                        tracer.nodes.clear()
            finally:
                for holder in holders:
                    holder.pool = real

    response = asyncio.run(serve())
    assert response.status_code == 200, response.status_code
    found = report(tracer, "kg" if args.all else SCOPE)
    print(f"GET {args.path} ({len(response.content):,} bytes of HTML), pid {os.getpid()}")
    print("modules in order (consecutive calls collapsed; lower layers in brackets):")
    for i, (module, below) in enumerate(found["path"], 1):
        lower = ", ".join(f"{m} x{n}" for m, n in sorted(below.items()))
        print(f"  {i:2}. {module}" + (f"  [{lower}]" if lower else ""))
    print("entered (times the request enters each module from another):")
    for module, n in found["entered"].most_common():
        print(f"  {n:3}  {module}")
    distinct = len(found["entered"])
    steps = len(found["path"])
    print(f"modules: {distinct}; steps: {steps}; steps back into a module already passed: "
          f"{steps - distinct}")
    rooms = found["rooms"]
    print("rooms path (helper modules folded into their callers: "
          + ", ".join(found["helpers"]) + "):")
    print("  " + " -> ".join(rooms))
    again = Counter(rooms) - Counter(set(rooms))
    print(f"rooms: {len(set(rooms))}; steps back into a room already passed: "
          f"{len(rooms) - len(set(rooms))}"
          + (f"  ({', '.join(f'{m} x{n}' for m, n in again.most_common())})" if again else ""))
    back = Counter(found["returns"])
    print(f"returns into a module left (still on the stack below another): {len(found['returns'])}"
          + (f"  ({', '.join(f'{m} x{n}' for m, n in back.most_common())})" if back else ""))


if __name__ == "__main__":
    main()
