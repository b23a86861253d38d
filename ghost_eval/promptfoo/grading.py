"""The Python assertion path, light: Promptfoo starts a new interpreter for every Python assertion call, so this
module imports nothing heavy. When the provider attached grades written by this scorer (the replay and live
providers do), they are returned as they are; only another provider's output is scored here, with the scorer
loaded on demand. It calls the provider adapters (`promptfoo.adapters`), which never call it."""

from __future__ import annotations

from typing import Any

from ghost_eval.promptfoo.keys import FAMILIES, GRADES_KEY
from ghost_eval.scoring.version import SCORER

__all__ = ["assertion_result", "combine"]


def combine(parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every family's grade as one result: what three assertions would give a row (pass when all pass, their mean
    score, every named metric), each family's grade a component, so a row costs one assertion process."""
    return {
        "pass": all(g["pass"] for g in parts.values()),
        "score": sum(g["score"] for g in parts.values()) / len(parts),
        "reason": "; ".join(f"{kind}: {g['reason']}" for kind, g in parts.items()),
        "namedScores": {name: value for g in parts.values() for name, value in g["namedScores"].items()},
        "componentResults": list(parts.values()),
    }


def assertion_result(kind: str, output: str, context: dict[str, Any]) -> dict[str, Any]:
    """A Promptfoo GradingResult for one family of checks, or for all of them (`kind` "all")."""
    attached = ((context.get("providerResponse") or {}).get("metadata") or {}).get(GRADES_KEY)
    if isinstance(attached, dict) and attached.get("scorer") == SCORER and all(f in attached for f in FAMILIES):
        parts = {family: attached[family] for family in FAMILIES}
    else:
        from ghost_eval.base.errors import GhostEvalError
        from ghost_eval.base.settings import read_settings  # here, not above: the attached grades need no pydantic
        from ghost_eval.promptfoo.adapters import grades, score_for

        try:
            parts = grades(score_for(output, context, read_settings()))
        except GhostEvalError as exc:
            return {"pass": False, "score": 0.0, "reason": f"cannot score: {exc}"}
    return combine(parts) if kind == "all" else parts[kind]
