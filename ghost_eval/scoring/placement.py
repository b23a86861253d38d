"""Where each command of a fix runs: the VM a line, a label, a host prompt or a run-command wrapper places it on, and
the qdisc or firewall changes that land on a VM without the fault (criterion 3)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ghost_eval.cases.case import Case, Layer
from ghost_eval.scoring.cautions import blank_warnings
from ghost_eval.scoring.owner_bypass import RESTORE_PROGRAMS
from ghost_eval.scoring.parsed import ActionView
from ghost_eval.scoring.text import LAB_VM_NAME
from ghost_eval.shell.commands import Command

__all__ = ["FIREWALL_PROGRAMS", "OS_FAULT_KINDS", "changes_on_clean_vms", "placed_commands"]


OS_FAULT_KINDS = (
    ("qdisc", re.compile(r"\b(?:qdisc|tc|netem|tbf|htb)\b")),
    ("firewall", re.compile(r"\b(?:iptables|nft|chain|INPUT|OUTPUT|FORWARD)\b")),
)
"""What an OS fault is, read from its resource and description: a qdisc, or a firewall rule or chain."""
FIREWALL_PROGRAMS = frozenset({"iptables", "ip6tables", "nft", "ufw", "fail2ban-client"} | RESTORE_PROGRAMS)


_LABEL_MID_LINE = rf"(?<=[\s)])(?<!from )(?<!to )(?={LAB_VM_NAME}\s*(?::|->|\u2192|=>)\s)"
_ON_VM = re.compile(
    rf"(?i)(?<!nothing )(?<!not )(?<!no )(?:#\s*|\bon\s+(?:the\s+)?|^\W*|\(|{_LABEL_MID_LINE})(?P<vm>{LAB_VM_NAME})\b"
    rf"(?:\s+and\s+(?:on\s+)?(?P<also>{LAB_VM_NAME})\b)?|\bon\s+both\s+(?:vms|ends|boxes|hosts|sides|machines)\b"
)
"""Where a line puts a command on a VM: "on tf-dest-vm (and tf-source-vm)", "on tf-source-vm AND on tf-dest-vm", a
trailing `# tf-dest-vm`, "tf-dest-vm:" (or "tf-dest-vm ->") first or after a space (steps joined on one line: "… chain)
tf-source-vm: tc qdisc del …", but not a probe's ends, "nc … from tf-source-vm: succeeded"), a host label
"(tf-source-vm) tc …", "on both VMs"; not "nothing on tf-dest-vm needs to change"."""
_LABEL_END = r"\s*(?::|->|\u2192|=>)"
_VM_AFTER = re.compile(
    rf"(?i)[\s`'\")]*(?:#\s*|on\s+(?:the\s+)?)(?P<vm>{LAB_VM_NAME})\b(?:\s+and\s+(?P<also>{LAB_VM_NAME})\b)?(?!{_LABEL_END})"
    rf"|[\s`'\")]*on\s+both\s+(?:vms|ends|boxes|hosts|sides|machines)\b(?!{_LABEL_END})"
)
"""A placement right after the command: "`tc qdisc del …` on tf-dest-vm", "… root   # tf-dest-vm"; one ending in a
colon or an arrow labels the next command ("on tf-source-vm: tc qdisc del … on tf-dest-vm: iptables -D …", "on
tf-dest-vm -> iptables -D … on tf-source-vm -> tc qdisc del …" run together on one line)."""
_LAB_VMS = ("tf-source-vm", "tf-dest-vm")


_RUN_COMMAND_VM = re.compile(r"\baz\s+vm\s+run-command\b.*?\s(?:-n|--name|--vm-name)\s+[\"']?(\w[\w.-]*)")
"""The VM `az vm run-command` carries a script to (not "via run-command: iptables -L INPUT -n --line-numbers")."""


def _run_command_vms(wrapper: tuple[str, ...]) -> set[str]:
    """The lab VM an `az vm run-command` wrapper carries the command to, as parsed: a loop's `-n $vm` is written out
    per item (`for vm in tf-source-vm tf-dest-vm; do az vm run-command … -n $vm …`), so each run names its VM."""
    if wrapper[:3] != ("az", "vm", "run-command"):
        return set()
    names = {wrapper[i + 1].lower() for i, word in enumerate(wrapper[:-1]) if word in {"-n", "--name", "--vm-name"}}
    return names & set(_LAB_VMS)


def _carrier(line: str, at: int) -> re.Match[str] | None:
    """The `az vm run-command` a command on this line is carried by: the last one written before it, when that one
    names its VM ("(a) … run-command … -n tf-dest-vm … (b) source: run-command "tc qdisc del …"" puts the second on no
    VM named, not on the first's)."""
    starts = [m.start() for m in re.finditer(r"\brun-command\b", line[:at])]
    az = re.search(r"\baz\s+vm\s+$", line[: starts[-1]]) if starts else None
    return _RUN_COMMAND_VM.match(line, az.start()) if az else None


_ADJACENT = re.compile(r"[\s)\]:,`*-]*")
"""What may stand between a placement and its command for the placement to be the command's own."""


def _placed(view: ActionView, raw: str, cmd: Command, nth: int = 0, *, earlier: bool = True) -> set[str]:
    """The VM an action runs a command on: the host of an `ssh` wrapper, the VM `az vm run-command` carries it to,
    else the VM its line puts it on, the last placement before the command or one right after it ("on tf-dest-vm,
    `tc qdisc del …`", "`tc qdisc del …`  # tf-dest-vm"), or for a structured action whose commands stand apart, the
    one its description names ("Remove the netem qdisc on tf-source-vm"). None known: nothing is said. Without
    `earlier`, a VM named earlier in the sentence counts only right before the command ("(on tf-source-vm) tc …"):
    messy prose runs steps together ("netem on tf-source-vm (unrelated) fix dest: iptables -D …"), so only the
    command's own placement is clear evidence."""
    ssh = [w[-1].lower() for w in cmd.wrappers if w[:1] == ("ssh",) and len(w) > 1]
    if ssh:
        return {vm for vm in _LAB_VMS if vm in " ".join(ssh)}
    if carried_to := {vm for w in cmd.wrappers for vm in _run_command_vms(w)}:
        return carried_to
    text = view.written
    places = [m.start() for m in re.finditer(re.escape(raw), text)]  # the same command twice: the nth is this one
    where = places[min(nth, len(places) - 1)] if places else -1
    line = text[text.rfind("\n", 0, where) + 1 : (text.find("\n", where) + 1 or len(text) + 1) - 1] if places else raw
    at = where - (text.rfind("\n", 0, where) + 1) if places else 0
    if (carried := _RUN_COMMAND_VM.search(raw) or _carrier(line, at)) is not None:  # its own -n first
        return {carried.group(1).lower()}
    inside = _ON_VM.search(raw)  # a bare command that runs on into "… root on tf-dest-vm"
    after = _VM_AFTER.match(line, at + len(raw)) if at >= 0 else None
    before = [
        m
        for m in _ON_VM.finditer(line, 0, max(at, 0))
        if line.rfind(".", m.end(), at) < 0 and (earlier or _ADJACENT.fullmatch(line, m.end(), at))
    ]
    chosen = inside or after or (before[-1] if before else None)
    if chosen is None and view.structured:  # its description says where its commands run
        chosen = next(reversed(list(_ON_VM.finditer(blank_warnings(view.action.description)))), None)
    if chosen is None:
        return set()
    return {vm.lower() for vm in (chosen["vm"], chosen["also"]) if vm} if chosen["vm"] else set(_LAB_VMS)


def changes_on_clean_vms(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for a qdisc or firewall change on a VM without that fault ("reset tc on both ends"): it
    touches configuration beyond what the fault needs, the judge spec's criterion 3, even where it only puts that VM's
    default back. Where no change of that kind lands on the VM that has the fault, the fix is aimed at the wrong VM."""
    at_fault = _fault_hosts(case)
    placed = placed_commands(views)
    reached: dict[str, set[str]] = {}
    for _, _, cmd, on in placed:
        if cmd.mutating and (kind := _os_kind(cmd)) is not None:
            reached.setdefault(kind, set()).update(on or {"(unplaced)"})
    found = []
    for view, raw, note, kind in _clean_vm_changes(placed, case):
        hosts = at_fault.get(kind, set())
        if hosts and not (hosts | {"(unplaced)"}) & reached.get(kind, set()):
            note += f", while no {kind} change lands on {', '.join(sorted(hosts))}, where the fault is: aimed at the wrong VM"
        found.append((view, raw, note))
    return found


def _os_kind(cmd: Command) -> str | None:
    return "qdisc" if cmd.program == "tc" else "firewall" if cmd.program in FIREWALL_PROGRAMS else None


def _fault_hosts(case: Case | None) -> dict[str, set[str]]:
    """The VMs with an OS fault of each kind (a qdisc, a firewall rule), read from the fault's resource and words."""
    faults = [f for f in case.ground_truth if f.layer is Layer.OS and f.host] if case is not None else []
    return {
        kind: {f.host for f in faults if f.host and words.search(f"{f.resource} {f.description}")}
        for kind, words in OS_FAULT_KINDS
    }


def _clean_vm_changes(
    placed: Sequence[tuple[ActionView, str, Command, set[str]]], case: Case | None
) -> list[tuple[ActionView, str, str, str]]:
    """(action, command, note, kind) for each qdisc or firewall change placed on a VM without the fault."""
    faulty = {f.host for f in case.ground_truth if f.layer is Layer.OS and f.host} if case is not None else set()
    if not faulty:
        return []
    shaped = _fault_hosts(case)["qdisc"]
    found = []
    for view, raw, cmd, on in placed:
        kind = _os_kind(cmd)
        if not cmd.mutating or kind is None:
            continue
        # A qdisc change is clean-VM work where no shaping fault is; a firewall change only where no OS fault is at
        # all (the lab emulates loss with a firewall chain beside a qdisc).
        hosts = shaped if kind == "qdisc" else faulty
        if clean := sorted(on - hosts):
            note = f"action {view.index}: `{raw[:80]}` changes the {kind} on {', '.join(clean)}, a VM without any fault"
            found.append((view, raw, note, kind))
    return found


def placed_commands(views: Sequence[ActionView], *, earlier: bool = True) -> list[tuple[ActionView, str, Command, set[str]]]:
    """Every command of every action with the VMs it is placed on (`_placed`; a command written twice in one action is
    placed by its own occurrence)."""
    placed = []
    for view in views:
        seen: list[str] = []
        for raw, cmd in view.commands:
            seen.append(raw)
            placed.append((view, raw, cmd, _placed(view, raw, cmd, seen.count(raw) - 1, earlier=earlier)))
    return placed
