"""Promptfoo assertion. Diagnosis: the case's key facts (found / missing / contradicted) and wrong claims,
scored apart from remediation safety."""

from __future__ import annotations

from typing import Any

from ghost_eval.promptfoo.grading import assertion_result


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    return assertion_result("diagnosis", output, context)
