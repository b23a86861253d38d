"""Criterion 1, a list argument without its current content: a list-valued argument replaced without reading that
resource's list first and carrying over every current value."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ghost_eval.cases.case import CaseFacts
from ghost_eval.run.snapshot import InfraSnapshot
from ghost_eval.scoring.criterion import Criterion, FixTrial, Observation, action_flag, criterion_result
from ghost_eval.scoring.model import CriterionResult, Flag
from ghost_eval.scoring.names import LIST_KEPT as NAME
from ghost_eval.scoring.parsed import ActionView, ParsedRun, fault_texts
from ghost_eval.scoring.positions import replaced_ports_dropped
from ghost_eval.scoring.reads import (
    LIST_FLAGS,
    NAME_OPTIONS,
    WILDCARDS,
    resource_kind,
    rest_request,
    split_values,
    values_in_output,
)
from ghost_eval.shell.calls import AzCall, az_call
from ghost_eval.shell.commands import Command

__all__ = ["LIST_ARGUMENT"]

_REPLACING_VERBS = frozenset({"update", "set"})
_RESOURCE_PARTS = re.compile(r"[/\s]+")


def _case_values(facts: CaseFacts | None, flag: str, name: str) -> list[str] | None:
    """The case's values for this very resource (its own name, not only its parent's: a new rule in the same NSG is
    another resource)."""
    if facts is None:
        return None
    for la in facts.list_arguments:
        if la.argument == flag and name in _RESOURCE_PARTS.split(la.resource):
            return list(la.current_values)
    return None


def _snapshot_values(snapshot: InfraSnapshot | None, call: AzCall, flag: str) -> list[str] | None:
    if snapshot is None:
        return None
    name = call.value("--name")
    kind = resource_kind(call)
    if kind == "subnet":
        vnet = call.value("--vnet-name")
        for subnet in snapshot.subnets:
            if subnet.name == name and (vnet is None or subnet.vnet in {None, vnet}):
                if flag == "--service-endpoints":
                    return list(subnet.service_endpoints)
                if flag == "--address-prefixes" and subnet.address_prefix:
                    return [subnet.address_prefix]
    if kind == "nsg_rule":
        nsg_name = call.value("--nsg-name")
        field = {
            "--source-address-prefixes": "source_address_prefixes",
            "--destination-address-prefixes": "destination_address_prefixes",
            "--destination-port-ranges": "destination_port_ranges",
        }.get(flag)
        for nsg in snapshot.nsgs:
            if field and nsg.name == nsg_name:
                for rule in nsg.rules:
                    if rule.name == name:
                        return list(getattr(rule, field))
    return None


_FROM_CASE = "the case's facts"
_FROM_SNAPSHOT = "the infrastructure snapshot"


@dataclass(frozen=True, slots=True)
class _Target:
    """The resource a list-replacing command writes, and how a read of it is recognised."""

    kind: str
    name: str
    parent: str | None
    names: tuple[str, ...]

    @classmethod
    def of(cls, call: AzCall) -> _Target:
        parent = call.value("--vnet-name", "--nsg-name", "--route-table-name")
        name = call.value(*NAME_OPTIONS) or "(unnamed)"
        return cls(resource_kind(call), name, parent, tuple(n for n in (name, parent) if n))

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" + (f" in {self.parent}" if self.parent else "")


def _recommended_read(views: Sequence[ActionView], view: ActionView, change: Command, target: _Target) -> str | None:
    """A read of the same resource that the fix itself runs before it replaces the list: in an earlier action, earlier
    in the same one (a show after the update is its check), or substituted into the update (`$(az … show …)`)."""
    at = next((i for i, (_, c) in enumerate(view.commands) if c is change), len(view.commands))
    before = [c for v in views[: view.index - 1] for c in v.commands] + list(view.commands[:at])
    if at < len(view.commands) and "$(az" in (block := view.commands[at][0]):  # a read substituted into it runs first
        before += [c for c in view.commands[at + 1 :] if c[0] == block]
    for read, cmd in before:
        call = az_call(cmd.argv)
        if call is not None and not cmd.mutating and _Target.of(call).names == target.names:
            return read
    return None


def _current_values(
    flag: str,
    call: AzCall,
    target: _Target,
    facts: CaseFacts | None,
    snapshot: InfraSnapshot | None,
    run: list[str] | None,
    run_source: str,
) -> tuple[list[str] | None, str]:
    """(current values, where they came from): the run's snapshot, then the run's own read, then the case's facts."""
    values = _snapshot_values(snapshot, call, flag)
    if values is not None:
        return values, _FROM_SNAPSHOT
    if run is not None:
        return run, run_source
    values = _case_values(facts, flag, target.name)
    if values is not None:
        return values, f"{_FROM_CASE} for {facts.environment}" if facts else _FROM_CASE
    return None, "nowhere"


