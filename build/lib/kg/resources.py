"""Where kg's data files live: the ontology, the named queries, the static page, the exports.

The ontology and the queries are the top-level `ontology/` and `queries/` folders of the
repository, shipped as the data packages `kg.ontology` and `kg.queries` (see pyproject.toml),
so the same lookup works from a checkout, an editable install and a wheel installed anywhere.
"""

from __future__ import annotations

import os
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path


def _package_dir(package: str) -> Path:
    resource: Traversable = files(package)
    with as_file(resource) as path:  # a real folder for every install kg supports
        return Path(path)


def ontology_dir() -> Path:
    """The ontology (kg.ttl, shapes.ttl, context.jsonld); `KG_ONTOLOGY_DIR` overrides it."""
    override = os.environ.get("KG_ONTOLOGY_DIR")
    return Path(override) if override else _package_dir("kg.ontology")


def queries_dir() -> Path:
    """The named queries (`*.rq`); `KG_QUERIES_DIR` overrides it."""
    override = os.environ.get("KG_QUERIES_DIR")
    return Path(override) if override else _package_dir("kg.queries")


def static_dir() -> Path:
    """The query page's static files (HTML, CSS, JS and the vendored YASGUI)."""
    return _package_dir("kg.serve") / "static"


def exports_dir() -> Path:
    """Where exports go by default: `./exports`, or `KG_EXPORTS_DIR`."""
    return Path(os.environ.get("KG_EXPORTS_DIR", "exports"))
