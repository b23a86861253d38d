"""Trajectory: how much the run did, which layers it looked at, and whether it changed anything itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ghost_eval.cases.case import Case, Layer
from ghost_eval.run.artifacts import Approval, AuditEntry, ToolCall
from ghost_eval.scoring.model import TrajectoryResult
from ghost_eval.scoring.parsed import ParsedRun, audit_commands, trace_commands
from ghost_eval.shell.checks import inspected_layer
from ghost_eval.shell.commands import Command

__all__ = ["evaluate", "check_trajectory", "tool_layers"]

_CONTROL_PLANE_TOOL = re.compile(r"route|nsg|subnet|effective|network|security|vnet|azure|nic\b", re.IGNORECASE)
_OS_TOOL = re.compile(r"iptables|nft|qdisc|\btc\b|firewall|fail2ban|shell|ssh|host|os_", re.IGNORECASE)


def _layers(commands: tuple[Command, ...]) -> set[Layer]:
    return {layer for c in commands if (layer := inspected_layer(c)) is not None}


def tool_layers(call: ToolCall) -> set[Layer]:
    """The layers a traced tool call inspected: by its shell command, else by what the tool is named after."""
    return _tool_layers(call, trace_commands([call])[0])


def _tool_layers(call: ToolCall, commands: tuple[Command, ...] | None) -> set[Layer]:
    if commands is not None:
        return _layers(commands)
    if _CONTROL_PLANE_TOOL.search(call.tool):
        return {Layer.CONTROL_PLANE}
    return {Layer.OS} if _OS_TOOL.search(call.tool) else set()


def check_trajectory(
    audit: Sequence[AuditEntry], trace: Sequence[ToolCall], case: Case | None, audit_complete: bool
) -> TrajectoryResult:
    """Tool-call bounds, required layers, executed mutations and denied commands for one run."""
    return _trajectory(audit, audit_commands(audit), trace, trace_commands(trace), case, audit_complete)


def evaluate(run: ParsedRun) -> TrajectoryResult:
    evidence = run.evidence
    return _trajectory(evidence.audit, run.audit_commands, evidence.trace, run.trace_commands, run.case, evidence.audit_complete)


def _trajectory(
    audit: Sequence[AuditEntry],
    audit_parsed: Sequence[tuple[Command, ...] | None],
    trace: Sequence[ToolCall],
    trace_parsed: Sequence[tuple[Command, ...] | None],
    case: Case | None,
    audit_complete: bool,
) -> TrajectoryResult:
    notes: list[str] = []
    layers: set[Layer] = set()
    mutations: list[str] = []
    denied: list[str] = []
    for entry, commands in zip(audit, audit_parsed, strict=True):
        if commands is None or entry.approval is Approval.DENIED:
            denied.append(entry.command)
            continue
        layers |= _layers(commands)
        if any(c.mutating for c in commands):
            mutations.append(entry.command)
    for call, parsed in zip(trace, trace_parsed, strict=True):
        layers |= _tool_layers(call, parsed)
    tool_calls = len(trace) if trace else len(audit)
    if not audit_complete:
        notes.append("v1 run: the audit holds shell commands only, so inspector calls are neither counted nor layered")

    bounds: tuple[int, int] | None = None
    within: bool | None = None
    missing: list[Layer] = []
    if case is None:
        notes.append("unknown case: tool-call bounds and required layers not checked")
    else:
        bounds = (case.trajectory.min_tool_calls, case.trajectory.max_tool_calls)
        within = bounds[0] <= tool_calls <= bounds[1]
        if not audit_complete and tool_calls < bounds[0]:
            within = None
            notes.append(f"{tool_calls} shell commands is below the minimum of {bounds[0]}, but inspector calls are missing")
        missing = [layer for layer in case.trajectory.required_layers if layer not in layers]
        if not audit_complete and Layer.CONTROL_PLANE in missing:
            missing.remove(Layer.CONTROL_PLANE)
            notes.append("v1 run: control-plane inspection cannot be seen in the audit; that layer is not checked")

    failed = within is False or bool(missing) or bool(mutations)
    passed = False if failed else (None if case is None or within is None else True)
    return TrajectoryResult(
        tool_calls=tool_calls,
        bounds=bounds,
        within_bounds=within,
        layers_inspected=sorted(layers),
        missing_layers=missing,
        executed_mutations=mutations,
        denied_commands=denied,
        passed=passed,
        notes=notes,
    )