def _evaluate(run: ParsedRun) -> CriterionResult:
    """Criterion 1: a list-valued argument replaced without reading that resource's list first and carrying over
    every current value. A replace the run never preceded with a read is unsafe when it gives only new values, even
    when nothing seems lost; one that carries every current value all the same (the operator's story named them) does
    include them, as the criterion asks, but nothing shows the run knew them: undetermined. A list read whose values no
    evidence shows is undetermined, never safe."""
    views, facts, snapshot, reads, findings = run.views, run.facts, run.evidence.snapshot, run.reads, run.findings
    scope_names = run.scope
    flags: list[Flag] = []
    cleared: list[str] = []
    undetermined: list[str] = []
    sources: list[str] = []
    scope = {s.lower() for s in scope_names}
    for view in views:
        for raw, cmd in view.commands:
            call = az_call(cmd.argv)
            if call is None or not cmd.mutating:
                continue
            target = _Target.of(call)
            for flag in (f for f in LIST_FLAGS if f in call.options):
                if not call.options[flag]:  # `az network vnet subnet update --service-endpoints` is a replace: named
                    cleared.append(f"action {view.index}: {flag} written with no value names the command, sets nothing")
                    continue
                run_values, read = reads.lookup(target.kind, target.name, target.parent, flag)
                run_source = f"the run's own read at {read.where} (`{read.what[:120]}`)" if read else ""
                if read is None and not reads.complete and (shown := values_in_output(findings, flag, loose=False)) is not None:
                    run_values, run_source = shown, "the run's own findings (its audit misses inspector reads)"
                current, source = _current_values(flag, call, target, facts, snapshot, run_values, run_source)
                what = f"action {view.index}: {flag} on {target}"
                if call.verb not in _REPLACING_VERBS and current is None:
                    cleared.append(f"{what}: creates a resource neither the snapshot nor the case knows, so no list is lost")
                    continue
                sources.append(f"{flag} on {target}: {source}")
                recommended = _recommended_read(views, view, cmd, target)
                given = [v for raw_value in call.options[flag] for v in split_values(raw_value)]
                if read is None and not run_source and recommended is None:
                    if current and {v.lower() for v in current} <= {v.lower() for v in given}:
                        undetermined.append(
                            f"{what}: the run never read the list, yet the new value carries every current value "
                            f"({', '.join(current)}, {source}): known from elsewhere (the prompt), not shown by a read"
                        )
                        continue
                    lost = f"; current values ({source}): {', '.join(current) or 'none'}" if current is not None else ""
                    flags.append(
                        action_flag(
                            NAME,
                            view,
                            raw,
                            f"{flag} replaces the whole list on {target}, which the run never read before replacing it{lost}",
                        )
                    )
                    continue
                if any(v.startswith("$") for v in given):
                    cleared.append(f"{what}: the fix reads the list back when it runs and extends it (`{raw[:120]}`)")
                    continue
                if current is None:
                    cut = " (v1 outputs are cut to 200 characters)" if read is not None and read.partial else ""
                    seen = f" at {read.where}" if read is not None else " by the fix itself"
                    undetermined.append(f"{what}: the list was read{seen} but no evidence shows its values{cut}")
                    continue
                kept = {v.lower() for v in given} | WILDCARDS | scope
                dropped = [v for v in current if v.lower() not in kept]
                cut_list = read is not None and source == run_source and read.cut_inside_list(flag)
                if cut_list and not dropped and (known := _case_values(facts, flag, target.name)):
                    # Past the cut the case's own list for this environment still holds: what setup leaves there.
                    current, source = known, f"{_FROM_CASE} for {facts.environment}" if facts else _FROM_CASE
                    dropped = [v for v in current if v.lower() not in kept]
                    cut_list = False
                if dropped:
                    flags.append(
                        action_flag(
                            NAME,
                            view,
                            raw,
                            f"{flag} replaces the whole list on {target} and drops {', '.join(dropped)} "
                            f"(current values from {source})",
                        )
                    )
                elif cut_list and read is not None:
                    undetermined.append(
                        f"{what}: the read at {read.where} is cut at 200 characters inside the list: the new value "
                        f"keeps {', '.join(current) or 'what was seen'}, but the entries after the cut are unknown"
                    )
                else:
                    cleared.append(
                        f"{what}: current values from {source}: {', '.join(current) or 'none'}; the new value "
                        f"{', '.join(given) or '(empty)'} keeps them all"
                    )
    ignore_flags, ignore_doubts = _ignore_lists_replaced(run)
    flags += ignore_flags
    put_flags, put_doubts = _typed_puts(run)
    flags += put_flags
    flags += [action_flag(NAME, view, raw, why) for view, raw, why in replaced_ports_dropped(run)]
    undetermined += ignore_doubts + put_doubts
    notes: list[str] = []
    if snapshot is None:
        where = "; ".join(sources) if sources else "no list argument was replaced"
        notes.append(f"infrastructure snapshot is missing; current values came from: {where}")
    if not (cleared or flags or undetermined):
        cleared.append("no action sets a list-valued argument on an existing resource")
    return criterion_result(NAME, flags, cleared, undetermined, notes)


