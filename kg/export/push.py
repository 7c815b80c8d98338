"""`kg push`: the store sent to a SPARQL 1.1 Graph Store Protocol endpoint, graph by graph.

Each named graph (and the default graph, if it holds anything) is read from the store as
N-Triples in Oxigraph's own 8 KiB pieces and sent in chunks of about `chunk_bytes`, cut at
line ends: the first chunk with PUT, which replaces whatever the endpoint held in that
graph, the rest with POST, which adds to it. Memory stays at one chunk whatever the size of
a graph. A graph holding blank nodes goes in one request, since each request gets fresh
blank nodes. A failed request (a lost connection, HTTP 5xx, 408 or 429) is retried with
growing pauses; sending a chunk twice is harmless, since a graph is a set of triples.

A push can be resumed: after each graph, a line naming it and the SHA-256 of its N-Triples
is appended to a state file. A later push to the same endpoint skips the graphs whose
digest it finds there and sends the rest, including those that changed since.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kg.errors import EndpointError, UsageError
from kg.query.remote import check_http_url
from kg.rdf.store import GraphStore

#: A chunk's size; Virtuoso, Jena and Oxigraph each take far bigger bodies.
CHUNK_BYTES = 4 * 1024 * 1024
MEDIA_TYPE = "application/n-triples"
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_STATE_HEADER = "# kg push state: graph<TAB>sha256 of its N-Triples; endpoint "
_BNODE = re.compile(rb"(?:^|\s)_:")
_MESSAGE_CHARS = 300


@dataclass
class PushReport:
    """What a push did."""

    graphs: int = 0  # sent now
    skipped: int = 0  # already at the endpoint, as the state file says
    triples: int = 0  # sent now
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0
    total_graphs: int = 0


@dataclass
class PushAuth:
    """Credentials: a user and password (HTTP Basic, or Digest where the server asks for
    it, as Virtuoso does), or a bearer token."""

    user: str | None = None
    password: str | None = None
    token: str | None = None

    def __post_init__(self) -> None:
        if self.token is not None and (self.user is not None or self.password is not None):
            raise UsageError("give either --token or --user/--password, not both")
        if (self.user is None) != (self.password is None):
            raise UsageError("--user and --password go together")


@dataclass
class _State:
    path: Path
    endpoint: str
    done: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path, endpoint: str, restart: bool) -> _State:
        state = cls(path, endpoint)
        if restart or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{_STATE_HEADER}{endpoint}\n", encoding="utf-8")
            return state
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read the push state file {path}: {exc}") from None
        if not lines or not lines[0].startswith(_STATE_HEADER):
            raise UsageError(f"{path} is not a kg push state file; name another with --state")
        recorded = lines[0][len(_STATE_HEADER) :]
        if recorded != endpoint:
            raise UsageError(
                f"{path} records a push to {recorded}, not {endpoint}; name another file "
                "with --state, or start over with --restart"
            )
        for line in lines[1:]:
            graph, _, digest = line.partition("\t")
            if digest:  # a line cut short by an interruption has none
                state.done[graph] = digest
        return state

    def record(self, graph: str, digest: str) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(f"{graph}\t{digest}\n")
            f.flush()
        self.done[graph] = digest


class _Sender:
    """One HTTP client for the whole push, with its auth and retries."""

    def __init__(
        self, url: str, auth: PushAuth, timeout: float, retries: int, report: PushReport
    ) -> None:
        self.url = url
        self.retries = retries
        self.report = report
        self.answered = False  # whether the endpoint has answered any request yet
        headers = {"User-Agent": "kg push (SPARQL 1.1 Graph Store Protocol client)"}
        if auth.token is not None:
            headers["Authorization"] = f"Bearer {auth.token}"
        self.client = httpx.Client(headers=headers, timeout=timeout, follow_redirects=True)
        if auth.user is not None and auth.password is not None:
            self.client.auth = self._choose_auth(auth.user, auth.password)

    def _choose_auth(self, user: str, password: str) -> httpx.Auth:
        """Digest if the server challenges for it, else Basic: asked once, up front."""
        try:
            probe = self.client.get(self.url, params={"graph": "urn:kg:push-probe"})
        except httpx.HTTPError:
            return httpx.BasicAuth(user, password)  # the first real request will say more
        challenge = probe.headers.get("www-authenticate", "").lower()
        if probe.status_code == 401 and challenge.startswith("digest"):
            return httpx.DigestAuth(user, password)
        return httpx.BasicAuth(user, password)

    def close(self) -> None:
        self.client.close()

    def reach(self) -> None:
        """Fail at once when nothing answers at the URL (`check_reachable`)."""
        check_reachable(self.url, self.client)
        self.answered = True


    def send(self, method: str, graph: str | None, body: bytes) -> None:
        params = {"default": ""} if graph is None else {"graph": graph}
        pause = 0.5
        for attempt in range(self.retries + 1):
            self.report.requests += 1
            try:
                response = self.client.request(
                    method,
                    self.url,
                    params=params,
                    content=body,
                    headers={"Content-Type": MEDIA_TYPE},
                )
            except httpx.HTTPError as exc:
                if isinstance(exc, httpx.ConnectError) and not self.answered:
                    # nothing listens there (or no such host): waiting will not change that
                    raise EndpointError(
                        f"the endpoint {self.url} is unreachable ({exc or 'no connection'}); "
                        "check the URL and that the endpoint is running"
                    ) from None
                if attempt == self.retries:
                    resume = " Run the same command again to resume" if self.answered else ""
                    raise EndpointError(
                        f"cannot push to {self.url}: {exc or type(exc).__name__}; "
                        f"check the URL and that the endpoint is running.{resume}"
                    ) from None
            else:
                self.answered = True
                if response.status_code < 400:
                    return
                if response.status_code not in _RETRY_STATUS or attempt == self.retries:
                    raise EndpointError(_refusal(self.url, graph, response))
            self.report.retries += 1
            time.sleep(pause)
            pause = min(pause * 2, 30.0)


def check_reachable(url: str, client: httpx.Client | None = None) -> None:
    """An EndpointError at once, before any graph is read, when nothing answers at `url`
    (a refused connection, no such host): retrying would not change that. Any answer, even
    an error status, will do; a slow one is left to the requests themselves."""
    own = client is None
    client = client or httpx.Client(follow_redirects=True)
    try:
        client.get(url, params={"graph": "urn:kg:push-probe"}, timeout=10.0)
    except httpx.ConnectError as exc:
        raise EndpointError(
            f"the endpoint {url} is unreachable ({exc or 'no connection'}); check the URL "
            "and that the endpoint is running"
        ) from None
    except httpx.HTTPError:
        return
    finally:
        if own:
            client.close()


def _refusal(url: str, graph: str | None, response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    if len(text) > _MESSAGE_CHARS:
        text = text[:_MESSAGE_CHARS] + "…"
    hint = ""
    if response.status_code in (401, 403):
        hint = "; give credentials with --user/--password or --token"
    elif response.status_code in (404, 405):
        hint = "; is this the Graph Store Protocol URL (Oxigraph: /store, Virtuoso: "
        hint += "/sparql-graph-crud-auth, Jena Fuseki: /<dataset>/data)?"
    where = "the default graph" if graph is None else f"graph <{graph}>"
    return (
        f"{url} answered HTTP {response.status_code} {response.reason_phrase} to {where}: "
        f"{text or '(no message)'}{hint}"
    )


class _Chunks:
    """A BinaryWriter for GraphStore.graph_ntriples that hands out line-aligned chunks."""

    def __init__(self, size: int, emit: Callable[[bytes], None]) -> None:
        self.size = size
        self.emit = emit
        self.buffer = bytearray()
        self.digest = hashlib.sha256()
        self.whole = False  # True once a blank node is seen: the graph goes in one piece

    def write(self, data: bytes, /) -> int:
        self.digest.update(data)
        self.buffer += data
        if not self.whole and _BNODE.search(data):
            self.whole = True
        while not self.whole and len(self.buffer) >= self.size:
            # the last line end within the chunk size, or the first after it (a long line)
            cut = self.buffer.rfind(b"\n", 0, self.size) + 1 or self.buffer.find(b"\n") + 1
            if not cut:
                break
            chunk = bytes(self.buffer[:cut])
            del self.buffer[:cut]
            self.emit(chunk)
        return len(data)

    def flush(self) -> None:
        return None

    def finish(self) -> None:
        if self.buffer:
            self.emit(bytes(self.buffer))
            self.buffer.clear()


def _digest(store: GraphStore, graph: str | None) -> str:
    chunks = _Chunks(1 << 62, lambda _chunk: None)
    chunks.whole = True  # never emit: only the digest is wanted
    store.graph_ntriples(graph, chunks)
    return chunks.digest.hexdigest()


def push_graphs(store: GraphStore) -> list[str | None]:
    """What a push sends: the default graph (None; sent only if it holds triples), then each
    named graph that no ingest batch is still writing."""
    pending = store.pending_graphs()
    named: list[str | None] = [g for g in store.named_graphs() if g not in pending]
    # A store that keeps the merge in its default graph derives it from the named graphs:
    # the target's own union default graph gives it back, so it is not sent twice.
    return named if store.keeps_merge() else [None, *named]


def push(
    store: GraphStore,
    url: str,
    *,
    state_path: Path,
    auth: PushAuth | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    retries: int = 5,
    timeout: float = 120.0,
    restart: bool = False,
    on_progress: Callable[[PushReport, int], None] | None = None,
) -> PushReport:
    """Send every graph of `store` to the Graph Store Protocol endpoint `url`.

    `on_progress(report, triples_in_graph)` is called after each chunk and each graph.
    """
    check_http_url(url, "a Graph Store Protocol URL", "of the graph store", "/store")
    if chunk_bytes < 1024:
        raise UsageError("--chunk-kb must be at least 1")
    started = time.monotonic()
    report = PushReport()
    sender = _Sender(url, auth or PushAuth(), timeout, retries, report)
    try:
        sender.reach()
        graphs = push_graphs(store)
        report.total_graphs = sum(1 for g in graphs if g is not None)
        state = _State.read(state_path, url, restart)
        for graph in graphs:
            key = "" if graph is None else graph
            if key in state.done and _digest(store, graph) == state.done[key]:
                report.skipped += graph is not None
                if on_progress:
                    on_progress(report, 0)
                continue
            sent = [0]

            def emit(chunk: bytes, graph: str | None = graph, sent: list[int] = sent) -> None:
                sender.send("PUT" if sent[0] == 0 else "POST", graph, chunk)
                lines = chunk.count(b"\n")
                sent[0] += max(lines, 1)
                report.triples += lines
                if on_progress:
                    on_progress(report, lines)

            chunks = _Chunks(chunk_bytes, emit)
            store.graph_ntriples(graph, chunks)
            chunks.finish()
            if sent[0] == 0:
                if graph is None:
                    continue  # an empty default graph is not sent: kg keeps triples in graphs
                sender.send("PUT", graph, b"")  # an empty named graph: the copy is emptied
            state.record(key, chunks.digest.hexdigest())
            report.graphs += 1
            if on_progress:
                on_progress(report, 0)
    finally:
        sender.close()
        report.seconds = time.monotonic() - started
    return report
