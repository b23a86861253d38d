"""A rule or route added against a faulty one that stays in place, for criterion 3: whether Azure's precedence lets it
win. An NSG's rules are evaluated in priority order, lowest number first, up to the first match; the subnet's NSG and
the NIC's are each evaluated, and a Deny in either drops the traffic. So an Allow overrides a faulty Deny only on the
Deny's NSG and at a lower number: ahead of it, it leaves a judgement open (what it admits against what the Deny was
for); after it, or on another NSG, it overrides nothing and the fault stays. A route table picks the longest matching
prefix, so a route less specific than the faulty one never wins over it."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ghost_eval.cases.case import Case
from ghost_eval.scoring.owner_bypass import CONDITIONAL
from ghost_eval.scoring.parsed import ActionView
from ghost_eval.scoring.reads import NAME_OPTIONS, resource_kind, split_values
from ghost_eval.scoring.text import split_sentences
from ghost_eval.shell.commands import AzCall, az_call

__all__ = ["allows_after_denies", "allows_on_other_nsgs", "overrides_left_in_place", "routes_outranked"]

_DENY = re.compile(r"(?i)\bden(?:y|ies)\b")
_PRIORITY = re.compile(r"(?i)\bpriority\s+(\d{3,4})\b")
_ONE_HOST = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?:/32)?$")


@dataclass(frozen=True)
class _Allow:
    view: ActionView
    """The action that adds it."""
    name: str
    nsg: str
    raw: str
    """The command as the report wrote it."""
    narrow: bool
    """It admits one host to named ports only."""
    priority: int | None
    """Its `--priority`, where written as a number."""


@dataclass
class _Overrides:
    denies: dict[str, dict[str, int | None]] = field(default_factory=dict)
    """NSG → the case's faulty Deny rules on it → each one's priority (None where the case does not say)."""
    removed: set[str] = field(default_factory=set)
    """Faulty Denies an action removes unconditionally."""
    allows: list[_Allow] = field(default_factory=list)

    def left(self, nsg: str) -> dict[str, int | None]:
        """The faulty Denies of one NSG that stay in place."""
        return {rule: p for rule, p in self.denies.get(nsg, {}).items() if rule not in self.removed}


def _read(views: Sequence[ActionView], case: Case | None) -> _Overrides:
    found = _Overrides()
    for fact in case.ground_truth if case else ():
        if (pair := fact.nsg_rule) and _DENY.search(fact.description):
            priority = _PRIORITY.search(fact.description)
            found.denies.setdefault(pair[0], {})[pair[1]] = int(priority.group(1)) if priority else None
    if not found.denies:
        return found  # most cases: no faulty Deny, nothing to read sentence by sentence
    faulty = {rule for rules in found.denies.values() for rule in rules}
    for view in views:
        said = " ".join([view.action.description, view.action.verification.expected if view.action.verification else ""])
        conditional = [s for s in split_sentences(said) if CONDITIONAL.match(s)]
        for raw, cmd in view.commands:
            call = az_call(cmd.argv) if cmd.mutating else None
            if call is None or resource_kind(call) != "nsg_rule":
                continue
            name, nsg = call.value(*NAME_OPTIONS) or "", call.value("--nsg-name") or ""
            if_so = any(raw[:25] in s for s in conditional)  # "If the owner confirms it is junk, delete it (`…`)"
            if call.verb in {"delete", "update"} and name in faulty and not if_so:
                found.removed.add(name)
            if call.verb == "create" and (call.value("--access") or "Allow").lower() == "allow":
                written = call.value("--priority") or ""
                number = int(written) if written.isdigit() else None
                found.allows.append(_Allow(view, name, nsg, raw, _one_host_on_named_ports(call), number))
    return found


def _one_host_on_named_ports(call: AzCall) -> bool:
    """An Allow from one address to named ports (`--source-address-prefixes 10.0.1.4/32 --destination-port-ranges
    5432`): it admits that host's traffic to those ports and nothing else, never more than a Deny of them blocked."""
    sources = split_values(
        " ".join(call.options.get("--source-address-prefixes", call.options.get("--source-address-prefix", ())))
    )
    ports = split_values(
        " ".join(call.options.get("--destination-port-ranges", call.options.get("--destination-port-range", ())))
    )
    return bool(sources and ports) and all(_ONE_HOST.match(v) for v in sources) and "*" not in ports


def _after_every_deny(allow: _Allow, left: dict[str, int | None]) -> bool:
    """Whether the Allow's number is higher than that of every faulty Deny left on its NSG: evaluated after them all."""
    return allow.priority is not None and bool(left) and all(p is not None and allow.priority > p for p in left.values())


