"""The OS-layer inspector: one command on one VM over SSH, through the safety gate, with an audit line every time.

Sessions open lazily, one per host, with host keys verified against the target's pinned known_hosts (see
`ghost_eval.connect.ssh`). A refused command gets its audit line too, marked as not executed. Every output is
capped here, once, in bytes and in lines, so that what is stored, traced and sent to the model is the same bounded
text; the audit line records the cap and the size before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import paramiko

from ghost_eval.agent.approval import Approver, decide
from ghost_eval.agent.gate import Classification, GateVerdict, classify
from ghost_eval.agent.redact import redact
from ghost_eval.base.records import Record
from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import Target, TargetError
from ghost_eval.run.artifacts import Approval, AuditEntry

__all__ = ["OutputCap", "OutputLimit", "ShellInspector"]


class OutputCap(Record):
    """The `output_cap` of an audit line: the limits one command's output went through, and its size before them."""

    capped: bool
    """True when the output was cut to the limits."""
    max_bytes: int
    max_lines: int
    original_bytes: int
    """UTF-8 bytes of the (redacted) output before the cap."""
    original_lines: int


@dataclass(frozen=True)
class OutputLimit:
    """How much of one command's output is kept: a device read or a runaway log must not fill the store or the
    model's context."""

    max_bytes: int = 65_536
    max_lines: int = 2_000

    def apply(self, text: str) -> tuple[str, OutputCap]:
        """The kept text (with a closing note when cut) and what was cut; whole lines first, then whole characters."""
        lines = text.splitlines(keepends=True)
        size = len(text.encode("utf-8"))
        kept = "".join(lines[: self.max_lines]).encode("utf-8")[: self.max_bytes].decode("utf-8", "ignore")
        cap = OutputCap(
            capped=kept != text,
            max_bytes=self.max_bytes,
            max_lines=self.max_lines,
            original_bytes=size,
            original_lines=len(lines),
        )
        if cap.capped:
            kept += (
                f"\n[output capped: {len(kept.encode('utf-8'))} of {size} bytes and "
                f"{len(kept.splitlines())} of {len(lines)} lines kept]"
            )
        return kept, cap


@dataclass
class ShellInspector:
    """Runs the agent's shell commands on the target's VMs; `audit` holds one line per command asked for."""

    target: Target
    approver: Approver
    session_id: str
    command_timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    output_limit: OutputLimit = OutputLimit()
    audit: list[AuditEntry] = field(default_factory=list)
    _clients: dict[str, paramiko.SSHClient] = field(default_factory=dict, init=False, repr=False)

    def run(self, host: str, command: str) -> tuple[str, bool]:
        """Gate, approve, run; returns (text for the model, is_error)."""
        verdict = classify(command)
        if host not in self.target.hosts:
            known = ", ".join(sorted(self.target.hosts))
            return self._refused(host, verdict, None, f"unknown host {host!r}; hosts: {known}")
        approval = decide(host, verdict, self.approver)
        if approval is Approval.DENIED:
            return self._refused(host, verdict, approval, _refusal(verdict))
        try:
            code, out, err = ssh_run(self._client(host), command, self.command_timeout_s)
        except (TargetError, paramiko.SSHException, OSError) as exc:
            self._audit(host, verdict, approval, executed=True, exit_code=None, output=f"error: {exc}")
            return f"error: {exc}", True
        text, cap = self.output_limit.apply(redact(out + (f"\n[stderr]\n{err}" if err.strip() else "")))
        self._audit(host, verdict, approval, executed=True, exit_code=code, output=text, output_cap=cap)
        return f"exit code {code}\n{text}", False

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def _client(self, host: str) -> paramiko.SSHClient:
        client = self._clients.get(host)
        transport = client.get_transport() if client is not None else None
        if client is None or transport is None or not transport.is_active():
            client = ssh_connect(self.target.hosts[host], timeout=self.connect_timeout_s)
            self._clients[host] = client
        return client

    def _refused(self, host: str, verdict: GateVerdict, approval: Approval | None, why: str) -> tuple[str, bool]:
        self._audit(host, verdict, approval, executed=False, exit_code=None, output=why)
        return why, True

    def _audit(
        self,
        host: str,
        verdict: GateVerdict,
        approval: Approval | None,
        *,
        executed: bool,
        exit_code: int | None,
        output: str,
        output_cap: OutputCap | None = None,
    ) -> None:
        self.audit.append(
            AuditEntry(
                command=redact(verdict.command),
                host=host,
                timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
                exit_code=exit_code,
                output=redact(output),
                executed=executed,
                approval=approval,
                classification=verdict.classification.value,
                audit_id=f"{self.session_id}-{len(self.audit) + 1:03d}",
                session_id=self.session_id,
                gate_reasons=[redact(r) for r in verdict.reasons],
                output_cap=output_cap.model_dump() if output_cap is not None else None,
            )
        )


def _refusal(verdict: GateVerdict) -> str:
    reasons = "; ".join(verdict.reasons)
    if verdict.classification is Classification.FORBIDDEN:
        return f"refused by the safety gate (forbidden): {reasons}. This command never runs."
    return (
        f"not run: this command needs an operator's approval ({reasons}) and none was given. "
        "Recommend it instead, or use a single plain read-only command."
    )
