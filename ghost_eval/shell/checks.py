"""What counts as a check: a command or a named tool that reads state and can verify a fix.

An agent names its checks in words ("IP flow verify returns Allow", "re-run the drift check") as often as it writes
their commands, so a check is recognised from either.
"""

from __future__ import annotations

import re

from ghost_eval.cases.case import Layer
from ghost_eval.shell.commands import Command, looks_like_command, parse_command_block
from ghost_eval.shell.programs import INSPECTION_PROGRAMS

__all__ = ["inspected_layer", "inspector_call", "is_check", "tool_check", "tool_layer", "watcher_check"]


_INSPECTOR_CALL = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\((?:[^()]|\([^()]*\))*\)|(?:\s+[a-z][a-z0-9_]*=\S+)+)")


def inspector_call(span: str) -> bool:
    """Whether a backticked span is one of the agent's inspector tools called by name, its arguments in parentheses or
    as `key=value` words (`inspect_nsg(vm=tf-dest-vm)`, `effective_route_inspector vm_name=tf-source-vm dst_ip=8.8.8.8`):
    a read-only check an agent may name as its verification."""
    return _INSPECTOR_CALL.fullmatch(span.strip()) is not None


_WATCHER_CHECK = re.compile(
    r"(?i)\b(?:ip\s+flow\s+verify|test-ip-flow|show-next-hop|next[\s-]hop(?![\s:]+(?:type\s+)?(?:VirtualAppliance|VnetLocal|Internet|None|"
    r"VirtualNetworkGateway|VnetPeering|\d))|connection\s+troubleshoot|connectivity\s+check|"
    r"effective[\s-]+(?:routes?|security\s+rules|nsg\s+rules))\b"
)
"""A route's own "next hop VirtualAppliance 10.0.1.100" is a field of the route, not the Next Hop check."""
_PORTAL = re.compile(r"(?i)\b(?:portal|blade|gui|web\s+ui)\b")


def watcher_check(text: str) -> str | None:
    """The Network Watcher check a sentence names ("IP flow verify … returns `Allow`"): read-only checks an agent
    names in prose as often as it writes their command. Looked at in the portal it is a click, not a command the
    next reader can run: no check."""
    m = _WATCHER_CHECK.search(text)
    return m.group(0) if m and not _PORTAL.search(text) else None


_TOOL_CHECK = re.compile(
    r"(?i)\b(?:[a-z]+_)+(?:inspector|drift)\b|\binspect_[a-z]+(?:_[a-z]+)*\b|\bdrift\s+(?:check|comparison|detection)\b"
    r"|\bdrift\s+(?:vs\.?|against)\s+[\w.-]+"
)
"""The agent's own read-only tools named in words: an inspector (`effective_route_inspector`, `inspect_nsg`) or a
drift check against a baseline, whose `drift_detected: false` is a stated result."""


def tool_check(text: str) -> str | None:
    """The agent's read-only tool a sentence names ("re-run the drift check against eni_pre_window_P",
    "effective_route_inspector again"), as it names a Network Watcher check; a look in the portal is no check."""
    m = _TOOL_CHECK.search(text)
    return m.group(0) if m and not _PORTAL.search(text) else None


_TOOL_LAYERS = (
    (re.compile(r"\b(?:detect_effective_network_drift|effective_route_inspector|inspect_nsg)\b"), Layer.CONTROL_PLANE),
    (re.compile(r"\bdetect_config_drift\b"), Layer.OS),
)
"""The agent's read-only tools and the layer each reads, as the original's tool descriptions state: the effective
network drift (effective routes and NSG rules), the route inspector and the NSG inspector read Azure's control plane;
the config drift check reads the VM's own firewall (iptables/nftables)."""


def tool_layer(text: str) -> Layer | None:
    """The layer the agent's tool named in a check reads; None for any other check, or where two layers are named."""
    layers = {layer for pattern, layer in _TOOL_LAYERS if pattern.search(text)}
    return layers.pop() if len(layers) == 1 else None


def is_check(command: str) -> bool:
    """A command that can verify a fix: a shell command that only reads state, one of the agent's inspector calls or
    tools named in words, or a named Network Watcher check."""
    named = {watcher_check(command), tool_check(command)}
    if inspector_call(command) or command.strip() in named:
        return True
    parsed = parse_command_block(command)
    return looks_like_command(command) and bool(parsed) and not any(c.mutating for c in parsed)


def inspected_layer(command: Command) -> Layer | None:
    """The layer a command looks at: any Azure call, or a host tool that shows network or firewall state."""
    if command.layer is Layer.CONTROL_PLANE:
        return Layer.CONTROL_PLANE
    return Layer.OS if command.program in INSPECTION_PROGRAMS else None
