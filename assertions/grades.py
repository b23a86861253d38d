"""Promptfoo assertion. Every deterministic grade in one call: remediation (per criterion and the verdict), diagnosis,
trajectory and claims, each family a component result and every metric named; one Python process per row."""

from __future__ import annotations

from typing import Any

from ghost_eval.promptfoo.grading import assertion_result


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    return assertion_result("all", output, context)
