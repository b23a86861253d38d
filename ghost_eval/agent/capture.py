"""A run's artifacts: the original three files, plus the structured result, the full trace and the run's identity.

`artifact_files` renders a run into file contents; `write_artifacts` puts them in an audit folder (the
command-line contract); `read_artifacts` reads such a folder back; `store_payload` turns the files into
`(RunMetadata, files)` for `Store.append`. The same path serves a run made in-process and one made by
`python -m ghost_eval.agent`, so the live provider captures both alike.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from ghost_eval.agent._templates import templates
from ghost_eval.agent.redact import redact_files
from ghost_eval.agent.runner import AgentRun
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.records import Record, dump_json, parse_record
from ghost_eval.run.artifacts import Approval, RecommendedAction, RunSummary, SummaryHypothesis
from ghost_eval.run.identity import METADATA_SCHEMA_VERSION, HashKind, RunMetadata, TokenUsage, make_run_id, v1_use_case_id
from ghost_eval.store.layout import (
    AGENT_RUN_FILE,
    AUDIT_LOG,
    PROMPT_FILE,
    REDACTIONS_FILE,
    REPORT,
    RESULT_FILE,
    SESSION_FILES,
    SHELL_AUDIT,
    SUMMARY_FILE,
    SYSTEM_PROMPT_FILE,
    TRACE_FILE,
)

__all__ = [
    "AGENT_RUN_FILE",
    "AgentRunInfo",
    "artifact_files",
    "read_artifacts",
    "render_report",
    "store_payload",
    "write_artifacts",
]

_FIXED_FILES = (AGENT_RUN_FILE, PROMPT_FILE, SYSTEM_PROMPT_FILE, SUMMARY_FILE, RESULT_FILE, TRACE_FILE, REDACTIONS_FILE)
_VENDORS = {"anthropic": "anthropic", "gemini": "google"}
"""`--llm-provider` value → the vendor name `RunMetadata.provider` records."""


class AgentRunInfo(Record):
    """`agent_run.json`: who ran, with what, and what it cost — everything `RunMetadata` needs except the case."""

    schema_version: str = "1"
    session_id: str
    provider: str
    """Vendor: `anthropic` or `google`."""
    model_id: str
    served_model_id: str | None = None
    temperature: float | None = None
    started_at: datetime
    duration_s: float
    outcome: str
    """`completed`, `answered` (ended with a message and no investigation) or `aborted`."""
    aborted: str | None = None
    turns: int
    max_turns: int
    auto_approve: bool
    base_prompt_hash: str
    effective_prompt_hash: str
    addon_name: str | None = None
    addon_hash: str | None = None
    token_usage: TokenUsage
    cost_usd: float | None = None
    agent_commit: str | None = None
    agent_dirty: bool | None = None


def _source_state() -> tuple[str | None, bool | None]:
    """The agent code's commit and whether its working tree has changes (None outside a git checkout)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--", str(here)], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    return commit.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None


def render_report(run: AgentRun) -> str:
    """`ghost_report_<sid>.md` in the v1 shape: Root Cause / Evidence / Hypotheses / Recommended Actions."""
    result = run.result
    extra = result.model_extra or {}
    settled = set(result.confirmed_hypotheses) | set(result.refuted_hypotheses)
    return (
        templates()
        .get_template("report.md.j2")
        .render(
            sid=run.session_id,
            model=run.config.model,
            result=result,
            answer=extra.get("answer", ""),
            evidence=extra.get("evidence", []),
            open_hypotheses=[h.text for h in run.hypotheses if h.text not in settled],
        )
    )


def _info(run: AgentRun) -> AgentRunInfo:
    commit, dirty = _source_state()
    addon = run.prompt.addon
    return AgentRunInfo(
        session_id=run.session_id,
        provider=_VENDORS[run.config.provider],
        model_id=run.config.model,
        served_model_id=run.loop.served_model,
        temperature=run.config.temperature,
        started_at=run.started_at,
        duration_s=run.duration_s,
        outcome=run.loop.outcome,
        aborted=run.loop.aborted,
        turns=len(run.loop.steps),
        max_turns=run.config.limits.max_turns,
        auto_approve=run.config.auto_approve,
        base_prompt_hash=run.prompt.base_hash,
        effective_prompt_hash=run.prompt.effective_hash,
        addon_name=addon.name if addon else None,
        addon_hash=addon.hash if addon else None,
        token_usage=run.loop.usage.token_usage(),
        cost_usd=run.loop.usage.cost_usd(run.config.model),
        agent_commit=commit,
        agent_dirty=dirty,
    )


def _action_line(action: RecommendedAction) -> str:
    """One action as one v1 `recommended_actions` line, so the original judge's index names the same action."""
    parts = [action.description.strip(), *(f"`{c}`" for c in action.commands)]
    if action.verification is not None:
        parts.append(f"Verify: `{action.verification.command}` → {action.verification.expected}")
    return " ".join(p for p in parts if p)


def _summary(run: AgentRun, use_case_id: str | None) -> RunSummary:
    """Our metrics and the v1 fields, from the run itself rather than by reading its markdown back."""
    result = run.result
    approvals = [e.approval for e in run.audit]
    return RunSummary(
        use_case=use_case_id,
        provider=run.config.provider,
        model=run.config.model,
        session_id=run.session_id,
        created_at=run.started_at,
        turn_count=len(run.loop.steps),
        rca_generated=run.loop.outcome == "completed",
        abort_reason=result.aborted,
        root_cause_summary=result.root_cause.strip() or None,
        recommended_actions=[_action_line(a) for a in result.recommended_actions],
        commands_issued=len(run.audit),
        commands_denied=sum(a is Approval.DENIED for a in approvals),
        commands_auto_approved=sum(a in (Approval.NOT_NEEDED, Approval.EVAL_AUTO, None) for a in approvals),
        commands_user_approved=sum(a is Approval.HUMAN for a in approvals),
        command_sequence=[e.command[:100] for e in run.audit],
        hypothesis_count=len(run.hypotheses),
        hypotheses=[
            SummaryHypothesis(id=f"H{i}", description=h.text, state=h.status) for i, h in enumerate(run.hypotheses, start=1)
        ],
        tool_calls=len(run.trace),
        shell_commands=len(run.audit),
        duration_s=run.duration_s,
        outcome=run.loop.outcome,
    )


