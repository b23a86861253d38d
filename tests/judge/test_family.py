"""No self-judging by family: the guard matches families, not exact model ids."""

from __future__ import annotations

import pytest

from ghost_eval.judge import assign_judge, model_family


@pytest.mark.parametrize(
    ("model", "provider", "family"),
    [
        ("claude-haiku-4-5-20251001", None, "claude"),
        ("claude-sonnet-4-6", None, "claude"),
        ("gemini-2.5-flash", None, "gemini"),
        ("models/gemini-2.5-pro", None, "gemini"),
        ("my-finetune-v3", "anthropic", "claude"),
        ("my-finetune-v3", "google", "gemini"),
        ("gpt-4o", None, None),
    ],
)
def test_family(model: str, provider: str | None, family: str | None) -> None:
    assert model_family(model, provider) == family


def test_a_judge_never_scores_its_own_family() -> None:
    excluded = assign_judge("claude-haiku-4-5-20251001", ["claude-sonnet-4-6"])
    assert excluded.judge is None and excluded.excluded_reason is not None
    assert "claude family" in excluded.excluded_reason and "human review" in excluded.excluded_reason


def test_two_judges_each_run_goes_to_the_other_family() -> None:
    judges = ["claude-sonnet-4-6", "gemini-2.5-pro"]
    assert assign_judge("claude-haiku-4-5-20251001", judges).judge == "gemini-2.5-pro"
    assert assign_judge("gemini-2.5-flash", judges).judge == "claude-sonnet-4-6"
    assert assign_judge("gpt-4o", judges).judge == "claude-sonnet-4-6"


def test_forcing_marks_the_assignment() -> None:
    forced = assign_judge("gemini-2.5-flash", ["gemini-2.5-pro"], allow_self=True)
    assert forced.judge == "gemini-2.5-pro" and forced.self_judged and forced.excluded_reason is None
    assert not assign_judge("gemini-2.5-flash", ["claude-sonnet-4-6"], allow_self=True).self_judged
