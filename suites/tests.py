"""Promptfoo test generator: the rows of a suite, built from the case files (thin adapter).

Use as `tests: {path: file://suites/tests.py:generate_tests, config: {suite: baseline}}`;
suites are `baseline`, `sentinel`, `consequences` and `variant:<name>`.
"""

from __future__ import annotations

from typing import Any

from ghost_eval.promptfoo import suite_tests


def generate_tests(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    config = config or {}
    return suite_tests(str(config.get("suite", "baseline")), config.get("cases"))
