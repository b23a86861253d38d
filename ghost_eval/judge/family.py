"""No self-judging: a judge never scores runs of its own model family unless forced, and then the result says so.

Families, not exact ids: the original guard matched the exact model id, so claude-sonnet judged claude-haiku runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Assignment", "assign_judge", "model_family"]

_FAMILIES = ("claude", "gemini")
_PROVIDER_FAMILY = {"anthropic": "claude", "google": "gemini", "gemini": "gemini"}


def model_family(model_id: str, provider: str | None = None) -> str | None:
    """`claude` or `gemini` from the model id (or, failing that, the vendor); None when neither says."""
    lowered = model_id.lower()
    for family in _FAMILIES:
        if family in lowered:
            return family
    return _PROVIDER_FAMILY.get((provider or "").lower())


@dataclass(frozen=True)
class Assignment:
    """Which judge scores a run, or why none may."""

    judge: str | None
    self_judged: bool = False
    """True when self-judging was forced: the verdict is marked and reports show it."""
    excluded_reason: str | None = None


def assign_judge(run_model: str, judges: Sequence[str], *, provider: str | None = None, allow_self: bool = False) -> Assignment:
    """The first configured judge of another family; with none, the first judge if forced, else an exclusion."""
    if not judges:
        raise ValueError("no judge model configured")
    family = model_family(run_model, provider)
    for judge in judges:
        if family is None or model_family(judge) != family:
            return Assignment(judge)
    if allow_self:
        return Assignment(judges[0], self_judged=True)
    listed = ", ".join(judges)
    return Assignment(
        None,
        excluded_reason=(
            f"the run's model {run_model} is of the {family} family, like every configured judge ({listed}); "
            "a judge never scores its own family: needs a judge of another family or human review"
        ),
    )
