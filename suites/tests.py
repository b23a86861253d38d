"""Promptfoo test generator: the rows of a suite, built from the case files (thin adapter).

Use as `tests: {path: file://suites/tests.py:generate_tests, config: {suite: baseline}}`;
suites are `baseline`, `sentinel`, `consequences` and `variant:<name>`. Config `cases` is a case path (a folder or a
list; `bundled` = the shipped cases), relative to the project folder this file's `suites/` sits in;
`shard: k/n` (or $GHOST_EVAL_SHARD) keeps one CI runner's slice of the rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ghost_eval.base.settings import read_settings
from ghost_eval.promptfoo.adapters import suite_tests


def generate_tests(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    config = config or {}
    base = Path(__file__).resolve().parents[1]
    shard = config.get("shard") or read_settings().shard
    return suite_tests(str(config.get("suite", "baseline")), config.get("cases"), base, shard)
