"""`kg pull`: keep the graph current from the relaunched Papers with Code API (docs/live.md).

One run reads, in this order, and commits each page before it asks for the next:

1. the taxonomy: `areas/`, `tasks/`, `methods/` (every page; unchanged entries write nothing);
2. papers: `papers/?start_date&end_date&include_resources=true` by publication date, from the
   cursor less a recent window (30 days) to today, or every date on a first run; a paper
   whose list entry is new or changed is read in full (`papers/{arxiv id or id}`), one held
   unchanged costs no request of its own;
3. benchmarks: `datasets/`; one whose entry is new or changed has its results read
   (`datasets/{id}/evaluations/`, every page).

Then, and only then, the cursor moves (the source unit, written last). A run killed at any
moment leaves committed pages and the old cursor: the next run reads the same windows again,
skips what landed (content hashes) and converges to the same graph.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kg.errors import RecordError, SourceError, UsageError
from kg.ingest import api
from kg.ingest.identity import pwc_slug
from kg.ingest.ingestor import Ingestor, IngestReport
from kg.ingest.units import Context, Mapped, content_hash
from kg.rdf.store import GraphStore
from kg.rdf.terms import segment
from kg.rdf.vocab import KG
from kg.sources.http import BudgetSpent, Missing, PoliteClient

DEFAULT_BASE_URL = "https://paperswithcode.co/api/v1"
#: pwc-cli's bounds: at most 100 rows a page (500 for areas and methods), pages 1-100.
PAGE_SIZE = 100
TAXONOMY_PAGE_SIZE = 500
MAX_PAGE = 100
RECENT_DAYS = 30
FIRST_DATE = dt.date(1900, 1, 1)  # the lower end of "every date" when a window must split


@dataclass
class PullReport:
    """What a pull did: requests sent, entries listed and read in full, 404s skipped, fields
    outside the contract, where it stopped early and the cursor it left."""

    base_url: str
    since: str | None
    until: str
    requests: int = 0
    retries: int = 0
    listed: Counter[str] = field(default_factory=Counter)  # entries listed, by kind
    fetched: Counter[str] = field(default_factory=Counter)  # entries read in full, by kind
    evaluations: int = 0
    missing: list[str] = field(default_factory=list)  # URLs answered 404, skipped
    truncated: list[str] = field(default_factory=list)  # windows over the API's page cap
    stopped: str | None = None  # why the run stopped before the end (the cursor stayed)
    cursor: str | None = None  # the cursor after the run
    seconds: float = 0.0
    ingest: IngestReport = field(default_factory=IngestReport)

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "since": self.since,
            "until": self.until,
            "requests": self.requests,
            "retries": self.retries,
            "listed": dict(self.listed),
            "fetched": dict(self.fetched),
            "evaluations": self.evaluations,
            "missing": list(self.missing),
            "truncated": list(self.truncated),
            "unknown_fields": dict(self.ingest.unknown_keys),
            "stopped": self.stopped,
            "cursor": self.cursor,
            "seconds": round(self.seconds, 3),
            "ingest": self.ingest.as_dict(),
        }


def rows(payload: Any, url: str) -> tuple[list[dict[str, Any]], int | None]:
    """A list response's rows and total: `{"count"|"total", "results"|"items"}` or a bare
    array (pwc-cli's `_rows`)."""
    if isinstance(payload, list):
        return [item for item in payload if isinstance(item, dict)], None
    if not isinstance(payload, dict):
        raise SourceError(f"{url}: expected a list or an object with 'results', got JSON "
                          f"{type(payload).__name__}")  # fmt: skip
    values = payload.get("results")
    if values is None:
        values = payload.get("items")
    if not isinstance(values, list):
        raise SourceError(f"{url}: the response holds no 'results' or 'items' list")
    total = payload.get("count") if payload.get("count") is not None else payload.get("total")
    return [item for item in values if isinstance(item, dict)], (
        int(total) if isinstance(total, int | float | str) and str(total).isdigit() else None
    )


def _slug(item: dict[str, Any]) -> str | None:
    """An entry's slug as the API gives it, else PwC's slug of its name."""
    slug, name = item.get("slug"), item.get("name")
    if isinstance(slug, str) and slug.strip():
        return slug.strip()
    return pwc_slug(name) or None if isinstance(name, str) else None


def parse_date(value: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{{parameter}} {value!r} is not a date: give YYYY-MM-DD",
                         parameter=option) from None  # fmt: skip


class Pull:
    """One `kg pull` run into `store` through `ingestor` (see the module)."""

    def __init__(
        self,
        store: GraphStore,
        ingestor: Ingestor,
        client: PoliteClient,
        *,
        since: dt.date | None = None,
        until: dt.date | None = None,
        recent_days: int = RECENT_DAYS,
        licence: str = api.API_LICENCE,
        attribution: str = api.API_ATTRIBUTION,
        on_page: Callable[[PullReport], None] | None = None,
    ) -> None:
        self.store = store
        self.ingestor = ingestor
        self.client = client
        self.iris = ingestor.iris
        self.licence = licence
        self.attribution = attribution
        self.on_page = on_page
        self.old_cursor = self.read_cursor()
        self.until = until or dt.date.today()
        if since is None and self.old_cursor is not None:
            since = self.old_cursor - dt.timedelta(days=recent_days)
        self.since = since
        self.report = PullReport(
            client.base_url, since.isoformat() if since else None, self.until.isoformat(),
            ingest=ingestor.report,
        )  # fmt: skip
        self.ctx: Context = ingestor.context(api.SOURCE, api.SNAPSHOT)
        self.areas: dict[str, str] = {}  # API id -> slug
        self.tasks: dict[str, str] = {}

    # -- the cursor ----------------------------------------------------------------------------
    def read_cursor(self) -> dt.date | None:
        graph = self.iris.dump_graph("api", "source")
        dump = self.iris.dump(api.SOURCE, api.SNAPSHOT)
        sparql = f"SELECT ?d WHERE {{ GRAPH <{graph}> {{ <{dump}> {KG.snapshot} ?d }} }}"
        for (value,) in self.store.select_values(sparql, union=False):
            if value:
                return dt.date.fromisoformat(value[:10])
        return None

    # -- the run -------------------------------------------------------------------------------
    def run(self) -> PullReport:
        started = time.perf_counter()
        try:
            self.taxonomy()
            self.papers()
            self.benchmarks()
        except BudgetSpent:
            self.report.stopped = (
                f"--max-requests {self.client.max_requests} reached; what was read is kept, "
                "run kg pull again to go on"
            )
        finally:
            self.report.requests = self.client.requests
            self.report.retries = self.client.retries
            self.report.seconds = time.perf_counter() - started
        cursor = self.old_cursor
        if self.report.stopped is None:
            cursor = max(self.until, self.old_cursor or self.until)
            self.write([api.source_unit(
                self.ctx, base_url=self.client.base_url, cursor=cursor.isoformat(),
                licence=self.licence, attribution=self.attribution,
            )], "source")  # fmt: skip
        self.report.cursor = cursor.isoformat() if cursor else None
        return self.report

    def write(self, units: list[Mapped | RecordError], source: str) -> None:
        self.ingestor.write(units, source=source)
        if self.on_page is not None:
            self.on_page(self.report)

    def get(self, path: str, params: dict[str, object | None] | None = None) -> Any:
        return self.client.get_json(path, params)

    def pages(
        self, path: str, params: dict[str, object | None], page_size: int
    ) -> Iterator[tuple[str, list[dict[str, Any]], int | None]]:
        """Each page of a list (URL, rows, total), page 1 up to the API's last."""
        for page in range(1, MAX_PAGE + 1):
            query = {**params, "page": page, "page_size": page_size}
            url = self.client.url(path, query)
            try:
                items, total = rows(self.get(path, query), url)
            except Missing:
                self.report.missing.append(url)
                return
            yield url, items, total
            if not items or len(items) < page_size:
                return
            if total is not None and page * page_size >= total:
                return
        self.report.truncated.append(f"{path} {params} (over {MAX_PAGE} pages)")

    # -- taxonomy -------------------------------------------------------------------------------
    def taxonomy(self) -> None:
        for url, items, _ in self.pages("areas/", {"ordering": "name"}, TAXONOMY_PAGE_SIZE):
            units: list[Mapped | RecordError] = []
            for i, item in enumerate(items):
                self.report.listed["area"] += 1
                units.extend(self.mapped(url, i, api.map_area, item, self.ctx, url=url))
                slug = _slug(item)
                if item.get("id") is not None and slug:
                    self.areas[str(item["id"])] = str(slug)
            self.write(units, url)
        task_pages = list(self.pages("tasks/", {"ordering": "name"}, PAGE_SIZE))
        for _, items, _ in task_pages:  # parents may come on a later page
            for item in items:
                slug = _slug(item)
                if item.get("id") is not None and slug:
                    self.tasks[str(item["id"])] = str(slug)
        for url, items, _ in task_pages:
            units = []
            for i, item in enumerate(items):
                self.report.listed["task"] += 1
                units.extend(self.mapped(url, i, api.map_task, item, self.ctx, url=url,
                                         areas=self.areas, tasks=self.tasks))  # fmt: skip
            self.write(units, url)
        for url, items, _ in self.pages("methods/", {"ordering": "name"}, TAXONOMY_PAGE_SIZE):
            units = []
            for i, item in enumerate(items):
                self.report.listed["method"] += 1
                units.extend(self.mapped(url, i, api.map_method, item, self.ctx, url=url,
                                         areas=self.areas))  # fmt: skip
            self.write(units, url)

    def mapped(
        self, where: str, index: int, mapper: Callable[..., Mapped | list[Mapped]], *args: Any,
        **kwargs: Any,
    ) -> list[Mapped | RecordError]:
        """The units `mapper(*args, **kwargs)` gives, or its error located at the response
        and row."""
        try:
            done = mapper(*args, **kwargs)
            return list(done) if isinstance(done, list) else [done]
        except RecordError as exc:
            return [exc.located(where, f"results[{index}]")]
        except RecursionError:
            return [RecordError("is nested too deeply to read", source=where,
                                locator=f"results[{index}]")]  # fmt: skip

    # -- papers ---------------------------------------------------------------------------------
    def papers(self) -> None:
        self.paper_window(self.since, self.until)

    def paper_window(self, start: dt.date | None, end: dt.date) -> None:
        params: dict[str, object | None] = {
            "start_date": start.isoformat() if start else None,
            "end_date": end.isoformat(),
            "order_by": "date_published",
            "order_dir": "asc",
            "include_resources": True,
        }
        pages = self.pages("papers/", params, PAGE_SIZE)
        first = next(pages, None)
        if first is None:
            return
        total = first[2]
        if total is not None and total > PAGE_SIZE * MAX_PAGE:
            low = start or FIRST_DATE
            if low < end:  # the API serves 100 pages at most: halve the window
                middle = low + (end - low) // 2
                self.paper_window(low, middle)
                self.paper_window(middle + dt.timedelta(days=1), end)
                return
            self.report.truncated.append(f"papers published on {end} (over {total} papers)")
        self.paper_page(*first[:2])
        for url, items, _ in pages:
            self.paper_page(url, items)

    def paper_page(self, url: str, items: list[dict[str, Any]]) -> None:
        keyed: list[tuple[int, dict[str, Any], str, str]] = []
        units: list[Mapped | RecordError] = []
        for i, item in enumerate(items):
            self.report.listed["paper"] += 1
            try:
                key = api.paper_key(item)
                unit_hash = content_hash(item)
            except RecordError as exc:
                units.append(exc.located(url, f"results[{i}]"))
                continue
            keyed.append((i, item, self.iris.dump_graph("api/paper", key), unit_hash))
        stored = self.store.graph_hashes([graph for _, _, graph, _ in keyed])
        for i, item, graph, unit_hash in keyed:
            if stored.get(graph) == unit_hash:
                continue  # held unchanged: no request of its own
            ref = api.paper_reference(item)
            path = f"papers/{ref}"
            detail_url = self.client.url(path, {"include_resources": True})
            urls = [url]
            try:
                detail = self.get(path, {"include_resources": True})
                self.report.fetched["paper"] += 1
                urls.append(detail_url)
            except Missing:
                self.report.missing.append(detail_url)
                detail = {}
            full = {**item, **detail} if isinstance(detail, dict) else item
            units.extend(self.mapped(url, i, api.map_paper, full, self.ctx, urls=urls,
                                     unit_hash=unit_hash))  # fmt: skip
        self.write(units, url)

    # -- benchmarks and results -----------------------------------------------------------------
    def benchmarks(self) -> None:
        for url, items, _ in self.pages("datasets/", {"ordering": "name"}, PAGE_SIZE):
            for i, item in enumerate(items):
                self.report.listed["benchmark"] += 1
                self.benchmark(url, i, item)

    def benchmark(self, url: str, index: int, item: dict[str, Any]) -> None:
        slug = _slug(item)
        if not slug or item.get("id") in (None, ""):
            self.write([RecordError("names no benchmark: give 'id' and 'slug' or 'name'",
                                    source=url, locator=f"results[{index}]")], url)  # fmt: skip
            return
        graph = self.iris.dump_graph("api/benchmark", segment(str(slug)))
        unit_hash = content_hash(item)
        if self.store.graph_hashes([graph]).get(graph) == unit_hash:
            return
        path = f"datasets/{item['id']}/evaluations/"
        evaluations: list[Any] = []
        urls = [url]
        for page_url, page_items, _ in self.pages(path, {"ordering": "best_rank"}, PAGE_SIZE):
            evaluations.extend(page_items)
            urls.append(page_url)
        self.report.fetched["benchmark"] += 1
        self.report.evaluations += len(evaluations)
        self.write(self.mapped(url, index, api.map_benchmark, item, evaluations, self.ctx,
                               urls=urls, unit_hash=unit_hash, tasks=self.tasks), url)  # fmt: skip
