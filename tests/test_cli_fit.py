"""Terminal output that fits: `kg leaderboard`, `kg query`, `kg search` and `kg similar` on a
terminal (forced with TTY_COMPATIBLE) of 80 and 120 columns never print a line wider than
the screen nor break a word (a word too long for its column ends in "…"); piped, the
leaderboard is TSV; every command's help is whole sentences, as wide as the screen."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
from pathlib import Path

import pytest
import typer.main

from kg.cli import app
from kg.cli.output import fitted_widths
from tests.serve_support import KG_BIN

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colours and cursor moves
BOARD = ["leaderboard", "image-classification", "imagenet", "--metric", "Top 1 Accuracy"]


def _kg(store: Path, *argv: str, columns: int | None = None) -> str:
    env = {**os.environ, "NO_COLOR": "1", "LINES": "40"}
    if columns is not None:
        env |= {"COLUMNS": str(columns), "TTY_COMPATIBLE": "1"}  # rich: a terminal
    done = subprocess.run([KG_BIN, "--store", str(store), *argv], capture_output=True,
                          text=True, timeout=300, check=False, env=env)
    assert done.returncode == 0, done.stderr
    return ANSI.sub("", done.stdout)


@pytest.fixture(scope="module")
def board_rows(readme_store: Path) -> list[dict[str, str]]:
    """The leaderboard through a pipe: TSV, every column whole."""
    text = _kg(readme_store, *BOARD)
    assert "┃" not in text and "│" not in text  # no boxed table
    return list(csv.DictReader(io.StringIO(text), delimiter="\t"))


def _words_whole(text: str, names: list[str]) -> None:
    """Each word of `names` is in `text` whole, or cut short with "…": never split."""
    tokens = set(text.split())
    for name in names:
        for word in name.split():
            cut = [t for t in tokens if t.endswith("…") and word.startswith(t[:-1])]
            assert word in tokens or cut, f"{word!r} of {name!r} is broken in:\n{text}"


@pytest.mark.parametrize("columns", [80, 120])
def test_kg_leaderboard_fits_and_breaks_no_name(
    readme_store: Path, board_rows: list[dict[str, str]], columns: int
) -> None:
    text = _kg(readme_store, *BOARD, "--no-chart", columns=columns)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= columns
    header = next(line for line in lines if line.split()[:2] == ["rank", "model"])
    assert "value" in header and "paper" in header
    shown = [r for r in board_rows if r["rank"] and int(r["rank"]) <= 20]
    _words_whole(text, [r["model"] for r in shown] + [r["value"] for r in shown])
    if columns == 120:  # the width goes to the model first, then value and paper
        assert any("NoisyStudent (EfficientNet-L2)" in line for line in lines)
        assert "code" in header  # wide enough for the code



def test_a_piped_leaderboard_is_tsv_with_every_result(board_rows: list[dict[str, str]]) -> None:
    assert board_rows[0]["rank"] == "1" and board_rows[0]["model"] == "FixEfficientNet-L2"
    assert len(board_rows) > 150 and all(r["metric"] == "Top 1 Accuracy" for r in board_rows)


@pytest.mark.parametrize("columns", [80, 120])
def test_query_search_and_similar_fit(readme_store: Path, columns: int) -> None:
    query = _kg(readme_store, "query", "leaderboard", "-p", "task=image-classification",
                "-p", "dataset=imagenet", "-p", "metric=Top 1 Accuracy", columns=columns)
    search = _kg(readme_store, "search", "attention", "--limit", "5", columns=columns)
    similar = _kg(readme_store, "similar", "2004.10102", "--top", "5", columns=columns)
    for text in (query, search, similar):
        assert max(len(line.rstrip()) for line in text.splitlines()) <= columns, text
    _words_whole(query, ["FixEfficientNet-L2", "NoisyStudent (EfficientNet-L2)",
                         "Self-training with Noisy Student improves ImageNet classification"])
    _words_whole(similar, ["Self-Attention Attribution: Interpreting Information "
                           "Interactions Inside Transformer"])


def test_fitted_widths_drop_empty_columns_and_keep_words() -> None:
    headers = ["rank", "model", "value", "flags", "paper"]
    rows = [["1", "NoisyStudent (EfficientNet-L2)", "88.4%", "", "Self-training " * 6]]
    shown = dict(fitted_widths(headers, rows, 80, priority=[1, 2, 4], wrap=frozenset({1})))
    assert 3 not in shown  # the empty flags column
    assert shown[1] == len("NoisyStudent (EfficientNet-L2)") and shown[2] == 5
    assert sum(w + 3 for w in shown.values()) - 1 <= 80
    narrow = dict(fitted_widths(headers, rows, 50, priority=[1, 2, 4], wrap=frozenset({1})))
    assert narrow[1] >= len("(EfficientNet-L2)")  # its longest word, never split


def test_every_commands_help_is_whole_paragraphs() -> None:
    """A paragraph of help is one line of text: the terminal wraps it, never the docstring."""
    click_app = typer.main.get_command(app)
    for name, cmd in click_app.commands.items():  # type: ignore[attr-defined]
        for paragraph in (cmd.help or "").split("\n\n"):
            if not paragraph.startswith(" "):  # examples keep their lines
                assert "\n" not in paragraph, f"kg {name}: {paragraph!r}"


@pytest.mark.parametrize("columns", [80, 120])
def test_kg_help_summaries_read_as_sentences(columns: int) -> None:
    done = subprocess.run([KG_BIN, "--help"], capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"})
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", done.stdout).split())
    assert "properties, vocabularies, example resources" in text
    assert max(len(line) for line in done.stdout.splitlines()) <= columns
