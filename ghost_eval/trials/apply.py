"""Carrying out a run's recommended commands in the lab, each through the safety gate, as an operator would.

The operator approves the recommendation, so commands that change state run (eval-mode approval), but the gate's
`forbidden` never runs, nor does anything that would send local data out of the lab. Every command runs inside a
lab VM over SSH (the VM named by an `ssh` or `az vm run-command` wrapper, else the one the action names, else the
case's host) or, for `az`, by the real Azure CLI against the lab's emulator, limited to the commands
`ghost_eval/trials/azcli.py` allows (`az vm run-command invoke` runs its script in the named VM, through the gate);
nothing else runs on the machine hosting the lab, and a command is run once: one that timed out or lost its SSH
session is never run again by another way.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from ghost_eval.agent.approval import approve_for_eval, decide
from ghost_eval.agent.gate import classify
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.cases.case import Case
from ghost_eval.connect.ssh import CommandTimedOut
from ghost_eval.live.recipes import RecipeRun
from ghost_eval.run.artifacts import Approval
from ghost_eval.shell.calls import AzCall, az_call
from ghost_eval.shell.commands import Command, parse_command_block
from ghost_eval.trials.azcli import run_az
from ghost_eval.trials.record import CommandOutcome

__all__ = ["Runner"]

_OUTPUT_LIMIT = 2000
_TIMEOUT_S = 60.0
_ASSIGN_AZ = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)=\$\((\s*az\s.*)\)\s*$", re.DOTALL)
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_IPV4 = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")
_SUDO_SHIM = 'command -v sudo >/dev/null || sudo() { while [ "${1#-}" != "$1" ]; do shift; done; "$@"; }\n'
"""The lab's VMs log in as root and have no sudo: `sudo cmd` runs cmd, as it would for root."""


