"""Typed, path-aware access to one JSON object, for mapping untrusted records.

Every read checks the JSON type and says which field is wrong; keys never read are
reported as unknown (ignored with a count, never an error).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kg.config import MAX_ARRAY_ITEMS
from kg.errors import RecordError


def _check_text(value: str, path: str, max_chars: int) -> str:
    if len(value) > max_chars:
        raise RecordError(
            f"string of {len(value):,} characters is longer than the limit of {max_chars:,}",
            field=path,
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError("string holds invalid Unicode (a lone surrogate)", field=path) from None
    return value


def invalid_unicode_path(value: Any, path: str = "") -> str | None:
    """The path of the first key or string in a JSON value that holds a lone surrogate.

    >>> invalid_unicode_path({"a": [{"b": "ok"}, "\\ud800"]})
    'a[1]'
    >>> invalid_unicode_path({"a": {"\\udfff": 1}})
    'a.\\\\udfff'
    """
    if isinstance(value, str):
        return None if value.isascii() or _encodes(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if not _encodes(key):
                return where.encode("utf-8", "backslashreplace").decode("utf-8")
            found = invalid_unicode_path(item, where)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = invalid_unicode_path(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


class Obj:
    """A JSON object being read; `path` is its dotted location in the record."""

    __slots__ = ("_all", "_data", "_path", "_seen", "max_chars", "max_items")

    def __init__(
        self,
        data: dict[str, Any],
        path: str = "",
        *,
        max_chars: int,
        max_items: int = MAX_ARRAY_ITEMS,
        family: list[Obj] | None = None,
    ) -> None:
        self._data = data
        self._path = path
        self._seen: set[str] = set()
        self.max_chars = max_chars
        self.max_items = max_items
        self._all = family if family is not None else []
        self._all.append(self)

    def _sub(self, data: dict[str, Any], path: str) -> Obj:
        return Obj(
            data, path, max_chars=self.max_chars, max_items=self.max_items, family=self._all
        )

    def where(self, key: str) -> str:
        return f"{self._path}.{key}" if self._path else key

    def raw(self, key: str) -> Any:
        self._seen.add(key)
        return self._data.get(key)

    @property
    def source(self) -> dict[str, Any]:
        """The whole object as read (for hashing what a part was mapped from); reading it
        marks no key as seen."""
        return dict(self._data)

    def _wrong(self, key: str, expected: str, value: Any) -> RecordError:
        return RecordError(f"expected {expected}, got {_type_name(value)}", field=self.where(key))

    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self.raw(key)
        if value is None:
            if required:
                raise RecordError("is required but missing", field=self.where(key))
            return None
        if not isinstance(value, str):
            raise self._wrong(key, "a string", value)
        value = _check_text(value, self.where(key), self.max_chars)
        if required and not value.strip():
            raise RecordError("is required but empty", field=self.where(key))
        return value if value.strip() else None

    def flag(self, key: str) -> bool | None:
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        if type(value) is int and value in (0, 1):
            return bool(value)
        raise self._wrong(key, "true/false or 1/0", value)

    def integer(self, key: str) -> int | None:
        value = self.raw(key)
        if value is None:
            return None
        if type(value) is not int:
            raise self._wrong(key, "an integer", value)
        return value

    def obj(self, key: str) -> Obj | None:
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self._wrong(key, "an object", value)
        return self._sub(value, self.where(key))

    def objects(self, key: str) -> Iterator[Obj]:
        """The objects of an array field (null or missing reads as empty)."""
        for i, item in enumerate(self.array(key)):
            where = f"{self.where(key)}[{i}]"
            if not isinstance(item, dict):
                raise RecordError(f"expected an object, got {_type_name(item)}", field=where)
            yield self._sub(item, where)

    def texts(self, key: str) -> list[str]:
        out = []
        for i, item in enumerate(self.array(key)):
            where = f"{self.where(key)}[{i}]"
            if not isinstance(item, str):
                raise RecordError(f"expected a string, got {_type_name(item)}", field=where)
            if item.strip():
                out.append(_check_text(item, where, self.max_chars))
        return out

    def array(self, key: str) -> list[Any]:
        value = self.raw(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._wrong(key, "an array", value)
        if len(value) > self.max_items:
            raise RecordError(
                f"has {len(value):,} items, over the limit of {self.max_items:,} per array",
                field=self.where(key),
            )
        return value

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every key and value (marks them all as read), for map-shaped objects."""
        for key, value in self._data.items():
            self._seen.add(key)
            if not key.strip():  # the key names a thing (a status, a kind, a metric)
                raise RecordError("has an empty key", field=self._path)
            yield key, value

    def child(self, key: str, value: Any) -> Obj:
        if not isinstance(value, dict):
            raise self._wrong(key, "an object", value)
        return self._sub(value, self.where(key))

    def unknown_keys(self) -> list[str]:
        """Every key, in this object and the objects read from it, that was never read."""
        return sorted(o.where(k) for o in self._all for k in o._data if k not in o._seen)

    def reading(self) -> tuple[frozenset[str], int]:
        """Where reading stands: the keys of this object read so far, and how many objects
        its record has opened (see `read_since`)."""
        return frozenset(self._seen), len(self._all)

    def read_since(self, mark: tuple[frozenset[str], int]) -> frozenset[str] | None:
        """The keys of this object read since `mark`, or None if an object opened since has
        a key left unread (it would be reported as unknown, so the reading is not one to
        replay with `mark_read`)."""
        seen, opened = mark
        for o in self._all[opened:]:
            if any(k not in o._seen for k in o._data):
                return None
        return frozenset(self._seen - seen)

    def mark_read(self, keys: frozenset[str]) -> None:
        """Count `keys` as read (a mapping of the same JSON done before read them)."""
        self._seen.update(keys)
