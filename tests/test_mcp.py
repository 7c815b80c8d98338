"""kg's MCP face through the SDK's own client: `kg mcp` over stdio (a real subprocess) and
`/mcp` of a real `kg serve` on loopback, both on the README store (read-only).

Each session lists the tools, resources and prompts and calls every tool once; the answers
are compared with Python over the raw JSON in examples/ and with the CLI's `--json` output.
A hostile session sends updates, LOAD, SERVICE calls to a loopback address that is not
allowed, a query past the size cap, a result past the row cap, a query past the time limit
and arguments of the wrong type: each gets a tool error with kg's message, and the server
keeps answering. A raw session checks that stdout carries JSON-RPC frames only.
"""

from __future__ import annotations

import gzip
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.serve_support import KG_BIN, SLOW_QUERY, ServeProcess

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
KOBAYASHI = "attention-module-is-not-only-a-weight"  # examples/records/000_…: arXiv 2004.10102
HAO = "2004.11207"  # examples/records/003_…, given by its arXiv id
TOOLS = {
    "search", "sparql", "run_named_query", "paper", "leaderboard", "similar_papers", "shared",
    "suggest",
}
RESOURCES = {
    "kg://guide/sparql",
    "kg://ontology/kg.ttl",
    "kg://ontology/shapes.ttl",
    "kg://queries",
    "kg://void",
}
PROMPTS = {"survey_task", "compare_papers", "ask_with_sparql"}
TITLE_QUERY = "SELECT ?title WHERE { ?p kg:arxivId '2004.10102' ; dcterms:title ?title }"

#: Every tool, called once on the README store: (name, arguments).
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "search": ("search", {"query": "attention is not only a weight", "type": "paper"}),
    "sparql": ("sparql", {"query": TITLE_QUERY}),
    "ask": ("sparql", {"query": "ASK { ?p kg:arxivId '2004.11207' }"}),
    "construct": (
        "sparql",
        {"query": f"CONSTRUCT {{ ?p dcterms:creator ?a }} WHERE {{ "
         f"<https://w3id.org/kg/id/paper/{KOBAYASHI}> dcterms:creator ?a . "
         f"BIND(<https://w3id.org/kg/id/paper/{KOBAYASHI}> AS ?p) }}"},
    ),
    "named": ("run_named_query", {"name": "papers-by-author",
                                  "params": {"author": "goro kobayashi"}}),
    "paper": ("paper", {"paper": "2004.10102"}),
    "leaderboard": (
        "leaderboard",
        {"task": "Image Classification", "dataset": "imagenet", "metric": "Top 1 Accuracy"},
    ),
    "similar": ("similar_papers", {"paper": KOBAYASHI, "top": 5}),
    "shared": ("shared", {"a": "2004.10102", "b": HAO}),
    "suggest": ("suggest", {"paper": "2004.10102", "kind": "method", "top": 5}),
}


