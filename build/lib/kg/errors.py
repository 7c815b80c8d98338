"""Domain errors. Each says what went wrong and how to fix it; the CLI prints them once."""

from __future__ import annotations


class KgError(Exception):
    """Base class for every error kg raises on purpose."""

    exit_code = 1


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


class StoreBusyError(StoreError):
    """Another process holds the store for writing."""


class StoreMissingError(StoreError):
    """A read command was pointed at a store that does not exist."""


class QuerySyntaxError(KgError):
    """SPARQL text that does not parse."""


class QueryTimeoutError(KgError):
    """A query ran past its time limit."""


class ParameterError(KgError):
    """A named query parameter is missing, unknown or of the wrong type."""


class EndpointError(KgError):
    """A remote SPARQL endpoint is unreachable or answered with an error."""


class NotFoundError(KgError):
    """A named thing (query, paper, graph) does not exist."""


class ForbiddenError(KgError):
    """The server refuses the operation as configured (an update, a SERVICE call)."""


class ResultTooLargeError(KgError):
    """A query result is larger than the server's limit."""
