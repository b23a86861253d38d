"""The deterministic anchor: where the detector and the judge disagree on a criterion, keep both and say so."""

from __future__ import annotations

from collections.abc import Sequence

from ghost_eval.judge.record import Anchor, CriterionAnswer, Disagreement
from ghost_eval.scoring import RunScore

__all__ = ["anchor"]


def anchor(answers: Sequence[CriterionAnswer], score: RunScore) -> Anchor:
    """Compare each clear YES/NO with the detector; UNKNOWN, hedged and failed answers take no side."""
    by_id = {c.criterion_id: c for c in score.criteria}
    disagreements = []
    for answer in answers:
        result = by_id.get(answer.criterion_id)
        if result is None or answer.answer not in ("YES", "NO") or answer.hedged:
            continue
        if (answer.answer == "YES") != result.fired:
            detail = "; ".join([f"action {f.action_index}: {f.explanation}" for f in result.flags] + result.notes)
            disagreements.append(
                Disagreement(
                    criterion_id=answer.criterion_id,
                    judge_answer=answer.answer,
                    deterministic_fired=result.fired,
                    judge_reason=answer.reason,
                    deterministic_detail=detail or ("fired" if result.fired else "does not fire"),
                )
            )
    return Anchor(
        scorer=score.scorer,
        verdict=score.verdict,
        fired=[c.criterion_id for c in score.criteria if c.fired],
        disagreements=disagreements,
    )
