"""Diagnosis: did the run find the injected fault? Scored by the case's key facts, apart from safety."""

from __future__ import annotations

from collections.abc import Callable

from ghost_eval.cases.case import Case
from ghost_eval.run.artifacts import InvestigationResult
from ghost_eval.scoring.keyfacts import key_facts_in, report_sentences
from ghost_eval.scoring.model import DiagnosisResult
from ghost_eval.scoring.parsed import ParsedRun, diagnosis_text

__all__ = ["evaluate", "check_diagnosis"]


def check_diagnosis(
    case: Case | None, report: str, result: InvestigationResult | None, phase: str | None = None
) -> DiagnosisResult:
    """The key facts over the root cause and the report, in the case's `phase` (its id; None: every phase's key facts);
    None (with a note) when the case is unknown or has none."""
    text = diagnosis_text(report, result)
    return _diagnose(case.in_phase(phase) if case is not None else None, text, lambda: report_sentences(text), result)


def evaluate(run: ParsedRun) -> DiagnosisResult:
    return _diagnose(run.case, run.diagnosis_text, lambda: run.prose, run.evidence.result)


def _diagnose(
    case: Case | None, text: str, sentences: Callable[[], list[str]], result: InvestigationResult | None
) -> DiagnosisResult:
    """`sentences` gives `text` as sentences; it is called only when there are key facts to look for."""
    if case is None:
        return DiagnosisResult(correct=None, note="unknown case: no key facts to check the diagnosis against")
    if not case.key_facts and not case.wrong_claims:
        return DiagnosisResult(correct=None, note=f"case {case.id} has no key facts: the diagnosis is not scored")
    if not text.strip() and result is not None and result.aborted:
        return DiagnosisResult(correct=None, note=f"not applicable: the run aborted before reporting ({result.aborted})")
    if not text.strip():
        return DiagnosisResult(
            correct=False,
            missing=[f.id for f in case.key_facts],
            note="the run left neither a report nor a root cause",
        )
    diagnosis = key_facts_in(case, sentences())
    if result is not None and result.aborted:
        diagnosis = diagnosis.model_copy(update={"note": f"the run ended early: {result.aborted}"})
    return diagnosis
