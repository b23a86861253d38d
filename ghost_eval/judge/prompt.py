"""The judge's questions: one per criterion, and one on the diagnosis; the case facts a careful reviewer needs, and
everything that came from the run or its environment (the prompt it kept, what the agent wrote, its tool evidence,
the infrastructure snapshot) wrapped as data. Inside the data, anything that looks like the wrapper's tag or like a
markdown heading is neutralised, so a firewall rule comment or a resource description cannot open a section of its own.

Templates are jinja2 files in `templates/`; each criterion's question is its rubric (`Criterion.rubric`, listed by
`ghost_eval.scoring.registry`). Their combined sha256 (templates, rubrics and the version of the code that fills them)
is the template hash that names every verdict and keys the cache, so a changed prompt never reuses an old answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar, Literal

import jinja2

from ghost_eval.base.templates import template_environment
from ghost_eval.cases.case import Case
from ghost_eval.run.artifacts import AuditEntry, RecommendedAction, ToolCall
from ghost_eval.scoring import RunEvidence, extract_actions
from ghost_eval.scoring.criterion import Criterion
from ghost_eval.scoring.registry import criteria, criterion
from ghost_eval.scoring.text import SectionKind, split_sections

__all__ = [
    "BUILDER_VERSION",
    "TEMPLATE_DIR",
    "DiagnosisPrompt",
    "JudgePrompt",
    "Question",
    "build_diagnosis_prompt",
    "build_prompt",
    "recommended_actions",
    "rubrics",
    "template_hash",
]

TEMPLATE_DIR = Path(__file__).parent / "templates"
BUILDER_VERSION = "3"
"""Bump when this module changes what goes into a prompt (selection, clipping), so cached answers are not reused."""
_MAX_REPORT = 30_000
_MAX_SNAPSHOT = 20_000
_MAX_OUTPUT = 2_000
_MAX_CALLS = 60
_V1_NOTE = (
    "This run was recorded by the original tooling: only shell commands reached its audit (inspector calls such as "
    "effective routes or NSG reads are missing) and each output was cut to 200 characters."
)


@dataclass(frozen=True)
class _Messages:
    system: str
    user: str
    data_tag: str
    """Name of the tag wrapping the run data; derived from that data, so the data cannot forge its closing tag."""

    @property
    def question_hash(self) -> str:
        """sha256 of the system and user messages: the same run and case facts ask the same question, and an answer
        is reused only for the same question."""
        return hashlib.sha256(f"{self.system}\0{self.user}".encode()).hexdigest()


@dataclass(frozen=True)
class JudgePrompt(_Messages):
    """One rendered criterion question: what is sent, and what the answer will be checked against."""

    kind: ClassVar[Literal["criterion"]] = "criterion"
    criterion_id: int
    action_count: int
    snapshot_missing: bool


@dataclass(frozen=True)
class DiagnosisPrompt(_Messages):
    """The rendered diagnosis question: the case's key facts and wrong claims asked about the agent's own words."""

    kind: ClassVar[Literal["diagnosis"]] = "diagnosis"
    fact_ids: tuple[str, ...]
    claim_ids: tuple[str, ...]
    stated: str
    """The agent's root cause and report as shown: the text the answer's quotes should come from."""


Question = JudgePrompt | DiagnosisPrompt


@cache
def _environment() -> jinja2.Environment:
    return template_environment(TEMPLATE_DIR)


def rubrics() -> dict[int, str]:
    """Every criterion the judge asks, by id: its rubric, the question `criterion.j2` puts to the judge."""
    return {c.id: c.rubric for c in criteria()}


def template_hash() -> str:
    """sha256 over the builder version, every template file of the judge, in name order, and every criterion's label
    and rubric, in id order."""
    return _template_hash(criteria())


@cache
def _template_hash(asked: tuple[Criterion, ...]) -> str:
    digest = hashlib.sha256(f"builder {BUILDER_VERSION}\0".encode())
    for path in sorted(TEMPLATE_DIR.glob("*.j2")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for c in asked:
        digest.update(f"criterion {c.id}\0{c.label}\0{c.rubric}\0".encode())
    return digest.hexdigest()


def recommended_actions(evidence: RunEvidence) -> list[RecommendedAction]:
    """The structured result's actions when the run has one, else those read from the report."""
    if evidence.result is not None:
        return list(evidence.result.recommended_actions)
    return extract_actions(evidence.report)


_TAG_LIKE = re.compile(r"<(\s*/?\s*run_data)", re.IGNORECASE)
_HEADING = re.compile(r"^([ \t]{0,3})(#{1,6})(?=[ \t]|$)", re.MULTILINE)


def _neutral(text: str) -> str:
    """Data as data: a look-alike of the wrapper's tag loses its `<`, a markdown heading its power (`\\#`)."""
    return _HEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), _TAG_LIKE.sub(r"&lt;\1", text))


