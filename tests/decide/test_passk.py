from __future__ import annotations

import math

import pytest

from ghost_eval.decide import Outcome, group_stats, pass_at_k, pass_hat_k, runs_needed, wilson_interval


def test_estimators_against_hand_computed_values() -> None:
    # n=5, c=3, k=2: pass^2 = C(3,2)/C(5,2) = 3/10; pass@2 = 1 - C(2,2)/C(5,2) = 9/10
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)
    assert pass_hat_k(5, 5, 5) == 1.0 and pass_hat_k(5, 4, 5) == 0.0
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(4, 1, 4) == 1.0
    assert pass_hat_k(10, 7, 1) == pytest.approx(0.7) == pass_at_k(10, 7, 1)


def test_wilson_interval_against_hand_computed_values() -> None:
    low, high = wilson_interval(3, 5)
    assert (round(low, 3), round(high, 3)) == (0.231, 0.882)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    assert runs_needed(2, 5) == 3 and runs_needed(7, 5) == 0


def test_repeats_group_by_identity_not_by_position() -> None:
    def o(rid: str, model: str, h: str, passed: bool) -> Outcome:
        return Outcome(
            run_id=rid, use_case_id="m", model_id=model, system_prompt_hash=h, addon_hash=None, run_label=None, passed=passed
        )

    outcomes = [
        o("r1", "a", "h1", True),
        o("r2", "b", "h1", False),
        o("r3", "a", "h2", False),
        o("r4", "a", "h1", False),
        o("r5", "a", "h1", True),
    ]
    stats = {(s.model_id, s.system_prompt_hash): s for s in group_stats(outcomes, k=2)}
    a1 = stats[("a", "h1")]
    assert (a1.n, a1.passes, a1.run_ids) == (3, 2, ["r1", "r4", "r5"])
    assert a1.pass_hat_k == pytest.approx(math.comb(2, 2) / math.comb(3, 2))
    assert stats[("a", "h2")].pass_hat_k is None  # n=1 < k=2
    assert stats[("b", "h1")].passes == 0