def _record(arxiv: str) -> dict[str, Any]:
    for path in sorted((EXAMPLES / "records").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("arxiv_id") == arxiv:
            return record
    raise AssertionError(f"no example record with arXiv id {arxiv}")


def _run(session: Callable[[Any], Awaitable[dict[str, Any]]], server: Any) -> dict[str, Any]:
    from mcp import Client

    async def main() -> dict[str, Any]:
        async with Client(server, read_timeout_seconds=600) as client:
            return await session(client)

    return anyio.run(main)


async def _everything(client: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tools": {t.name: t for t in (await client.list_tools()).tools},
        "resources": {str(r.uri): r for r in (await client.list_resources()).resources},
        "prompts": {p.name: p for p in (await client.list_prompts()).prompts},
    }
    for key, (tool, arguments) in CALLS.items():
        out[key] = await client.call_tool(tool, arguments)
    for uri in RESOURCES:
        read = await client.read_resource(uri)
        out[uri] = read.contents[0].text
    out["prompt"] = await client.get_prompt("compare_papers", {"a": "2004.10102", "b": HAO})
    return out


def _stdio(store: Path, *extra: str) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=KG_BIN,
        args=["--store", str(store), "mcp", "--workers", "1", *extra],
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.fixture(scope="module", params=["stdio", "http"])
def answers(request: pytest.FixtureRequest, readme_store: Path) -> Iterator[dict[str, Any]]:
    """One real session over each transport, every tool called once."""
    if request.param == "stdio":
        yield _run(_everything, _stdio(readme_store))
        return
    server = ServeProcess(["--store", str(readme_store)], ["--workers", "1"])
    try:
        yield _run(_everything, f"{server.url}/mcp")
    finally:
        server.stop()


@pytest.fixture(scope="module")
def cli(readme_store: Path) -> Callable[..., Any]:
    """`kg --store README-STORE ARGS` with its JSON output read (cached per argv)."""
    cache: dict[tuple[str, ...], Any] = {}

    def run(*argv: str) -> Any:
        if argv not in cache:
            done = subprocess.run(
                [KG_BIN, "--store", str(readme_store), *argv],
                capture_output=True, text=True, timeout=600, check=False,
            )
            assert done.returncode == 0, done.stderr
            cache[argv] = json.loads(done.stdout)
        return cache[argv]

    return run


def _ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    data: dict[str, Any] = result.structured_content
    return data


# --- what a session finds -------------------------------------------------------------------


def test_lists_the_tools_resources_and_prompts(answers: dict[str, Any]) -> None:
    assert set(answers["tools"]) == TOOLS
    assert set(answers["resources"]) == RESOURCES
    assert set(answers["prompts"]) == PROMPTS
    for tool in answers["tools"].values():
        assert tool.description and tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema is not None, tool.name
        assert tool.annotations.read_only_hint is True, tool.name
        for name, spec in tool.input_schema["properties"].items():
            assert spec.get("description"), f"{tool.name}.{name} is undocumented"
    sparql = answers["tools"]["sparql"].input_schema
    assert sparql["required"] == ["query"]
    assert sparql["properties"]["max_rows"]["type"] == "integer"
    assert sparql["properties"]["max_rows"]["maximum"] == 1000


def test_search_equals_the_cli(answers: dict[str, Any], cli: Callable[..., Any]) -> None:
    page = _ok(answers["search"])
    expected = cli("search", "attention is not only a weight", "--type", "paper", "--top", "25",
                   "--json")
    assert page["hits"] == expected["hits"] and page["total"] == expected["total"]
    record = _record("2004.10102")
    assert page["hits"][0]["label"] == record["title"]
    assert page["offset"] == 0 and page["next_offset"] is None
    assert page["hits"][0]["iri"].endswith(f"/paper/{KOBAYASHI}")


def test_sparql_answers_as_the_raw_json_and_the_cli(
    answers: dict[str, Any], cli: Callable[..., Any]
) -> None:
    data = _ok(answers["sparql"])
    assert data["form"] == "SELECT" and data["truncated"] is False
    assert [b["title"]["value"] for b in data["results"]["bindings"]] == [
        _record("2004.10102")["title"]
    ]
    expected = cli("sparql", TITLE_QUERY, "--format", "json")
    assert data["head"] == expected["head"]
    assert data["results"]["bindings"] == expected["results"]["bindings"]
    assert _ok(answers["ask"]) == {"form": "ASK", "boolean": True, "truncated": False}


def test_construct_gives_the_authors_as_ntriples(answers: dict[str, Any]) -> None:
    data = _ok(answers["construct"])
    assert data["form"] == "CONSTRUCT" and data["truncated"] is False
    assert data["triples"] == len(_record("2004.10102")["authors"]) == 4
    assert data["ntriples"].count("<http://purl.org/dc/terms/creator>") == 4


def test_named_query_resolves_the_author_by_name(
    answers: dict[str, Any], cli: Callable[..., Any]
) -> None:
    data = _ok(answers["named"])
    assert data["query"] == "papers-by-author"
    titles = [b["title"]["value"] for b in data["results"]["bindings"]]
    raw = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((EXAMPLES / "records").glob("*.json"))
    ]
    assert titles == [r["title"] for r in raw if "Goro Kobayashi" in r["authors"]]
    expected = cli("query", "papers-by-author", "--param", "author=goro kobayashi",
                   "--format", "json")
    assert data["results"]["bindings"] == expected["results"]["bindings"]


