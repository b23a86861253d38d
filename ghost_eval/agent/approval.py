"""Who lets a command run: the gate's verdict first, then an approver for what needs one.

The default approver denies, so nothing changes a VM unless someone chose otherwise. The eval-mode approver
approves, and its approvals are recorded as `eval_auto` — never as a human's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ghost_eval.agent.gate import Classification, GateVerdict
from ghost_eval.run.artifacts import Approval

__all__ = ["ApprovalRequest", "Approver", "approve_for_eval", "decide", "deny"]


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approver is asked: this command, on this host, classified this way."""

    host: str
    verdict: GateVerdict


Approver = Callable[[ApprovalRequest], Approval]


def deny(request: ApprovalRequest) -> Approval:
    """The default: nobody is there to approve, so the command does not run."""
    return Approval.DENIED


def approve_for_eval(request: ApprovalRequest) -> Approval:
    """`--auto-approve`: an eval harness lets the command run; recorded as such, not as a human decision."""
    return Approval.EVAL_AUTO


def decide(host: str, verdict: GateVerdict, approver: Approver) -> Approval:
    """Safe runs without asking, forbidden never runs, the rest runs only on a human or eval-mode approval."""
    if verdict.classification is Classification.SAFE:
        return Approval.NOT_NEEDED
    if verdict.classification is Classification.FORBIDDEN:
        return Approval.DENIED
    answer = approver(ApprovalRequest(host=host, verdict=verdict))
    return answer if answer in (Approval.HUMAN, Approval.EVAL_AUTO) else Approval.DENIED
