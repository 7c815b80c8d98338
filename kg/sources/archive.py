"""The Papers-with-Code archive: its five files, where they are, and their known checksums.

Papers with Code's own download links died with the site in July 2025. Its last snapshot is
kept as the Hugging Face dataset repository `pwc-archive/files`, in the original JSON.gz
formats (paperswithcode-data's README points there). The sizes and SHA-256 sums below are
those of the files' Git LFS pointers in that repository (commit a8a8cc9, "Upload 5 files");
the Hub also states them in each download's `X-Linked-Size` and `X-Linked-Etag` headers.
"""

from __future__ import annotations

from dataclasses import dataclass

NAME = "pwc-archive"
DEFAULT_BASE_URL = "https://huggingface.co/datasets/pwc-archive/files/resolve/main/"
ARCHIVE_PAGE = "https://huggingface.co/datasets/pwc-archive/files"
LICENCE = "https://creativecommons.org/licenses/by-sa/4.0/"  # the repository's card: cc-by-sa-4.0
ATTRIBUTION = "https://github.com/paperswithcode/paperswithcode-data"


@dataclass(frozen=True)
class ArchiveFile:
    """One file of the archive."""

    key: str  # what --only names it by
    name: str  # its file name in the archive
    kind: str  # its dump kind (kg.ingest.dumps)
    snapshot: str  # the date it was retrieved (YYYY-MM-DD)
    size: int  # bytes, as the archive's LFS pointer gives it
    sha256: str  # likewise


FILES = (
    ArchiveFile(
        "papers", "jul-29-papers-with-abstracts.json.gz", "papers-with-abstracts", "2025-07-29",
        563_802_312, "6a0a820800d4487d838ce96f12383ea9ae68ffac8ddd08c525c896cf30d4a260",
    ),
    ArchiveFile(
        "links", "jul-28-links-between-papers-and-code.json.gz", "links-between-papers-and-code",
        "2025-07-28", 26_261_205,
        "e7c60f2170880af3bd5a5b9469a951341435e4ccfd21d3d18393c52cfec24694",
    ),
    ArchiveFile(
        "methods", "jul-28-methods.json.gz", "methods", "2025-07-28",
        5_442_057, "fc5a66d3274d8e39c7673563096bea94d9b52525c754ce944ff843d6f935ac7f",
    ),
    ArchiveFile(
        "datasets", "jul-28-datasets.json.gz", "datasets", "2025-07-28",
        8_418_281, "6ef923aaf24ff62c6ef567518728d4c85dba1b23eecbc8e1bb5ad5d6990fe25f",
    ),
    ArchiveFile(
        "evaluation-tables", "jul-28-evaluation-tables.json.gz", "evaluation-tables",
        "2025-07-28", 21_833_195,
        "9da9cd53fabf88bd7728551aadaf3dc91c86f87621c884ff7cc4da969b0d95ee",
    ),
)
KEYS = tuple(f.key for f in FILES)
ARCHIVES = (NAME,)
