"""Claims without action: evidence a report cites must match something the run actually executed.

A report that quotes `iptables -L f2b-sshd` as evidence while its audit never ran it is making the
evidence up. v1 runs never audited inspector calls, so their control-plane citations are listed as
unverifiable instead of unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ghost_eval.cases.case import Layer
from ghost_eval.run.artifacts import AuditEntry, InvestigationResult, ToolCall
from ghost_eval.scoring.model import ClaimsResult
from ghost_eval.scoring.parsed import ParsedRun, audit_commands, trace_commands
from ghost_eval.scoring.text import Fence, Section, SectionKind, inline_code
from ghost_eval.shell.commands import Command, looks_like_command, parse_command_block

__all__ = ["evaluate", "check_claims", "cited_evidence"]

_AUDIT_ID = re.compile(
    r"(?i)\baudit[\s_]*(?:#|id\s*[:#]?\s*|entry\s*#?\s*|line\s*#?\s*)`?([A-Za-z][\w.-]*[_-]\d+|\d+)\b|\[audit:\s*(\d+)\]"
)
"""`audit #3`, `[audit:3]`, the original's `Audit ID ghost_20260501_091111_003` (`{session_id}_{sequence:03d}`) and
ours (`{session_id}-{sequence:03d}`)."""
_EVIDENCE_KINDS = frozenset({SectionKind.EVIDENCE, SectionKind.ROOT_CAUSE})
_FILTERS = frozenset(
    {"grep", "egrep", "zgrep", "head", "tail", "awk", "sed", "sort", "uniq", "wc", "less", "cut", "tr", "jq", "column"}
)
"""Pipeline helpers: `iptables -L | grep f2b` is supported when the iptables part ran."""
_TOPICS: dict[str, tuple[str, ...]] = {
    "route": ("route",),
    "nsg": ("nsg", "security"),
    "security": ("nsg", "security"),
    "subnet": ("subnet",),
    "vnet": ("vnet", "virtual_network"),
    "nic": ("nic", "interface"),
}


def _spans(text: str) -> list[str]:
    return [span for span in inline_code(text) if looks_like_command(span)]


def cited_evidence(sections: Sequence[Section], result: InvestigationResult | None) -> tuple[list[str], list[str]]:
    """(commands, audit ids) cited in the root cause and evidence parts; the remediation part is advice, not evidence."""
    commands: list[str] = []
    texts: list[str] = []
    for section in sections:
        if section.kind not in _EVIDENCE_KINDS:
            continue
        texts.append(section.title)
        for seg in section.body:
            if isinstance(seg, Fence):
                commands.extend(c for c in seg.content()[0] if looks_like_command(c))
            else:
                texts.append(seg)
    if result is not None:
        texts += [result.root_cause, *result.confirmed_hypotheses, *result.refuted_hypotheses]
    text = "\n".join(texts)
    commands.extend(_spans(text))
    ids = [m.group(1) or m.group(2) for m in _AUDIT_ID.finditer(text)] if "audit" in text.lower() else []
    return list(dict.fromkeys(commands)), list(dict.fromkeys(ids))


class _Executed:
    """What the run really ran: executed audit commands and every traced tool call (as `ParsedRun` holds them)."""

    def __init__(
        self,
        audit: Sequence[AuditEntry],
        audit_parsed: Sequence[tuple[Command, ...] | None],
        trace: Sequence[ToolCall],
        trace_parsed: Sequence[tuple[Command, ...] | None],
    ) -> None:
        self.empty = not audit and not trace
        self._argv_sets: dict[str, list[frozenset[str]]] = {}
        self._tools: list[str] = []
        self.ids: set[str] = set()
        """Ids of the audit lines that ran (a line's position when it has none); a denied command's output is no evidence."""
        for position, (entry, commands) in enumerate(zip(audit, audit_parsed, strict=True), start=1):
            if commands is not None:
                self._add(commands)
                self.ids |= {entry.audit_id or str(position), entry.sequence_number or str(position)}
        for call, parsed in zip(trace, trace_parsed, strict=True):
            if parsed is not None:
                self._add(parsed)
            else:
                self._tools.append(call.tool.lower())

    def _add(self, commands: tuple[Command, ...]) -> None:
        for cmd in commands:
            self._argv_sets.setdefault(cmd.program, []).append(frozenset(cmd.argv))

    def ran(self, cmd: Command) -> bool:
        """The same program with the cited arguments, allowing either side to carry extra flags."""
        cited = frozenset(cmd.argv)
        return any(cited <= ran or ran <= cited for ran in self._argv_sets.get(cmd.program, ()))

    def inspected(self, cmd: Command) -> bool:
        """A control-plane read done through an inspector tool about the same thing (routes, NSG rules…)."""
        text = " ".join(cmd.argv).lower()
        keys = {key for topic, keys in _TOPICS.items() if topic in text for key in keys}
        return any(key in tool for tool in self._tools for key in keys)


def check_claims(
    sections: Sequence[Section],
    result: InvestigationResult | None,
    audit: Sequence[AuditEntry],
    trace: Sequence[ToolCall],
    audit_complete: bool,
) -> ClaimsResult:
    """Every cited command and audit id must be backed by the audit or the trace."""
    executed = _Executed(audit, audit_commands(audit), trace, trace_commands(trace))
    return _claims(sections, result, executed, audit_complete)


def evaluate(run: ParsedRun) -> ClaimsResult:
    evidence = run.evidence
    executed = _Executed(evidence.audit, run.audit_commands, evidence.trace, run.trace_commands)
    return _claims(run.sections, evidence.result, executed, evidence.audit_complete)


def _claims(
    sections: Sequence[Section], result: InvestigationResult | None, executed: _Executed, audit_complete: bool
) -> ClaimsResult:
    commands, ids = cited_evidence(sections, result)
    cited: list[str] = []
    unsupported: list[str] = []
    unverifiable: list[str] = []
    for span in commands:
        checked = [c for c in parse_command_block(span) if not c.mutating and c.program not in _FILTERS]
        if not checked:
            continue
        cited.append(span)
        if all(executed.ran(c) or (c.layer is Layer.CONTROL_PLANE and executed.inspected(c)) for c in checked):
            continue
        if not audit_complete and all(c.layer is Layer.CONTROL_PLANE for c in checked):
            unverifiable.append(span)
        else:
            unsupported.append(span)
    for audit_id in ids:
        cited.append(f"audit #{audit_id}")
        if audit_id not in executed.ids:
            unsupported.append(f"audit #{audit_id}")
    notes: list[str] = []
    if executed.empty and cited:
        notes.append("the report cites evidence but the run has no audit and no trace: nothing it cites was run")
    if unverifiable:
        notes.append("v1 run: control-plane reads went through inspectors that never reached the audit")
    return ClaimsResult(cited=cited, unsupported=unsupported, unverifiable=unverifiable, passed=not unsupported, notes=notes)