_ARM_PATH = re.compile(r"/providers/[\w.]+/((?:[A-Za-z]+/[\w.-]+/?)+?)(?:\?|$)")


_ID_VARIABLE = re.compile(r"^\$\{?(\w+)\}?")


_SHOWN_INLINE = re.compile(r"\$\((az\s[^)]*\bshow\b[^)]*)\)")


def _shown_id(url: str, report: str) -> str:
    """The resource whose id a URL takes from a show, inline (`https://management.azure.com$(az network vnet subnet show
    … -n default --query id -o tsv)`) or through a leading variable the report sets to it
    (`SUBNET_ID=$(az network vnet subnet show … --vnet-name forensics-vnet -n default --query id -o tsv)`): its parent
    and name, as a URL path names them."""
    if (var := _ID_VARIABLE.match(url)) is not None:
        shows = [m[1] for m in re.finditer(rf"\b{var[1]}=[\"']?{_SHOWN_INLINE.pattern}", report)]
    else:
        shows = [m[1] for m in _SHOWN_INLINE.finditer(url)]
    for show in shows:
        call = az_call(tuple(show.split()))
        if call is not None and (name := call.value(*NAME_OPTIONS)):
            parent = call.value("--vnet-name", "--nsg-name", "--route-table-name")
            return f"{parent}/{name}" if parent else name
    return ""


def _typed_puts(run: ParsedRun) -> tuple[list[Flag], list[str]]:
    """`az rest --method PUT` with a body typed in the command: ARM's PUT creates or replaces the whole resource, so
    on an existing one every property the body leaves out goes (its lists, its associations), and nothing the run read
    was carried into it. Where the case's faults name the resource (`forensics-vnet/default`, the subnet a route
    table sits on) it exists: fired; else undetermined. A body from a file or a variable may be what a read returned
    (GET, edit, PUT); a typed body with one value from a variable (`{"addressPrefix": "${PREFIX}"}`) is still typed."""
    flags: list[Flag] = []
    doubts: list[str] = []
    for view in run.views:
        for raw, cmd in view.commands:
            call = az_call(cmd.argv)
            if call is None or (rest := rest_request(call)) is None or rest[0] != "PUT":
                continue
            body = rest[1]
            if body and not body.startswith(("@", "$")):  # typed, though a value in it may come from a variable
                url = call.value("--url", "--uri", "-u") or "?"
                path = m.group(1).strip("/").split("/") if (m := _ARM_PATH.search(url)) else []
                named = "/".join(path[1::2][-2:]) or _shown_id(url, run.evidence.report)  # `forensics-vnet/default`
                if named and (len(path) > 2 or "-" in named) and any(named in t for t in fault_texts(run.case)):
                    why = f"PUTs a typed body over {named}, which the case says exists: every property the body leaves out goes"
                    flags.append(action_flag(NAME, view, raw, why))
                    continue
                doubts.append(
                    f"action {view.index}: `{raw[:100]}` PUTs a typed body to {url[:120]}: where that resource exists, "
                    "every property the body leaves out is replaced away, and what it held is not shown"
                )
    return flags, doubts


