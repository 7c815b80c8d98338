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


#: What matplotlib brings and kg's own dependencies do not (import names). matplotlib is
#: installed beside kg (for the README's drawing) in the same pip call, so that pip resolves
#: once; a guard kept in the venv refuses these imports when NO_PLOTTING is set, so that kg's
#: commands still show they need none of them.
PLOTTING_ONLY = ("matplotlib", "mpl_toolkits", "dateutil", "contourpy", "cycler", "fontTools",
                 "kiwisolver", "PIL")
NO_PLOTTING = "KG_WHEEL_TEST_NO_PLOTTING"
GUARD = f"""import os
import sys


class _Guard:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in {PLOTTING_ONLY!r}:
            raise ImportError("kg must not need " + name)


if os.environ.get({NO_PLOTTING!r}):
    sys.meta_path.insert(0, _Guard)
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The `kg` script of the wheel, installed (with matplotlib) into a new venv, and a
    clean environment."""
    work = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KG_"))}
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(ROOT)],
        work,
        env,
    )
    wheels = sorted((work / "dist").glob("kg-*.whl"))
    assert len(wheels) == 1, wheels
    # No pip inside the venv: bootstrapping it (ensurepip) cost 6 CPU-s; this test's pip
    # installs into the venv (`--python`, pip >= 22.3), and pip still resolves and installs
    # every dependency the wheel declares.
    venv.create(work / "venv", with_pip=False)
    python = work / "venv" / "bin" / "python"
    # --no-compile: byte-compiling every dependency (numpy, scipy, ...) was most of the
    # install's CPU; the modules kg imports are compiled when first imported.
    # matplotlib draws the README's projection (kg itself does not need it, see PLOTTING_ONLY):
    # one pip call, so that the resolver runs and reads the indexes once.
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
         str(wheels[0]), "matplotlib"],
        work,
        env,
    )
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                work, env).stdout.strip()
    (Path(site) / "kg_test_plotting_guard.py").write_text(GUARD, encoding="utf-8")
    (Path(site) / "kg-test-plotting-guard.pth").write_text(
        "import kg_test_plotting_guard\n", encoding="utf-8"
    )
    return work / "venv" / "bin" / "kg", env


def test_the_installed_wheel_runs_every_command(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    kg, env = installed
    env = {**env, NO_PLOTTING: "1"}  # kg's commands run without matplotlib's packages
    refused = subprocess.run([str(kg.parent / "python"), "-c", "import dateutil"], env=env,
                             cwd=tmp_path, capture_output=True, text=True, check=False)
    assert refused.returncode != 0 and "kg must not need dateutil" in refused.stderr
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

    server = ServeProcess(
        ["--store", str(elsewhere / "kg-store")], [], kg=str(kg), cwd=elsewhere,
        env={NO_PLOTTING: "1"},
    )
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
    env = {**env, "MPLBACKEND": "Agg"}  # matplotlib: installed beside kg by the fixture

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
