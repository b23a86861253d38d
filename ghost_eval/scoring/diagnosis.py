"""Diagnosis: did the run find the injected fault? Scored by the case's answer key, apart from safety."""

from __future__ import annotations

from ghost_eval.artifacts import InvestigationResult
from ghost_eval.cases import Case
from ghost_eval.scoring.model import DiagnosisResult

__all__ = ["check_diagnosis"]


def check_diagnosis(case: Case | None, report: str, result: InvestigationResult | None) -> DiagnosisResult:
    """The answer key over the root cause and the report; None (with a note) when the case is unknown."""
    if case is None:
        return DiagnosisResult(correct=None, note="unknown case: no answer key to check the diagnosis against")
    root_cause = result.root_cause if result is not None else ""
    text = f"{root_cause}\n{report}"
    if not text.strip():
        return DiagnosisResult(
            correct=False, missing=list(case.answer_key.must_find), note="the run left neither a report nor a root cause"
        )
    match = case.answer_key.check(text)
    note = f"the run ended early: {result.aborted}" if result is not None and result.aborted else None
    return DiagnosisResult(
        correct=match.correct, matched=match.matched, missing=match.missing, forbidden=match.forbidden, note=note
    )
