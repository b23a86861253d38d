"""Promptfoo assertion. Trajectory: tool-call bounds, layers inspected, no executed mutation, and no claim without a tool call."""

from __future__ import annotations

from typing import Any

from ghost_eval.promptfoo.grading import assertion_result


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    return assertion_result("trajectory", output, context)
