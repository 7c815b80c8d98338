"""`kg fetch`: the Papers-with-Code archive's files, downloaded into a folder (docs/dumps.md).

No store is involved: `fetch_archive` brings the files of the archive's catalogue
(kg.sources.archive) into a directory with kg.sources.download, each with its manifest, so
that `kg ingest DIR` then knows their snapshot, licence and attribution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kg.errors import FetchError, UsageError
from kg.sources import archive
from kg.sources.download import Downloader, Expected, Fetched, Progress, Terms, folder_url

DEFAULT_INTO = Path("data") / archive.NAME


@dataclass
class FetchReport:
    """What `fetch_archive` did: each file fetched or present, and each failure."""

    into: Path
    base_url: str
    files: list[Fetched] = field(default_factory=list)
    failures: list[FetchError] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "into": str(self.into),
            "base_url": self.base_url,
            "files": [
                {
                    "name": f.name,
                    "status": f.status,
                    "size": f.size,
                    "sha256": f.sha256,
                    "verified_by_host": f.verified_by_host,
                    "seconds": round(f.seconds, 3),
                }
                for f in self.files
            ],
            "failures": [{"name": e.name, "kind": e.kind, "error": str(e)} for e in self.failures],
        }


def select(only: list[str] | None) -> list[archive.ArchiveFile]:
    """The catalogue's files that `only` names (all of them when None)."""
    if not only:
        return list(archive.FILES)
    unknown = [key for key in only if key not in archive.KEYS]
    if unknown:
        raise UsageError(
            f"unknown file {unknown[0]!r} for {{parameter}}; use some of: "
            f"{', '.join(archive.KEYS)}",
            parameter="only",
        )
    return [f for f in archive.FILES if f.key in only]


def fetch_archive(
    name: str = archive.NAME,
    *,
    into: Path | str = DEFAULT_INTO,
    base_url: str = archive.DEFAULT_BASE_URL,
    only: list[str] | None = None,
    on_progress: Progress | None = None,
    retries: int = 5,
    max_wait: float = 120.0,
) -> FetchReport:
    """Download the archive's files into `into`, resuming, verifying and skipping what is
    already there. A file that fails is reported in `failures`; the others go on."""
    from kg import __version__

    if name not in archive.ARCHIVES:
        raise UsageError(f"unknown archive {name!r}; kg knows: {', '.join(archive.ARCHIVES)}")
    files = select(only)
    into = Path(into)
    # the catalogue's checksums are the Hub's files': a mirror may hold other bytes
    # under the same names (generated files, a newer copy), so only the Hub is held to them
    trusted = folder_url(base_url) == archive.DEFAULT_BASE_URL
    report = FetchReport(into, folder_url(base_url))
    with Downloader(
        base_url,
        user_agent=f"kg/{__version__}",
        on_progress=on_progress,
        retries=retries,
        max_wait=max_wait,
    ) as downloader:
        for item in files:
            terms = Terms(
                snapshot=item.snapshot,
                licence=archive.LICENCE,
                attribution=archive.ATTRIBUTION,
                archive=archive.ARCHIVE_PAGE,
                kind=item.kind,
            )
            expected = Expected(item.size, item.sha256) if trusted else None
            try:
                report.files.append(
                    downloader.fetch(item.name, into, expected=expected, terms=terms)
                )
            except FetchError as exc:
                report.failures.append(exc)
    return report
