"""kg: a knowledge graph of machine-learning research, as RDF in Oxigraph."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    if name == "__version__":  # read from the installed metadata only when asked
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("kg")
        except PackageNotFoundError:  # a checkout that was never installed
            return "0.0.0+unknown"
    raise AttributeError(f"module 'kg' has no attribute {name!r}")