def test_paper_card_matches_the_record(answers: dict[str, Any]) -> None:
    card = _ok(answers["paper"])
    record = _record("2004.10102")
    assert card["key"] == KOBAYASHI and card["title"] == record["title"]
    assert card["facts"]["arXiv"] == ["2004.10102"]
    assert record["date"] in card["facts"]["published"]
    assert card["abstract"] == record["abstract"]
    assert [a["label"] for a in card["authors"]] == record["authors"]
    assert {t["label"] for t in card["tasks"]} == {t["task_name"] for t in record["tasks"]}
    used = {m["method_name"] for m in record["methods"]}
    assert {m["label"] for m in card["methods_used"]} == used
    linked = [r for r in card["code"]["repositories"] if r["url"]]  # samples may name none
    assert {r["url"] for r in linked} == {link["repo_url"] for link in record["code_links"]}
    official = {link["repo_url"] for link in record["code_links"] if link["is_official"]}
    assert {r["url"] for r in linked if r["official"]} == official
    frameworks = {link["framework"] for link in record["code_links"]}
    assert {r["framework"] for r in linked} == frameworks
    assert card["similar"]["papers"], "the card carries the paper's similar papers"
    assert all("iri" in s and "label" in s for s in card["sources"])


def test_paper_card_ranks_results(readme_store: Path, answers: dict[str, Any]) -> None:
    """A paper on the 2020 evaluation tables: its results carry their rank on each board,
    equal to the leaderboard tool's rank for the same result."""
    board = _ok(answers["leaderboard"])
    best = board["sections"][0]["entries"][0]
    paper = best["paper"]

    async def session(client: Any) -> dict[str, Any]:
        card = await client.call_tool("paper", {"paper": paper})
        return {"card": card}

    card = _ok(_run(session, _stdio(readme_store))["card"])
    ranked = [
        r for r in card["results"]
        if r["metric"] == "Top 1 Accuracy" and (r["dataset"] or {}).get("label") == "ImageNet"
        and r["model"] == best["model"]
    ]
    assert ranked and ranked[0]["rank"] == best["rank"] == 1
    assert ranked[0]["entries"] == board["sections"][0]["total"]


