"""A full state capture of the lab: every VM's firewall, nft tables, qdiscs, listening sockets, running daemons
and management SSH, and every resource the ARM emulator holds, flattened into lines so two captures diff line by line.

Counters, handles that only count and other values that change on their own are left out, so a diff shows
what someone changed and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.connect.ssh import ssh_connect
from ghost_eval.live.recipes import RecipeRun

__all__ = ["State", "capture", "diff_states"]

State = dict[str, frozenset[str]]
"""Area (`tf-dest-vm iptables filter`, `arm nsg tf-dest-vm-nsg`, …) → the lines it holds."""

_MARK = "#### ghost-eval capture "
_SECTIONS = {
    "iptables": "iptables-save",
    "nft": "nft list ruleset",
    "tc": "tc qdisc show",
    "listen": "ss -ltnuH",
    "daemons": "ps -eo comm=",
}
_COUNTERS = re.compile(r"\[\d+:\d+\]|counter packets \d+ bytes \d+")
_TRANSIENT = frozenset({"ps", "bash", "sh", "sshd", "sleep", "timeout", "head", "cat", "nc", "ping", "curl"})
"""Processes of the capture itself or of passing probes; sshd stays visible through its listening socket."""
_IPTABLES_TABLES = {"filter", "nat", "mangle", "raw", "security"}
_NFT_TABLE = re.compile(r"^table (\S+) (\S+) \{")


def _script() -> str:
    return "; ".join(f"echo '{_MARK}{name}'; {command} 2>/dev/null" for name, command in _SECTIONS.items())


def _iptables(vm: str, text: str) -> dict[str, set[str]]:
    areas: dict[str, set[str]] = {}
    table = "?"
    for raw in text.splitlines():
        line = _COUNTERS.sub("", raw).strip()
        if not line or line.startswith("#") or line == "COMMIT":
            continue
        if line.startswith("*"):
            table = line[1:]
            continue
        if line.startswith(":"):
            name, _, policy = line[1:].partition(" ")
            line = f"chain {name} policy {policy.strip()}"
        areas.setdefault(f"{vm} iptables {table}", set()).add(line)
    return areas


def _nft(vm: str, text: str) -> dict[str, set[str]]:
    """nft tables iptables does not show (its own tables appear in iptables-save already)."""
    areas: dict[str, set[str]] = {}
    table: str | None = None
    chain = ""
    for raw in text.splitlines():
        line = _COUNTERS.sub("counter", raw).strip()
        m = _NFT_TABLE.match(line)
        if m:
            family, name = m.groups()
            table = None if family in {"ip", "ip6"} and name in _IPTABLES_TABLES else f"{vm} nft {family} {name}"
            continue
        if table is None or not line or line == "}":
            continue
        if line.startswith("chain "):
            chain = line.removesuffix("{").strip()
            continue
        areas.setdefault(table, set()).add(f"{chain}: {line}")
    return areas


def _tc(vm: str, text: str) -> dict[str, set[str]]:
    return {f"{vm} tc": {" ".join(line.split()) for line in text.splitlines() if line.strip()}}


def _listen(vm: str, text: str) -> dict[str, set[str]]:
    lines = set()
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 5:
            lines.add(f"{words[0]} {words[4]}")
    return {f"{vm} listening sockets": lines}


def _daemons(vm: str, text: str) -> dict[str, set[str]]:
    """The units' processes by name (the lab's `systemctl list-units` takes seconds; the processes say the same)."""
    return {f"{vm} running processes": {name for name in text.split() if name not in _TRANSIENT}}


_PARSERS = {"iptables": _iptables, "nft": _nft, "tc": _tc, "listen": _listen, "daemons": _daemons}


def _vm_state(run: RecipeRun, vm: str) -> dict[str, set[str]]:
    _code, out, _err = run.run_command(vm, _script(), timeout=60)
    areas: dict[str, set[str]] = {}
    for chunk in out.split(_MARK)[1:]:
        name, _, body = chunk.partition("\n")
        areas.update(_PARSERS[name.strip()](vm, body))
    try:
        ssh_connect(run.target.hosts[vm], timeout=5).close()
        reachable = "reachable"
    except GhostEvalError as exc:
        reachable = f"unreachable ({exc})"
    areas[f"{vm} management ssh"] = {reachable}
    return areas


def _fields(data: dict[str, Any], names: Iterable[str]) -> str:
    return " ".join(f"{n} {data[n]}" for n in names if data.get(n) not in (None, [], ""))


_RULE_FIELDS = (
    "priority",
    "direction",
    "access",
    "protocol",
    "sourceAddressPrefix",
    "sourceAddressPrefixes",
    "sourcePortRange",
    "sourcePortRanges",
    "destinationAddressPrefix",
    "destinationAddressPrefixes",
    "destinationPortRange",
    "destinationPortRanges",
)
"""What a security rule decides, by its REST names."""


def _arm_state(run: RecipeRun) -> dict[str, set[str]]:
    """Every NSG rule, route table and route, subnet property and service endpoint, storage account firewall and NIC
    binding of the group."""
    net, rg = run.net, run.target.resource_group
    areas: dict[str, set[str]] = {}
    for nsg in net.network_security_groups.list(rg):
        lines = areas.setdefault(f"arm nsg {nsg.name}", set())
        for rule in nsg.security_rules or []:
            lines.add(f"rule {rule.name}: " + _fields(_props(rule), _RULE_FIELDS))
    for table in net.route_tables.list(rg):
        lines = areas.setdefault(f"arm route table {table.name}", set())
        for route in table.routes or []:
            lines.add(f"route {route.name}: " + _fields(_props(route), ("addressPrefix", "nextHopType", "nextHopIpAddress")))
    for vnet in net.virtual_networks.list(rg):
        areas.setdefault(f"arm vnet {vnet.name}", set()).update(
            f"address prefix {p}" for p in (vnet.address_space.address_prefixes if vnet.address_space else None) or []
        )
        for subnet in net.subnets.list(rg, str(vnet.name)):
            lines = areas.setdefault(f"arm subnet {vnet.name}/{subnet.name}", set())
            lines.add(f"address prefix {subnet.address_prefix}")
            lines.add(f"nsg {_last(subnet.network_security_group)}")
            lines.add(f"route table {_last(subnet.route_table)}")
            lines.update(f"service endpoint {e.service}" for e in subnet.service_endpoints or [])
    for account in run.storage.storage_accounts.list_by_resource_group(rg):
        lines = areas.setdefault(f"arm storage account {account.name}", set())
        rules = account.network_rule_set
        if rules is not None:
            lines.add(f"default action {_value(rules.default_action)} bypass {_value(rules.bypass)}")
            lines.update(
                f"virtual network rule {_tail(r.virtual_network_resource_id, 3)}" for r in rules.virtual_network_rules or []
            )
            lines.update(f"ip rule {r.ip_address_or_range} {_value(r.action)}" for r in rules.ip_rules or [])
    for nic in net.network_interfaces.list(rg):
        lines = areas.setdefault(f"arm nic {nic.name}", set())
        lines.add(f"nsg {_last(nic.network_security_group)}")
        lines.update(f"ip {c.private_ip_address} subnet {_last(c.subnet)}" for c in nic.ip_configurations or [])
    return areas


def _props(model: Any) -> dict[str, Any]:
    return dict(model.as_dict().get("properties") or {})


def _value(value: Any) -> str:
    """An SDK enum's REST spelling (`Deny`), anything else as text."""
    return str(getattr(value, "value", value))


