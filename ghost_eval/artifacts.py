"""Typed records of what a run leaves behind: audit lines, the structured result, the summary, the manifest."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from ghost_eval.records import Record

__all__ = [
    "ARTIFACT_SCHEMA_VERSION",
    "Approval",
    "AuditEntry",
    "InvestigationResult",
    "Manifest",
    "RecommendedAction",
    "RunSummary",
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


class AuditEntry(Record):
    """One line of `shell_audit_<sid>.jsonl`: a command the agent asked to run."""

    command: str
    host: str | None = None
    timestamp: datetime | str | None = None
    exit_code: int | None = None
    output: str | None = None
    """v1 kept only the first 200 characters; our runs keep the full, redacted output."""
    executed: bool = True
    """False when the safety gate or the approver refused the command."""
    approval: Approval | None = None
    classification: str | None = None
    audit_id: str | None = None


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


class RunSummary(Record):
    """`run_summary.json`: metrics extracted at capture time (v1 fields are kept as they are)."""

    schema_version: str = "1"
    tool_calls: int | None = None
    shell_commands: int | None = None
    duration_s: float | None = None
    outcome: str | None = None


class Manifest(Record):
    """`manifest.json`: sha256 of every file the writer put in the run folder."""

    schema_version: str = ARTIFACT_SCHEMA_VERSION
    files: dict[str, str] = Field(default_factory=dict)
    """File name (relative to the run folder) → sha256 hex digest."""
