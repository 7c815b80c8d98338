"""Docs that are tested: the README's commands, CI, and the CLI's help."""

from __future__ import annotations

import re

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
