"""The docs that open with the present: the first table of docs/performance.md and
docs/reliability.md names commands and tests that exist and accept the flags it shows (and
so does every bench command in any doc), and
the first table of docs/ontology.md names every graph of the README store.

Nothing is measured: a bench script is asked for its ``--help`` (all of them in one
subprocess), a ``kg`` command is resolved in the Typer app and asked for its ``--help``
through CliRunner, a pytest node id is found in its file, and a pytest command's flags are
looked up in this run's own options.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from kg.cli import app
from tests.conftest import ROOT

#: Each doc, and the column of its first table that names commands or tests.
DOCS = {"docs/performance.md": "command", "docs/reliability.md": "proved by"}
PYTHONS = {"python", "python3", ".venv/bin/python"}
BENCH = ROOT / "bench"

# Runs each script as __main__ with --help, captures what it prints, and reports the exit
# code: one interpreter for all of them, so kg and numpy are imported once.
HELP_DRIVER = r"""
import contextlib, io, json, runpy, sys
paths = sys.argv[1:]
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
out = {}
for path in paths:
    buf = io.StringIO()
    sys.argv = [path, "--help"]
    code = "no exit"
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if exc.code is not None else 0
    except BaseException as exc:
        code = repr(exc)
    out[path] = [code, buf.getvalue()]
print(json.dumps(out))
"""


def split_row(line: str) -> list[str]:
    """The cells of one Markdown table row; a `|` inside backticks stays in its cell."""
    cells, cell, in_code = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
    cells.append(cell.strip())
    return cells


def first_table(doc: str) -> list[dict[str, str]]:
    """The rows of the doc's first table, which must be in its first `##` section."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    first_section = text.split("\n## ", 2)[1]
    lines = [line for line in first_section.splitlines() if line.startswith("|")]
    assert len(lines) > 2, f"{doc}: the first section holds no table"
    start = first_section.splitlines().index(lines[0])
    block = []
    for line in first_section.splitlines()[start:]:
        if not line.startswith("|"):
            break
        block.append(line)
    header = [cell.lower() for cell in split_row(block[0])]
    rows = [dict(zip(header, split_row(line), strict=True)) for line in block[2:]]
    assert rows, f"{doc}: the first table has no rows"
    return rows


def references(doc: str) -> list[str]:
    column = DOCS[doc]
    spans = []
    for row in first_table(doc):
        assert column in row, f"{doc}: the first table has no column {column!r}"
        found = re.findall(r"`([^`]+)`", row[column])
        assert found, f"{doc}: row {row} names no command or test in {column!r}"
        spans.extend(found)
    return spans


def kind(reference: str) -> str:
    words = shlex.split(reference)
    if "::" in reference or (len(words) == 1 and reference.startswith("tests/")):
        return "node"
    if words[0] == "kg":
        return "kg"
    if words[0] in PYTHONS and len(words) > 1 and words[1].startswith("bench/"):
        return "bench"
    if words[0] in PYTHONS and words[1:3] == ["-m", "pytest"]:
        return "pytest"
    raise AssertionError(f"{reference!r} is not a bench script, a kg command or a test")


def all_references() -> list[tuple[str, str]]:
    return [(doc, ref) for doc in DOCS for ref in references(doc)]


def flags(words: list[str]) -> list[str]:
    return [w.split("=", 1)[0] for w in words if w.startswith("--")]


def bench_scripts() -> list[Path]:
    """Every bench script that runs as a program (not the helper modules)."""
    return sorted(
        p for p in BENCH.glob("*.py") if "__name__ == \"__main__\"" in p.read_text("utf-8")
    )


