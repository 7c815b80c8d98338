"""Settings that several modules share: the base IRI, the default store and limits."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BASE_IRI = "https://w3id.org/kg/id/"
DEFAULT_STORE = Path("kg-store")
#: The largest single record (one JSONL line or one JSON file) kg will read, in bytes.
MAX_RECORD_BYTES = 16 * 1024 * 1024
#: The longest string kg accepts in any one field, in characters.
MAX_FIELD_CHARS = 1_000_000


def base_iri_from_env() -> str:
    return os.environ.get("KG_BASE_IRI", DEFAULT_BASE_IRI)


def store_path_from_env() -> Path:
    return Path(os.environ.get("KG_STORE", str(DEFAULT_STORE)))


@dataclass(frozen=True)
class Settings:
    base_iri: str = DEFAULT_BASE_IRI
    max_field_chars: int = MAX_FIELD_CHARS
    max_record_bytes: int = MAX_RECORD_BYTES
