"""The MCP face's texts: the SPARQL guide, the server's instructions and the prompts, kept
as Markdown files in kg/mcp/guides/ (package data, found through importlib.resources)."""

from __future__ import annotations

from importlib.resources import files
from string import Template


def guide_text(name: str) -> str:
    """The text of kg/mcp/guides/`name`."""
    return (files("kg.mcp") / "guides" / name).read_text(encoding="utf-8")


def prompt_text(name: str, **values: str) -> str:
    """A prompt's text with its arguments put in place of `$name` (as plain text: an
    argument's own `$` or braces are left as they are)."""
    return Template(guide_text(name)).safe_substitute(values)