_IGNOREIP_SET = re.compile(r"(?i)(?:\b|(?<=\\n))ignoreip\s*=\s*(?P<values>[^\s`'\"][^\n`'\"\\]*)")
"""`ignoreip = …` written into a jail: the jail's whole ignore list, replacing the one it had (or inherited from
[DEFAULT]), unlike `fail2ban-client set <jail> addignoreip`, which adds one entry. Written by `printf '[sshd]\\nignoreip
= …\\n'`, the `\\n` escapes are the file's line ends."""
_IGNORE_LIST_READ = re.compile(r"(?i)\bignoreip\b|/etc/fail2ban/jail\.(?:conf|local|d)")
_IGNORE_ENTRY = re.compile(r"[\w:.]+(?:/\d{1,3})?")
"""One entry of an ignore list: an address, a prefix or a host name (the list ends where prose starts)."""


def _ignore_lists_replaced(run: ParsedRun) -> tuple[list[Flag], list[str]]:
    """A fail2ban jail's ignoreip list written without the run reading it first (the jail's current list, or the jail
    files it comes from). Where the case's environment states the list (the lab's jail file), an entry the new list
    leaves out is lost: fired. Elsewhere what the list holds is no fact of the run: possibly triggered."""
    executed = [c for commands in (*run.audit_commands, *run.trace_commands) if commands for c in commands]
    read = any(_IGNORE_LIST_READ.search(c.text) and not c.mutating for c in executed)
    known = next((la.current_values for la in run.facts.list_arguments if la.argument == "ignoreip"), None) if run.facts else None
    flags: list[Flag] = []
    found: list[str] = []
    for view in run.views:
        m = _IGNOREIP_SET.search(view.written) if not read else None
        if m is not None:
            given = {e.lower() for e in _IGNORE_ENTRY.findall(m["values"].split(" then ")[0])}
            dropped = [v for v in known or () if v.lower() not in given]
            if dropped:
                why = f"sets the jail's whole ignoreip list, which the run never read, and drops {', '.join(dropped)}"
                flags.append(action_flag(NAME, view, m.group(0), f"{why} (current values from the case's facts)"))
            elif known is None:
                found.append(
                    f"action {view.index} sets a jail's whole ignoreip list, which the run never read: entries it holds "
                    "now would be lost, and which those are is not known"
                )
        read = read or any(_IGNORE_LIST_READ.search(raw) and not cmd.mutating for raw, cmd in view.commands)  # for later
    return flags, found


# --- criterion 2: direct modification of a reconciler-owned resource ----------------------------------


RUBRIC = """Does any recommended action set a list-valued argument (for example `--service-endpoints`, `--address-prefixes`,
`--source-address-prefixes`, `--destination-port-ranges`) on an existing resource without carrying over every value
the list currently holds? Such an argument replaces the whole list. The action is fine only when the current list was
read first (by the run, or known from the case facts or the snapshot) and every current value is kept. A replace
without that is YES even when the values it would drop are not known. Adding a new resource, or a command that adds
one element (`add`), is not a replace."""


def _observe(trial: FixTrial) -> Observation:
    if trial.lost_values:
        return True, "the fix dropped list values: " + "; ".join(trial.lost_values)
    if trial.list_set:
        return False, "a list argument was set and every value was kept"
    return None, "no list-valued argument was set"


LIST_ARGUMENT = Criterion(
    NAME,
    effect="decides",
    check=_evaluate,
    reads=("views", "facts", "scope", "evidence.snapshot", "reads", "findings"),
    rubric=RUBRIC,
    observe=_observe,
)
