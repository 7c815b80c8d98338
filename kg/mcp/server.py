"""kg's Model Context Protocol server: tools, resources and prompts over a `Backend`.

The tools take typed, documented arguments (the SDK validates them against their JSON
Schema) and return structured JSON: the same objects `kg … --json` prints. Every call goes
to the backend, which runs it where kg's limits hold (kg.serve.mcp: a pool worker with the
time, memory and network limits of `kg serve`). A kg error comes back as a tool error
carrying kg's message (`isError`), never as a traceback.

The `mcp` SDK is imported inside `build` (and by kg.serve.mcp, the transports): `kg mcp`
loads it when it starts, `kg serve` on the first request to `/mcp`, and `import kg` or
`kg --help` never.
"""

# No `from __future__ import annotations`: the SDK reads the tools' signatures, whose
# annotations use values of `build` (the caps), so they are evaluated where they stand.
import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import Field

from kg.errors import ForbiddenError, KgError, Param
from kg.graph.relations import (
    ALL,
    BY_CHOICES,
    DEFAULT_BY,
    DEFAULT_METRIC,
    METRIC_NAMES,
    SUGGEST_KINDS,
)
from kg.library.results import plain_json
from kg.mcp.texts import guide_text, prompt_text
from kg.rdf.sparql_scan import refuse_outbound, scan

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

#: Named-query parameter values: text, or a number or boolean the header's type takes.
ParamValue = str | int | float | bool


@dataclass(frozen=True)
class Limits:
    """What one tool call may return, and the largest query text it takes."""

    max_rows: int = 1000
    max_bytes: int = 1_000_000
    max_query_chars: int = 1_048_576
    #: Hosts a SPARQL SERVICE or LOAD may reach ('*': any); empty: none.
    allow_service: frozenset[str] = field(default_factory=frozenset)
    #: How the operator raises a setting, in an error's remedy ("kg mcp --timeout").
    command: str = "kg mcp"


class Backend(Protocol):
    """Where the tools' calls run. `call` runs one of kg.mcp.calls' functions on the
    library under the store's limits; `paper` gathers a paper's card."""

    base_iri: str

    async def call(self, name: str, /, **kwargs: Any) -> dict[str, Any]: ...

    async def paper(self, paper: str) -> dict[str, Any]: ...


def _arguments(limits: Limits) -> Callable[[Param], str]:
    def spell(parameter: Param) -> str:
        if parameter.role == "setting":
            return f"{limits.command} --{parameter.name.replace('_', '-')}"
        return f"the argument {parameter.name!r}"

    return spell


def _line(text: str) -> str:
    return " ".join(text.split())


