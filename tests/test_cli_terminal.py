"""Issue 25: the CLI as a new user meets it. kg's usual prefixes without PREFIX lines, errors in
one line, results that stream in every format, and progress on a terminal (never on a pipe).

Terminal behaviour is driven through a real pseudo-terminal (the `pty` module); pipes through
subprocesses and CliRunner. The README store (`readme_store`) is only read.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kg.cli.output import plain_table, table_prefixes
from kg.errors import KgError, QuerySyntaxError
from kg.rdf.engine import serialize_results
from kg.rdf.query_text import with_declarations
from kg.rdf.results import Row, SelectResult, SelectStream
from kg.rdf.store import GraphStore
from kg.rdf.stream import write_results
from kg.rdf.vocab import KG_NS, QUERY_PREFIXES
from kg.search import StoreSearch
from kg.search import sparql as search_sparql
from tests.conftest import run
from tests.engines_support import OxigraphServer
from tests.serve_support import KG_BIN, ServeProcess

COUNT_PAPERS = "SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }"
ROOT = Path(__file__).resolve().parent.parent


def on_terminal(argv: list[str], *, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None,
                limit: float = 300.0) -> tuple[int, str]:
    """Run `argv` with stdin, stdout and stderr on a pseudo-terminal of `cols` x `rows`;
    return its exit code and everything it wrote there."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.environ.update({"TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows),
                           **(env or {})})
        os.environ.pop("NO_COLOR", None)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit  # a hang guard, not a timing
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


# -- 1. the prefixes a user expects -----------------------------------------------------------


def test_kg_prefixes_need_no_declaration_on_the_readme_store(
    cli: CliRunner, readme_store: Path
) -> None:
    result = run(cli, "--store", str(readme_store), "sparql", COUNT_PAPERS, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"]["bindings"][0]["n"]["value"] == "5502"
    # the same with the declaration written out: the defaults change nothing
    declared = f"PREFIX kg: <{KG_NS}> {COUNT_PAPERS}"
    again = run(cli, "--store", str(readme_store), "sparql", declared, "--format", "csv")
    assert again.stdout.splitlines() == ["n", "5502"]


def test_sparql_endpoint_accepts_kg_prefixes(readme_store: Path) -> None:
    server = ServeProcess(["--store", str(readme_store)], [])
    try:
        answer = server.get(
            "/sparql",
            params={"query": COUNT_PAPERS},
            headers={"accept": "application/sparql-results+json"},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["results"]["bindings"][0]["n"]["value"] == "5502"
        # an unknown prefix: one line, naming it and the known ones, no engine dump
        bad = server.get("/sparql", params={"query": "SELECT * { ?s a nope:Thing }"})
        assert bad.status_code == 400
        assert "unknown prefix 'nope:'" in bad.text and "kg:, " in bad.text
        assert "expected one of" not in bad.text
    finally:
        server.stop()


def test_a_querys_own_prefix_wins(seed_store: GraphStore) -> None:
    result = seed_store.query("PREFIX kg: <http://other.example/> SELECT ?x { BIND(kg:a AS ?x) }")
    assert isinstance(result, SelectResult)
    assert result.rows[0][0] is not None and result.rows[0][0].value == "http://other.example/a"
    for prefix, ns in QUERY_PREFIXES.items():
        got = seed_store.query(f"SELECT ?x {{ BIND({prefix}:a AS ?x) }}")
        assert isinstance(got, SelectResult) and got.rows[0][0] is not None
        assert got.rows[0][0].value == ns + "a"


def test_search_block_takes_a_class_iri(seed_store: GraphStore) -> None:
    search = StoreSearch(seed_store, None)

    def block(type_: str) -> str:
        return (
            "SELECT ?p WHERE { SERVICE <https://w3id.org/kg/search> { "
            f'[] kgs:query "attention" ; kgs:type {type_} ; kgs:hit ?p }} }}'
        )

    by_word = seed_store.query(search.expand(block('"paper"')))
    by_class = seed_store.query(search.expand(block("kg:Paper")))
    by_iri = seed_store.query(search.expand(block(f"<{KG_NS}Paper>")))
    assert isinstance(by_word, SelectResult) and by_word.rows
    assert by_word == by_class == by_iri
    with pytest.raises(QuerySyntaxError, match="kgs:type kg:Venue"):
        search.expand(block("kg:Venue"))
    assert QUERY_PREFIXES["kgs"] == search_sparql.NS  # the block's namespace is kgs:


def test_endpoint_queries_carry_the_declarations_they_use(
    tmp_path: Path, seed_paths: list[Path], cli: CliRunner
) -> None:
    """The real Oxigraph server knows none of kg's prefixes: the query must declare them."""
    location = tmp_path / "store"
    built = run(cli, "--store", str(location), "ingest", "-q", *map(str, seed_paths))
    assert built.exit_code == 0, built.output
    server = OxigraphServer(location)
    try:
        bare = httpx.post(server.url, data={"query": COUNT_PAPERS}, timeout=30)
        assert bare.status_code == 400  # the server alone does not know kg:
        result = run(cli, "sparql", "--endpoint", server.url, COUNT_PAPERS, "--format", "csv")
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == ["n", "2"]
    finally:
        server.stop()
    # only what is used and missing is added, in the query's own terms
    text = 'PREFIX kg: <http://x/> SELECT * { ?s kg:p ?o ; rdfs:label "foaf:x" } # schema:y'
    assert with_declarations(text) == f"PREFIX rdfs: <{QUERY_PREFIXES['rdfs']}>\n{text}"


# -- 2. errors in one line -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT * WHERE { ?p a foo:Paper }", "unknown prefix 'foo:' at line 1, column 23; kg knows kg:"),
        ("SELECT * WHERE {\n  ?p a kg:Paper\n  FILTER( }", "at line 3, column"),
        ("SELEC * WHERE { ?s ?p ?o }", "at line 1, column 1: 'SELEC' is no SPARQL keyword; "
         "did you mean SELECT?"),
        ("PREFIX x: <http://x/>\nselec ?p WHERE { ?p ?q ?o }", "at line 2, column 1: 'selec'"),
        ("SELECT ?p WHER { ?p ?q ?o }", "at line 1, column 11: 'WHER' is no SPARQL keyword; "
         "did you mean WHERE?"),
    ],
)
def test_parse_errors_are_one_line_with_where(cli: CliRunner, query: str, expected: str) -> None:
    result = run(cli, "--memory", "sparql", query)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "['" not in result.stderr  # none of the parser's character classes


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="SELECT*WHERE{}?s p:o<>\"'\n\t.;()#kgfo_:-01", max_size=60))
def test_any_query_text_fails_in_one_line(text: str) -> None:
    """Hostile text: the engine's errors always come back as one line, never raw."""
    store = GraphStore.memory()
    try:
        store.query(text)
    except QuerySyntaxError as exc:
        message = str(exc)
        assert message and "\n" not in message and "['" not in message, message
    except KgError:
        pass


