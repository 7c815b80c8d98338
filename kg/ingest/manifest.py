"""The manifest beside a fetched dump file: where it came from, and under which terms.

`kg fetch` writes `<file>.manifest.json` next to each file it fetched (kg.sources.download);
`kg ingest` reads it to state the dump's snapshot, licence, attribution and source URL
(docs/dumps.md). A file without a manifest is read as before: its gzip header date, and the
licence kg knows for Papers with Code's own file names. Options given to `kg ingest`
(--snapshot, --licence, --attribution) win over the manifest.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kg.ingest.values import iso_date

SUFFIX = ".manifest.json"
FORMAT = 1


@dataclass(frozen=True)
class Manifest:
    """What is known of one fetched file."""

    file: str  # the file's name in its folder
    url: str  # where it was fetched from
    size: int  # bytes
    sha256: str  # of the bytes written (checked against the host's when it gave one)
    fetched: str  # when (UTC, ISO 8601)
    snapshot: str | None = None  # the data's snapshot date (YYYY-MM-DD)
    licence: str | None = None  # licence IRI
    attribution: str | None = None  # the page to attribute
    archive: str | None = None  # the archive's page (where the files are kept)
    kind: str | None = None  # the dump kind (kg.ingest.dumps)
    sha256_from_host: bool = False  # whether the host stated the checksum

    def as_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}


def manifest_path(path: str | Path) -> Path:
    """Where the manifest of the file at `path` lives."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def is_manifest(path: str | Path) -> bool:
    return Path(path).name.endswith(SUFFIX)


def write_manifest(path: Path, manifest: Manifest) -> Path:
    """Write the manifest of the file at `path` atomically (a temporary file, renamed)."""
    target = manifest_path(path)
    temporary = target.with_name(target.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(manifest.as_dict(), handle, indent=2, sort_keys=True)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)
    return target


def read_manifest(path: str | Path) -> Manifest | None:
    """The manifest of the file at `path`, or None when there is none, it cannot be read, or
    it describes another file (a manifest never vouches for bytes it did not see: its size
    must be the file's size)."""
    if str(path) == "-":
        return None
    target = manifest_path(path)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        size = Path(path).stat().st_size
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    fields: dict[str, Any] = {k: data.get(k) for k in Manifest.__dataclass_fields__}
    if not all(isinstance(fields[k], str) for k in ("file", "url", "sha256", "fetched")):
        return None
    if not isinstance(fields["size"], int) or fields["size"] != size:
        return None
    if fields["file"] != Path(path).name:
        return None
    for key in ("snapshot", "licence", "attribution", "archive", "kind"):
        if not isinstance(fields[key], str):
            fields[key] = None
    if fields["snapshot"] is not None and iso_date(fields["snapshot"]) != fields["snapshot"]:
        fields["snapshot"] = None  # not a date: the file's own date is used
    fields["sha256_from_host"] = fields["sha256_from_host"] is True
    return Manifest(**fields)
