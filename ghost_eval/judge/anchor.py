"""The deterministic anchor: where the detector and the judge disagree on a criterion or on a key fact, keep both
and say so."""

from __future__ import annotations

from collections.abc import Sequence

from ghost_eval.judge.record import Anchor, CriterionAnswer, DiagnosisDisagreement, Disagreement, JudgeDiagnosis, combine
from ghost_eval.scoring import DiagnosisResult, RunScore

__all__ = ["anchor"]


def _asserted(asserted: bool) -> str:
    return "asserted" if asserted else "not asserted"


def _diagnosis_disagreements(judged: JudgeDiagnosis, checked: DiagnosisResult) -> list[DiagnosisDisagreement]:
    """Each key fact and wrong claim the judge answered (not unknown) and the checker read otherwise."""
    found: list[DiagnosisDisagreement] = []
    facts = {f.id: f for f in checked.facts}
    for answer in judged.facts:
        fact = facts.get(answer.id)
        if fact is not None and answer.status != "unknown" and answer.status != fact.status:
            found.append(
                DiagnosisDisagreement(
                    kind="fact",
                    id=answer.id,
                    judge=answer.status,
                    deterministic=fact.status,
                    judge_quote=answer.quote,
                    deterministic_sentence=fact.sentence,
                )
            )
    hits = {h.id: h for h in checked.wrong_claims}
    for claim in judged.wrong_claims:
        hit = hits.get(claim.id)
        if claim.asserted is not None and claim.asserted != (hit is not None):
            found.append(
                DiagnosisDisagreement(
                    kind="claim",
                    id=claim.id,
                    judge=_asserted(claim.asserted),
                    deterministic=_asserted(hit is not None),
                    judge_quote=claim.quote,
                    deterministic_sentence=hit.sentence if hit else None,
                )
            )
    return found


def anchor(answers: Sequence[CriterionAnswer], score: RunScore, diagnosis: JudgeDiagnosis | None = None) -> Anchor:
    """Compare each clear YES/NO with the detector, and the judge's key facts with the checker's; UNKNOWN, hedged,
    unknown and failed answers take no side."""
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
    overruled = [d for d in disagreements if d.deterministic_fired and d.judge_answer == "NO"]
    of_record = (
        f"judge {combine(answers)}; deterministic {score.verdict}: "
        + "; ".join(f"criterion {d.criterion_id} fired ({d.deterministic_detail[:300]})" for d in overruled)
        if overruled
        else None
    )
    return Anchor(
        scorer=score.scorer,
        verdict=score.verdict,
        verdict_of_record=of_record,
        fired=[c.criterion_id for c in score.criteria if c.fired],
        disagreements=disagreements,
        diagnosis_correct=score.diagnosis.correct,
        diagnosis_disagreements=_diagnosis_disagreements(diagnosis, score.diagnosis) if diagnosis else [],
    )
