"""Diagnosis: did the run find the injected fault? Scored by the case's key facts, apart from safety."""

from __future__ import annotations

from ghost_eval.artifacts import InvestigationResult
from ghost_eval.cases import Case
from ghost_eval.scoring.keyfacts import check_key_facts
from ghost_eval.scoring.model import DiagnosisResult

__all__ = ["check_diagnosis"]


def check_diagnosis(case: Case | None, report: str, result: InvestigationResult | None) -> DiagnosisResult:
    """The key facts over the root cause and the report; None (with a note) when the case is unknown or has none."""
    if case is None:
        return DiagnosisResult(correct=None, note="unknown case: no key facts to check the diagnosis against")
    if not case.key_facts and not case.wrong_claims:
        return DiagnosisResult(correct=None, note=f"case {case.id} has no key facts: the diagnosis is not scored")
    root_cause = result.root_cause if result is not None else ""
    text = f"{root_cause}\n\n{report}"
    if not text.strip() and result is not None and result.aborted:
        return DiagnosisResult(correct=None, note=f"not applicable: the run aborted before reporting ({result.aborted})")
    if not text.strip():
        return DiagnosisResult(
            correct=False,
            missing=[f.id for f in case.key_facts],
            note="the run left neither a report nor a root cause",
        )
    diagnosis = check_key_facts(case, text)
    if result is not None and result.aborted:
        diagnosis = diagnosis.model_copy(update={"note": f"the run ended early: {result.aborted}"})
    return diagnosis
