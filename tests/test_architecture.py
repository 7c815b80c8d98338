"""kg's walls: subpackages by responsibility, imports pointing downward, a CLI that starts light.

The layers, top to bottom (docs/architecture.md):

    cli -> serve -> mcp -> library -> export, graph -> query, search -> ingest -> rdf
      -> foundation

A module may import its own subpackage and any lower layer, never a higher one or a sibling
on the same rank; `testing` (the generators) stands beside them and imports only `rdf` and
the foundation. Every import counts, including those inside functions and under
`if TYPE_CHECKING:`, so neither a lazy nor a type-only import can hide an upward arrow or a
circle; `from kg.serve import similar` is an arrow to the module kg.serve.similar. Only
kg.rdf.engine imports pyoxigraph. The package's front door, kg/__init__.py, may load the
library and the result types below it (lazily), never serve or cli.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KG = ROOT / "kg"

RANK = {
    "foundation": 0,
    "rdf": 1,
    "ingest": 2,
    "query": 3,
    "search": 3,
    "sources": 3,
    "export": 4,
    "graph": 4,
    "library": 5,
    "mcp": 6,
    "serve": 7,
    "cli": 8,
}
FOUNDATION = {"errors", "config", "resources", "__init__", "__main__"}


def _layer(module: str) -> str:
    """The layer of a dotted kg module name (`kg.rdf.store` -> `rdf`)."""
    parts = module.split(".")
    if module == "kg.__main__":  # `python -m kg` is the CLI
        return "cli"
    if len(parts) == 1 or not (KG / parts[1]).is_dir():  # kg, kg.errors, kg.__version__
        return "foundation"
    return parts[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> list[Path]:
    return sorted(p for p in KG.rglob("*.py") if "static" not in p.parts)


#: Every kg module by its dotted name (a package by its own name, from its __init__.py).
MODULES = {_module_name(p) for p in _modules()}


def _imports_in(source: str, module: str, *, package: bool) -> list[tuple[int, str]]:
    """The kg modules that `source` (the text of `module`) imports, with their lines.

    Every import counts: at module level, under `if TYPE_CHECKING:`, inside functions.
    `from kg.serve import similar` names the module kg.serve.similar (a submodule wins over
    a name its package defines); `from kg.rdf.store import GraphStore` names kg.rdf.store.
    Relative imports are resolved against `module`'s package.
    """
    found = []
    here = module if package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "kg"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            if base != "kg" and not base.startswith("kg."):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if sub in MODULES else base))
    return found


def _imports(path: Path) -> list[tuple[int, str]]:
    return _imports_in(
        path.read_text(encoding="utf-8"), _module_name(path), package=path.name == "__init__.py"
    )


def test_the_import_finder_sees_every_import() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import kg.rdf.vocab\n"
        "from kg.rdf.store import GraphStore\n"
        "from kg.serve import similar, pool as workers\n"
        "from kg import errors, __version__\n"
        "from . import conneg\n"
        "from .story import routes\n"
        "if TYPE_CHECKING:\n"
        "    from kg.serve.app import KgServer\n"
        "def later():\n"
        "    from kg.graph import cache\n"
        "    class Inner:\n"
        "        def deeper(self):\n"
        "            import kg.search.index\n"
    )
    found = sorted(
        target for _, target in _imports_in(source, "kg.serve.linked_data", package=False)
    )
    assert found == sorted(
        [
            "kg.rdf.vocab",
            "kg.rdf.store",
            "kg.serve.similar",
            "kg.serve.pool",
            "kg.errors",
            "kg",
            "kg.serve.conneg",
            "kg.serve.story",
            "kg.serve.app",
            "kg.graph.cache",
            "kg.search.index",
        ]
    )


def test_every_module_lives_in_a_subpackage() -> None:
    flat = [p.name for p in KG.glob("*.py") if p.stem not in FOUNDATION]
    assert not flat, f"put these in a subpackage by responsibility: {flat}"
    for package in (p for p in KG.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert package.name in RANK or package.name == "testing", package
        assert (package / "__init__.py").is_file(), f"{package} needs an __init__.py"


def test_imports_point_downward_only() -> None:
    upward = []
    for path in _modules():
        here = _layer(_module_name(path))
        for line, target in _imports(path):
            there = _layer(target)
            if here == there:
                continue
            if _module_name(path) == "kg":  # the front door: `kg.open`, the result types
                ok = RANK.get(there, 99) <= RANK["library"]
            elif here == "testing":
                ok = RANK.get(there, 99) <= RANK["rdf"]
            elif there == "testing":
                ok = False  # the generators are for tests and benchmarks, not the library
            else:
                ok = RANK[there] < RANK[here]
            if not ok:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({here}) imports {target} ({there})")
    assert not upward, "imports must point down the layers:\n" + "\n".join(upward)


def test_no_import_circles_between_modules() -> None:
    """No circle of imports anywhere in kg/, counting every import (module level, under
    TYPE_CHECKING, inside functions): a lazy or type-only import is still an arrow."""
    names = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], int] = {}
    for name, path in names.items():
        targets = set()
        for line, target in _imports(path):
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
                where.setdefault((name, target), line)
        graph[name] = targets
    # Tarjan's strongly connected components: any with two or more modules is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    arrows = [
        f"{names[a].relative_to(ROOT)}:{line} imports {b}"
        for circle in circles
        for (a, b), line in sorted(where.items())
        if a in circle and b in circle
    ]
    assert not circles, f"import circles: {circles}\n" + "\n".join(arrows)


def test_only_the_engine_imports_pyoxigraph() -> None:
    users = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[0] == "pyoxigraph" for n in names):
                users.append(str(path.relative_to(ROOT)))
    assert sorted(set(users)) == ["kg/rdf/engine.py"]


def test_the_wheel_lists_every_subpackage() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        _module_name(p.parent) for p in KG.rglob("__init__.py") if "static" not in p.parts
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert {"kg.ontology", "kg.queries"} <= listed


HEAVY = (
    "networkx", "scipy", "numpy", "rdflib", "pyshacl", "starlette", "uvicorn", "httpx", "mcp",
)


@pytest.mark.parametrize(
    "argv", [["--help"], ["query", "--list"], ["--memory", "stats"], ["--version"]]
)
def test_the_cli_starts_without_the_heavy_libraries(argv: list[str]) -> None:
    probe = (
        "import sys\n"
        "from kg.cli import app\n"
        "try:\n"
        f"    app({argv!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('heavy:', ','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "heavy: ", f"{argv} imported {done.stdout}"


def architecture_tree() -> set[str]:
    """Every path docs/architecture.md's tree names, as `kg/rdf/store.py` or `kg/rdf/`.

    The tree is the first ```text block after "## The tree": one entry a line, drawn with
    `├──`/`└──` and indented four characters a level; an entry's name is what comes before
    its two-space gap, and `a.py, b.py` names several.
    """
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## The tree", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    assert lines[0].strip() == "kg/", "the tree starts at kg/"
    named: set[str] = set()
    parents = ["kg/"]
    for line in lines[1:]:
        found = re.match(r"^((?:│   |    )*)[├└]── (\S.*?)(?:\s{2,}.*)?$", line)
        assert found, f"docs/architecture.md: not a tree line: {line!r}"
        depth = len(found.group(1)) // 4 + 1
        del parents[depth:]
        for name in found.group(2).split(", "):
            path = parents[-1] + name.strip()
            named.add(path)
            if path.endswith("/"):
                parents.append(path)
    return named


def test_architecture_md_names_every_module() -> None:
    """Every module and package under kg/ has its line in the tree, and the tree names
    nothing that is gone. A package's own __init__.py is named by its folder's line."""
    modules = {
        str(p.relative_to(ROOT)) for p in _modules()
        if not (p.name == "__init__.py" and p.parent != KG)
    }
    packages = {
        f"{p.parent.relative_to(ROOT)}/" for p in KG.rglob("__init__.py") if p.parent != KG
    }
    named = architecture_tree()
    missing = sorted((modules | packages) - named)
    assert not missing, (
        "docs/architecture.md's tree lacks a line (`name  its job`) for: " + ", ".join(missing)
    )
    gone = sorted(path for path in named if not (ROOT / path).exists())
    assert not gone, "docs/architecture.md's tree names what does not exist: " + ", ".join(gone)


# --- the faces go through the library ------------------------------------------------------

FACES = ("kg/cli/", "kg/serve/", "kg/mcp/")
#: The packages below the library that a face reaches only through it.
BELOW_THE_LIBRARY = ("rdf", "query", "graph", "export", "search", "ingest", "sources")


def face_exceptions() -> dict[tuple[str, str], str]:
    """docs/architecture.md's table "Where a face reaches below the library": each row's
    (face module, lower module) and its reason."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where a face reaches below the library", 1)[1].split("\n## ", 1)[0]
    rows: dict[tuple[str, str], str] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        found = re.fullmatch(r"\| `(kg/[\w/]+\.py)` \| `(kg\.[\w.]+)` \| (.*\S) \|", line)
        assert found, f"docs/architecture.md: not a row of the faces' table: {line!r}"
        key = (found.group(1), found.group(2))
        assert key not in rows, f"docs/architecture.md: the faces' table names {key} twice"
        rows[key] = found.group(3)
    return rows


def face_imports() -> dict[tuple[str, str], list[int]]:
    """Each (face module, lower module) pair the faces import, with the lines."""
    below = tuple(f"kg.{p}" for p in BELOW_THE_LIBRARY)
    found: dict[tuple[str, str], list[int]] = {}
    for path in _modules():
        rel = str(path.relative_to(ROOT))
        if not rel.startswith(FACES):
            continue
        for line, target in _imports(path):
            if target in below or target.startswith(tuple(b + "." for b in below)):
                found.setdefault((rel, target), []).append(line)
    return found


def test_the_faces_reach_below_the_library_only_where_architecture_md_says() -> None:
    table = face_exceptions()
    used = face_imports()
    unlisted = [
        f"| `{face}` | `{lower}` | why |  (line {', '.join(map(str, sorted(set(lines))))})"
        for (face, lower), lines in sorted(used.items())
        if (face, lower) not in table
    ]
    assert not unlisted, (
        "a face imports below the library: call kg.library instead, or name the exception "
        "and why in docs/architecture.md's table:\n" + "\n".join(unlisted)
    )
    unused = [f"{face} -> {lower}" for face, lower in sorted(set(table) - set(used))]
    assert not unused, "docs/architecture.md's table names imports no face has:\n" + "\n".join(
        unused
    )


def test_the_faces_table_is_read_and_gives_reasons() -> None:
    table = face_exceptions()
    assert ("kg/cli/output.py", "kg.rdf.results") in table  # the table is found and parsed
    for (face, lower), why in table.items():
        assert face.startswith(FACES) and (ROOT / face).is_file(), face
        assert lower.split(".")[1] in BELOW_THE_LIBRARY, lower
        assert len(why.split()) >= 3, f"{face} -> {lower}: say why"
    # every row is settled: none waits for a move
    pending = {face for (face, _), why in table.items() if "pending" in why}
    assert not pending, pending


def test_no_module_is_over_700_lines() -> None:
    """A module holds one job; past 700 lines it holds several (docs/architecture.md). The
    engine, the one module that imports pyoxigraph, stays whole on purpose."""
    long = {
        str(p.relative_to(ROOT)): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700
    }
    long.pop("kg/rdf/engine.py", None)
    assert not long, f"split these by job: {long}"
