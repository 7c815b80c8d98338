"""The wheel a user installs works anywhere: built from this checkout, installed into a fresh
virtual environment outside it, and run from another working directory.

Every data file kg needs (the ontology, the named queries, the query page) must come from the
installed package, not from the checkout: the test runs with the checkout out of reach (no
`sys.path` entry, another working directory).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.serve_support import ServeProcess

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_RECORDS = ROOT / "examples" / "records"


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The `kg` script of the wheel, installed into a new venv, and a clean environment."""
    work = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KG_"))}
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(ROOT)],
        work,
        env,
    )
    wheels = sorted((work / "dist").glob("kg-*.whl"))
    assert len(wheels) == 1, wheels
    venv.create(work / "venv", with_pip=True)
    pip = work / "venv" / "bin" / "pip"
    # --no-compile: byte-compiling every dependency (numpy, scipy, ...) was most of the
    # install's CPU; the modules kg imports are compiled when first imported
    _run([str(pip), "install", "-q", "--no-compile", str(wheels[0])], work, env)
    return work / "venv" / "bin" / "kg", env


def test_the_installed_wheel_runs_every_command(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    kg, env = installed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The package imported is the installed one, not this checkout.
    where = _run(
        [str(kg.parent / "python"), "-c", "import kg.resources as r; print(r.queries_dir())"],
        elsewhere,
        env,
    ).stdout.strip()
    assert "site-packages" in where and not where.startswith(str(ROOT))

    assert _run([str(kg), "--version"], elsewhere, env).stdout.startswith("kg ")
    _run([str(kg), "ingest", str(EXAMPLE_RECORDS)], elsewhere, env)
    listing = json.loads(_run([str(kg), "query", "--list", "--format", "json"], elsewhere, env).stdout)
    assert {q["name"] for q in listing} >= {"leaderboard", "paper-card", "papers-by-author"}
    authors = _run(
        [str(kg), "query", "papers-by-author", "-p", "author=Goro Kobayashi", "-f", "csv"],
        elsewhere,
        env,
    ).stdout
    assert "attention-module-is-not-only-a-weight" in authors
    validated = _run([str(kg), "validate"], elsewhere, env)
    assert "conforms" in (validated.stdout + validated.stderr).lower()
    _run([str(kg), "export", "--format", "jsonld"], elsewhere, env)
    exported = json.loads((elsewhere / "exports" / "kg.jsonld").read_text(encoding="utf-8"))
    assert "@context" in exported

    server = ServeProcess(["--store", str(elsewhere / "kg-store")], [], kg=str(kg), cwd=elsewhere)
    try:
        queries = server.get("/queries").json()
        assert len(queries) == len(listing) and queries
        page = server.get("/")
        assert page.status_code == 200 and "leaderboard" in page.text
        assert server.get("/static/yasgui/yasgui.min.js").status_code == 200
        paper = server.get(
            "/paper/attention-module-is-not-only-a-weight",
            headers={"Accept": "application/ld+json"},
        )
        assert paper.status_code == 200, paper.text
        assert paper.headers["content-type"].startswith("application/ld+json")
        assert "Attention is Not Only a Weight" in paper.text
    finally:
        server.stop()


def _python_blocks(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)


def test_the_python_examples_run_from_the_installed_wheel(
    installed: tuple[Path, dict[str, str]], readme_store: Path, tmp_path: Path
) -> None:
    """The README's script and every example of docs/python.md and docs/similarity.md, run
    by the wheel's Python (`import kg` from site-packages) on the README store."""
    kg, env = installed
    python = str(kg.parent / "python")
    work = tmp_path / "scripts"
    work.mkdir()
    (work / "kg-store").symlink_to(readme_store)  # read only: the scripts open it read-only
    shutil.copytree(ROOT / "examples" / "records", work / "examples" / "records")
    # matplotlib draws the README's projection; kg itself does not need it
    _run([str(kg.parent / "pip"), "install", "-q", "matplotlib"], work, env)
    env = {**env, "MPLBACKEND": "Agg"}

    readme = _python_blocks(ROOT / "README.md")
    assert len(readme) == 1 and len(readme[0].splitlines()) <= 16
    (work / "readme.py").write_text(readme[0], encoding="utf-8")
    printed = _run([python, "readme.py"], work, env).stdout.splitlines()
    assert len(printed) == 5 and "Self-Attention Attribution" in printed[0]
    assert (work / "methods.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    for doc in (ROOT / "docs" / "python.md", ROOT / "docs" / "similarity.md"):
        blocks = _python_blocks(doc)
        assert blocks, doc
        for i, block in enumerate(blocks):
            script = work / f"{doc.stem}-{i}.py"
            script.write_text(block, encoding="utf-8")
            done = _run([python, script.name], work, env)
            assert done.stdout.strip(), f"{doc.name} example {i} printed nothing"
