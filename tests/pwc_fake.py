"""A loopback fake of the relaunched Papers with Code API (paperswithcode.co/api/v1), built from
its public contract: huggingface/pwc-cli's `standalone_cli/src/pwc_cli/cli.py` (endpoints,
parameters, field names) and `transport.py` (2 MiB bound). docs/live.md lists what it serves.

It holds its JSON in memory (`FakeApi.data`; tests change it between pulls), logs every
request (path, query, User-Agent), and plays faults queued with `fail(...)`: a 429 with
`Retry-After`, a 500, a response cut short, a redirect to another host.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import urllib.parse
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/api/v1/"


def base_data() -> dict[str, Any]:
    """A small catalogue: 2 areas, 3 tasks, 2 methods, 5 papers, 2 benchmarks, 5 results.

    `papers[0]` is EfficientNet, which the small archive (`archive_dumps`) also holds by
    slug; `image-classification` on `imagenet` is a leaderboard of the archive as well."""
    return {
        "areas": [
            {"id": 1, "name": "Computer Vision", "slug": "computer-vision"},
            {"id": 2, "name": "Natural Language Processing", "slug": "natural-language-processing"},
        ],
        "tasks": [
            {"id": 10, "slug": "image-classification", "name": "Image Classification",
             "area_id": 1, "level": 1, "paper_count": 3, "benchmark_count": 1,
             "evaluation_count": 3, "description": "Assign a label to an image."},
            {"id": 11, "slug": "fine-grained-image-classification",
             "name": "Fine-Grained Image Classification", "area_id": 1, "level": 2,
             "parent_id": 10, "paper_count": 1, "benchmark_count": 0, "evaluation_count": 0},
            {"id": 12, "slug": "question-answering", "name": "Question Answering",
             "area_id": 2, "level": 1, "paper_count": 2, "benchmark_count": 1,
             "evaluation_count": 2},
        ],
        "methods": [
            {"id": 7, "slug": "transformer", "name": "Transformer", "full_name": "Transformer",
             "area_id": 2, "introduced_year": 2017, "paper_count": 3,
             "description": "Attention is all it needs."},
            {"id": 8, "slug": "convolution", "name": "Convolution", "area_id": 1,
             "introduced_year": 1980, "paper_count": 2},
        ],
        "papers": [
            paper(1, "1905.11946", "EfficientNet: Rethinking Model Scaling for Convolutional "
                  "Neural Networks", "2019-05-28", ["Mingxing Tan", "Quoc V. Le"],
                  tasks=[10], methods=[8],
                  repos=[("https://github.com/tensorflow/tpu", True)]),
            paper(2, "2601.00001", "Vision Giants", "2026-01-10",
                  ["Ada Lovelace", "Alan Turing"], tasks=[10, 11], methods=[7],
                  repos=[("https://github.com/example/vision-giants", True),
                         ("https://github.com/fan/vg-port", False)],
                  hf=["https://huggingface.co/example/vision-giant"], lineage=["1"]),
            paper(3, "2602.00002", "Reading Machines", "2026-02-03", ["Grace Hopper"],
                  tasks=[12], methods=[7], repos=[("https://github.com/example/reader", True)]),
            paper(4, None, "A Paper Without arXiv", "2026-02-20", ["Edsger Dijkstra"],
                  tasks=[12]),
            paper(5, "2605.00005", "Late Arrivals", "2026-05-15", ["Barbara Liskov"],
                  tasks=[10], lineage=["2"]),
        ],
        "datasets": [
            {"id": 20, "slug": "imagenet", "name": "ImageNet",
             "description": "A large image database.", "hf_url": "https://huggingface.co/datasets/imagenet-1k"},
            {"id": 21, "slug": "squad1-1", "name": "SQuAD1.1",
             "description": "Questions on Wikipedia articles."},
        ],
        "evaluations": [
            evaluation(100, 1, 10, 20, "EfficientNet-B7", {"Top 1 Accuracy": 84.4}),
            evaluation(101, 2, 10, 20, "Giant-H", {"Top 1 Accuracy": 91.2,
                                                    "Top 5 Accuracy": 99.1}),
            evaluation(102, 3, 12, 21, "Reader-L", {"F1": 95.5, "EM": 90.1}),
            evaluation(103, 4, 12, 21, "NoArxiv-QA", {"F1": 93.0}),
        ],
    }


def paper(
    pid: int, arxiv: str | None, title: str, published: str, authors: list[str], *,
    tasks: Sequence[int] = (), methods: Sequence[int] = (),
    repos: Sequence[tuple[str, bool]] = (), hf: Sequence[str] = (), lineage: Sequence[str] = (),
) -> dict[str, Any]:  # fmt: skip
    return {
        "id": str(pid), "arxiv_id": arxiv, "title": title, "published": published,
        "authors": authors, "citation_count": 3 * pid, "abstract": f"The abstract of {title}.",
        "url_abs": f"https://arxiv.org/abs/{arxiv}" if arxiv else None,
        "task_ids": list(tasks), "method_ids": list(methods),
        "repositories": [{"url": u, "is_official": o} for u, o in repos],
        "hf_models": list(hf), "hf_datasets": [], "hf_spaces": [], "lineage": list(lineage),
    }  # fmt: skip


def evaluation(
    eid: int, paper_id: int, task_id: int, dataset_id: int, model: str, metrics: dict[str, Any]
) -> dict[str, Any]:
    return {"id": str(eid), "paper_id": str(paper_id), "task_id": str(task_id),
            "dataset_id": str(dataset_id), "model_name": model, "metrics": metrics,
            "best_metric": next(iter(metrics)), "best_rank": 1, "is_open": True}  # fmt: skip


@dataclass
class Request:
    path: str
    query: dict[str, str]
    user_agent: str
    at: float


@dataclass
class FakeApi:
    data: dict[str, Any] = field(default_factory=base_data)
    requests: list[Request] = field(default_factory=list)
    faults: list[tuple[str, str]] = field(default_factory=list)  # (path prefix, fault)
    delay: float = 0.0  # seconds each answer takes (kill tests)
    away: str = "http://127.0.0.2:9/api/v1/x"  # where the `away` fault redirects
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def fail(self, prefix: str, fault: str) -> None:
        """Answer the next request whose path starts with `prefix` with `fault`: `429`, `500`,
        `cut` (a body shorter than its Content-Length) or `away` (a redirect elsewhere)."""
        self.faults.append((prefix, fault))

    def count(self, prefix: str = "") -> int:
        return sum(1 for r in self.requests if r.path.startswith(prefix))

    # -- the API's views, as the contract shapes them -------------------------------------------
    def tasks_by_id(self) -> dict[str, dict[str, Any]]:
        return {str(t["id"]): t for t in self.data["tasks"]}

    def paper_json(self, p: dict[str, Any], *, resources: bool, detail: bool) -> dict[str, Any]:
        tasks, methods = self.tasks_by_id(), {str(m["id"]): m for m in self.data["methods"]}
        out = {k: v for k, v in p.items() if k not in ("task_ids", "method_ids", "lineage")}
        out["tasks"] = [{"id": str(t), "slug": tasks[str(t)]["slug"],
                         "name": tasks[str(t)]["name"]} for t in p["task_ids"]]  # fmt: skip
        out["methods"] = [{"id": str(m), "slug": methods[str(m)]["slug"],
                           "name": methods[str(m)]["name"]} for m in p["method_ids"]]  # fmt: skip
        if not resources:
            for key in ("repositories", "hf_models", "hf_datasets", "hf_spaces"):
                out.pop(key, None)
        if detail:  # lineage as `paper info` reads it: {route_identifier, title, published}
            papers = {q["id"]: q for q in self.data["papers"]}

            def ref(q: dict[str, Any]) -> dict[str, Any]:
                return {"route_identifier": q["arxiv_id"] or q["id"], "title": q["title"],
                        "published": q["published"]}  # fmt: skip

            out["predecessor_papers"] = [ref(papers[i]) for i in p.get("lineage", [])]
            out["successor_papers"] = [ref(q) for q in self.data["papers"]
                                       if p["id"] in q.get("lineage", [])]  # fmt: skip
        return out

    def evaluation_json(self, e: dict[str, Any]) -> dict[str, Any]:
        papers = {p["id"]: p for p in self.data["papers"]}
        p = papers[e["paper_id"]]
        task = self.tasks_by_id()[e["task_id"]]
        out = dict(e)
        out.update(paper_title=p["title"], paper_arxiv_id=p["arxiv_id"],
                   paper_published_date=p["published"], task_name=task["name"])  # fmt: skip
        return out

    def datasets_json(self) -> list[dict[str, Any]]:
        out = []
        for d in self.data["datasets"]:
            evals = [e for e in self.data["evaluations"] if e["dataset_id"] == str(d["id"])]
            out.append({**d, "evaluation_count": len(evals),
                        "paper_count": len({e["paper_id"] for e in evals})})  # fmt: skip
        return out

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        page = int(query.get("page", "1"))
        size = int(query.get("page_size", "50"))

        def paged(items: list[Any], shape: str = "count") -> Any:
            chunk = items[(page - 1) * size : page * size]
            if shape == "bare":
                return chunk
            if shape == "total":
                return {"total": len(items), "items": chunk}
            return {"count": len(items), "results": chunk}

        parts = [p for p in path.removeprefix(PREFIX).split("/") if p]
        if parts == ["areas"]:
            return 200, paged(self.data["areas"], "bare")
        if parts == ["tasks"]:
            return 200, paged(self.data["tasks"])
        if parts == ["methods"]:
            return 200, paged(self.data["methods"], "total")
        if parts == ["papers"]:
            start, end = query.get("start_date"), query.get("end_date")
            chosen = sorted(
                (p for p in self.data["papers"]
                 if (not start or p["published"] >= start) and (not end or p["published"] <= end)),
                key=lambda p: (p["published"], p["id"]),
            )  # fmt: skip
            resources = query.get("include_resources") == "true"
            return 200, paged([self.paper_json(p, resources=resources, detail=False)
                               for p in chosen])  # fmt: skip
        if len(parts) == 2 and parts[0] == "papers":
            ref = urllib.parse.unquote(parts[1])
            for p in self.data["papers"]:
                if ref in (p["id"], p["arxiv_id"]):
                    resources = query.get("include_resources") == "true"
                    return 200, self.paper_json(p, resources=resources, detail=True)
            return 404, {"detail": "Not found."}
        if parts == ["datasets"]:
            return 200, paged(self.datasets_json())
        if len(parts) == 3 and parts[0] == "datasets" and parts[2] == "evaluations":
            if not any(str(d["id"]) == parts[1] for d in self.data["datasets"]):
                return 404, {"detail": "Not found."}
            evals = [self.evaluation_json(e) for e in self.data["evaluations"]
                     if e["dataset_id"] == parts[1]]  # fmt: skip
            return 200, paged(evals)
        return 404, {"detail": "Not found."}


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            api.requests.append(Request(url.path, query, self.headers.get("User-Agent", ""),
                                        time.monotonic()))  # fmt: skip
            if api.delay:
                time.sleep(api.delay)
            fault = next((f for f in api.faults if url.path.startswith(PREFIX + f[0])), None)
            if fault is not None:
                api.faults.remove(fault)
                if fault[1] == "429":
                    return self.send(429, {"detail": "slow down"}, {"Retry-After": "1"})
                if fault[1] == "500":
                    return self.send(500, {"detail": "boom"})
                if fault[1] == "away":
                    return self.send(302, {}, {"Location": api.away})
                if fault[1] == "cut":
                    status, body = api.answer(url.path, query)
                    data = json.dumps(body).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return None
            status, body = api.answer(url.path, query)
            return self.send(status, body)

        def send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(copy.deepcopy(body)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def serve(api: FakeApi) -> Generator[FakeApi, None, None]:
    """Serve `api` on a free loopback port for the duration of the generator."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    server.daemon_threads = True
    api.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