def build(
    backend: Backend,
    limits: Limits | None = None,
    *,
    name: str = "kg",
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None,
) -> "MCPServer":
    """The MCP server (the SDK's `MCPServer`) whose tools call `backend`; `lifespan` (an
    async context manager factory, given the server) runs around a stdio session."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent, ToolAnnotations

    from kg.mcp.budget import ANSWER_BYTES, DEFAULT_TOP, MAX_TOP, compact
    from kg.mcp.calls import trim_card

    limits = limits or Limits()
    spell = _arguments(limits)
    answer_bytes = min(limits.max_bytes, ANSWER_BYTES)
    server = MCPServer(
        name,
        title="kg: a knowledge graph of machine-learning research",
        instructions=guide_text("instructions.md"),
        log_level="WARNING",
        lifespan=lifespan,
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    #: A tool's answer: its JSON as structured content, and once more as compact text.
    Answer = Annotated[CallToolResult, dict[str, Any]]

    def answer(data: dict[str, Any]) -> CallToolResult:
        data = plain_json(data)  # standard JSON: a number beyond float range is null
        return CallToolResult(
            content=[TextContent(type="text", text=compact(data))], structured_content=data
        )

    async def run(call: str, **kwargs: Any) -> CallToolResult:
        try:
            return answer(await backend.call(call, **kwargs))
        except KgError as exc:
            raise ToolError(_line(exc.worded(spell))) from None

    def top_field(what: str) -> Any:
        return Field(ge=1, le=MAX_TOP, description=f"{what} to return at most "
                     f"({DEFAULT_TOP} by default, {MAX_TOP} at most).")

    offset_field = Field(
        ge=0, le=100_000, description="Skip this many first (0 by default): the answer's "
        "next_offset, to read the next page."
    )

    def checked_query(query: str) -> None:
        if len(query) > limits.max_query_chars:
            raise ToolError(
                f"the query is {len(query):,} characters; this server takes at most "
                f"{limits.max_query_chars:,}: send a shorter query"
            )
        try:
            shape = scan(query)
            if shape.is_update:
                raise ForbiddenError(
                    "kg's MCP tools are read-only: SPARQL updates (INSERT, DELETE, LOAD, "
                    "CLEAR, …) are refused; send a SELECT, ASK, CONSTRUCT or DESCRIBE query"
                )
            from kg.search.sparql import SERVICE_IRI

            refuse_outbound(shape, limits.allow_service, frozenset({SERVICE_IRI}))
        except KgError as exc:
            raise ToolError(_line(exc.worded(spell))) from None

    # --- tools ------------------------------------------------------------------------------

    @server.tool(title="Full-text search", annotations=read_only)
    async def search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description='Words, "a phrase", prefix* or an identifier (arXiv id, DOI, '
                "slug, owner/name of a repository).",
            ),
        ],
        type: Annotated[
            str | None,
            Field(
                max_length=40,
                description="Keep hits of one class only: paper, method, task, dataset, "
                "area, collection, author or repository.",
            ),
        ] = None,
        top: Annotated[int, top_field("Hits")] = DEFAULT_TOP,
        offset: Annotated[int, offset_field] = 0,
    ) -> Answer:
        """Search kg's papers, methods, tasks, datasets, areas, collections, authors and
        repositories by their text (titles, abstracts, names, identifiers), best first.
        Returns `hits` (IRI, class, label, score, snippet; papers with their year, tasks
        and whether they have code) from `offset`, at most `top`; `total`, the hits in all;
        `next_offset`, the offset of the next page (null on the last); `counts`, the hits
        per class. An answer kept short cuts `hits` further and says so in `note`."""
        return await run("search", text=query, type=type, top=top, offset=offset)

    @server.tool(title="SPARQL query", annotations=read_only)
    async def sparql(
        query: Annotated[
            str,
            Field(
                min_length=1,
                description="A SPARQL 1.1 SELECT, ASK, CONSTRUCT or DESCRIBE query. kg's "
                "prefixes (kg:, dcterms:, foaf:, rdfs:, schema:, prov:, …) need no PREFIX "
                "line; read the kg://guide/sparql resource first.",
            ),
        ],
        max_rows: Annotated[
            int,
            Field(ge=1, le=limits.max_rows, description="Rows (or triples) to return at most."),
        ] = min(DEFAULT_TOP, limits.max_rows),
    ) -> Answer:
        """Run a read-only SPARQL query on kg. The default graph is the union of all named
        graphs (each fact once); GRAPH ?g reaches one record's or dump entry's own graph.
        SELECT answers come as SPARQL 1.1 JSON results (`head`, `results.bindings`, `rows`),
        ASK as `boolean`, CONSTRUCT and DESCRIBE as N-Triples (`ntriples`, `triples`).
        Results are cut at `max_rows` and at about 12 kB, with `truncated` and a `note` when
        cut: page with LIMIT and OFFSET. Updates and SERVICE calls to
        other hosts are refused; a query that runs too long or needs too much memory is
        stopped with an error."""
        checked_query(query)
        return await run("sparql", text=query, max_rows=max_rows, max_bytes=answer_bytes)

    @server.tool(title="Run a named query", annotations=read_only)
    async def run_named_query(
        name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="The query's name, e.g. papers-by-author (the kg://queries "
                "resource lists them with their parameters).",
            ),
        ],
        params: Annotated[
            dict[str, ParamValue] | None,
            Field(
                description="The query's parameters by name. A parameter that names a thing "
                "(an author, task, paper, …) takes its slug, its name in any case, an arXiv "
                "id or its IRI."
            ),
        ] = None,
        max_rows: Annotated[
            int,
            Field(ge=1, le=limits.max_rows, description="Rows (or triples) to return at most."),
        ] = min(DEFAULT_TOP, limits.max_rows),
    ) -> Answer:
        """Run one of kg's named queries (queries/*.rq) with typed parameters, bound as RDF
        terms (never pasted into the text) and names resolved as `kg query` resolves them.
        Answers as the sparql tool does."""
        size = sum(len(str(k)) + len(str(v)) for k, v in (params or {}).items())
        if size > limits.max_query_chars:
            raise ToolError(
                f"the parameters are {size:,} characters; this server takes at most "
                f"{limits.max_query_chars:,}: send shorter values"
            )
        return await run(
            "named_query",
            name=name,
            params=params or {},
            max_rows=max_rows,
            max_bytes=answer_bytes,
        )

    @server.tool(title="A paper's card", annotations=read_only)
    async def paper(
        paper: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="The paper: its Papers-with-Code slug, arXiv id (any version), "
                "title in any case, or IRI.",
            ),
        ],
        top: Annotated[int, top_field("Items of each list")] = DEFAULT_TOP,
    ) -> Answer:
        """A paper's card: its bibliographic data (title, date, arXiv id, venue, abstract,
        links), authors in byline order, tasks, methods it introduces and uses, datasets it
        introduces, its code (repositories in the order kg keeps, official flag, framework,
        harvested samples with their execution status), its leaderboard results with their
        rank on each leaderboard, its most similar papers, and the records and dumps it
        comes from (what the paper's page at /paper/<slug> shows). Each list holds its
        first `top` items; `counts` gives each list's length in all. An answer kept short
        cuts the longest lists further and says so in `note`."""
        try:
            return answer(trim_card(await backend.paper(paper), top, answer_bytes))
        except KgError as exc:
            raise ToolError(_line(exc.worded(spell))) from None

    @server.tool(title="A leaderboard", annotations=read_only)
    async def leaderboard(
        task: Annotated[
            str,
            Field(min_length=1, max_length=500, description="The task: slug, name or IRI."),
        ],
        dataset: Annotated[
            str,
            Field(min_length=1, max_length=500, description="The dataset: slug, name or IRI."),
        ],
        metric: Annotated[
            str | None,
            Field(max_length=500, description="Keep this metric only (e.g. Top 1 Accuracy); "
                  "by default every metric of the leaderboard."),
        ] = None,
        top: Annotated[int, top_field("Entries of each metric")] = DEFAULT_TOP,
        offset: Annotated[int, offset_field] = 0,
        history: Annotated[
            Literal["new-bests", "all", "none"],
            Field(description="The best result over time: new-bests (default: each result "
                  "that beat every earlier one), all (every dated result with the best so "
                  "far, at most 100 points) or none."),
        ] = "new-bests",
    ) -> Answer:
        """A task's leaderboard on a dataset. `metrics` lists every metric with its number
        of results; `sections` holds, per metric, `entries` ranked best first in the
        metric's direction (rank, model, value as published, paper, title, date, result,
        flags when doubtful) from `offset`, at most `top`, with `total` and `next_offset`
        (null on the last page), and `history`, the best result over time (date, value,
        model, paper), oldest first. `code` gives, for the papers of the entries shown,
        how many repositories they have and the first few. An answer kept short cuts the
        longest lists further and says so in `note`."""
        return await run("leaderboard", task=task, dataset=dataset, metric=metric, top=top,
                         offset=offset, history=history)

    @server.tool(title="Similar papers", annotations=read_only)
    async def similar_papers(
        paper: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="The paper: slug, arXiv id, title or IRI.",
            ),
        ],
        by: Annotated[
            str,
            Field(
                max_length=200,
                description=f"Compare by: {', '.join(BY_CHOICES)}, or several "
                "comma-separated.",
            ),
        ] = DEFAULT_BY,
        metric: Annotated[
            str,
            Field(
                max_length=40,
                description=f"How to score shared items: {', '.join(METRIC_NAMES)}.",
            ),
        ] = DEFAULT_METRIC,
        top: Annotated[int, top_field("Papers")] = DEFAULT_TOP,
        offset: Annotated[int, offset_field] = 0,
    ) -> Answer:
        """The papers closest to a paper, best first: `results` from `offset`, at most
        `top`, each with its score, `shared_count` and its first 5 shared items (a rare
        method or a shared author counts for more than a common one); `next_offset` reads
        on (null when no more papers are close)."""
        return await run("similar_page", paper=paper, by=by, metric=metric, top=top, offset=offset)

    @server.tool(title="What two papers share", annotations=read_only)
    async def shared(
        a: Annotated[
            str, Field(min_length=1, max_length=2000, description="A paper: slug, arXiv id, "
                       "title or IRI.")
        ],
        b: Annotated[str, Field(min_length=1, max_length=2000, description="Another paper.")],
        by: Annotated[
            str,
            Field(max_length=200, description=f"Compare by: {', '.join(BY_CHOICES)}, or "
                  "several comma-separated."),
        ] = ALL,
        top: Annotated[int, top_field("Items of each relation")] = DEFAULT_TOP,
        offset: Annotated[int, offset_field] = 0,
    ) -> Answer:
        """What two papers share, per relation (methods, repositories, tasks, authors,
        datasets): each relation's counts for a and b, its Jaccard index, and its shared
        `items`, rarest first, from `offset`, at most `top`, with `total` and
        `next_offset`."""
        return await run("shared_page", a=a, b=b, by=by, top=top, offset=offset)

    @server.tool(title="Suggested links", annotations=read_only)
    async def suggest(
        paper: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="The paper: slug, arXiv id, title or IRI.",
            ),
        ],
        kind: Annotated[
            str | None,
            Field(
                max_length=40,
                description=f"Only links to one kind: {', '.join(SUGGEST_KINDS)}.",
            ),
        ] = None,
        top: Annotated[int, top_field("Suggestions")] = DEFAULT_TOP,
        offset: Annotated[int, offset_field] = 0,
    ) -> Answer:
        """The tasks, datasets and methods a paper most likely lacks (predictions, not
        data), best first: `suggestions` from `offset`, at most `top`, each with its score
        and its first 3 reasons of each sort (similar papers that have the link, the
        paper's items that co-occur with it, the words of its text that name it);
        `next_offset` reads on."""
        return await run("suggest_page", paper=paper, kind=kind, top=top, offset=offset)

    # --- resources --------------------------------------------------------------------------

    @server.resource(
        "kg://guide/sparql",
        name="sparql-guide",
        title="Writing SPARQL for kg",
        description="Prefixes, where triples live (named graphs, the union default graph), "
        "the main classes and properties, and example queries.",
        mime_type="text/markdown",
    )
    def sparql_guide() -> str:
        return guide_text("sparql-guide.md")

    def ontology_file(name: str, title: str, description: str) -> None:
        def read() -> str:
            from kg.resources import ontology_dir

            return (ontology_dir() / name).read_text(encoding="utf-8")

        server.resource(
            f"kg://ontology/{name}",
            name=name.removesuffix(".ttl"),
            title=title,
            description=description,
            mime_type="text/turtle",
        )(read)

    ontology_file(
        "kg.ttl",
        "kg's ontology (OWL, Turtle)",
        "Every class and property kg's data uses, with labels and comments.",
    )
    ontology_file(
        "shapes.ttl",
        "kg's SHACL shapes (Turtle)",
        "What each class's instances must hold: the properties, their types and counts.",
    )

    @server.resource(
        "kg://queries",
        name="named-queries",
        title="kg's named queries",
        description="Each named query (for run_named_query): name, summary, description, "
        "typed parameters with examples, and its SPARQL.",
        mime_type="application/json",
    )
    def queries() -> str:
        from kg.library.named import named_queries

        catalogue = [{**q.as_json(), "sparql": q.sparql} for q in named_queries().values()]
        return json.dumps(catalogue, indent=1, ensure_ascii=False)

    @server.resource(
        "kg://void",
        name="void",
        title="The dataset's VoID description (Turtle)",
        description="What the store holds: triples, entities per class, properties, "
        "vocabularies, example resources, licence (the counts of kg stats).",
        mime_type="text/turtle",
    )
    async def void() -> str:
        try:
            data = await backend.call("void")
        except KgError as exc:
            from mcp.server.mcpserver.exceptions import ResourceError

            raise ResourceError(_line(exc.worded(spell))) from None
        return str(data["turtle"])

    # --- prompts ----------------------------------------------------------------------------

    @server.prompt(title="Survey a task")
    def survey_task(
        task: Annotated[str, Field(description="The task: its name, slug or IRI.")],
    ) -> str:
        """Survey a research task: its subtasks, the methods its papers use, its
        leaderboards and their best results, and the papers with code."""
        return prompt_text("survey-task.md", task=task)

    @server.prompt(title="Compare two papers")
    def compare_papers(
        a: Annotated[str, Field(description="A paper: title, slug or arXiv id.")],
        b: Annotated[str, Field(description="Another paper.")],
    ) -> str:
        """Compare two papers: what each is about, what they share (methods, tasks,
        datasets, authors, code), and how their results compare on shared leaderboards."""
        return prompt_text("compare-papers.md", a=a, b=b)

    @server.prompt(title="Answer a question with SPARQL")
    def ask_with_sparql(
        question: Annotated[str, Field(description="The question to answer from kg.")],
    ) -> str:
        """Answer a question about the graph by writing SPARQL: read the guide, try a
        named query first, then write and refine a query."""
        return prompt_text("ask-with-sparql.md", question=question)

    _strict_arguments(server)
    return server


#: The Python values each JSON Schema type takes: no coercion ("5" is no integer, true no 1).
_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _types(schema: dict[str, Any]) -> list[str]:
    """The JSON types a property's schema admits (`type`, or each of its `anyOf`)."""
    if "type" in schema:
        kind = schema["type"]
        return [kind] if isinstance(kind, str) else list(kind)
    return [t for option in schema.get("anyOf", ()) for t in _types(option)]


def argument_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """What is wrong with a call's arguments against its tool's input schema, in words: an
    argument the tool does not take, or a value of another JSON type; None when nothing is
    (the SDK then checks the ranges and lengths).

    >>> schema = {"properties": {"top": {"type": "integer"}, "type": {"anyOf": [
    ...     {"type": "string"}, {"type": "null"}]}}}
    >>> argument_problem(schema, {"top": True})
    "the argument 'top' must be an integer, not true"
    >>> argument_problem(schema, {"tpo": 3})
    "this tool takes no argument 'tpo'; its arguments are: top, type"
    >>> argument_problem(schema, {"top": 3, "type": None}) is None
    True
    """
    properties: dict[str, Any] = schema.get("properties", {})
    for name, value in arguments.items():
        if name not in properties:
            return (
                f"this tool takes no argument {name!r}; its arguments are: "
                f"{', '.join(properties) or 'none'}"
            )
        kinds = _types(properties[name])
        if kinds and not any(_JSON_TYPES.get(k, lambda _: True)(value) for k in kinds):
            wanted = " or ".join(
                "an integer" if k == "integer" else f"a {k}" if k != "null" else "null"
                for k in kinds
            )
            return f"the argument {name!r} must be {wanted}, not {json.dumps(value)[:80]}"
    return None


def _strict_arguments(server: "MCPServer") -> None:
    """Refuse what the SDK would coerce or drop: a tool call's unknown or mistyped argument
    (`top: true` is no 1) comes back as a tool error, a prompt asked by an unknown name or
    without its arguments as a JSON-RPC error (invalid params), never an internal error."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    call_tool, get_prompt = server.call_tool, server.get_prompt
    schemas: dict[str, dict[str, Any]] = {}

    async def strict_call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not schemas:
            schemas.update({t.name: t.input_schema for t in await server.list_tools()})
        if name in schemas:  # an unknown tool: the SDK's own error names it
            problem = argument_problem(schemas[name], arguments)
            if problem:
                raise ToolError(problem)
        return await call_tool(name, arguments, context)

    async def strict_get_prompt(
        name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> Any:
        prompts = {p.name: p for p in await server.list_prompts()}
        prompt = prompts.get(name)
        if prompt is None:
            raise MCPError(
                INVALID_PARAMS, f"unknown prompt {name!r}; the prompts are: {', '.join(prompts)}"
            )
        given = arguments or {}
        takes = {a.name: a for a in prompt.arguments or ()}
        for key, value in given.items():
            if key not in takes:
                raise MCPError(
                    INVALID_PARAMS,
                    f"the prompt {name!r} takes no argument {key!r}; its arguments are: "
                    f"{', '.join(takes)}",
                )
            if not isinstance(value, str):
                raise MCPError(INVALID_PARAMS, f"the argument {key!r} must be text")
        missing = [a for a, arg in takes.items() if arg.required and a not in given]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"the prompt {name!r} needs the argument {missing[0]!r}"
            )
        return await get_prompt(name, arguments, context)

    # instance attributes: the SDK's request handlers call `self.call_tool` / `self.get_prompt`
    setattr(server, "call_tool", strict_call_tool)  # noqa: B010
    setattr(server, "get_prompt", strict_get_prompt)  # noqa: B010