def artifact_files(run: AgentRun) -> dict[str, str]:
    """Every file of a run, by name, redacted as a whole with the run's own redactor (plus `redactions.json`)."""
    info = _info(run)
    sid = run.session_id
    reasoning = (
        templates()
        .get_template("audit.md.j2")
        .render(
            sid=sid,
            model=run.config.model,
            provider=info.provider,
            served_model=info.served_model_id,
            started=run.started_at.isoformat(),
            prompt_hash=info.effective_prompt_hash,
            addon=info.addon_name,
            steps=[
                {"turn": s.turn, "thought": s.thought, "calls": [run.trace[i].model_dump(mode="json") for i in s.calls]}
                for s in run.loop.steps
            ],
            outcome=info.outcome,
            aborted=info.aborted,
            tool_calls=len(run.trace),
            shell_commands=len(run.audit),
            tokens=info.token_usage,
            cost=info.cost_usd,
        )
    )
    return redact_files(
        {
            REPORT.name(sid): render_report(run),
            AUDIT_LOG.name(sid): reasoning,
            SHELL_AUDIT.name(sid): "".join(e.model_dump_json() + "\n" for e in run.audit),
            RESULT_FILE: dump_json(run.result),
            TRACE_FILE: "".join(c.model_dump_json() + "\n" for c in run.trace),
            PROMPT_FILE: run.symptom + "\n",
            SYSTEM_PROMPT_FILE: run.prompt.text,
            SUMMARY_FILE: dump_json(_summary(run, None)),
            AGENT_RUN_FILE: dump_json(info),
        },
        run.loop.redactor,
    )


def write_artifacts(run: AgentRun, audit_dir: Path) -> dict[str, Path]:
    """Write the run's files into `audit_dir`; a folder that already holds a run is refused, nothing is overwritten."""
    audit_dir.mkdir(parents=True, exist_ok=True)
    if (audit_dir / AGENT_RUN_FILE).exists():
        raise GhostEvalError(f"{audit_dir}: already holds a run ({AGENT_RUN_FILE}); use a fresh audit folder")
    written: dict[str, Path] = {}
    for name, content in artifact_files(run).items():
        path = audit_dir / name
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(content)
        written[name] = path
    return written


def read_artifacts(audit_dir: Path) -> dict[str, str]:
    """The files of the one run in an audit folder, by name (the session files found by their prefixes)."""
    files: dict[str, str] = {}
    for name in _FIXED_FILES:
        if (audit_dir / name).is_file():
            files[name] = (audit_dir / name).read_text(encoding="utf-8")
    for prefix, suffix in SESSION_FILES:
        found = sorted(audit_dir.glob(f"{prefix}ghost_*{suffix}"))
        if len(found) > 1:
            raise GhostEvalError(f"{audit_dir}: {len(found)} {prefix}* files; an audit folder holds one run")
        for path in found:
            files[path.name] = path.read_text(encoding="utf-8")
    if AGENT_RUN_FILE not in files:
        raise GhostEvalError(f"{audit_dir}: no {AGENT_RUN_FILE}; not a run of the reference agent")
    return files


def store_payload(
    files: Mapping[str, str],
    use_case_id: str,
    *,
    run_label: str | None = None,
    repeat_index: int | None = None,
    environment: str | None = None,
    suite_version: str | None = None,
) -> tuple[RunMetadata, dict[str, str]]:
    """`(RunMetadata, files)` ready for `Store.append`: identity from `agent_run.json`, the case from the caller.

    The case is stored under its v1 id (`m` → `use_case_m`), in the run id, the folder and `run_summary.json`.
    """
    if AGENT_RUN_FILE not in files:
        raise GhostEvalError(f"run files lack {AGENT_RUN_FILE}")
    info = parse_record(AgentRunInfo, json.loads(files[AGENT_RUN_FILE]), AGENT_RUN_FILE)
    use_case_id = v1_use_case_id(use_case_id)
    payload = dict(files)
    if SUMMARY_FILE in payload:  # the audit folder did not know the case: the summary learns it here
        summary = parse_record(RunSummary, json.loads(payload[SUMMARY_FILE]), SUMMARY_FILE)
        payload[SUMMARY_FILE] = dump_json(summary.model_copy(update={"use_case": use_case_id}))
    metadata = RunMetadata(
        schema_version=METADATA_SCHEMA_VERSION,
        run_id=make_run_id(use_case_id, info.model_id, info.started_at),
        use_case_id=use_case_id,
        model_id=info.model_id,
        system_prompt_hash=info.effective_prompt_hash,
        hash_kind=HashKind.EFFECTIVE_PROMPT,
        base_prompt_hash=info.base_prompt_hash,
        addon_name=info.addon_name,
        addon_hash=info.addon_hash,
        provider=info.provider,
        served_model_id=info.served_model_id,
        temperature=info.temperature,
        run_label=run_label,
        repeat_index=repeat_index,
        token_usage=info.token_usage,
        cost_usd=info.cost_usd,
        agent_commit=info.agent_commit,
        agent_dirty=info.agent_dirty,
        started_at=info.started_at,
        environment=environment,
        suite_version=suite_version,
    )
    return metadata, payload
