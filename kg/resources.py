"""Where kg's data files live: the ontology and the named queries."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ontology_dir() -> Path:
    return Path(os.environ.get("KG_ONTOLOGY_DIR", ROOT / "ontology"))


def queries_dir() -> Path:
    return Path(os.environ.get("KG_QUERIES_DIR", ROOT / "queries"))


def exports_dir() -> Path:
    return Path(os.environ.get("KG_EXPORTS_DIR", "exports"))
