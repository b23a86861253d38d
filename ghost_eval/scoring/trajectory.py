"""Trajectory: how much the run did, which layers it looked at, and whether it changed anything itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ghost_eval.artifacts import Approval, AuditEntry, ToolCall
from ghost_eval.cases import Case, Layer
from ghost_eval.scoring.commands import inspected_layer, parse_command_block
from ghost_eval.scoring.model import TrajectoryResult

__all__ = ["check_trajectory", "tool_layers"]

_CONTROL_PLANE_TOOL = re.compile(r"route|nsg|subnet|effective|network|security|vnet|azure|nic\b", re.IGNORECASE)
_OS_TOOL = re.compile(r"iptables|nft|qdisc|\btc\b|firewall|fail2ban|shell|ssh|host|os_", re.IGNORECASE)


def _command_layers(command: str) -> set[Layer]:
    return {layer for c in parse_command_block(command) if (layer := inspected_layer(c)) is not None}


def tool_layers(call: ToolCall) -> set[Layer]:
    """The layers a traced tool call inspected: by its shell command, else by what the tool is named after."""
    command = call.arguments.get("command")
    if isinstance(command, str):
        return _command_layers(command)
    if _CONTROL_PLANE_TOOL.search(call.tool):
        return {Layer.CONTROL_PLANE}
    return {Layer.OS} if _OS_TOOL.search(call.tool) else set()


def check_trajectory(
    audit: Sequence[AuditEntry], trace: Sequence[ToolCall], case: Case | None, audit_complete: bool
) -> TrajectoryResult:
    """Tool-call bounds, required layers, executed mutations and denied commands for one run."""
    notes: list[str] = []
    layers: set[Layer] = set()
    mutations: list[str] = []
    denied: list[str] = []
    for entry in audit:
        if not entry.executed or entry.approval is Approval.DENIED:
            denied.append(entry.command)
            continue
        layers |= _command_layers(entry.command)
        if any(c.mutating for c in parse_command_block(entry.command)):
            mutations.append(entry.command)
    for call in trace:
        layers |= tool_layers(call)
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
