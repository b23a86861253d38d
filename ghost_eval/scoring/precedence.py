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
from ghost_eval.connect.effective import port_in_ranges
from ghost_eval.scoring.parsed import ActionView
from ghost_eval.scoring.reads import NAME_OPTIONS, resource_kind, split_values
from ghost_eval.scoring.text import CONDITIONAL, split_sentences
from ghost_eval.shell.calls import AzCall, az_call

__all__ = ["allows_on_other_nsgs", "faults_overridden", "outranked_overrides", "overrides_left_in_place", "routes_outranked"]

_DENY = re.compile(r"(?i)\bden(?:y|ies)\b")
_ALLOW = re.compile(r"(?i)\ballow(?:s|ing)?\b")
_ONE_HOST = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?:/32)?$")
_OPPOSITE = {"allow": "deny", "deny": "allow"}


@dataclass(frozen=True)
class _Added:
    view: ActionView
    """The action that adds it."""
    name: str
    nsg: str
    raw: str
    """The command as the report wrote it."""
    access: str
    """`allow` or `deny` (`az network nsg rule create` allows where `--access` is not given)."""
    narrow: bool
    """It admits one host to named ports only."""
    priority: int | None
    """Its `--priority`, where written as a number."""
    ports: tuple[str, ...]
    """Its destination ports and ranges as written (`5432`, `6000-7000`, `*`)."""
    direction: str
    """`inbound` or `outbound` (`az network nsg rule create` makes an Inbound rule where `--direction` is not given)."""


@dataclass
class _Overrides:
    faulty: dict[str, dict[str, tuple[str, int | None]]] = field(default_factory=dict)
    """NSG → the case's faulty rules on it → each one's access and priority (None where the case states none)."""
    ports: dict[str, str] = field(default_factory=dict)
    """Faulty rule → the destination port the case states for it."""
    directions: dict[str, str] = field(default_factory=dict)
    """Faulty rule → the direction the case states for it, lower case; a rule only ever meets traffic of its own."""
    removed: set[str] = field(default_factory=set)
    """Faulty rules an action removes unconditionally."""
    added: list[_Added] = field(default_factory=list)

    def left(self, nsg: str, access: str = "deny", direction: str | None = None) -> dict[str, int | None]:
        """The faulty rules of one access on one NSG that stay in place (of one direction, where one is given and the
        case states the rule's)."""
        rules = self.faulty.get(nsg, {}).items()
        return {
            rule: p
            for rule, (a, p) in rules
            if a == access and rule not in self.removed and direction in {None, self.directions.get(rule, direction)}
        }

    @property
    def allows(self) -> list[_Added]:
        return [rule for rule in self.added if rule.access == "allow"]


def _access(description: str) -> str | None:
    return "deny" if _DENY.search(description) else "allow" if _ALLOW.search(description) else None


def _read(views: Sequence[ActionView], case: Case | None) -> _Overrides:
    found = _Overrides()
    if case is None:
        return found
    priorities = case.stated("priority")
    found.ports = case.stated("port")
    found.directions = {resource: value.lower() for resource, value in case.stated("direction").items()}
    for fact in case.ground_truth:
        if (pair := fact.nsg_rule) and (access := _access(fact.description)) is not None:
            written = priorities.get(pair[1], "")
            found.faulty.setdefault(pair[0], {})[pair[1]] = (access, int(written) if written.isdigit() else None)
    if not found.faulty:
        return found  # most cases: no faulty NSG rule, nothing to read sentence by sentence
    faulty = {rule for rules in found.faulty.values() for rule in rules}
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
            if call.verb == "create":
                access = (call.value("--access") or "Allow").lower()
                written = call.value("--priority") or ""
                number = int(written) if written.isdigit() else None
                ports = _destination_ports(call)
                narrow = access == "allow" and _one_host_on_named_ports(call, ports)
                direction = (call.value("--direction") or "Inbound").lower()
                found.added.append(_Added(view, name, nsg, raw, access, narrow, number, tuple(ports), direction))
    return found


def _destination_ports(call: AzCall) -> list[str]:
    return split_values(" ".join(call.options.get("--destination-port-ranges", call.options.get("--destination-port-range", ()))))


