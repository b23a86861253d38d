"""Typed records of what a run leaves behind: audit lines, the structured result, the summary, the manifest."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from ghost_eval.base.records import Record

__all__ = [
    "ARTIFACT_SCHEMA_VERSION",
    "Approval",
    "AuditEntry",
    "InvestigationResult",
    "Manifest",
    "RecommendedAction",
    "RunSummary",
    "SummaryHypothesis",
    "ToolCall",
    "Verification",
]

ARTIFACT_SCHEMA_VERSION = "2"


class Approval(StrEnum):
    """Who let a command run; eval-mode approvals are never recorded as human ones."""

    NOT_NEEDED = "not_needed"
    HUMAN = "human"
    EVAL_AUTO = "eval_auto"
    DENIED = "denied"


_V1_NOT_RUN = frozenset({"user_denied", "user_abandoned"})
"""The original shell's actions for a command a person refused (or whose approval failed): it never ran."""
_V1_APPROVAL = {
    "auto_approved": Approval.NOT_NEEDED,
    "user_approved": Approval.HUMAN,
    "user_modified": Approval.HUMAN,
    "user_denied": Approval.DENIED,
    "user_abandoned": Approval.DENIED,
}


class AuditEntry(Record):
    """One line of `shell_audit_<sid>.jsonl`: a command the agent asked to run.

    Lines the original shell wrote (`session_id`, `sequence`, `status`, `action`, `output_summary`,
    `modified_command`) are read into the same fields; their own fields are kept as they are.
    """

    command: str
    host: str | None = None
    timestamp: datetime | str | None = None
    exit_code: int | None = None
    output: str | None = None
    """v1 kept only the first 200 characters (`output_summary`); our runs keep the full, redacted output."""
    executed: bool = True
    """False when the safety gate or the approver refused the command."""
    approval: Approval | None = None
    classification: str | None = None
    audit_id: str | None = None
    """`{session_id}_{sequence:03d}` in the original's audit, the id its reports cite as "Audit ID …"."""

    @model_validator(mode="before")
    @classmethod
    def _from_v1_shell(cls, data: Any) -> Any:
        """The original shell's line: status/action say whether it ran, and a modified command is what ran."""
        if not isinstance(data, dict) or ("status" not in data and "action" not in data):
            return data
        data = dict(data)
        status, action = data.get("status"), data.get("action")
        # `status: error` alone is no refusal: a timed-out command ran, and so did one whose output failed
        # redaction; only a forbidden command was stopped (by the gate) before running.
        forbidden = status == "error" and data.get("error") == "forbidden_command"
        if "executed" not in data:
            data["executed"] = status != "denied" and action not in _V1_NOT_RUN and not forbidden
        if "approval" not in data and (forbidden or action in _V1_APPROVAL):
            data["approval"] = Approval.DENIED if forbidden else _V1_APPROVAL[action]
        if "output" not in data and isinstance(data.get("output_summary"), str):
            data["output"] = data["output_summary"]
        session, sequence = data.get("session_id"), data.get("sequence")
        if "audit_id" not in data and isinstance(session, str) and isinstance(sequence, int):
            data["audit_id"] = f"{session}_{sequence:03d}"
        modified = data.get("modified_command")
        if action == "user_modified" and isinstance(modified, str) and modified.strip():
            data.setdefault("requested_command", data.get("command"))
            data["command"] = modified
        return data

    @property
    def sequence_number(self) -> str | None:
        """The sequence part of an `{session_id}_{sequence:03d}` id, without its zero padding ("3" for `…_003`)."""
        if self.audit_id is None:
            return None
        tail = self.audit_id.rpartition("_")[2]
        return str(int(tail)) if tail.isdigit() else None


class ToolCall(Record):
    """One tool call in `tool_trace.jsonl` (shell and inspector tools alike), with its full output."""

    index: int
    tool: str
    arguments: dict[str, Any] = {}
    output: str = ""
    is_error: bool = False
    started_at: datetime | None = None
    duration_ms: float | None = None


class Verification(Record):
    """A concrete command and the result that proves a fix worked."""

    command: str
    expected: str


class RecommendedAction(Record):
    """One recommended remediation step, as the agent returned it (no regex over markdown)."""

    description: str
    commands: list[str] = []
    verification: Verification | None = None


class InvestigationResult(Record):
    """`investigation_result.json`: the agent's structured completion."""

    schema_version: str = ARTIFACT_SCHEMA_VERSION
    root_cause: str
    confirmed_hypotheses: list[str] = []
    refuted_hypotheses: list[str] = []
    recommended_actions: list[RecommendedAction] = []
    aborted: str | None = None
    """Why the run ended without a completion (timeout, crash, turn limit), if it did."""


class SummaryHypothesis(Record):
    """One hypothesis as v1's `run_summary.json` lists it."""

    id: str | None = None
    """`H1`, `H2`, … in the order the agent opened them."""
    description: str | None = None
    state: str | None = None
    """`open`, `confirmed` or `refuted` in our runs."""
    denial_count: int = 0
    """Commands the gate or the approver refused while it was being tested (v1); our runs do not attribute them: 0."""


class RunSummary(Record):
    """`run_summary.json`: every field the original writes (and its scripts read), then ours.

    The original's `compare.py`, `score_variant.py` and `judge_remediation.py` read the v1 fields;
    `recommended_actions` is the list the original judge numbers its `action_index` into (from 0).
    """

    schema_version: str = "1"
    use_case: str | None = None
    """v1: the case id as `use_case_<x>`."""
    provider: str | None = None
    """v1: the `--llm-provider` value (`anthropic`, `gemini`)."""
    model: str | None = None
    """v1: the model id as requested."""
    session_id: str | None = None
    """`ghost_YYYYmmdd_HHMMSS`; names the run's report and audit files."""
    created_at: datetime | None = None
    turn_count: int | None = None
    rca_generated: bool | None = None
    """False when the run ended without a report (v1: an aborted run)."""
    abort_reason: str | None = None
    confidence: str | None = None
    root_cause_summary: str | None = None
    recommended_actions: list[str] = Field(default_factory=list)
    """One line per recommended action (ours: description, commands and verification of one action)."""
    commands_issued: int | None = None
    commands_denied: int | None = None
    commands_auto_approved: int | None = None
    """Commands that needed no approval, or were approved in eval mode (never a human)."""
    commands_user_approved: int | None = None
    command_sequence: list[str] = Field(default_factory=list)
    """Each shell command, cut to 100 characters as v1 cuts it."""
    hypothesis_count: int | None = None
    hypotheses: list[SummaryHypothesis] = Field(default_factory=list)
    tool_calls: int | None = None
    """Ours: every tool call, inspector calls included (v1 counted only shell commands)."""
    shell_commands: int | None = None
    duration_s: float | None = None
    outcome: str | None = None


class Manifest(Record):
    """`manifest.json`: sha256 of every file the writer put in the run folder."""

    schema_version: str = ARTIFACT_SCHEMA_VERSION
    files: dict[str, str] = Field(default_factory=dict)
    """File name (relative to the run folder) → sha256 hex digest."""
