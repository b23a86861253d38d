"""One investigation end to end: prompt, tools, the vendor's loop, and a result whatever happens.

A run that cannot start (no API key), runs out of turns or time, or crashes still returns an `AgentRun` with
`result.aborted` set, so its artifacts are written and it is captured as an error, never lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from ghost_eval.agent.anthropic_adapter import AnthropicAdapter
from ghost_eval.agent.approval import Approver, approve_for_eval, deny
from ghost_eval.agent.control_plane import ControlPlaneInspector
from ghost_eval.agent.cost import Usage
from ghost_eval.agent.gemini_adapter import GeminiAdapter
from ghost_eval.agent.loop import Limits, LoopResult, ModelAdapter, run_loop
from ghost_eval.agent.prompt import Addon, SystemPrompt, build_prompt
from ghost_eval.agent.redact import redact
from ghost_eval.agent.shell import ShellInspector
from ghost_eval.agent.tools import Hypothesis, Toolbox
from ghost_eval.base.settings import DEFAULTS, Settings
from ghost_eval.connect.target import Target
from ghost_eval.run.artifacts import AuditEntry, InvestigationResult, ToolCall

__all__ = ["PROVIDERS", "AgentConfig", "AgentRun", "Provider", "investigate", "session_id"]

Provider = Literal["anthropic", "gemini"]
AdapterFactory = Callable[..., ModelAdapter]
PROVIDERS: dict[str, AdapterFactory] = {"anthropic": AnthropicAdapter, "gemini": GeminiAdapter}
"""`--llm-provider` value → the adapter that speaks to that vendor's SDK."""


@dataclass(frozen=True)
class AgentConfig:
    provider: Provider
    model: str
    temperature: float | None = None
    """None leaves the vendor's default."""
    auto_approve: bool = False
    """Eval mode: commands that need approval run, recorded as `eval_auto` approvals."""
    addon: Addon | None = None
    limits: Limits = field(default_factory=Limits)
    settings: Settings = DEFAULTS
    """The vendor's key and endpoint come from here (read where the process started)."""


@dataclass
class AgentRun:
    """Everything one run produced, in memory; `ghost_eval.agent.capture` turns it into files."""

    session_id: str
    started_at: datetime
    duration_s: float
    config: AgentConfig
    prompt: SystemPrompt
    symptom: str
    """The request as the model received it (redacted)."""
    loop: LoopResult
    trace: list[ToolCall]
    audit: list[AuditEntry]
    hypotheses: list[Hypothesis]
    result: InvestigationResult


def session_id(when: datetime) -> str:
    """`ghost_YYYYmmdd_HHMMSS`, as the original tooling named its sessions."""
    return f"ghost_{when:%Y%m%d_%H%M%S}"


def investigate(symptom: str, target: Target, config: AgentConfig, *, approver: Approver | None = None) -> AgentRun:
    """Run one investigation of `symptom` on `target`; the approver defaults to deny (or eval-mode with auto_approve)."""
    started = datetime.now(UTC).replace(microsecond=0)
    clock = time.monotonic()
    sid = session_id(started)
    prompt = build_prompt(target, config.addon)
    request = redact(symptom.strip())
    limits = config.limits
    shell = ShellInspector(
        target=target,
        approver=approver or (approve_for_eval if config.auto_approve else deny),
        session_id=sid,
        command_timeout_s=limits.command_timeout_s,
    )
    toolbox = Toolbox(shell=shell, control_plane=ControlPlaneInspector(target=target, timeout_s=limits.command_timeout_s))
    try:
        try:
            adapter = PROVIDERS[config.provider](
                config.model, prompt.text, request, temperature=config.temperature, limits=limits, settings=config.settings
            )
        except Exception as exc:
            why = f"crash: {type(exc).__name__}: {redact(str(exc))}"
            loop = LoopResult(outcome="aborted", steps=[], usage=Usage(), aborted=why)
        else:
            loop = run_loop(adapter, toolbox, limits)
    finally:
        shell.close()
    return AgentRun(
        session_id=sid,
        started_at=started,
        duration_s=round(time.monotonic() - clock, 3),
        config=config,
        prompt=prompt,
        symptom=request,
        loop=loop,
        trace=toolbox.trace,
        audit=shell.audit,
        hypotheses=toolbox.hypotheses,
        result=_result(loop, toolbox),
    )


def _result(loop: LoopResult, toolbox: Toolbox) -> InvestigationResult:
    if toolbox.completion is not None:
        return toolbox.completion
    settled = {s: [h.text for h in toolbox.hypotheses if h.status == s] for s in ("confirmed", "refuted")}
    extra = {"answer": loop.final_text} if loop.outcome == "answered" else {}
    return InvestigationResult.model_validate(
        {
            "root_cause": "",
            "confirmed_hypotheses": settled["confirmed"],
            "refuted_hypotheses": settled["refuted"],
            "aborted": loop.aborted,
            **extra,
        }
    )
