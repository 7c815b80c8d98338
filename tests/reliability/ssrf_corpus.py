"""Attempts to make `kg serve` contact a host it was not allowed to (SERVICE, LOAD).

Each attempt is SPARQL aimed at a loopback listener (`{port}`); `queries()` and `updates()`
spell the targets in every way the SPARQL grammar, IRI resolution and URL parsing allow:
escapes, comments, strings that hide what follows, BASE and relative IRIs, prefixed names,
variables bound by VALUES or BIND, SILENT, every query form, nested sub-queries and group
patterns, and address spellings an HTTP client may resolve to 127.0.0.1 (`localhost`,
`127.1`, `2130706433`, `0x7f000001`, `[::ffff:127.0.0.1]`). The first query is the one
from issue 15, which got through kg's text check before.
"""

from __future__ import annotations


def _escape(text: str, every: int = 1, big: bool = False) -> str:
    r"""`\uXXXX` (or `\UXXXXXXXX`) escapes for every `every`-th character of `text`."""
    out = []
    for i, char in enumerate(text):
        if i % every == 0:
            out.append(f"\\U{ord(char):08X}" if big else f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def hosts(port: int, host: str = "127.0.0.1") -> list[str]:
    """Spellings of the listener's address (some the HTTP client may refuse, none allowed)."""
    a, b, c, d = (int(x) for x in host.split("."))
    number = (a << 24) | (b << 16) | (c << 8) | d
    out = [
        f"{host}:{port}",
        f"{a}.{d}:{port}" if b == c == 0 else f"{host}.:{port}",
        f"{number}:{port}",
        f"0x{number:08x}:{port}",
        f"0{a:o}.{b}.{c}.{d}:{port}",
        f"[::ffff:{host}]:{port}",
        f"user:pw@{host}:{port}",
        f"allowed.example@{host}:{port}",
    ]
    if host == "127.0.0.1":
        out += [f"localhost:{port}", f"LOCALHOST:{port}", f"localhost.:{port}"]
    return out


def queries(port: int, host: str = "127.0.0.1") -> list[str]:
    url = f"http://{host}:{port}/sparql"
    body = "{ ?x ?p ?o }"
    out = [
        # issue 15: an escape inside an IRI made kg's scanner skip the rest of the line
        f'SELECT * WHERE {{ OPTIONAL {{ <http://a/\\u0041#> ?q "x\\u0022" }} SERVICE <{url}> {{ ?x ?p ?o }} }}',
        # issue 31: the same, and between two BINDs of an escaped quote, with an allow-list
        f'SELECT * WHERE {{ BIND("\\u0022" AS ?a) OPTIONAL {{ <http://a/\\u0041#> ?q "x\\u0022" }} SERVICE <{url}> {{ ?x ?p ?o }} BIND("\\u0022" AS ?b) }}',
        f'SELECT * WHERE {{ BIND("\\u0022" AS ?a) SERVICE <{url}> {{ ?x ?p ?o }} BIND("\\u0022" AS ?b) }}',
        f"SELECT * WHERE {{ SERVICE <{url}> {body} }}",
        f"SELECT * WHERE {{ SERVICE SILENT <{url}> {body} }}",
        f"select * where {{ service silent <{url}> {body} }}",
        f"SELECT * WHERE {{ SeRvIcE <{url}> {body} }}",
        f"SELECT * WHERE {{ SERVICE\t\n<{url}>\n{body} }}",
        f"SELECT * WHERE {{ SERVICE#comment\n<{url}> {body} }}",
        f"# SERVICE <http://x/>\nSELECT * WHERE {{ SERVICE <{url}> {body} }}",
        f"SELECT * WHERE {{ SERVICE <{_escape(url)}> {body} }}",
        f"SELECT * WHERE {{ SERVICE <{_escape(url, 3)}> {body} }}",
        f"SELECT * WHERE {{ SERVICE <{_escape(url, 2, big=True)}> {body} }}",
        f"SELECT * WHERE {{ SERVICE <http\\u003A//{host}:{port}/sparql> {body} }}",
        f"SELECT * WHERE {{ SERVICE <http://{host}\\u003A{port}/sparql> {body} }}",
        f'SELECT * WHERE {{ BIND("\\u0022" AS ?a) SERVICE <{url}> {body} }}',
        f"SELECT * WHERE {{ BIND('\\u0027' AS ?a) SERVICE <{url}> {body} }}",
        f'SELECT * WHERE {{ BIND("""a"b""" AS ?a) SERVICE <{url}> {body} }}',
        f'SELECT * WHERE {{ BIND("""\n# not a comment\n""" AS ?a) SERVICE <{url}> {body} }}',
        f"SELECT * WHERE {{ BIND('''it''s''' AS ?a) SERVICE <{url}> {body} }}",
        f'SELECT * WHERE {{ BIND("\\\\" AS ?a) SERVICE <{url}> {body} }}',
        f'SELECT * WHERE {{ BIND("#" AS ?a) SERVICE <{url}> {body} }}',
        f"SELECT * WHERE {{ <http://a/#x> ?p ?o . SERVICE <{url}> {body} }}",
        f"SELECT * WHERE {{ <http://a/\\u003E> ?p ?o . SERVICE <{url}> {body} }}",
        f"SELECT * WHERE {{ ?s <http://a/\\u0023> ?o . SERVICE <{url}> {body} }}",
        f"PREFIX e: <http://{host}:{port}/>\nSELECT * WHERE {{ SERVICE e:sparql {body} }}",
        f"PREFIX : <http://{host}:{port}/>\nSELECT * WHERE {{ SERVICE :sparql {body} }}",
        f"PREFIX e: <{_escape(f'http://{host}:{port}/')}>\nSELECT * WHERE {{ SERVICE e:sparql {body} }}",
        f"PREFIX e: <http://{host}:{port}/>\nPREFIX e: <http://x.example/>\nSELECT * WHERE {{ SERVICE e:sparql {body} }}",
        f"PREFIX e: <http://x.example/>\nPREFIX e: <http://{host}:{port}/>\nSELECT * WHERE {{ SERVICE e:sparql {body} }}",
        f"PREFIX e: <http://{host}:{port}/>\nSELECT * WHERE {{ SERVICE e:sp\\%61rql {body} }}",
        f"BASE <http://{host}:{port}/>\nSELECT * WHERE {{ SERVICE <sparql> {body} }}",
        f"BASE <http://{host}:{port}/a/b>\nSELECT * WHERE {{ SERVICE <../sparql> {body} }}",
        f"BASE <http://x.example/>\nSELECT * WHERE {{ SERVICE <//{host}:{port}/sparql> {body} }}",
        f"BASE <{_escape(f'http://{host}:{port}/')}>\nSELECT * WHERE {{ SERVICE <sparql> {body} }}",
        f"BASE <http://x.example/>\nBASE <http://{host}:{port}/>\nSELECT * WHERE {{ SERVICE <sparql> {body} }}",
        f"BASE <http://{host}:{port}/>\nPREFIX e: <q/>\nSELECT * WHERE {{ SERVICE e:sparql {body} }}",
        f"SELECT * WHERE {{ VALUES ?e {{ <{url}> }} SERVICE ?e {body} }}",
        f"SELECT * WHERE {{ BIND(<{url}> AS ?e) SERVICE ?e {body} }}",
        f'SELECT * WHERE {{ BIND(IRI("{url}") AS ?e) SERVICE ?e {body} }}',
        f'SELECT * WHERE {{ BIND(IRI(CONCAT("http://{host}:", "{port}", "/sparql")) AS ?e) SERVICE ?e {body} }}',
        f"SELECT * WHERE {{ SERVICE ?e {body} }} VALUES ?e {{ <{url}> }}",
        f"SELECT * WHERE {{ SERVICE SILENT ?e {body} VALUES ?e {{ <{url}> }} }}",
        f"SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {body} }} }} }}",
        f"SELECT * WHERE {{ {{ SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {body} }} }} }} }} }}",
        f"SELECT * WHERE {{ {{ {{ {{ SERVICE <{url}> {body} }} }} }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o OPTIONAL {{ SERVICE <{url}> {body} }} }}",
        f"SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {body} }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o MINUS {{ SERVICE <{url}> {body} }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {body} }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o FILTER NOT EXISTS {{ SERVICE <{url}> {body} }} }}",
        f"SELECT * WHERE {{ GRAPH ?g {{ SERVICE <{url}> {body} }} }}",
        f"SELECT (COUNT(*) AS ?n) WHERE {{ SERVICE <{url}> {body} }}",
        f"SELECT ?x WHERE {{ SERVICE <{url}> {body} }} GROUP BY ?x HAVING (COUNT(*) > 0)",
        f"SELECT * WHERE {{ SERVICE <{url}> {{ SERVICE <{url}> {body} }} }}",
        f"ASK {{ SERVICE <{url}> {body} }}",
        f"CONSTRUCT {{ ?x ?p ?o }} WHERE {{ SERVICE <{url}> {body} }}",
        f"CONSTRUCT WHERE {{ SERVICE <{url}> {body} }}",
        f"DESCRIBE ?x WHERE {{ SERVICE <{url}> {body} }}",
        f"SELECT * FROM <{url}> WHERE {{ ?s ?p ?o }}",
        f"SELECT * FROM NAMED <{url}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        f"DESCRIBE <{url}>",
        f"SELECT * WHERE {{ SERVICE <https://{host}:{port}/sparql> {body} }}",
        f"SELECT * WHERE {{ SERVICE <http://{host}:{port}/sparql?query=x#frag> {body} }}",
        f"SELECT * WHERE {{ SERVICE <http://{host}:{port}> {body} }}",
        f"\ufeffSELECT * WHERE {{ SERVICE <{url}> {body} }}",
        f"SELECT * WHERE {{ SERVICE <{url}> {body} }} # trailing comment",
        f'SELECT * WHERE {{ SERVICE <{url}> {{ ?x ?p ?o . FILTER(?o != "\\u007D") }} }}',
        f"SELECT * WHERE {{ SERVICE <{url}> {{ SELECT * WHERE {body} LIMIT 1 }} }}",
    ]
    out += [f"SELECT * WHERE {{ SERVICE <http://{h}/sparql> {body} }}" for h in hosts(port, host)]
    out += [f"SELECT * WHERE {{ SERVICE SILENT <http://{h}/> {body} }}" for h in hosts(port, host)]
    return out


def updates(port: int, host: str = "127.0.0.1") -> list[str]:
    url = f"http://{host}:{port}/data.ttl"
    service = f"http://{host}:{port}/sparql"
    out = [
        f"LOAD <{url}>",
        f"LOAD SILENT <{url}>",
        f"LOAD <{url}> INTO GRAPH <urn:x:g>",
        f"load silent <{url}> into graph <urn:x:g>",
        f"LOAD <{_escape(url)}>",
        f"LOAD <{_escape(url, 4, big=True)}>",
        f"BASE <http://{host}:{port}/>\nLOAD <data.ttl>",
        f"PREFIX e: <http://{host}:{port}/>\nLOAD e:data.ttl",
        f'INSERT DATA {{ <urn:x:a> <urn:x:b> "\\u0022" }} ; LOAD <{url}>',
        f"# LOAD <http://x/>\nLOAD <{url}>",
        f"CLEAR SILENT GRAPH <urn:x:g> ; LOAD <{url}>",
        f"INSERT {{ ?x ?p ?o }} WHERE {{ SERVICE <{service}> {{ ?x ?p ?o }} }}",
        f"DELETE {{ ?x ?p ?o }} WHERE {{ SERVICE SILENT <{service}> {{ ?x ?p ?o }} }}",
        f"WITH <urn:x:g> INSERT {{ ?x ?p ?o }} WHERE {{ VALUES ?e {{ <{service}> }} SERVICE ?e {{ ?x ?p ?o }} }}",
        f"INSERT {{ ?x ?p ?o }} WHERE {{ {{ SELECT * WHERE {{ SERVICE <{service}> {{ ?x ?p ?o }} }} }} }}",
        f'INSERT {{ ?x ?p ?o }} WHERE {{ BIND("\\u0022" AS ?q) SERVICE <{service}> {{ ?x ?p ?o }} }}',
    ]
    out += [f"LOAD <http://{h}/data.ttl>" for h in hosts(port, host)]
    return out