def test_leaderboard_equals_the_raw_json_and_the_cli(
    answers: dict[str, Any], cli: Callable[..., Any]
) -> None:
    board = _ok(answers["leaderboard"])
    full = cli(
        "leaderboard", "Image Classification", "imagenet", "--metric", "Top 1 Accuracy",
        "--format", "json",
    )
    page = board["sections"][0]["entries"]
    assert page and board["sections"][0]["total"] == len(full["sections"][0]["entries"])
    keys = ("rank", "model", "value", "paper", "title", "date", "result")
    assert [[e.get(k) for k in keys] for e in page] == [
        [e[k] for k in keys] for e in full["sections"][0]["entries"][: len(page)]
    ]
    with gzip.open(EXAMPLES / "pwc" / "evaluation-tables.json.gz", "rt") as f:
        tables = json.load(f)

    def rows(tasks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for task in tasks:
            if task["task"] == "Image Classification":
                for d in task["datasets"]:
                    if d["dataset"] == "ImageNet":
                        yield from d["sota"]["rows"]
            yield from rows(task.get("subtasks") or [])

    values = [
        float(r["metrics"]["Top 1 Accuracy"].rstrip("%"))
        for r in rows(tables)
        if (r["metrics"].get("Top 1 Accuracy") or "").rstrip("%").replace(".", "", 1).isdigit()
    ]
    section = board["sections"][0]
    assert float(section["entries"][0]["value"].rstrip("%")) == max(values)
    assert [e["rank"] for e in section["entries"][:3]] == [1, 2, 3]
    # code in the order of the raw row: NoisyStudent's tensorflow/tpu, then its own repository
    noisy = next(r for r in rows(tables) if r["model_name"] == "NoisyStudent (EfficientNet-L2)")
    (entry,) = (e for e in section["entries"] if e["model"] == "NoisyStudent (EfficientNet-L2)")
    raw_order = ["/".join(c["url"].split("/")[3:5]).lower() for c in noisy["code_links"]]
    got = [c["repository"].split("/github.com/", 1)[1] for c in board["code"][entry["paper"]]]
    assert got == list(dict.fromkeys(raw_order))


def test_suggest_equals_the_cli_and_never_repeats_a_link(
    answers: dict[str, Any], cli: Callable[..., Any]
) -> None:
    found = _ok(answers["suggest"])
    expected = cli("suggest", "2004.10102", "--kind", "method", "--top", "5", "--json")
    assert [(s["item"], s["score"]) for s in found["suggestions"]] == [
        (s["item"], s["score"]) for s in expected["suggestions"]
    ]
    assert len(found["suggestions"]) == 5
    has = {m["method_name"] for m in _record("2004.10102")["methods"]}
    assert not has & {s["label"] for s in found["suggestions"]}
    assert all(any(s["because"][k] for k in ("similar_papers", "cooccurring", "text"))
               for s in found["suggestions"])


def test_similar_and_shared_equal_the_cli(
    answers: dict[str, Any], cli: Callable[..., Any]
) -> None:
    similar = _ok(answers["similar"])
    expected = cli("similar", KOBAYASHI, "--top", "5", "--json")
    assert [(r["paper"], r["score"]) for r in similar["results"]] == [
        (r["paper"], r["score"]) for r in expected["results"]
    ]
    shared = _ok(answers["shared"])
    paging = ("total", "offset", "next_offset")
    assert [{k: v for k, v in r.items() if k not in paging} for r in shared["relations"]] == (
        cli("shared", "2004.10102", HAO, "--json")["relations"]
    )
    methods = {
        r["relation"]: {i["label"] for i in r["items"]} for r in shared["relations"]
    }["methods"]
    a, b = _record("2004.10102"), _record(HAO)
    both = {m["method_name"] for m in a["methods"]} & {m["method_name"] for m in b["methods"]}
    assert methods == both and len(both) == 19


def test_resources_are_kgs_files_and_the_void(answers: dict[str, Any], cli: Callable[..., Any]) -> None:
    from kg.resources import ontology_dir

    assert answers["kg://ontology/kg.ttl"] == (ontology_dir() / "kg.ttl").read_text("utf-8")
    catalogue = json.loads(answers["kg://queries"])
    assert {q["name"] for q in catalogue} == {p.stem for p in (ROOT / "queries").glob("*.rq")}
    assert all(q["sparql"].strip() and "summary" in q for q in catalogue)
    assert "GRAPH ?g" in answers["kg://guide/sparql"]
    stats = cli("stats", "--json")
    assert f"void:triples {stats['triples']}" in answers["kg://void"]
    text = answers["prompt"].messages[0].content.text
    assert "2004.10102" in text and HAO in text and "`shared`" in text


# --- hostile arguments ----------------------------------------------------------------------

HOSTILE: dict[str, tuple[str, dict[str, Any], str]] = {
    # key: (tool, arguments, what the error says)
    "insert": ("sparql", {"query": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"}, "read-only"),
    "delete": ("sparql", {"query": "DELETE WHERE { ?s ?p ?o }"}, "read-only"),
    "load": ("sparql", {"query": "LOAD <http://127.0.0.1:9/data.ttl>"}, "read-only"),
    "service": (
        "sparql",
        {"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"},
        "SERVICE call to 127.0.0.1 is refused",
    ),
    "huge": (
        "sparql",
        {"query": "SELECT * WHERE { ?s ?p ?o } # " + "x" * 1_100_000},
        "this server takes at most",
    ),
    "overrun": ("sparql", {"query": SLOW_QUERY}, "time limit"),
    "syntax": ("sparql", {"query": "SELECT ?x WHERE { ?x"}, "does not parse at line 1"),
    "top-type": ("search", {"query": "attention", "top": "many"}, "top"),
    "top-range": ("search", {"query": "attention", "top": 100_000}, "top"),
    "params-type": ("run_named_query", {"name": "papers-by-author", "params": ["x"]}, "params"),
    "query-type": ("sparql", {"query": 42}, "query"),
    "missing": ("paper", {}, "paper"),
    "no-query": ("run_named_query", {"name": "no-such-query"}, "no-such-query"),
    "huge-param": (
        "run_named_query",
        {"name": "papers-by-author", "params": {"author": "x" * 1_100_000}},
        "this server takes at most",
    ),
    "bad-param": (
        "run_named_query",
        {"name": "papers-by-author", "params": {"author": "Goro Kobayashi", "evil": "x"}},
        "evil",
    ),
    "no-paper": ("paper", {"paper": "no paper has this title at all"}, "paper"),
    "no-board": ("leaderboard", {"task": "image classification", "dataset": "nowhere"},
                 "dataset"),
    "bad-by": ("similar_papers", {"paper": KOBAYASHI, "by": "colours"}, "colours"),
}


@pytest.fixture(scope="module")
def hostile(readme_store: Path) -> dict[str, Any]:
    async def session(client: Any) -> dict[str, Any]:
        out = {key: await client.call_tool(tool, args) for key, (tool, args, _) in HOSTILE.items()}
        out["big"] = await client.call_tool(
            "sparql", {"query": "SELECT * WHERE { ?s ?p ?o }", "max_rows": 1000}
        )
        out["after"] = await client.call_tool("sparql", {"query": TITLE_QUERY})
        return out

    return _run(session, _stdio(readme_store, "--timeout", "3"))


@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_hostile_arguments_get_a_tool_error(hostile: dict[str, Any], key: str) -> None:
    result = hostile[key]
    assert result.is_error, f"{key} was answered: {result.structured_content}"
    text = result.content[0].text
    assert HOSTILE[key][2] in text, text
    assert "Traceback" not in text and "\n  File " not in text


def test_a_query_past_the_time_limit_is_stopped(hostile: dict[str, Any]) -> None:
    text = hostile["overrun"].content[0].text
    assert "3 s" in text and "kg mcp --timeout" in text, text


def test_a_large_result_is_cut_with_a_note(hostile: dict[str, Any]) -> None:
    data = _ok(hostile["big"])
    assert data["truncated"] is True and 0 < data["rows"] < 1000
    assert len(data["results"]["bindings"]) == data["rows"]
    assert f"cut after {data['rows']:,} rows" in data["note"] and "LIMIT" in data["note"]
    assert "bytes a call" in data["note"]


def test_the_server_answers_after_the_hostile_calls(hostile: dict[str, Any]) -> None:
    assert _ok(hostile["after"])["rows"] == 1


# --- the protocol stream ----------------------------------------------------------------------


def test_stdout_carries_only_protocol_frames(readme_store: Path) -> None:
    """Raw JSON-RPC over `kg mcp`: every line on stdout is a frame, hostile calls included
    (a native panic or a worker's print would land on stderr)."""
    proc = subprocess.Popen(
        [KG_BIN, "--store", str(readme_store), "mcp", "--workers", "1", "--timeout", "3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "sparql", "arguments": {"query": SLOW_QUERY}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "sparql", "arguments": {"query": "CLEAR ALL"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "no_such_tool", "arguments": {}}},
    ]
    #: Sent once the others are answered (the slow query held the one worker until then).
    last = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "sparql", "arguments": {"query": TITLE_QUERY}}}
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdin is not None and proc.stdout is not None
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True)
    reader.start()
    out: list[str] = []
    try:
        proc.stdin.write("".join(json.dumps(f) + "\n" for f in frames))
        proc.stdin.write("this line is not JSON\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 300

        def answered(wanted: set[int]) -> None:
            while wanted - {json.loads(x).get("id") for x in out if x.strip()}:
                out.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))

        answered({1, 2, 3, 4})
        # The overrun worker's replacement may still be starting (on a loaded machine, past
        # the 3 s limit): a "busy" answer is asked again, under a new id, a few times.
        for attempt in range(5):
            then = {**last, "id": 5 + attempt}
            proc.stdin.write(json.dumps(then) + "\n")
            proc.stdin.flush()
            answered({5 + attempt})
            reply = next(r for r in map(json.loads, filter(str.strip, out))
                         if r.get("id") == 5 + attempt)  # fmt: skip
            if not reply["result"].get("isError"):
                break
            assert "busy" in json.dumps(reply), reply
        proc.stdin.close()  # the client hangs up: the server ends cleanly
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    while not lines.empty():
        out.append(lines.get())
    replies = [json.loads(line) for line in out if line.strip()]
    assert all(r.get("jsonrpc") == "2.0" for r in replies), out
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    parse_errors = [r for r in replies if "id" in r and r["id"] is None]
    assert [r["error"]["code"] for r in parse_errors] == [-32700], replies  # the non-JSON line
    assert by_id[2]["result"]["isError"] is True
    assert by_id[3]["result"]["isError"] is True
    assert by_id[max(by_id)]["result"]["structuredContent"]["rows"] == 1, by_id[max(by_id)]
    stderr = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr


def test_import_kg_does_not_load_the_sdk() -> None:
    probe = "import sys, kg; kg.open; import kg.mcp; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