def _covers(ranges: Sequence[str], port: str) -> bool:
    """Whether destination port ranges as az writes them (`*`, `5432`, `6000-7000`) hold a port."""
    return "*" in ranges or (port.isdigit() and port_in_ranges(int(port), ranges))


def faults_overridden(views: Sequence[ActionView], case: Case | None) -> set[str]:
    """The faulty NSG rules a fix reaches by precedence rather than by name: a rule of the opposite access added on
    the same NSG, numbered lower and covering the faulty rule's port, matches the flow first, so the faulty rule no
    longer decides it (whether the override admits only what it should is `overrides_left_in_place`'s question)."""
    found = _read(views, case)
    return {
        rule
        for added in found.added
        for rule, (access, priority) in found.faulty.get(added.nsg, {}).items()
        if access == _OPPOSITE.get(added.access)
        and priority is not None
        and added.priority is not None
        and added.priority < priority
        and (port := found.ports.get(rule)) is not None
        and _covers(added.ports, port)
        and found.directions.get(rule, added.direction) == added.direction
    }


def _one_host_on_named_ports(call: AzCall, ports: Sequence[str]) -> bool:
    """An Allow from one address to named ports (`--source-address-prefixes 10.0.1.4/32 --destination-port-ranges
    5432`): it admits that host's traffic to those ports and nothing else, never more than a Deny of them blocked."""
    sources = split_values(
        " ".join(call.options.get("--source-address-prefixes", call.options.get("--source-address-prefix", ())))
    )
    return bool(sources and ports) and all(_ONE_HOST.match(v) for v in sources) and "*" not in ports


def _after_every(rule: _Added, left: dict[str, int | None]) -> bool:
    """Whether the rule's number is higher than that of every faulty rule it is meant to beat: evaluated after them
    all."""
    return rule.priority is not None and bool(left) and all(p is not None and rule.priority > p for p in left.values())


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
        if (left := found.left(allow.nsg, direction=allow.direction)) and not allow.narrow and not _after_every(allow, left)
    ]


_STILL = {"deny": "still drops the flow", "allow": "still admits the traffic"}


def outranked_overrides(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for a rule added on a faulty rule's NSG with the opposite access (an Allow against a
    faulty Deny, a Deny against a faulty Allow) whose priority number is higher than every such faulty rule left
    there: the faulty rule matches the flow first, so the new one never takes effect. The fault stays."""
    found = _read(views, case)
    return [
        (
            rule.view,
            rule.raw,
            f"adds {rule.access.title()} {rule.name} at priority {rule.priority}, after the faulty "
            f"{fault_access.title()} {', '.join(f'{name} ({p})' for name, p in sorted(left.items()))} that stays on "
            f"{rule.nsg}: the lower number is evaluated first, so the faulty rule {_STILL[fault_access]}, a fix "
            "narrower than the fault",
        )
        for rule in found.added
        if (fault_access := _OPPOSITE.get(rule.access))
        and (left := found.left(rule.nsg, fault_access, rule.direction))
        and _after_every(rule, left)
    ]


def allows_on_other_nsgs(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for an Allow added where no faulty Deny meets it while every faulty Deny stays: on an
    NSG that holds none (the source VM's NSG, the NIC's under a subnet's Deny), or on the Deny's NSG in the other
    direction (an Outbound Allow against an Inbound Deny: a rule meets only traffic of its own direction). It
    overrides nothing; the fix is aimed at the wrong NSG or direction."""
    found = _read(views, case)
    denied = {nsg for nsg, rules in found.faulty.items() if any(a == "deny" for a, _ in rules.values())}
    left = {rule for nsg in denied for rule in found.left(nsg)}
    if not left or any(found.left(allow.nsg, direction=allow.direction) for allow in found.allows):
        return []
    faults = f"the faulty Deny {', '.join(sorted(left))} stays on {', '.join(sorted(denied))}"
    return [
        (
            allow.view,
            allow.raw,
            f"adds {allow.direction.title()} Allow {allow.name} on {allow.nsg}, while {faults} for "
            f"{'/'.join(sorted({found.directions.get(r, '?') for r in left}))} traffic: a rule meets only traffic of "
            "its own direction, so it overrides nothing, a fix aimed at the wrong direction"
            if allow.nsg in denied
            else f"adds Allow {allow.name} on {allow.nsg}, while {faults}: an Allow on another NSG overrides nothing "
            "there, a fix aimed at the wrong NSG",
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