def test_no_rust_panic_text_reaches_the_terminal(readme_store: Path) -> None:
    """Over its memory cap the query's process aborts inside Oxigraph; only kg's line shows."""
    done = subprocess.run(
        [KG_BIN, "--store", str(readme_store), "sparql", "--max-memory-mb", "400",
         "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f LIMIT 1"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: the query needed more memory"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "memory allocation" not in done.stderr and "panicked" not in done.stderr


# -- 3. large results stream -----------------------------------------------------------------


class Recorder(io.RawIOBase):
    """An output that notes, at its first write, how many rows the engine had yielded."""

    def __init__(self, yielded: list[int]) -> None:
        self.yielded = yielded
        self.at_first_write: int | None = None
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: object) -> int:
        chunk = bytes(b)  # type: ignore[call-overload]
        if self.at_first_write is None and chunk:
            self.at_first_write = self.yielded[0]
        self.data += chunk
        return len(chunk)


def counted(rows: Iterator[Row], yielded: list[int]) -> Iterator[Row]:
    for row in rows:
        yielded[0] += 1
        yield row


@pytest.mark.parametrize("fmt", ["table", "json", "xml", "csv", "tsv"])
def test_first_rows_are_written_before_the_engine_yields_the_last(
    readme_store: Path, fmt: str
) -> None:
    sparql = "SELECT * WHERE { ?s ?p ?o } LIMIT 3000"  # no ORDER BY, GROUP BY or DISTINCT
    with GraphStore.open(readme_store, read_only=True) as store:
        stream = store.stream(sparql)
        assert isinstance(stream, SelectStream)
        yielded = [0]
        out = Recorder(yielded)
        rows = counted(stream.rows, yielded)
        if fmt == "table":
            text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
            n = plain_table(stream.variables, rows, table_prefixes(), text)
        else:
            n = write_results(stream.variables, rows, fmt, out)
        assert n == yielded[0] == 3000
        assert out.at_first_write is not None and out.at_first_write < n
        whole = store.query(sparql)
    assert isinstance(whole, SelectResult)
    if fmt == "table":
        lines = out.data.decode().splitlines()
        assert len(lines) == 3000 + 3 and lines[-1] == "3,000 rows"
        assert "…" not in out.data.decode()  # nothing cut on a pipe
    else:  # the same bytes the one results writer gives for the whole result
        assert bytes(out.data) == serialize_results(whole, fmt)


def test_a_piped_table_streams_through_the_cli(readme_store: Path) -> None:
    """`kg sparql` on a pipe: the first lines arrive, read one by one, and are whole rows."""
    with subprocess.Popen(
        [KG_BIN, "--store", str(readme_store), "sparql", "SELECT * WHERE { ?s ?p ?o }"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(5)]
        proc.kill()
    assert head[0].split() == ["o", "p", "s"] and set(head[1]) <= {"-", " ", "\n"}
    assert len(head[2].split()) >= 3 and "…" not in "".join(head)


def test_a_terminal_table_says_how_many_rows_it_showed(
    cli: CliRunner, readme_store: Path
) -> None:
    where = "WHERE { ?p a kg:Paper ; dcterms:title ?t }"
    count = run(cli, "--store", str(readme_store), "sparql", f"SELECT (COUNT(*) AS ?n) {where}",
                "-f", "csv")
    total = int(count.stdout.split()[1])
    code, screen = on_terminal(
        [KG_BIN, "--store", str(readme_store), "sparql", f"SELECT ?p ?t {where}"],
        cols=80, rows=24,
    )
    assert code == 0, screen
    assert f"of {total:,} rows shown" in screen
    assert "…" not in screen  # IRIs and titles wrap, never cut
    assert ":paper/" in screen  # IRIs shortened with the prefixes


def test_a_wide_terminal_table_is_one_block_per_row(readme_store: Path) -> None:
    code, screen = on_terminal(
        [KG_BIN, "--store", str(readme_store), "sparql",
         "SELECT * WHERE { ?p a kg:Paper ; dcterms:title ?t ; kg:pwcSlug ?slug ; "
         "kg:abstractPage ?page } LIMIT 3"], cols=60, rows=40,
    )
    assert code == 0, screen
    assert "row 1" in screen and "row 2" in screen and " rows" in screen
    assert "…" not in screen


# -- 4. progress -----------------------------------------------------------------------------


def test_ingest_shows_bytes_rate_and_time_left_on_a_terminal(tmp_path: Path) -> None:
    records = str(ROOT / "examples" / "records")
    code, screen = on_terminal([KG_BIN, "--memory", "ingest", records], cols=120)
    assert code == 0, screen
    size = sum(p.stat().st_size for p in (ROOT / "examples" / "records").glob("*.json"))
    assert f"/{size / 1000:.1f} kB" in screen  # read / total, in bytes of the input files
    assert "left" in screen and "records" in screen
    # on a pipe, and with --json: nothing of it
    piped = subprocess.run([KG_BIN, "--memory", "ingest", records], capture_output=True,
                           text=True, timeout=300)
    assert piped.returncode == 0 and "left" not in piped.stderr + piped.stdout
    code, screen = on_terminal([KG_BIN, "--memory", "ingest", "--json", records], cols=120)
    assert "left" not in screen and '"read"' in screen


def test_long_commands_show_what_they_do_on_a_terminal_only(
    readme_store: Path, tmp_path: Path
) -> None:
    argv = [KG_BIN, "--store", str(readme_store), "void", "--dump", "https://x.example/kg.nt",
            "--out", str(tmp_path / "void.ttl")]
    env = {"KG_PROGRESS_AFTER": "0"}  # what 2 s of work would show, at once
    code, screen = on_terminal(argv, env=env)
    assert code == 0, screen
    assert "counting classes" in screen
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                           env={**os.environ, **env})
    assert piped.returncode == 0 and "counting classes" not in piped.stderr