@dataclass
class Runner:
    """Runs commands for one trial; keeps the shell variables an action set from an `az` read (`X=$(az …)`)."""

    run: RecipeRun
    case: Case
    lab_dir: Path
    """The lab's state folder: its signed-in az profile runs the fix's az commands."""
    az_cache: Path
    """Where the azure-cli environment those commands run with is built (the settings' `cache_dir`)."""
    variables: dict[str, str] = field(default_factory=dict)
    addresses: dict[str, str] = field(default_factory=dict)

    def vm_for(self, command: str, context: Sequence[str]) -> str:
        """The VM a command runs on: named in the command; else, for a probe of one VM's address, the other VM; else
        the first VM its action's text names (description, then expected result); else the case's host."""
        vms = sorted(self.run.target.hosts)
        named = _first_named(command, vms)
        if named is not None:
            return named
        addresses = {self._address(vm): vm for vm in vms}
        reached = [addresses[a] for a in _IPV4.findall(command) if a in addresses]
        if reached and len(vms) == 2:
            return next(vm for vm in vms if vm != reached[0])
        for text in context:
            named = _first_named(text, vms)
            if named is not None:
                return named
        hosts = [f.host for f in self.case.ground_truth if f.host in vms]
        return hosts[0] if hosts else vms[0]

    def _address(self, vm: str) -> str:
        """The VM's private address, as its NIC in the control plane says."""
        if vm not in self.addresses:
            nic = self.run.target.nics.get(vm)
            configs = self.run.net.network_interfaces.get(self.run.target.resource_group, nic).ip_configurations if nic else None
            self.addresses[vm] = str(configs[0].private_ip_address) if configs else ""
        return self.addresses[vm]

    def execute(self, command: str, context: Sequence[str]) -> CommandOutcome:
        """One command: an `az` command by the real CLI, anything else on a VM after the gate."""
        assign = _ASSIGN_AZ.match(command)
        if assign is not None:
            outcome = self._az(assign.group(2).strip(), command)
            if outcome.exit_status == 0:
                self.variables[assign.group(1)] = outcome.output.rstrip("\n")  # as `$(…)` strips it
            return outcome
        parsed = parse_command_block(command)
        invoke = _invocation(parsed)
        if invoke is not None:
            return self._run_command_invoke(invoke, command)
        if any(c.program == "az" and az_call(c.argv) is not None for c in parsed):
            if len(parsed) == 1 and parsed[0].argv[0] == "az":
                return self._az(command, command)
            return CommandOutcome(
                command=command, where="-", gate="az", decision="not_executable", why="an az call inside a shell construct"
            )
        return self._shell(command, context)

    def _az(self, text: str, command: str) -> CommandOutcome:
        expanded = _VARIABLE.sub(lambda m: self.variables.get(m.group(1), m.group(0)), text)
        try:
            argv = shlex.split(expanded)
        except ValueError as exc:
            return CommandOutcome(
                command=command, where="-", gate="az", decision="not_executable", why=f"cannot be parsed: {exc}"
            )
        if any(_VARIABLE.search(word) or word.startswith("<") for word in argv):
            return CommandOutcome(
                command=command, where="-", gate="az", decision="not_executable", why="a placeholder or an unset variable"
            )
        result = run_az(self.lab_dir, argv, self.az_cache)
        if not result.executable:
            return CommandOutcome(command=command, where="-", gate="az", decision="not_executable", why=result.why)
        return CommandOutcome(
            command=command,
            where="arm",
            gate="az",
            decision="ran",
            exit_status=result.exit_status,
            why=result.why,
            output=result.output[:_OUTPUT_LIMIT],
        )

    def _run_command_invoke(self, call: AzCall, command: str) -> CommandOutcome:
        """`az vm run-command invoke`: Azure runs the `--scripts` lines as a shell script inside the named VM, so the
        trial does the same (through the gate, over the VM's SSH). The `az` line itself is never a shell line."""

        def refuse(why: str) -> CommandOutcome:
            return CommandOutcome(command=command, where="-", gate="az", decision="not_executable", why=why)

        names = call.options.get("--name", ())
        scripts = call.options.get("--scripts", ())
        command_id = call.options.get("--command-id", ("RunShellScript",))
        if len(names) != 1 or names[0] not in self.run.target.hosts:
            return refuse(f"no VM of the lab is named {' '.join(names) or '(no --name)'} (Azure: ResourceNotFound)")
        if command_id != ("RunShellScript",):
            return refuse(f"--command-id {' '.join(command_id)}: the lab's VMs are Linux and run RunShellScript only")
        if not scripts or any(_VARIABLE.fullmatch(s) or s.startswith("@") for s in scripts):
            return refuse("no script given inline (a file reference or an unset variable)")
        outcome = self._shell("\n".join(scripts), [], vm=names[0])
        return outcome.model_copy(update={"command": command})

    def _shell(self, command: str, context: Sequence[str], vm: str | None = None) -> CommandOutcome:
        verdict = classify(command)
        approval = decide("lab", verdict, approve_for_eval)
        egress = [r for r in verdict.reasons if r.startswith("egress:")]
        gate = verdict.classification.value
        if approval is Approval.DENIED or egress:
            why = "; ".join(egress or verdict.reasons)
            return CommandOutcome(command=command, where="-", gate=gate, decision="refused", why=why)
        vm = vm or self.vm_for(command, context)
        cut_off: dict[str, str] = getattr(self.run, "cut_off", {})
        if vm in cut_off:
            return CommandOutcome(
                command=command, where="-", gate=gate, decision="not_executable", why=f"{vm} no longer answers on SSH"
            )
        script = _strip_ssh(command, vm)
        try:
            code, out, err = self.run.run_over_ssh(vm, f"bash -c {shlex.quote(_SUDO_SHIM + script)}", timeout=_TIMEOUT_S)
        except CommandTimedOut:
            code, out, err = 124, "", f"timed out after {_TIMEOUT_S:g} s (not run again)"
        except (GhostEvalError, paramiko.SSHException, OSError) as exc:
            cut_off[vm] = str(exc) or type(exc).__name__
            why = f"SSH failed during the command ({cut_off[vm]}); not run again"
            return CommandOutcome(command=command, where=vm, gate=gate, decision="ran", why=why)
        return CommandOutcome(
            command=command,
            where=vm,
            gate=gate,
            decision="ran",
            exit_status=code,
            why="; ".join(verdict.reasons) if approval is Approval.EVAL_AUTO else "",
            output=(out + err)[-_OUTPUT_LIMIT:],
        )


def _invocation(parsed: Sequence[Command]) -> AzCall | None:
    """The `az vm run-command invoke` call the whole command is (the command model unwraps its script into the
    commands it runs, each keeping the `az` line as its wrapper), or None."""
    lines = {c.wrappers[0] if c.wrappers else c.argv for c in parsed}
    if len(lines) != 1:
        return None
    call = az_call(next(iter(lines)))
    return call if call is not None and call.groups == ("vm", "run-command") and call.verb == "invoke" else None


def _first_named(text: str, vms: Sequence[str]) -> str | None:
    found = sorted((text.find(vm), vm) for vm in vms if vm in text)
    return found[0][1] if found else None


def _strip_ssh(command: str, vm: str) -> str:
    """`ssh [user@]vm 'cmd'` runs cmd on vm: the trial is already there."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) > 2 and words[0] == "ssh":
        for at, word in enumerate(words[1:], start=1):
            if word.rpartition("@")[2] == vm:
                return " ".join(words[at + 1 :]) if len(words) > at + 2 else words[at + 1]
    return command
