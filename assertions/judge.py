"""Promptfoo assertion. LLM judge on the four remediation criteria: advisory by default (`config: {mode: gate}` to gate)."""

from __future__ import annotations

from typing import Any

from ghost_eval.base.settings import read_settings
from ghost_eval.judge.assertion import judge_assertion


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    return judge_assertion(output, context, read_settings())
