"""Which scorer wrote a verdict, in a module that imports nothing, so a Promptfoo assertion process can tell whether
the grades a provider attached are current without loading the scorer."""

from __future__ import annotations

__all__ = ["SCORER", "SCORER_NAME", "SCORER_VERSION"]

SCORER_NAME = "deterministic"
SCORER_VERSION = "2.7.0"
"""Bump whenever a rule changes what a run scores, so old and new verdicts are never confused."""
SCORER = f"{SCORER_NAME}@{SCORER_VERSION}"
