"""The SPARQL 1.1 Protocol, safety limits, named queries and Linked Data, in process.

The app runs under Starlette's TestClient (no socket), but everything behind it is real:
the worker processes, their stores and the native serialisers. Answers are parsed back with
rdflib's own parsers and compared with what the store itself says.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rdflib
from rdflib.compare import isomorphic
from rdflib.query import Result

from kg.query.named import bind, load_queries, load_query, run_local
from kg.query.remote import parse_sparql_json
from kg.rdf.results import GraphResult, SelectResult
from kg.rdf.store import GraphStore
from tests.query_data import build_dumps, write_mini
from tests.serve_support import (
    BASE,
    HOSTILE_SLUG,
    HOSTILE_TITLE,
    NON_ASCII_AUTHOR,
    SLOW_NOTHING,
    SLOW_QUERY,
    TestClient,
    awkward_record,
    children,
    client_for,
    memory_store,
    process_alive,
    wait_until,
    write_records,
)
from tests.test_queries import CASES, HOSTILE, QUERY_FILES, expected, matches, normalise

KG = "https://w3id.org/kg/ontology#"
PAPERS = f"SELECT ?p ?t WHERE {{ ?p a <{KG}Paper> ; <http://purl.org/dc/terms/title> ?t }}"
PAPERS_ORDERED = PAPERS + " ORDER BY ?p"
CONSTRUCT = f"CONSTRUCT {{ ?p ?x ?y }} WHERE {{ ?p a <{KG}Paper> ; ?x ?y }}"
SEED_A = "attention-module-is-not-only-a-weight"
SEED_S = "self-attention-attribution-interpreting"


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory,
    seed_paths: list[Path],
    seed_records: list[dict[str, Any]],
) -> GraphStore:
    extra = write_records(tmp_path_factory.mktemp("awkward"), [awkward_record(seed_records[0])])
    return memory_store([*seed_paths, extra])


@pytest.fixture(scope="module")
def client(store: GraphStore) -> Iterator[TestClient]:
    with client_for(store) as c:
        yield c


def rows(response: Any) -> list[tuple[str, ...]]:
    """SPARQL JSON rows as tuples of values, sorted."""
    result = parse_sparql_json(response.content)
    assert isinstance(result, SelectResult)
    return sorted(tuple(t.value if t else "" for t in row) for row in result.rows)


def local_rows(store: GraphStore, query: str) -> list[tuple[str, ...]]:
    result = store.query(query)
    assert isinstance(result, SelectResult)
    return sorted(tuple(t.value if t else "" for t in row) for row in result.rows)


def parsed(body: bytes, fmt: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=body, format=fmt)


# --- queries in, results out ------------------------------------------------------------------


def test_get_form_post_and_direct_post_give_the_same_rows(
    client: TestClient, store: GraphStore
) -> None:
    want = local_rows(store, PAPERS)
    assert len(want) == 3
    got = client.get("/sparql", params={"query": PAPERS})
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/sparql-results+json"
    assert rows(got) == want
    form = client.post("/sparql", data={"query": PAPERS})
    assert form.status_code == 200 and rows(form) == want
    direct = client.post(
        "/sparql", content=PAPERS.encode(), headers={"Content-Type": "application/sparql-query"}
    )
    assert direct.status_code == 200 and rows(direct) == want


@pytest.mark.parametrize(
    ("accept", "content_type", "rdflib_format"),
    [
        ("application/sparql-results+json", "application/sparql-results+json", "json"),
        ("application/sparql-results+xml", "application/sparql-results+xml", "xml"),
        ("text/csv", "text/csv; charset=utf-8", "csv"),
        ("text/tab-separated-values", "text/tab-separated-values; charset=utf-8", "tsv"),
        ("application/json", "application/sparql-results+json", "json"),
        ("*/*", "application/sparql-results+json", "json"),
    ],
)
def test_select_results_in_every_format(
    client: TestClient, store: GraphStore, accept: str, content_type: str, rdflib_format: str
) -> None:
    response = client.get("/sparql", params={"query": PAPERS}, headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    assert response.headers["vary"] == "Accept"
    result = Result.parse(io.BytesIO(response.content), format=rdflib_format)
    got = sorted((str(r[0]), str(r[1])) for r in result)  # type: ignore[index]
    assert got == local_rows(store, PAPERS)


def test_ask_in_json_xml_csv(client: TestClient) -> None:
    for query, value in (
        (f"ASK {{ ?s a <{KG}Paper> }}", True),
        ("ASK { ?s <urn:x:no> ?o }", False),
    ):
        got = client.get("/sparql", params={"query": query})
        assert got.json() == {"head": {}, "boolean": value}
        xml = client.get("/sparql", params={"query": query, "format": "xml"})
        assert xml.headers["content-type"] == "application/sparql-results+xml"
        assert Result.parse(io.BytesIO(xml.content), format="xml").askAnswer is value


@pytest.mark.parametrize(
    ("accept", "content_type", "rdflib_format"),
    [
        (None, "text/turtle; charset=utf-8", "turtle"),
        ("text/turtle", "text/turtle; charset=utf-8", "turtle"),
        ("application/n-triples", "application/n-triples", "nt"),
        ("application/ld+json", "application/ld+json", "json-ld"),
        ("application/rdf+xml", "application/rdf+xml", "xml"),
        ("application/x-turtle;q=0.9, text/plain;q=0.5", "text/turtle; charset=utf-8", "turtle"),
    ],
)
def test_construct_in_every_format(
    client: TestClient,
    store: GraphStore,
    accept: str | None,
    content_type: str,
    rdflib_format: str,
) -> None:
    headers = {"Accept": accept} if accept else {}
    response = client.get("/sparql", params={"query": CONSTRUCT}, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    local = store.query(CONSTRUCT)
    assert isinstance(local, GraphResult)
    want = parsed(local.ntriples.encode(), "nt")
    got = parsed(response.content, rdflib_format)
    assert len(want) > 100 and isomorphic(got, want)


def test_format_parameter_overrides_accept(client: TestClient) -> None:
    response = client.get(
        "/sparql", params={"query": PAPERS, "format": "csv"}, headers={"Accept": "text/html"}
    )
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    # Unknown and empty values are passed over (SPARQLWrapper sends `format=&format=…`).
    unknown = client.get("/sparql", params=[("query", PAPERS), ("format", "docx"), ("format", "")])
    assert unknown.headers["content-type"] == "application/sparql-results+json"
    listed = client.get(
        "/sparql",
        params={"query": CONSTRUCT, "format": "application/ld+json,application/x-json+ld"},
    )
    assert listed.headers["content-type"] == "application/ld+json"
    json_graph = client.get("/sparql", params={"query": CONSTRUCT, "format": "json"})
    assert json_graph.headers["content-type"] == "application/ld+json"


def test_unacceptable_accept_is_406_naming_the_offers(client: TestClient) -> None:
    select = client.get("/sparql", params={"query": PAPERS}, headers={"Accept": "image/png"})
    assert select.status_code == 406
    assert "application/sparql-results+json" in select.text
    graph = client.get(
        "/sparql", params={"query": CONSTRUCT}, headers={"Accept": "text/csv"}
    )  # CSV is for tables, not graphs
    assert graph.status_code == 406 and "text/turtle" in graph.text


# --- the dataset ------------------------------------------------------------------------------


def _record_graph(slug: str) -> str:
    return f"{BASE}graph/record/paper/{slug}"


def test_default_and_named_graph_uri(client: TestClient, store: GraphStore) -> None:
    one = _record_graph(SEED_A)
    titles = client.get("/sparql", params={"query": PAPERS, "default-graph-uri": one})
    assert [r[0] for r in rows(titles)] == [f"{BASE}paper/{SEED_A}"]
    two = client.get(
        "/sparql",
        params=[
            ("query", PAPERS),
            ("default-graph-uri", one),
            ("default-graph-uri", _record_graph(SEED_S)),
        ],
    )
    assert len(rows(two)) == 2
    graphs = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    named = client.post("/sparql", data={"query": graphs, "named-graph-uri": one})
    assert rows(named) == [(one,)]
    # The protocol's dataset replaces the union: with only named graphs, the default is empty.
    assert rows(client.post("/sparql", data={"query": PAPERS, "named-graph-uri": one})) == []
    # ... and on a direct POST the dataset comes in the URL.
    direct = client.post(
        "/sparql?" + urllib.parse.urlencode({"default-graph-uri": one}),
        content=PAPERS,
        headers={"Content-Type": "application/sparql-query"},
    )
    assert len(rows(direct)) == 1
    bad = client.get("/sparql", params={"query": PAPERS, "default-graph-uri": "not an iri"})
    assert bad.status_code == 400


def test_from_in_the_query_is_honoured_not_overridden_by_the_union(client: TestClient) -> None:
    """pyoxigraph's union-default-graph option overrides FROM; the server must not use it."""
    query = PAPERS.replace("WHERE", f"FROM <{_record_graph(SEED_S)}> WHERE")
    assert [r[0] for r in rows(client.get("/sparql", params={"query": query}))] == [
        f"{BASE}paper/{SEED_S}"
    ]