@cache
def bench_help() -> dict[str, tuple[object, str]]:
    done = subprocess.run(
        [sys.executable, "-c", HELP_DRIVER, *(str(p) for p in bench_scripts())],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    return {Path(path).name: (code, text) for path, (code, text) in answers.items()}


#: The columns of each doc's first table, in order.
COLUMNS = {
    "docs/performance.md": ["measure", "goal", "today", "baseline", "command"],
    "docs/reliability.md": ["promise", "proved by", "last run"],
    "docs/ontology.md": ["part of the graph", "iri", "what it holds", "replaced when"],
}


def test_the_first_section_of_each_doc_is_its_table() -> None:
    for doc, columns in COLUMNS.items():
        text = (ROOT / doc).read_text(encoding="utf-8")
        first_section = text.split("\n## ", 2)[1]
        rows = first_table(doc)
        assert all(list(row) == columns for row in rows), f"{doc}: columns are not {columns}"
        empty = [row[columns[0]] for row in rows if not all(row.values())]
        assert empty == [], f"{doc}: rows with an empty cell"
        # Nothing but an introduction and the table: the present, not a diary.
        assert "\n### " not in first_section, f"{doc}: the first section has sub-sections"


def test_every_reference_is_a_known_kind() -> None:
    for doc, ref in all_references():
        assert kind(ref), (doc, ref)


def test_every_bench_script_has_a_working_help() -> None:
    answers = bench_help()
    assert set(answers) == {p.name for p in bench_scripts()}
    broken = {name: (code, text[-300:]) for name, (code, text) in answers.items()
              if code != 0 or "usage:" not in text}
    assert broken == {}


def test_bench_commands_exist_and_accept_their_flags() -> None:
    answers = bench_help()
    checked = 0
    for doc, ref in all_references():
        if kind(ref) != "bench":
            continue
        words = shlex.split(ref)
        script = ROOT / words[1]
        assert script.is_file(), f"{doc}: {ref}: no {words[1]}"
        _, text = answers[script.name]
        for flag in flags(words[2:]):
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (
                f"{doc}: {ref}: {words[1]} --help does not list {flag}"
            )
        checked += 1
    assert checked >= 10


@cache
def click_app() -> Any:
    """The Typer app as its click command tree (typer's own click, vendored), built once."""
    return typer.main.get_command(app)


def resolve_kg(words: list[str]) -> tuple[list[str], list[tuple[Any, str]]]:
    """Walk `kg …` through the Typer app: its sub-command path, and each flag with the
    command it belongs to."""
    command: Any = click_app()
    path: list[str] = []
    found: list[tuple[Any, str]] = []
    rest = list(words[1:])
    while rest:
        word = rest.pop(0)
        if word.startswith("-"):
            name = word.split("=", 1)[0]
            found.append((command, name))
            option = next((p for p in command.params if name in p.opts), None)
            takes_value = option is not None and not getattr(option, "is_flag", False)
            if takes_value and "=" not in word and rest:
                rest.pop(0)
        elif word in getattr(command, "commands", {}):
            command = command.commands[word]
            path.append(word)
    return path, found


def test_kg_commands_exist_and_accept_their_flags() -> None:
    runner = CliRunner()
    checked = 0
    for doc, ref in all_references():
        if kind(ref) != "kg":
            continue
        path, found = resolve_kg(shlex.split(ref))
        assert path, f"{doc}: {ref}: no such kg command"
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, f"{doc}: {ref}: {result.output}"
        for command, flag in found:
            opts = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            assert flag in opts, f"{doc}: {ref}: kg {command.name} has no {flag}"
        checked += 1
    assert checked >= 1


@cache
def defined_tests(path: Path) -> set[str]:
    """`name` and `Class::name` for every function and method in a test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{item.name}" for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return names


def test_every_test_named_exists() -> None:
    checked = 0
    for doc, ref in all_references():
        if kind(ref) != "node":
            continue
        file, _, name = ref.partition("::")
        assert (ROOT / file).is_file(), f"{doc}: {ref}: no {file}"
        if name:
            name = name.split("[", 1)[0]
            assert name in defined_tests(ROOT / file), f"{doc}: {ref}: no test {name}"
        checked += 1
    assert checked >= 10


def test_pytest_commands_run_real_paths_and_flags(pytestconfig: pytest.Config) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc, ref in all_references():
        if kind(ref) != "pytest":
            continue
        words = shlex.split(ref)
        assert ref in readme or all(
            (ROOT / w.split("::")[0]).exists() for w in words[3:]
            if not w.startswith("-") and "/" in w
        ), f"{doc}: {ref}: a path it names does not exist"
        for flag in flags(words[3:]):
            try:
                pytestconfig.getoption(flag.lstrip("-").replace("-", "_"))
            except ValueError:
                pytest.fail(f"{doc}: {ref}: pytest has no option {flag}")


def graph_patterns() -> dict[str, re.Pattern[str]]:
    """ontology.md's first table: each part of the graph and its IRI patterns as regexes."""
    patterns = {}
    for row in first_table("docs/ontology.md"):
        for span in re.findall(r"`([^`]+)`", row["iri"]):
            parts = re.split(r"(<[^>]+>|…)", span)
            regex = "".join(
                ".+" if part in ("…", "<paper-key>", "<paper>")
                else "[^/]+" if part.startswith("<") else re.escape(part)
                for part in parts
            )
            patterns[span] = re.compile(regex)
    return patterns


def test_the_ontology_table_names_every_graph_of_the_readme_store(readme_store: Path) -> None:
    from kg.config import DEFAULT_BASE_IRI
    from kg.rdf.store import GraphStore

    store = GraphStore.open(readme_store, read_only=True)
    try:
        graphs = [str(g) for g in store.named_graphs()]
    finally:
        store.close()
    assert graphs
    patterns = graph_patterns()
    matched: dict[str, int] = dict.fromkeys(patterns, 0)
    unnamed = []
    for graph in graphs:
        local = graph.removeprefix(DEFAULT_BASE_IRI)
        hits = [span for span, regex in patterns.items() if regex.fullmatch(local)]
        if not hits:
            unnamed.append(graph)
        for span in hits:
            matched[span] += 1
    assert unnamed == [], "graphs that docs/ontology.md's first table does not describe"
    # Every row but the journal (hidden from readers) describes graphs that exist.
    assert [s for s, n in matched.items() if n == 0 and not s.startswith("urn:")] == []


def bench_commands_in_docs() -> list[tuple[str, str]]:
    """Each `python bench/….py …` command in any doc: in code spans and in code blocks
    (continuations joined; a pipe, `;`, `&`, `>` or `#` ends it)."""
    from tests.test_docs import DOC_PATHS, FENCE

    found = []
    for doc in DOC_PATHS:
        text = doc.read_text(encoding="utf-8")
        spans = re.findall(r"`((?:\.venv/bin/)?python3? bench/[^`\n]+)`", FENCE.sub("", text))
        for _, body in FENCE.findall(text):
            spans += re.findall(
                r"((?:\.venv/bin/)?python3? bench/[^|;&>\n#]+)", body.replace("\\\n", " ")
            )
        found += [(doc.name, span.strip()) for span in spans]
    return found


def test_bench_commands_in_every_doc_exist_and_accept_their_flags() -> None:
    answers = bench_help()
    wrong = []
    commands = bench_commands_in_docs()
    for doc, command in commands:
        words = shlex.split(command)
        script = ROOT / words[1]
        if script.name not in answers:
            wrong.append(f"{doc}: {command}: no bench program {words[1]}")
            continue
        _, text = answers[script.name]
        wrong += [
            f"{doc}: {command}: {words[1]} --help does not list {flag}"
            for flag in flags(words[2:])
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)
        ]
    assert not wrong, "\n".join(wrong)
    assert len(commands) >= 40
