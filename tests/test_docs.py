"""Docs that are tested: the README's commands, CI, and the CLI's help."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from kg.cli import app
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_quick_start_has_exactly_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "kg ingest examples/" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert quick_start_commands()[1] in ci.splitlines()


def registered_commands() -> dict[str, str]:
    click_app = typer.main.get_command(app)
    return {name: (cmd.help or "") for name, cmd in click_app.commands.items()}  # type: ignore[attr-defined]


def test_every_command_has_help_and_is_in_the_readme() -> None:
    commands = registered_commands()
    assert {"ingest", "stats", "sparql", "validate"} <= commands.keys()
    for name, help_text in commands.items():
        assert help_text.strip(), f"kg {name} has no help text"
        assert f"`kg {name}" in README, f"kg {name} is not documented in README.md"


def test_readme_links_point_at_files_that_exist() -> None:
    targets = re.findall(r"\]\(((?!https?://)[^)#]+)\)", README)
    assert targets, "the README links to its docs"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []


# Facts every doc states: the repository files it names exist, the pytest node ids it names
# are defined, every `kg …` command in its code is a real command with real options, and
# the modules its Python examples import are installed (or the doc says to install them). All in process: the commands are
# resolved in Typer's command tree, never run.

DOC_PATHS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])

#: A repository path: a top-level folder of the project, then a file with an extension.
REPO_FILE = re.compile(
    r"(?<![\w./-])((?:kg|bench|tests|queries|ontology|examples|docs|\.ci)/[\w./-]*\.[a-z]{1,6})"
    r"(?:::([\w\[\]-]+(?:::[\w\[\]-]+)?))?"
)
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", flags=re.S | re.M)


def doc_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def named_files(text: str) -> list[tuple[str, str | None]]:
    """Each repository path a doc names, with the test it names there (`file::test`)."""
    found = []
    for match in REPO_FILE.finditer(text):
        path, node = match.group(1).rstrip("."), match.group(2)
        if any(c in path for c in "*<>…"):
            continue  # a pattern or a placeholder, not a file
        found.append((path, node))
    return found


def test_every_repository_file_a_doc_names_exists() -> None:
    from tests.test_docs_tables import defined_tests

    wrong = []
    for doc in DOC_PATHS:
        for path, node in named_files(doc_text(doc)):
            if not (ROOT / path).exists():
                wrong.append(f"{doc.name}: {path} does not exist")
            elif node and path.endswith(".py"):
                name = node.split("[", 1)[0]
                if name not in defined_tests(ROOT / path):
                    wrong.append(f"{doc.name}: {path} defines no {name}")
    assert not wrong, "\n".join(wrong)


def kg_commands(text: str) -> list[str]:
    """Each `kg …` command in a doc: the command lines of its shell code blocks
    (continuations joined; pipes, `&&`, `;` and redirections end a command), and its inline
    code spans that start with `kg COMMAND`."""
    commands = re.findall(r"(?<!`)`(kg [a-z][^`\n]*)`", FENCE.sub("", text))
    for lang, body in FENCE.findall(text):
        if lang not in ("", "bash", "sh", "shell", "console", "text"):
            continue
        body = body.replace("\\\n", " ")
        for line in body.splitlines():
            if any(box in line for box in "├└│─"):
                continue  # a tree or a diagram, not a command line
            line = line.strip().removeprefix("$ ")
            for part in re.split(r"\s*(?:\|\||&&|[|;]|>{1,2}|<|#\s)\s*", line):
                words = part.split()
                while words and ("=" in words[0] and not words[0].startswith("-")):
                    words.pop(0)  # an environment assignment before the command
                if words and words[0].rsplit("/", 1)[-1] == "kg":
                    commands.append(" ".join(["kg", *words[1:]]))
    return commands


def test_every_kg_command_in_the_docs_code_is_real() -> None:
    import shlex

    from tests.test_docs_tables import resolve_kg

    wrong, checked = [], 0
    for doc in DOC_PATHS:
        for command in kg_commands(doc_text(doc)):
            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            path, found = resolve_kg(words)
            first = next((w for w in words[1:] if not w.startswith("-")), None)
            if not path and first is not None and re.fullmatch(r"[a-z][a-z-]*", first):
                wrong.append(f"{doc.name}: {command}: no such kg command")
                continue
            for click_command, flag in found:
                opts = {o for p in click_command.params for o in (*p.opts, *p.secondary_opts)}
                if flag not in opts and flag not in ("--help", "-"):
                    wrong.append(f"{doc.name}: {command}: kg {click_command.name} has no {flag}")
            checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked >= 200


def test_the_modules_python_examples_import_are_installed_or_named() -> None:
    import importlib.util

    wrong = []
    for doc in DOC_PATHS:
        text = doc_text(doc)
        for lang, body in FENCE.findall(text):
            if lang not in ("python", "py", "pycon"):
                continue
            for match in re.finditer(r"^\s*(?:>>> )?(?:from|import)\s+([\w.]+)", body, re.M):
                top = match.group(1).split(".")[0]
                if importlib.util.find_spec(top) is None and f"pip install {top}" not in text:
                    wrong.append(f"{doc.name}: imports {match.group(1)}, which is not installed")
    assert not wrong, "\n".join(wrong)


#: A numbered reference to an issue or a work period ("issue 35", "sessions 4 and 5", "#23").
NUMBERED = re.compile(r"\b(?:issues?|sessions?)[ -]\d+|(?<![\w/&])#\d+\b", flags=re.I)


def test_no_doc_refers_to_an_issue_or_a_work_period_by_number() -> None:
    """The docs say what is true now; how it got there is CHANGELOG.md's, by date."""
    wrong = [
        f"{doc.name}:{number}: {line.strip()[:100]}"
        for doc in DOC_PATHS
        for number, line in enumerate(doc_text(doc).splitlines(), start=1)
        if NUMBERED.search(re.sub(r"https?://\S+", "", line))
    ]
    assert not wrong, "\n".join(wrong)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces
    as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = FENCE.sub("", doc_text(doc))
    return {github_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_every_link_to_a_section_finds_its_heading() -> None:
    wrong = []
    for doc in [*DOC_PATHS, ROOT / "CHANGELOG.md"]:
        for target, anchor in re.findall(r"\]\(((?!https?:)[^)#\s]*)#([^)\s]+)\)", doc_text(doc)):
            linked = (doc.parent / target).resolve() if target else doc
            if linked.suffix == ".md" and linked.is_file() and anchor not in anchors(linked):
                wrong.append(f"{doc.name}: {target}#{anchor}: no such section")
    assert not wrong, "\n".join(wrong)
