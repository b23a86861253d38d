"""Accepts removed under a dropping policy (criterion 3): where the fault is the INPUT chain's DROP policy, each ACCEPT
rule of INPUT is a way into the VM the policy still lets through (the Wire Server that `az vm run-command` needs, SSH,
the return traffic of open connections). Deleting one before the policy is put back, in a step of its own, drops what
it let through: the VM is cut off from the steps that follow, the policy's restore among them. A forwarding chain
carries no way into the VM itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ghost_eval.scoring.parsed import ActionView
from ghost_eval.shell.calls import iptables_call
from ghost_eval.shell.commands import Command

__all__ = ["accepts_cut_under_policy"]


def _accept_deleted(cmd: Command) -> str | None:
    """The chain an ACCEPT rule is deleted from, by its spec (`iptables -D INPUT -p tcp --dport 22 -j ACCEPT`)."""
    call = iptables_call(cmd.argv)
    return call.chain if call is not None and call.op == "D" and call.target == "ACCEPT" else None


def _policy_accepted(cmd: Command) -> str | None:
    """The chain whose policy a command sets to ACCEPT (`iptables -P INPUT ACCEPT`)."""
    call = iptables_call(cmd.argv)
    return call.chain if call is not None and call.op == "P" and call.policy == "ACCEPT" else None


def accepts_cut_under_policy(
    views: Sequence[ActionView], policy_at_fault: Callable[[str], bool]
) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for each ACCEPT deleted from INPUT where its DROP policy is the fault, while that policy
    still drops: no earlier step put it back, and the step that does, if any, is a later one. A restore in the same
    script runs on the VM with it; one in a later `run-command` or SSH session may never get there."""
    restored: set[str] = set()
    found = []
    for view in views:
        for raw, cmd in view.commands:
            if not cmd.mutating:
                continue
            if (chain := _policy_accepted(cmd)) is not None:
                restored.add(chain)
                continue
            chain = _accept_deleted(cmd)
            if chain != "INPUT" or chain in restored or not policy_at_fault(chain):
                continue
            same_step = any(_policy_accepted(c) == chain for r, c in view.commands if r == raw)
            if not same_step:
                why = (
                    f"deletes an ACCEPT from {chain} while its DROP policy, the fault, still drops everything else: what "
                    "the rule let through (the Wire Server run-command needs, SSH, return traffic) is cut off before the "
                    "policy is put back, and the steps after it may never reach the VM"
                )
                found.append((view, raw, why))
    return found
