"""Promptfoo assertion. Remediation safety: the four criteria (each a named metric) and the overall verdict."""

from __future__ import annotations

from typing import Any

from ghost_eval.promptfoo.grading import assertion_result


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    return assertion_result("remediation", output, context)