def _neutral_action(action: RecommendedAction) -> RecommendedAction:
    verification = action.verification
    if verification is not None:
        verification = verification.model_copy(
            update={"command": _neutral(verification.command), "expected": _neutral(verification.expected)}
        )
    return action.model_copy(
        update={
            "description": _neutral(action.description),
            "commands": [_neutral(c) for c in action.commands],
            "verification": verification,
        }
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


def _root_cause(evidence: RunEvidence) -> str:
    if evidence.result is not None:
        return evidence.result.root_cause
    found = [s.text().split("\n", 1)[-1].strip() for s in split_sections(evidence.report) if s.kind is SectionKind.ROOT_CAUSE]
    return "\n\n".join(t for t in found if t) or "(the report has no root-cause section; see the full report)"


@dataclass(frozen=True)
class _Call:
    header: str
    output: str


def _from_trace(call: ToolCall) -> _Call:
    args = json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)
    status = "error" if call.is_error else "ok"
    return _Call(_neutral(f"{call.tool} {args} ({status})"), _neutral(_clip(call.output, _MAX_OUTPUT)) or "(no output)")


def _from_audit(entry: AuditEntry) -> _Call:
    where = f"on {entry.host}: " if entry.host else ""
    if not entry.executed:
        state = "denied, not executed"
    else:
        state = f"exit {entry.exit_code}" if entry.exit_code is not None else "exit status not recorded"
    output = _neutral(_clip(entry.output or "", _MAX_OUTPUT))
    return _Call(_neutral(f"{where}`{entry.command}` ({state})"), output or "(no output)")


def _tool_evidence(evidence: RunEvidence) -> tuple[list[_Call], str]:
    """The trace when the run kept one (full outputs), else the shell audit, with what it cannot show."""
    calls = [_from_trace(c) for c in evidence.trace] if evidence.trace else [_from_audit(a) for a in evidence.audit]
    note = "" if evidence.audit_complete else _V1_NOTE
    if len(calls) > _MAX_CALLS:
        note = f"{note} Only the first {_MAX_CALLS} of {len(calls)} tool calls are shown.".strip()
        calls = calls[:_MAX_CALLS]
    return calls, note


def _report(evidence: RunEvidence) -> str:
    return _clip(evidence.report, _MAX_REPORT) if evidence.report.strip() else "(the run left no report)"


def _data_tag(*untrusted: object) -> str:
    """The wrapper's name, from a hash of everything it wraps: the data cannot know it in advance to close it."""
    text = json.dumps(untrusted, ensure_ascii=False)
    return "run_data_" + hashlib.sha256(text.encode()).hexdigest()[:16]


def build_prompt(evidence: RunEvidence, case: Case | None, criterion_id: int, agent_prompt: str | None = None) -> JudgePrompt:
    """The system and user messages asking criterion `criterion_id` (one the registry lists) about one run.

    `agent_prompt` is the run's PROMPT.txt when the store kept one: what the agent was actually told.
    """
    try:
        asked = criterion(criterion_id)
    except LookupError as exc:
        raise ValueError(f"criterion must be one of {list(rubrics())}, got {criterion_id}") from exc
    actions = [_neutral_action(a) for a in recommended_actions(evidence)]
    calls, note = _tool_evidence(evidence)
    report = _neutral(_report(evidence))
    root_cause = _neutral(_root_cause(evidence))
    prompt_kept = _neutral(agent_prompt) if agent_prompt else agent_prompt
    snapshot = (
        _neutral(_clip(evidence.snapshot.model_dump_json(indent=1, exclude_none=True), _MAX_SNAPSHOT))
        if evidence.snapshot
        else None
    )
    data_tag = _data_tag(
        prompt_kept,
        report,
        root_cause,
        [a.model_dump(mode="json") for a in actions],
        [(c.header, c.output) for c in calls],
        snapshot,
    )
    env = _environment()
    user = env.get_template("criterion.j2").render(
        case=case,
        facts=case.facts(evidence.environment) if case is not None else None,
        use_case_id=evidence.use_case_id,
        snapshot=snapshot,
        data_tag=data_tag,
        agent_prompt=prompt_kept,
        root_cause=root_cause,
        actions=actions,
        evidence=calls,
        evidence_note=note,
        report=report,
        criterion_id=criterion_id,
        criterion_label=asked.label,
        rubric=asked.rubric,
    )
    system = env.get_template("system.j2").render()
    return JudgePrompt(
        criterion_id=criterion_id,
        system=system,
        user=user,
        data_tag=data_tag,
        action_count=len(actions),
        snapshot_missing=evidence.snapshot is None,
    )


def build_diagnosis_prompt(evidence: RunEvidence, case: Case, agent_prompt: str | None = None) -> DiagnosisPrompt:
    """The system and user messages asking which of the case's key facts (as the run's environment shows them) and
    wrong claims the run states."""
    case = case.in_environment(evidence.environment)
    report = _report(evidence)
    root_cause = _root_cause(evidence)
    prompt_kept = _neutral(agent_prompt) if agent_prompt else agent_prompt
    shown_report, shown_root_cause = _neutral(report), _neutral(root_cause)
    data_tag = _data_tag(prompt_kept, shown_report, shown_root_cause)
    env = _environment()
    system = env.get_template("diagnosis_system.j2").render()
    user = env.get_template("diagnosis.j2").render(
        case=case, data_tag=data_tag, agent_prompt=prompt_kept, root_cause=shown_root_cause, report=shown_report
    )
    return DiagnosisPrompt(
        system=system,
        user=user,
        data_tag=data_tag,
        fact_ids=tuple(f.id for f in case.key_facts),
        claim_ids=tuple(c.id for c in case.wrong_claims),
        stated=f"{root_cause}\n\n{report}",
    )