# --- errors and refusals ----------------------------------------------------------------------


def test_syntax_error_is_400_with_the_parsers_message(client: TestClient) -> None:
    response = client.get("/sparql", params={"query": "SELECT ?x WHERE { ?x ?y }"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text.startswith("the query does not parse at line 1, column ")
    assert "\n" not in response.text.strip() and "['" not in response.text
    assert client.get("/sparql", params={"query": "  "}).status_code == 400
    twice = client.get("/sparql", params=[("query", PAPERS), ("query", PAPERS)])
    assert twice.status_code == 400 and "once" in twice.text


def test_unsupported_post_content_type_is_415(client: TestClient) -> None:
    response = client.post("/sparql", content=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 415


UPDATES = [
    f"INSERT DATA {{ <{BASE}paper/x> a <{KG}Paper> }}",
    "PREFIX kg: <https://w3id.org/kg/ontology#>\n# a comment\nDELETE WHERE { ?s ?p ?o }",
    "DROP ALL",
    "LOAD <http://example.org/data.ttl>",
]


@pytest.mark.parametrize("update", UPDATES)
def test_updates_are_refused_with_403_and_change_nothing(
    client: TestClient, store: GraphStore, update: str
) -> None:
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    before = rows(client.get("/sparql", params={"query": count}))
    for response in (
        client.get("/sparql", params={"query": update}),
        client.post("/sparql", data={"query": update}),
        client.post("/sparql", data={"update": update}),
        client.get("/sparql", params={"update": update}),
        client.post(
            "/sparql", content=update, headers={"Content-Type": "application/sparql-update"}
        ),
        client.post(
            "/update", content=update, headers={"Content-Type": "application/sparql-update"}
        ),
    ):
        assert response.status_code == 403, response.text
        assert "read-only" in response.text and "--allow-update" in response.text
    assert rows(client.get("/sparql", params={"query": count})) == before


SERVICE_QUERIES = [
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { service silent <http://169.254.169.254/> { ?s ?p ?o } }",
    "PREFIX e: <http://evil.example/> SELECT * WHERE { SERVICE e:sparql { ?s ?p ?o } }",
    "BASE <http://evil.example/> SELECT * WHERE { SERVICE <sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o . SERVICE ?endpoint { ?s ?p ?o } }",
    "SELECT * WHERE { \\u0053ERVICE <http://evil.example/> { ?s ?p ?o } }",
    "SELECT * WHERE { SERVICE <http://evil\\u002Eexample/> { ?s ?p ?o } }",
    "CONSTRUCT { ?s ?p ?o } WHERE { SERVICE<http://evil.example/>{ ?s ?p ?o } }",
]


@pytest.mark.parametrize("query", SERVICE_QUERIES)
def test_service_calls_are_refused(client: TestClient, query: str) -> None:
    response = client.post("/sparql", data={"query": query})
    assert response.status_code == 403
    assert "--allow-service" in response.text


LOOK_ALIKES = [
    'SELECT ?s WHERE { ?s ?p "SERVICE <http://evil.example/> { }" }',
    "SELECT ?s WHERE { ?s ?p ?o } # SERVICE <http://evil.example/> { }",
    "PREFIX SERVICE: <http://x.example/> SELECT ?s WHERE { ?s SERVICE:p ?o }",
    "SELECT ?SERVICE WHERE { ?SERVICE <http://example.org/SERVICE> ?o }",
    "SELECT ?s WHERE { ?s ?p '''\nSERVICE <http://evil.example/> {}\n''' }",
]


@pytest.mark.parametrize("query", LOOK_ALIKES)
def test_service_in_comments_strings_and_names_is_not_a_call(
    client: TestClient, query: str
) -> None:
    response = client.post("/sparql", data={"query": query})
    assert response.status_code == 200, response.text


def test_body_size_limit(store: GraphStore) -> None:
    with client_for(store, workers=1, max_body_bytes=2048) as small:
        padding = "#" + "x" * 3000 + "\n"
        big = small.post("/sparql", data={"query": padding + PAPERS})
        assert big.status_code == 413 and "2,048 bytes" in big.text

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while reading
            yield PAPERS.encode()
            for _ in range(10):
                yield b"\n#" + b"y" * 500

        streamed = small.post(
            "/sparql", content=chunks(), headers={"Content-Type": "application/sparql-query"}
        )
        assert streamed.status_code == 413
        assert small.post("/sparql", data={"query": PAPERS}).status_code == 200


def test_result_size_limit_fails_the_query_instead_of_truncating(store: GraphStore) -> None:
    with client_for(store, workers=1, max_result_bytes=4096) as small:
        everything = small.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"})
        assert everything.status_code == 422
        assert "larger than this server's limit" in everything.text and "LIMIT" in everything.text
        graph = small.get("/sparql", params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"})
        assert graph.status_code == 422
        assert small.get("/sparql", params={"query": PAPERS}).status_code == 200


def test_timeout_stops_the_query_and_answers_503(store: GraphStore) -> None:
    with client_for(store, workers=2, timeout=1.5) as quick:
        stats = quick.app.state.server.pool.stats  # type: ignore[attr-defined]
        before = set(stats.worker_pids)
        response = quick.get("/sparql", params={"query": SLOW_QUERY})
        assert response.status_code == 503
        assert "time limit of 1.5 s" in response.text and "stopped" in response.text
        # The worker that ran it is killed (pyoxigraph cannot stop the aggregate) ...
        wait_until(lambda: len(stats.killed_pids) == 1)
        assert stats.timeouts == 1 and set(stats.killed_pids) <= before
        assert not process_alive(stats.killed_pids[0])
        # ... and replaced: the server gets its two workers back and keeps answering.
        wait_until(lambda: quick.get("/health").json()["workers_running"] == 2)
        assert not set(stats.worker_pids) & set(stats.killed_pids)
        assert quick.get("/sparql", params={"query": PAPERS}).status_code == 200


def test_closing_right_after_an_overrun_leaves_no_worker_running(store: GraphStore) -> None:
    """The overrun worker's kill is queued when the 503 goes out; a pool closed at once
    (the server shutting down) still stops it. Before: the queued kill was cancelled with
    the pool's threads, and the worker ran the cross product for the rest of the run."""
    from kg.errors import QueryTimeoutError
    from kg.serve.pool import QueryJob, QueryPool, Source

    async def overrun_then_close() -> None:
        pool = QueryPool(Source.of(store), workers=1, timeout=0.5, refresh=0.0)
        await pool.start()
        try:
            with pytest.raises(QueryTimeoutError):
                await pool.serialize(QueryJob(SLOW_QUERY))
        finally:
            await pool.close()  # no await in between: the replacement has not run

    before = set(children(os.getpid()))
    asyncio.run(overrun_then_close())
    assert set(children(os.getpid())) == before


def test_a_replacement_spawned_as_the_pool_closes_is_stopped(store: GraphStore) -> None:
    """A replacement worker whose process starts while the pool closes (the server shutting
    down right after an overrun) is stopped by the spawn itself: close() had already taken
    the list of workers to stop. Before, it outlived the server (seen once in the suite)."""
    from kg.errors import StoreError
    from kg.serve.pool import QueryPool, Source

    async def close_then_spawn() -> None:
        pool = QueryPool(Source.of(store), workers=1, timeout=5.0, refresh=0.0)
        await pool.start()
        await pool.close()
        with pytest.raises(StoreError, match="shut down"):
            pool._spawn()  # what _replace's thread runs, here after close() returned

    before = set(children(os.getpid()))
    asyncio.run(close_then_spawn())
    assert set(children(os.getpid())) == before


def test_a_slow_query_does_not_stall_the_others(store: GraphStore) -> None:
    # one client here (TestClient): let it hold both workers (by default it holds half;
    # tests/reliability/test_clients.py shows the shares between two addresses)
    with client_for(store, workers=2, timeout=4.0, client_workers=2) as c:
        slow: dict[str, int] = {}

        def run_slow() -> None:
            slow["status"] = c.get("/sparql", params={"query": SLOW_QUERY}).status_code

        thread = threading.Thread(target=run_slow)
        thread.start()
        answers = [c.get("/sparql", params={"query": PAPERS}).status_code for _ in range(5)]
        still_running = thread.is_alive()
        thread.join()
        assert answers == [200] * 5
        assert still_running, "the fast queries were answered only after the slow one ended"
        assert slow["status"] == 503


def test_cors_is_off_by_default_and_configurable(client: TestClient, store: GraphStore) -> None:
    plain = client.get("/sparql", params={"query": PAPERS}, headers={"Origin": "https://a.example"})
    assert "access-control-allow-origin" not in plain.headers
    with client_for(store, workers=1, cors_origins=("https://a.example",)) as open_client:
        preflight = open_client.options(
            "/sparql",
            headers={
                "Origin": "https://a.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://a.example"
        simple = open_client.get(
            "/sparql", params={"query": PAPERS}, headers={"Origin": "https://a.example"}
        )
        assert simple.headers["access-control-allow-origin"] == "https://a.example"
        other = open_client.get(
            "/sparql", params={"query": PAPERS}, headers={"Origin": "https://b.example"}
        )
        assert "access-control-allow-origin" not in other.headers


# --- the service description ------------------------------------------------------------------

SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")


def test_service_description(client: TestClient) -> None:
    response = client.get("/sparql")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/turtle; charset=utf-8"
    graph = parsed(response.content, "turtle")
    service = rdflib.URIRef("http://kg.test/sparql")
    assert (service, rdflib.RDF.type, SD.Service) in graph
    assert (service, SD.endpoint, service) in graph
    assert (service, SD.supportedLanguage, SD.SPARQL11Query) in graph
    assert (service, SD.supportedLanguage, SD.SPARQL11Update) not in graph
    assert (service, SD.feature, SD.UnionDefaultGraph) in graph
    assert len(list(graph.objects(service, SD.resultFormat))) == 8
    jsonld = client.get("/sparql", headers={"Accept": "application/ld+json"})
    assert isomorphic(parsed(jsonld.content, "json-ld"), graph)
    browser = client.get(
        "/sparql", headers={"Accept": "text/html,*/*;q=0.8"}, follow_redirects=False
    )
    assert browser.status_code == 303 and browser.headers["location"] == "/query"


# --- updates, when allowed --------------------------------------------------------------------


def test_updates_need_the_token_and_become_visible(store: GraphStore) -> None:
    token = "s3cret-token"
    with client_for(store, workers=2, allow_update=True, update_token=token) as c:
        paper = f"{BASE}paper/inserted"
        update = (
            f"INSERT DATA {{ GRAPH <{BASE}graph/record/paper/inserted> {{ <{paper}> a <{KG}Paper> ;"
            f' <http://purl.org/dc/terms/title> "Inserted over HTTP" ;'
            f" <http://www.w3.org/2000/01/rdf-schema#seeAlso> <javascript:alert(1)> }} }}"
        )
        headers = {"Content-Type": "application/sparql-update"}
        missing = c.post("/update", content=update, headers=headers)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = c.post("/update", content=update, headers={**headers, "Authorization": "Bearer x"})
        assert wrong.status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        assert c.post("/update", content=update, headers={**headers, **auth}).status_code == 204
        # Every worker reloads before its next request, so each one sees the insert.
        for _ in range(4):
            titles = {r[1] for r in rows(c.get("/sparql", params={"query": PAPERS}))}
            assert "Inserted over HTTP" in titles
        form = c.post(
            "/update", data={"update": f"DELETE DATA {{ <{paper}> a <urn:x:y> }}"}, headers=auth
        )
        assert form.status_code == 204
        # Still refused at /sparql, and LOAD/SERVICE still need --allow-service.
        assert c.post("/sparql", data={"update": update}).status_code == 403
        load = c.post("/update", data={"update": "LOAD <http://evil.example/x.ttl>"}, headers=auth)
        assert load.status_code == 403
        query = c.post("/update", data={"update": PAPERS}, headers=auth)
        assert query.status_code == 400 and "/sparql" in query.text
        broken = c.post("/update", data={"update": "INSERT DATA { <a:b> }"}, headers=auth)
        assert broken.status_code == 400
        # The page does not turn a javascript: IRI into a link.
        page = c.get("/paper/inserted", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "Inserted over HTTP" in page.text
        assert 'href="javascript:' not in page.text and "javascript:alert(1)" in page.text
        described = c.get("/sparql")
        graph = parsed(described.content, "turtle")
        assert (None, SD.supportedLanguage, SD.SPARQL11Update) in graph


# --- named queries ----------------------------------------------------------------------------


def test_query_list(client: TestClient) -> None:
    listing = client.get("/queries")
    assert listing.status_code == 200
    names = [q["name"] for q in listing.json()]
    assert names == sorted(load_queries()) and len(names) == len(QUERY_FILES)
    author = next(q for q in listing.json() if q["name"] == "papers-by-author")
    assert author["params"][0]["name"] == "author" and author["params"][0]["required"]


@pytest.fixture(scope="module")
def case_clients(
    tmp_path_factory: pytest.TempPathFactory, seed_paths: list[Path]
) -> Iterator[dict[str, TestClient]]:
    """The named queries' fixture graphs (tests/test_queries.py), each behind its own app."""
    mini = write_mini(tmp_path_factory.mktemp("serve-mini"))
    stores = {
        "mini": memory_store([mini]),
        "dumps": build_dumps(GraphStore.memory(), [str(mini)]),
        "seeds": memory_store(list(seed_paths)),
    }
    with (
        client_for(stores["mini"], workers=1) as a,
        client_for(stores["dumps"], workers=1) as b,
        client_for(stores["seeds"], workers=1) as c,
    ):
        yield {"mini": a, "dumps": b, "seeds": c}


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_named_queries_answer_exactly_over_http(
    path: Path, case_clients: dict[str, TestClient]
) -> None:
    """Every query file, run by name over HTTP, gives the rows `kg query` gives."""
    query = load_query(path)
    for case in CASES[query.name]:
        response = case_clients[case.graph].get(f"/queries/{query.name}", params=case.params)
        if response.status_code == 404:  # a name that names nothing in this graph
            assert not case.rows and not case.triples, response.text
            assert response.json()["parameter"] in case.params
            continue
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/turtle"):
            graph = parsed(response.content, "turtle")
            result: Any = GraphResult(graph.serialize(format="nt"))
        else:
            result = parse_sparql_json(response.content)
        assert matches(normalise(result), expected(case)), f"{query.name} {case.params}"


def test_named_query_formats_and_errors(client: TestClient, store: GraphStore) -> None:
    query = load_query(Path("queries/papers-by-author.rq"))
    want = run_local(store, query, bind(query, {"author": "Goro Kobayashi"}, BASE))
    assert isinstance(want, SelectResult) and want.rows
    csv = client.get(
        "/queries/papers-by-author",
        params={"author": "Goro Kobayashi"},
        headers={"Accept": "text/csv"},
    )
    assert csv.status_code == 200 and csv.headers["content-type"] == "text/csv; charset=utf-8"
    assert len(csv.text.strip().splitlines()) == len(want.rows) + 1
    tsv = client.get(
        "/queries/papers-by-author", params={"author": "Goro Kobayashi", "format": "tsv"}
    )
    assert tsv.headers["content-type"].startswith("text/tab-separated-values")
    missing = client.get("/queries/papers-by-author")
    assert missing.status_code == 400 and "needs author=" in missing.text
    assert "--param" not in missing.text  # the server words parameters as query parameters
    unknown_param = client.get("/queries/papers-by-author", params={"author": "x", "colour": "red"})
    assert unknown_param.status_code == 400 and "colour" in unknown_param.text
    assert client.get("/queries/no-such-query").status_code == 404


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_parameter_values_change_nothing(
    client: TestClient, store: GraphStore, value: str
) -> None:
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    before = rows(client.get("/sparql", params={"query": count}))
    response = client.get("/queries/papers-by-title", params={"text": value})
    assert response.status_code == 200, response.text
    assert rows(response) == []
    shared = client.get("/queries/shared-methods", params={"paper": value})
    assert shared.status_code in (200, 400, 404)  # 404: it names no paper
    assert rows(client.get("/sparql", params={"query": count})) == before


# --- Linked Data ------------------------------------------------------------------------------


def _local_description(store: GraphStore, iri: str) -> rdflib.Graph:
    """The entity's own triples and its parts' (what every RDF form must contain)."""
    result = store.query(
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {{ <{iri}> ?p ?o BIND(<{iri}> AS ?s) }} UNION "
        f'{{ <{iri}> ?l ?s FILTER(STRSTARTS(STR(?s), "{iri}/")) ?s ?p ?o }} }}'
    )
    assert isinstance(result, GraphResult)
    return parsed(result.ntriples.encode(), "nt")


@pytest.mark.parametrize(
    "accept", [None, "*/*", "text/turtle", "application/rdf+xml;q=0.5,text/turtle"]
)
def test_paper_page_is_turtle_for_rdf_clients(
    client: TestClient, store: GraphStore, accept: str | None
) -> None:
    headers = {"Accept": accept} if accept is not None else {}
    response = client.get(f"/paper/{SEED_S}", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/turtle; charset=utf-8"
    graph = parsed(response.content, "turtle")
    own = _local_description(store, f"{BASE}paper/{SEED_S}")
    assert len(own) > 50 and all(t in graph for t in own)
    record = rdflib.URIRef(_record_graph(SEED_S))
    assert (
        record,
        rdflib.URIRef(f"{KG}describes"),
        rdflib.URIRef(f"{BASE}paper/{SEED_S}"),
    ) in graph


def test_paper_page_as_json_ld_rdf_xml_and_n_triples(client: TestClient) -> None:
    turtle = parsed(client.get(f"/paper/{SEED_S}").content, "turtle")
    jsonld = client.get(f"/paper/{SEED_S}", headers={"Accept": "application/ld+json"})
    assert jsonld.headers["content-type"] == "application/ld+json"
    body = jsonld.json()
    assert "@context" in body  # compacted against ontology/context.jsonld
    assert isomorphic(parsed(jsonld.content, "json-ld"), turtle)
    for accept, fmt in (("application/rdf+xml", "xml"), ("application/n-triples", "nt")):
        other = client.get(f"/paper/{SEED_S}", headers={"Accept": accept})
        assert other.headers["content-type"] == accept
        assert isomorphic(parsed(other.content, fmt), turtle)
    by_name = client.get(f"/paper/{SEED_S}", params={"format": "jsonld"})
    assert by_name.headers["content-type"] == "application/ld+json"


def test_paper_page_in_html_links_its_neighbours(client: TestClient) -> None:
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    page = client.get(f"/paper/{SEED_S}", headers={"Accept": browser})
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in page.headers["content-security-policy"]
    html = page.text
    assert "Self-Attention Attribution" in html
    assert 'href="/author/yaru-hao"' in html  # a neighbour, resolvable here
    assert 'href="/method/' in html and 'href="/task/' in html
    assert f'href="/graph/record/paper/{SEED_S}"' in html  # its record, which points at it
    assert 'href="https://github.com/' in html  # outside links go out
    assert '<a href="?format=turtle">Turtle</a>' in html


def test_html_escapes_everything(client: TestClient) -> None:
    page = client.get(f"/paper/{HOSTILE_SLUG}", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert HOSTILE_TITLE not in page.text
    assert "<script>" not in page.text and "<b>bold</b>" not in page.text
    assert "&lt;script&gt;alert(&#39;kg&#39;)&lt;/script&gt; &amp; &#34;Zoë&#34;" in page.text
    assert "Ann &lt;i&gt;Italic&lt;/i&gt;" in page.text


def test_non_ascii_iris_resolve_from_percent_encoded_paths(client: TestClient) -> None:
    path = "/author/" + urllib.parse.quote("zoë-ábel")
    response = client.get(path)
    assert response.status_code == 200
    graph = parsed(response.content, "turtle")
    author = rdflib.URIRef(f"{BASE}author/zoë-ábel")
    assert (
        author,
        rdflib.URIRef("http://xmlns.com/foaf/0.1/name"),
        rdflib.Literal(NON_ASCII_AUTHOR),
    ) in graph
    page = client.get(f"/paper/{HOSTILE_SLUG}", headers={"Accept": "text/html"}).text
    assert f'href="{path}"' in page


def test_entity_pages_show_what_points_at_them(client: TestClient) -> None:
    author = client.get("/author/goro-kobayashi", headers={"Accept": "text/html"})
    assert author.status_code == 200
    assert "Referenced by" in author.text
    assert f'href="/paper/{SEED_A}"' in author.text
    method = parsed(client.get("/method/adam").content, "turtle")
    papers = {s for s, _, _ in method.triples((None, rdflib.URIRef(f"{KG}usesMethod"), None))}
    assert len(papers) == 3


def test_record_graph_resolves_to_its_contents(client: TestClient, store: GraphStore) -> None:
    iri = _record_graph(SEED_A)
    response = client.get(f"/graph/record/paper/{SEED_A}")
    assert response.status_code == 200
    got = parsed(response.content, "turtle")
    assert len(got) == store.count(iri)
    page = client.get(f"/graph/record/paper/{SEED_A}", headers={"Accept": "text/html"})
    assert "A named graph holding" in page.text


def test_unknown_entities_are_404(client: TestClient) -> None:
    assert client.get("/paper/no-such-paper").status_code == 404
    assert client.get("/method/no-such-method", headers={"Accept": "text/html"}).status_code == 404
    assert client.get("/paper/").status_code == 404
    assert client.get("/paper/a%3Eb").status_code == 404  # '>' cannot be in an IRI
    assert client.get("/nothing/here").status_code == 404
    odd = client.get(f"/paper/{SEED_A}", headers={"Accept": "image/png"})
    assert odd.status_code == 406


# --- the page ---------------------------------------------------------------------------------


def test_query_page_vendors_yasgui_and_lists_the_named_queries(client: TestClient) -> None:
    page = client.get("/query")
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script src="/static/yasgui/yasgui.min.js"></script>' in page.text
    start = page.text.index('id="kg-examples-data">') + len('id="kg-examples-data">')
    data = json.loads(page.text[start : page.text.index("</script>", start)])
    assert [e["name"] for e in data["examples"]] == sorted(load_queries())
    assert data["prefixes"]["kg"] == KG
    # Examples come with their example parameters bound, ready to run.
    author = next(e for e in data["examples"] if e["name"] == "papers-by-author")
    assert "VALUES" in author["query"] and f"<{BASE}author/goro-kobayashi>" in author["query"]
    js = client.get("/static/yasgui/yasgui.min.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert len(js.content) > 500_000
    assert client.get("/static/yasgui/yasgui.min.css").status_code == 200
    assert client.get("/static/kg-page.js").status_code == 200


def test_query_page_data_cannot_close_its_script_block(tmp_path: Path, store: GraphStore) -> None:
    text = Path("queries/papers-by-title.rq").read_text(encoding="utf-8")
    hostile = text.replace("#+ summary: ", "#+ summary: </script><script>alert(1)</script> ", 1)
    (tmp_path / "hostile.rq").write_text(hostile, encoding="utf-8")
    with client_for(store, workers=1, queries_dir=tmp_path) as c:
        page = c.get("/query").text
        assert page.count("</script>") == 4  # the data block's own end and the three scripts
        assert "<\\/script><script>alert(1)<\\/script>" in page


# --- workers that die, writers that overrun ---------------------------------------------------


def test_a_worker_killed_from_outside_is_replaced(store: GraphStore) -> None:
    with client_for(store, workers=1) as c:
        stats = c.app.state.server.pool.stats  # type: ignore[attr-defined]
        victim = stats.worker_pids[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: not process_alive(victim))
        lost = c.get("/sparql", params={"query": PAPERS})
        assert lost.status_code == 500 and "worker died" in lost.text
        wait_until(lambda: c.get("/health").json()["workers_running"] == 1)
        assert rows(c.get("/sparql", params={"query": PAPERS})) == local_rows(store, PAPERS)


def test_an_update_past_the_timeout_is_stopped_and_loses_nothing(store: GraphStore) -> None:
    auth = {"Authorization": "Bearer t"}
    with client_for(store, workers=1, timeout=2.0, allow_update=True, update_token="t") as c:
        keep = f'INSERT DATA {{ GRAPH <{BASE}graph/k> {{ <{BASE}paper/k> a <{KG}Paper> ; <http://purl.org/dc/terms/title> "Kept" }} }}'
        assert c.post("/update", data={"update": keep}, headers=auth).status_code == 204
        slow = f"INSERT {{ GRAPH <{BASE}graph/slow> {{ ?a ?b ?c }} }} WHERE {{ {SLOW_NOTHING} }}"
        stopped = c.post("/update", data={"update": slow}, headers=auth)
        assert stopped.status_code == 503 and "time limit" in stopped.text
        # The memory store's writer was killed and restarted from the last good snapshot.
        titles = {r[1] for r in rows(c.get("/sparql", params={"query": PAPERS}))}
        assert "Kept" in titles
        again = f'INSERT DATA {{ GRAPH <{BASE}graph/k2> {{ <{BASE}paper/k2> a <{KG}Paper> ; <http://purl.org/dc/terms/title> "Again" }} }}'
        wait_until(
            lambda: c.post("/update", data={"update": again}, headers=auth).status_code == 204
        )
        titles = {r[1] for r in rows(c.get("/sparql", params={"query": PAPERS}))}
        assert {"Kept", "Again"} <= titles
        graphs = rows(
            c.get("/sparql", params={"query": "SELECT DISTINCT ?g WHERE { GRAPH ?g {} }"})
        )
        assert (f"{BASE}graph/slow",) not in graphs
