"""Domain errors. Each says what went wrong and how to fix it; the CLI prints them once.

An error about a setting the caller chose carries that setting as data (`parameter`), and
its message marks where the setting's name goes with `{parameter}`. Each front end words it
in its own terms, in one place: the CLI as a flag (`--top`, `--param dataset`), the server as
a query parameter (`top`, `dataset`). `str(error)` gives the library's own wording.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Param:
    """A setting an error is about.

    `role` says whose it is: an `option` of the call (how many, which metric), a `query`
    parameter of a named query, or a `setting` the operator of a server chose."""

    name: str
    role: Literal["option", "query", "setting"] = "option"


class KgError(Exception):
    """Base class for every error kg raises on purpose."""

    exit_code = 1

    def __init__(self, message: str = "", *, parameter: str | Param | None = None) -> None:
        self.template = message
        self.parameter = Param(parameter) if isinstance(parameter, str) else parameter
        super().__init__(self.worded(lambda p: repr(p.name)))

    def worded(self, spell: Callable[[Param], str]) -> str:
        """The message with its parameter spelt by `spell` (a front end's wording)."""
        if self.parameter is None:
            return str(self.args[0]) if self.args else ""
        return self.template.replace("{parameter}", spell(self.parameter))


class UsageError(KgError):
    """The user asked for something that cannot be done as asked (exit code 2)."""

    exit_code = 2


class RecordError(KgError):
    """One input record cannot be mapped. Names the file, the record and the field."""

    def __init__(
        self, message: str, *, source: str = "", locator: str = "", field: str = ""
    ) -> None:
        self.message = message
        self.source = source
        self.locator = locator
        self.field = field
        super().__init__(self.__str__())

    def located(self, source: str, locator: str) -> RecordError:
        return RecordError(self.message, source=source, locator=locator, field=self.field)

    def __str__(self) -> str:
        where = ":".join(p for p in (self.source, self.locator) if p)
        field = f" field {self.field!r}:" if self.field else ""
        return f"{where}:{field} {self.message}" if where else f"{field} {self.message}".strip()


class InputError(KgError):
    """A whole input file or stream cannot be read (missing, unreadable, not JSON)."""


class StoreError(KgError):
    """The store cannot be opened or used."""


class DiskFullError(StoreError):
    """The disk holding the store has no room left for a write (kg.rdf.disk)."""


class StoreBusyError(StoreError):
    """Another process holds the store for writing."""


class StoreMissingError(StoreError):
    """A read command was pointed at a store that does not exist."""


class StoreVersionError(StoreError):
    """The store was written by another version of kg's mapping and layout (kg.rdf.stamp):
    an older one is rebuilt by ingesting again, a newer one needs a newer kg. `found` is the
    store's version (None: a store from before stores recorded theirs)."""

    def __init__(self, message: str, *, found: int | None = None) -> None:
        super().__init__(message)
        self.found = found


class QuerySyntaxError(KgError):
    """SPARQL text that does not parse."""


class QueryTimeoutError(KgError):
    """A query ran past its time limit."""


class ParameterError(KgError):
    """A named query parameter is missing, unknown or of the wrong type."""


class _WithCandidates(KgError):
    """An error about a name that carries the IRIs of the things it might have meant."""

    def __init__(
        self,
        message: str = "",
        *,
        parameter: str | Param | None = None,
        candidates: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message, parameter=parameter)
        self.candidates = candidates


class AmbiguousNameError(_WithCandidates, ParameterError):
    """A name names several things of the kind asked for; `candidates` holds their IRIs."""


class EndpointError(KgError):
    """A remote SPARQL endpoint is unreachable or answered with an error."""


class SourceError(KgError):
    """A remote source kg pulls from (the live API) failed repeatedly, redirected elsewhere or
    answered outside its contract. What was pulled before it is kept; running again resumes."""


class NotFoundError(KgError):
    """A named thing (query, paper, graph) does not exist."""


class UnknownNameError(_WithCandidates, NotFoundError):
    """A name, slug or id names no thing of the kind asked for (kg.query.resolve).

    `candidates` holds the IRIs of the nearest things, which the message lists."""


class ForbiddenError(KgError):
    """The server refuses the operation as configured (an update, a SERVICE call)."""


class ResultTooLargeError(KgError):
    """A query result is larger than the server's limit."""


class MemoryLimitError(KgError):
    """A query needed more memory than its process may use (`--max-memory-mb`)."""


class ModelNotTrainedError(KgError):
    """A request needs a model (the suggested links') that is not trained and kept yet, and
    a request does not train it (too large a store, or its training failed before)."""


class QueryTooComplexError(QuerySyntaxError):
    """SPARQL nested too deeply or too long for the parser to take safely."""


class FetchError(KgError):
    """A file of an archive could not be fetched: not found, refused, rate limited, a broken
    connection or TLS, a full disk, a wrong size or checksum. The message names the file and
    says what to do; a partial file is kept only where running again resumes it."""

    def __init__(self, message: str, *, name: str = "", kind: str = "") -> None:
        super().__init__(f"{name}: {message}" if name else message)
        self.name = name
        self.kind = kind  # not-found, forbidden, rate-limited, connection, tls, disk, checksum, ...
