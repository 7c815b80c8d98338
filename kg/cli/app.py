"""The Typer application, its global options, and the one place errors become messages."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console, RenderableType
from rich.markup import escape

from kg.config import BASE_IRI_ENV, DEFAULT_BASE_IRI, DEFAULT_STORE, STORE_ENV, base_iri_of
from kg.errors import KgError, Param

if TYPE_CHECKING:
    from kg.library import KnowledgeGraph

app = typer.Typer(
    name="kg",
    help="A knowledge graph of machine-learning research: paper records as RDF in Oxigraph.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

# Options that `kg sparql` and `kg query` share.
ResultFormat = Annotated[
    str,
    typer.Option(
        "--format", "-f", help="table|json|xml|csv|tsv, or turtle|ntriples|jsonld for CONSTRUCT."
    ),
]
EndpointUrl = Annotated[
    str | None,
    typer.Option(help="Run against this SPARQL 1.1 endpoint URL instead of the store."),
]
EndpointTimeout = Annotated[float, typer.Option(help="Seconds to wait for a remote endpoint.")]
MaxMemory = Annotated[
    int | None,
    typer.Option(
        min=128,
        help="Memory limit of the query, in MB; over it the query stops with an error "
        "(default: half the machine's memory).",
        show_default=False,
    ),
]


@dataclass
class State:
    store_path: Path = DEFAULT_STORE
    memory: bool = False
    base_iri: str = DEFAULT_BASE_IRI
    #: whether this process is the `kg` command (not a caller's, as in CliRunner tests): only
    #: then may a command change what outlives it in the process (kg ingest's compaction)
    owns_process: bool = False
    _graph: KnowledgeGraph | None = None

    def graph(self, *, write: bool = False) -> KnowledgeGraph:
        """The store as the library opens it: for writing, or read-only (a snapshot beside
        any writer), on first use. Every command goes through it."""
        if self._graph is not None and (self._graph.read_only and write):
            self.close()
        if self._graph is None:
            from kg.library import KnowledgeGraph  # opens the store on first use

            self._graph = KnowledgeGraph(
                self.store_path,
                read_only=not write and not self.memory,
                memory=self.memory,
                base_iri=self.base_iri,
            )
        return self._graph

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()
            self._graph = None


state = State()

F = TypeVar("F", bound=Callable[..., Any])


def as_flag(parameter: Param) -> str:
    """How the CLI spells the setting an error is about: `--top`, `--param dataset`."""
    if parameter.role == "query":
        return f"--param {parameter.name}"
    return "--" + parameter.name.replace("_", "-")


def memory_limited(megabytes: int | None, run: Callable[[], None]) -> None:
    """Run a local query under a memory limit (kg.library.limits.run_limited): exit 1 over it."""
    from kg.library.limits import memory_limit_error, run_limited

    def body(limit: int) -> int:
        try:
            run()
            return 0
        except typer.Exit as exc:
            return exc.exit_code
        except KgError as exc:
            _report(exc)
            return exc.exit_code
        except MemoryError:  # Python's own allocation failed first
            failure = memory_limit_error(limit)
            _report(failure)
            return failure.exit_code
        except BrokenPipeError:
            return 0
        finally:
            state.close()  # the child's snapshot pin goes with it

    code = run_limited(megabytes, body)
    if code:
        raise typer.Exit(code)


def _report(exc: BaseException) -> None:
    # messages quote data: escape it, "[/red]" is not markup
    message = exc.worded(as_flag) if isinstance(exc, KgError) else str(exc)
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)


def handles_errors(func: F) -> F:
    """Turn kg's domain errors into one line on stderr and their exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KgError as exc:
            _report(exc)
            raise typer.Exit(exc.exit_code) from None
        except BrokenPipeError:  # `kg ... | head`
            sys.stderr.close()
            raise typer.Exit(0) from None
        except OSError as exc:  # disk full, permissions: one line, not a traceback
            _report(exc)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def help_text(doc: str) -> str:
    r"""A docstring as help: each paragraph's lines joined into one, so that the help wraps
    at the terminal's width as whole sentences; an indented paragraph (examples) as it is.

    >>> help_text("First line\n    goes on.\n\n    Example:\n\n      kg x\n      kg y\n")
    'First line goes on.\n\nExample:\n\n  kg x\n  kg y'
    """
    import inspect

    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(
        p if p.startswith(" ") else " ".join(line.strip() for line in p.splitlines())
        for p in paragraphs
    )


def command(*args: Any, **kwargs: Any) -> Callable[[F], F]:
    """`app.command` with kg's error handling."""

    def register(func: F) -> F:
        if "help" not in kwargs and func.__doc__:
            kwargs["help"] = help_text(func.__doc__)
        app.command(*args, **kwargs)(handles_errors(func))
        return func

    return register


def _print_version(value: bool) -> None:
    if value:
        from kg import __version__

        out.print(f"kg {__version__}", highlight=False)
        raise typer.Exit(0)


@app.callback()
def global_options(
    ctx: typer.Context,
    store: Annotated[
        Path,
        typer.Option(
            "--store", envvar=STORE_ENV, help="The on-disk store directory.", show_default=True
        ),
    ] = DEFAULT_STORE,
    memory: Annotated[
        bool, typer.Option("--memory", help="Use a throwaway in-memory store instead.")
    ] = False,
    base_iri: Annotated[
        str,
        typer.Option("--base-iri", envvar=BASE_IRI_ENV, help="The base of every instance IRI."),
    ] = DEFAULT_BASE_IRI,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print kg's version."
        ),
    ] = False,
) -> None:
    """kg: build, query, project, export and serve the graph."""
    state.close()
    state.store_path = store
    state.memory = memory
    state.base_iri = base_iri_of(base_iri)
    ctx.call_on_close(state.close)


def main() -> None:
    state.owns_process = True
    app()


def emit_json(data: Any) -> None:
    """Print data as JSON, the one way `--json` and `--format json` write it: standard JSON,
    a number beyond float range as `null` (kg.library.results.json_text)."""
    from kg.library.results import json_text

    emit(json_text(data, indent=1))


def emit(rendered: str | RenderableType) -> None:
    """Print a result: text as it is (with a final newline), a rich renderable on the console."""
    if isinstance(rendered, str):
        sys.stdout.write(rendered if rendered.endswith("\n") else rendered + "\n")
        sys.stdout.flush()
    else:
        out.print(rendered, soft_wrap=False)  # a table's title and caption wrap at its width