def _tail(resource_id: str | None, parts: int) -> str:
    """`vnet/subnets/name` out of a full resource id (case as written)."""
    return "/".join((resource_id or "none").rstrip("/").split("/")[-parts:])


def _last(ref: Any) -> str:
    rid = getattr(ref, "id", None) if ref is not None else None
    return str(rid).rstrip("/").rsplit("/", 1)[-1] if rid else "none"


def capture(run: RecipeRun) -> State:
    """The whole lab as it is now: the VMs (in parallel, one SSH command each) and the ARM emulator."""
    vms = sorted(run.target.hosts)
    run.net  # noqa: B018 - opened once here, not by each thread
    with ThreadPoolExecutor(max_workers=len(vms) + 1) as pool:
        arm = pool.submit(_arm_state, run)
        parts = list(pool.map(lambda vm: _vm_state(run, vm), vms))
        parts.append(arm.result())
    return {area: frozenset(lines) for part in parts for area, lines in part.items()}


def diff_states(before: State, after: State) -> list[tuple[str, str, str]]:
    """(area, line, added|removed) for every line that differs, sorted."""
    changes = []
    for area in sorted(set(before) | set(after)):
        old, new = before.get(area, frozenset()), after.get(area, frozenset())
        changes += [(area, line, "removed") for line in sorted(old - new)]
        changes += [(area, line, "added") for line in sorted(new - old)]
    return changes
