"""One run parsed once: report sections, recommended actions with their commands parsed by the one shell-command
model, what the run read (audit and trace), ownership, the case's facts and fault scope. Every check reads this
record; none parses the run's text again."""

from __future__ import annotations

from dataclasses import dataclass, field

from ghost_eval.artifacts import RecommendedAction, Verification
from ghost_eval.cases import Case, CaseFacts
from ghost_eval.scoring.actions import actions_from_sections, report_verifications
from ghost_eval.scoring.criteria import ActionView, RunReads, fault_scope_names, view_actions
from ghost_eval.scoring.model import RunEvidence
from ghost_eval.scoring.ownership import OwnershipMap, build_ownership
from ghost_eval.scoring.text import Section, SectionKind, split_sections

__all__ = ["ParsedRun", "parse_run"]


@dataclass(frozen=True)
class ParsedRun:
    """What the checks read, built once per run by `parse_run`."""

    evidence: RunEvidence
    case: Case | None
    sections: list[Section]
    """The report split into its sections."""
    actions: list[RecommendedAction]
    """The structured result's actions (our runs), else those read from the report's sections."""
    views: list[ActionView]
    """Each action with its commands parsed."""
    report_verifications: list[Verification]
    """Report-level verification steps (runs without a structured result)."""
    findings: str
    """What the run found out, as opposed to what it advises: ownership statements are read from here."""
    facts: CaseFacts | None
    """The case's facts for the run's environment; None when the case is unknown."""
    reads: RunReads
    ownership: OwnershipMap
    scope: list[str]
    """Names the fault is about (the case's fault scope)."""
    notes: list[str] = field(default_factory=list)
    """What parsing found worth saying: where the actions came from, an unknown case, an aborted run."""


def _findings(sections: list[Section]) -> str:
    return "\n".join(s.text() for s in sections if s.kind not in {SectionKind.ACTIONS, SectionKind.VERIFICATION})


def parse_run(evidence: RunEvidence, case: Case | None) -> ParsedRun:
    """Parse one run's evidence against its case (None when the case is unknown), as the run's environment shows it."""
    case = case.in_environment(evidence.environment) if case is not None else None
    notes: list[str] = []
    sections = split_sections(evidence.report)
    result = evidence.result
    actions: list[RecommendedAction]
    if result is not None:
        actions = list(result.recommended_actions)
        report_level: list[Verification] = []
        findings = "\n".join([_findings(sections), result.root_cause, *result.confirmed_hypotheses])
        if result.aborted:
            notes.append(f"the run ended without completing: {result.aborted}")
    else:
        actions = actions_from_sections(sections)
        report_level = report_verifications(sections, actions)
        findings = _findings(sections)
        notes.append("no structured result: actions were read from the markdown report")
    if not actions:
        notes.append("no recommended actions could be found")
    if case is None:
        notes.append(f"unknown case {evidence.use_case_id!r}: the verdict cannot be better than uncertain")
    facts = case.facts(evidence.environment) if case is not None else None
    if case is not None and facts is not None and evidence.environment and facts.environment != evidence.environment:
        notes.append(f"case {case.id} has no facts for environment {evidence.environment!r}: the original's were used")
    return ParsedRun(
        evidence=evidence,
        case=case,
        sections=sections,
        actions=actions,
        views=view_actions(actions),
        report_verifications=report_level,
        findings=findings,
        facts=facts,
        reads=RunReads(evidence.audit, evidence.trace, evidence.audit_complete),
        ownership=build_ownership(facts, evidence.snapshot, findings),
        scope=fault_scope_names(case),
        notes=notes,
    )
