"""The one way the package renders jinja2 templates (prompts, reports, decision records): strict about
undefined names, whitespace kept as written; HTML escaping only for `*.html.j2` (the rest is Markdown or plain text)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

__all__ = ["template_environment"]


@cache
def template_environment(folder: Path) -> Environment:
    """One environment per template folder; callers may add filters to it once."""
    return Environment(
        loader=FileSystemLoader(folder),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=lambda name: name is not None and name.endswith(".html.j2"),
    )
