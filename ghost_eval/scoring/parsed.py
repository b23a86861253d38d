"""One run parsed once: report sections, recommended actions with their commands parsed by the one shell-command
model, what the run ran (audit and trace commands, parsed once), what it read, ownership, the case's facts and fault
scope, and the diagnosis text's sentences (one Markdown parse). Every check reads this record; none parses the run's
text again."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ghost_eval.cases.case import Case, CaseFacts
from ghost_eval.run.artifacts import AuditEntry, InvestigationResult, RecommendedAction, ToolCall, Verification
from ghost_eval.scoring.actions import actions_from_sections, report_verifications
from ghost_eval.scoring.cautions import asks_for_change, blank_warnings
from ghost_eval.scoring.keyfacts import report_sentences
from ghost_eval.scoring.model import RunEvidence
from ghost_eval.scoring.ownership import OwnershipMap, build_ownership
from ghost_eval.scoring.reads import RunReads
from ghost_eval.scoring.text import Section, SectionKind, mask_code, split_sections, split_sentences
from ghost_eval.shell.commands import Command, parse_command_block

__all__ = [
    "ActionView",
    "ParsedRun",
    "audit_commands",
    "changes_anything",
    "diagnosis_text",
    "expects_fix",
    "fault_scope_names",
    "parse_run",
    "trace_commands",
    "view_actions",
]


@dataclass(frozen=True)
class ActionView:
    """One recommended action, read once for every detector."""

    index: int
    """1-based position among the run's actions."""
    action: RecommendedAction
    commands: tuple[tuple[str, Command], ...]
    """(command as the report wrote it, parsed simple command) for every simple command of the action."""
    structured: bool = False
    """From `investigation_result.json`: the description and the commands are separate fields, so what the description
    says of where the commands run is said of them all."""

    @cached_property
    def lowered(self) -> str:
        return self.action.description.lower()

    @cached_property
    def prose(self) -> str:
        """The description with warnings blanked and inline code masked, for the prose rules."""
        return mask_code(blank_warnings(self.action.description))

    @cached_property
    def written(self) -> str:
        """The description with warnings blanked but code kept, then the commands: where a setting the action writes
        (`"iptables": false`, `ignoreip = …`) is read, in code spans too."""
        return "\n".join([blank_warnings(self.action.description), *self.action.commands])

    def mentions(self, words: re.Pattern[str]) -> bool:
        """Cheap pre-check before a prose rule: does the lower-cased description contain any of these words?"""
        return words.search(self.lowered) is not None


def view_actions(actions: Sequence[RecommendedAction], *, structured: bool = False) -> list[ActionView]:
    return [
        ActionView(i, action, tuple((raw, cmd) for raw in action.commands for cmd in parse_command_block(raw)), structured)
        for i, action in enumerate(actions, start=1)
    ]


def changes_anything(views: Sequence[ActionView]) -> bool:
    """Whether any action changes state; reads and advice alone ("sign off the change", "open a ticket") are no fix."""
    return any(any(cmd.mutating for _, cmd in view.commands) or asks_for_change(view.prose) for view in views)


def fault_scope_names(case: Case | None) -> list[str]:
    """What the case says a fix may touch: its fault scope and the resources of its ground truth."""
    return [*case.fault_scope, *(f.resource for f in case.ground_truth if f.resource)] if case else []


def fault_texts(case: Case | None) -> list[str]:
    """What the case says of its faults' estate: the names a fix may touch and its ground truth's descriptions
    ("Route table …, associated with subnet forensics-vnet/default, …")."""
    return [*fault_scope_names(case), *(f.description for f in case.ground_truth)] if case else []


def expects_fix(case: Case | None) -> bool:
    """A run is expected to recommend a change unless its case has no fault (b), asks for none (an off-topic request)
    or has its fault outside the network (c); an unknown case is given no such benefit."""
    return case is None or (bool(case.ground_truth) and case.network_change_expected)


def audit_commands(audit: Sequence[AuditEntry]) -> tuple[tuple[Command, ...] | None, ...]:
    """Each audit line's command parsed by the one shell-command model, in audit order; None for a line that never ran."""
    return tuple(parse_command_block(entry.command) if entry.executed else None for entry in audit)


def trace_commands(trace: Sequence[ToolCall]) -> tuple[tuple[Command, ...] | None, ...]:
    """Each traced call's shell command parsed, in trace order; None for a call that ran none (an inspector tool)."""
    return tuple(
        parse_command_block(command) if isinstance(command := call.arguments.get("command"), str) else None for call in trace
    )


def diagnosis_text(report: str, result: InvestigationResult | None) -> str:
    """What the diagnosis is read from: the structured root cause, then the report."""
    return f"{result.root_cause if result is not None else ''}\n\n{report}"


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
    audit_commands: tuple[tuple[Command, ...] | None, ...]
    """`evidence.audit`'s commands, parsed (see `audit_commands`)."""
    trace_commands: tuple[tuple[Command, ...] | None, ...]
    """`evidence.trace`'s shell commands, parsed (see `trace_commands`)."""
    diagnosis_text: str
    """The structured root cause, then the report (see `diagnosis_text`)."""
    expects_change: bool
    """The case has a network fault to fix (see `expects_fix`)."""
    notes: list[str] = field(default_factory=list)
    """What parsing found worth saying: where the actions came from, an unknown case, an aborted run."""

    @cached_property
    def prose(self) -> list[str]:
        """`diagnosis_text` as sentences, code left out: one Markdown parse, made when the diagnosis first reads it."""
        return report_sentences(self.diagnosis_text)

    @cached_property
    def written_sentences(self) -> list[str]:
        """Every sentence the run wrote, in its actions and anywhere in the report, what it only warns against
        blanked: where a check told in words ("the same query should print …", "re-check after another reload") is
        looked for."""
        texts = (*(view.written for view in self.views), blank_warnings(self.evidence.report))
        return [sentence for text in texts for sentence in split_sentences(text)]


def _findings(sections: list[Section]) -> str:
    return "\n".join(s.text() for s in sections if s.kind not in {SectionKind.ACTIONS, SectionKind.VERIFICATION})


def parse_run(evidence: RunEvidence, case: Case | None) -> ParsedRun:
    """Parse one run's evidence against its case (None when the case is unknown), as the run's environment shows it
    and in the phase its prompt asks."""
    notes: list[str] = []
    if case is not None:
        phase = case.phase_of_prompt(evidence.prompt)
        if case.phases:
            notes.append(f"phase {phase} (by the prompt the run was given)" if phase else "phase unknown: every phase's key")
        case = case.in_environment(evidence.environment).in_phase(phase)
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
    audit, trace = audit_commands(evidence.audit), trace_commands(evidence.trace)
    return ParsedRun(
        evidence=evidence,
        case=case,
        sections=sections,
        actions=actions,
        views=view_actions(actions, structured=result is not None),
        report_verifications=report_level,
        findings=findings,
        facts=facts,
        reads=RunReads(evidence.audit, audit, evidence.trace, trace, evidence.audit_complete),
        ownership=build_ownership(facts, evidence.snapshot, findings, "\n".join(a.description for a in actions)),
        scope=fault_scope_names(case),
        audit_commands=audit,
        trace_commands=trace,
        diagnosis_text=diagnosis_text(evidence.report, result),
        expects_change=expects_fix(case),
        notes=notes,
    )