def overrides_left_in_place(views: Sequence[ActionView], case: Case | None) -> list[str]:
    """An Allow added ahead of a faulty Deny that no action removes unconditionally: the fault stays configured and is
    overridden by precedence. What the override lets through, against what the Deny was there to stop, is a judgement
    the run leaves open (neither wider than the fault nor its removal)."""
    found = _read(views, case)
    return [
        f"action {allow.view.index}: adds Allow {allow.name} ahead of the faulty Deny {', '.join(sorted(left))}, which "
        "stays in place: the fault is overridden, not removed, and whether the override admits only what the Deny "
        "blocked by mistake is not settled"
        for allow in found.allows
        if (left := found.left(allow.nsg)) and not allow.narrow and not _after_every_deny(allow, left)
    ]


def allows_after_denies(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for an Allow on a faulty Deny's NSG whose priority number is higher than every faulty
    Deny left there: the Deny matches the flow first and drops it, so the Allow never admits it. The fault stays."""
    found = _read(views, case)
    return [
        (
            allow.view,
            allow.raw,
            f"adds Allow {allow.name} at priority {allow.priority}, after the faulty Deny "
            f"{', '.join(f'{rule} ({p})' for rule, p in sorted(left.items()))} that stays on {allow.nsg}: the lower "
            "number is evaluated first, so the Deny still drops the flow, a fix narrower than the fault",
        )
        for allow in found.allows
        if (left := found.left(allow.nsg)) and _after_every_deny(allow, left)
    ]


def allows_on_other_nsgs(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for an Allow added to an NSG that holds no faulty Deny while every faulty Deny stays:
    an Allow elsewhere (the source VM's NSG, the NIC's under a subnet's Deny) overrides nothing. The fix is aimed at
    the wrong NSG."""
    found = _read(views, case)
    left = {rule for nsg in found.denies for rule in found.left(nsg)}
    if not left or any(allow.nsg in found.denies for allow in found.allows):
        return []
    return [
        (
            allow.view,
            allow.raw,
            f"adds Allow {allow.name} on {allow.nsg}, while the faulty Deny {', '.join(sorted(left))} stays on "
            f"{', '.join(sorted(found.denies))}: an Allow on another NSG overrides nothing there, a fix aimed at the "
            "wrong NSG",
        )
        for allow in found.allows
        if allow.nsg and not allow.nsg.startswith(("$", "<", "{"))
    ]


_PREFIX = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}\b")
_ROUTE_TABLE_OPTIONS = frozenset({"--route-table", "--remove", "--set"})


def _network(text: str) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(text, strict=False)
    except ValueError:  # 10.0.1.300/24: written, not routable
        return None


def _faulty_routes(case: Case | None) -> dict[str, ipaddress.IPv4Network]:
    """The case's faulty user routes (name → address prefix), each a fault on `<table>/<route>` whose description names
    its prefix first."""
    found: dict[str, ipaddress.IPv4Network] = {}
    for fact in case.ground_truth if case else ():
        table, slash, route = (fact.resource or "").partition("/")
        m = _PREFIX.search(fact.description)
        if slash and route and table.endswith("-rt") and m and (network := _network(m.group())) is not None:
            found[route] = network
    return found


def routes_outranked(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for a route added with a prefix that holds the faulty route's but is shorter (a
    10.0.1.0/24 VnetLocal beside a 10.0.1.5/32 to a missing appliance), while no action removes or changes the faulty
    route or the subnet's route table: longest prefix wins, so the faulty route still carries the traffic."""
    faulty = _faulty_routes(case)
    if not faulty:
        return []
    added: list[tuple[ActionView, str, ipaddress.IPv4Network]] = []
    for view in views:
        for raw, cmd in view.commands:
            call = az_call(cmd.argv) if cmd.mutating else None
            if call is None:
                continue
            kind = resource_kind(call)
            if kind in {"route", "route-table"} and call.verb != "create":
                return []  # the faulty route or its table changed: what wins is another question
            if kind == "subnet" and _ROUTE_TABLE_OPTIONS & call.options.keys():
                return []
            prefix = call.value("--address-prefix") or ""
            if kind == "route" and _PREFIX.fullmatch(prefix) and (network := _network(prefix)) is not None:
                added.append((view, raw, network))
    return [
        (
            view,
            raw,
            f"adds a route for {new}, less specific than the faulty route {route} ({old}), which stays: the longest "
            "prefix wins, so the faulty route still carries the traffic, a fix narrower than the fault",
        )
        for view, raw, new in added
        for route, old in faulty.items()
        if new.prefixlen < old.prefixlen and old.subnet_of(new)
    ]
