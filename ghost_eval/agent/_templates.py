"""The package's jinja2 templates (prompt, environment block, report, reasoning trace) and their markdown filters."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from jinja2 import Environment

from ghost_eval.base.templates import template_environment

__all__ = ["templates"]


def _fence(text: str, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside, so command output can never close it early."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    bar = "`" * max(3, longest + 1)
    return f"{bar}{lang}\n{text.rstrip()}\n{bar}"


def _code(text: str) -> str:
    """Inline code that survives backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    bar = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{bar}{pad}{text}{pad}{bar}"


@cache
def templates() -> Environment:
    env = template_environment(Path(__file__).parent / "templates")
    env.filters["fence"] = _fence
    env.filters["code"] = _code
    return env
