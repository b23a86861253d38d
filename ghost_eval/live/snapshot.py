"""Taking `infra_snapshot.json`: what the infrastructure looked like when the agent started, read-only.

Control plane (azure-mgmt-network): the VNet's subnets with their service endpoints, NSG and route table; every
NSG of the resource group with its rules; every route table with its routes; the effective routes and
effective security rules of each NIC the target names. Each VM (SSH): `iptables-save`, `nft list ruleset`,
`tc qdisc show`, and the running daemons that own firewall or shaping state, with what they own — fail2ban's
jails and f2b-* chains, Docker's DOCKER* chains, ghost-shaper's qdiscs (from its config), harden-net's rules
file and the chains it fills. Nothing is changed: every command only reads.
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime
from typing import Any

import paramiko

from ghost_eval.connect.azure import network_client
from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import SshHost, Target, TargetError
from ghost_eval.lab.hardening import parse_rules
from ghost_eval.lab.shaper import parse_config
from ghost_eval.run.snapshot import (
    DaemonState,
    HostState,
    InfraSnapshot,
    NsgRuleState,
    NsgState,
    OwnedResource,
    RouteState,
    SubnetState,
)

__all__ = ["daemons_of", "take_snapshot"]

Json = dict[str, Any]
_TIMEOUT_S = 30.0


def _last(rid: Any) -> str | None:
    rid = rid.get("id") if isinstance(rid, dict) else rid
    return str(rid).rstrip("/").rsplit("/", 1)[-1] if rid else None


def _listed(props: Json, single: str, plural: str) -> list[str]:
    many = props.get(plural) or []
    return [str(v) for v in many] if many else ([str(props[single])] if props.get(single) not in (None, "") else [])


def _rule(props: Json, name: str, **extra: Any) -> NsgRuleState:
    return NsgRuleState(
        name=name,
        priority=int(props.get("priority") or 0),
        direction=str(props.get("direction")),
        access=str(props.get("access")),
        protocol=str(props.get("protocol") or "*"),
        source_address_prefixes=_listed(props, "sourceAddressPrefix", "sourceAddressPrefixes"),
        destination_address_prefixes=_listed(props, "destinationAddressPrefix", "destinationAddressPrefixes"),
        destination_port_ranges=_listed(props, "destinationPortRange", "destinationPortRanges"),
        source_port_ranges=_listed(props, "sourcePortRange", "sourcePortRanges"),
        **extra,
    )


def _control_plane(target: Target, snapshot: InfraSnapshot) -> None:
    rg = target.resource_group
    with network_client(target) as net:
        for subnet in net.subnets.list(rg, target.vnet):
            p = subnet.as_dict().get("properties", {})
            snapshot.subnets.append(
                SubnetState(
                    name=str(subnet.name),
                    vnet=target.vnet,
                    address_prefix=p.get("addressPrefix"),
                    service_endpoints=[str(e.get("service")) for e in p.get("serviceEndpoints") or []],
                    network_security_group=_last(p.get("networkSecurityGroup")),
                    route_table=_last(p.get("routeTable")),
                )
            )
        for nsg in net.network_security_groups.list(rg):
            rules = [
                _rule(r.get("properties", {}), str(r.get("name")))
                for r in nsg.as_dict().get("properties", {}).get("securityRules") or []
            ]
            snapshot.nsgs.append(NsgState(name=str(nsg.name), rules=sorted(rules, key=lambda r: (r.direction, r.priority))))
        for table in net.route_tables.list(rg):
            routes = table.as_dict().get("properties", {}).get("routes") or []
            snapshot.route_tables[str(table.name)] = [
                RouteState(
                    name=r.get("name"),
                    address_prefix=str(r["properties"].get("addressPrefix")),
                    next_hop_type=str(r["properties"].get("nextHopType")),
                    next_hop_ip=r["properties"].get("nextHopIpAddress"),
                )
                for r in routes
            ]
        for nic in target.nics.values():
            effective = net.network_interfaces.begin_get_effective_route_table(rg, nic).result()
            snapshot.effective_routes[nic] = [
                RouteState(
                    name=r.get("name"),
                    address_prefix=prefix,
                    next_hop_type=str(r.get("nextHopType")),
                    next_hop_ip=(r.get("nextHopIpAddress") or [None])[0],
                    source=r.get("source"),
                    state=r.get("state"),
                )
                for r in (e.as_dict() for e in effective.value or [])
                for prefix in r.get("addressPrefix") or []
            ]
            groups = net.network_interfaces.begin_list_effective_network_security_groups(rg, nic).result()
            snapshot.effective_nsg_rules[nic] = [
                _rule(
                    rule,
                    str(rule.get("name")),
                    nsg=_last(g.get("networkSecurityGroup")),
                    scope="subnet" if g.get("association", {}).get("subnet") else "nic",
                )
                for g in (x.as_dict() for x in groups.value or [])
                for rule in g.get("effectiveSecurityRules") or []
            ]


def _chains(iptables_save: str) -> list[str]:
    return re.findall(r"^:(\S+)", iptables_save, flags=re.MULTILINE)


def _option(args: list[str], flag: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(f"{flag}="):
            return arg.split("=", 1)[1]
    return None


def daemons_of(processes: str, iptables_save: str, read: Any) -> list[DaemonState]:
    """Owning daemons among `ps -eo comm=,args=` lines; `read(command)` returns a command's output on the VM."""
    chains = _chains(iptables_save)
    found: list[DaemonState] = []
    seen: set[str] = set()
    for line in processes.splitlines():
        comm, _, args_text = line.strip().partition(" ")
        if comm in seen:
            continue
        args = shlex.split(args_text, posix=True) if args_text else []
        if comm == "fail2ban-server":
            jails = re.search(r"Jail list:\s*(.*)", read("fail2ban-client status") or "")
            names = [j.strip() for j in (jails.group(1).split(",") if jails else []) if j.strip()]
            owned = sorted({f"f2b-{j}" for j in names} | {c for c in chains if c.startswith("f2b-")})
            found.append(
                DaemonState(
                    name="fail2ban-server",
                    managed_via="fail2ban-client",
                    owns=[OwnedResource(kind="iptables_chain", name=c) for c in owned]
                    + [OwnedResource(kind="service", name=f"fail2ban jail {j}") for j in names],
                )
            )
        elif comm == "dockerd":
            owned = [c for c in chains if c.startswith("DOCKER") and c != "DOCKER-USER"]
            found.append(
                DaemonState(
                    name="dockerd",
                    managed_via="/etc/docker/daemon.json + systemctl restart docker (user rules belong in DOCKER-USER)",
                    owns=[OwnedResource(kind="iptables_chain", name=c) for c in owned],
                )
            )
        elif comm == "ghost-shaper":
            config = _option(args, "--config") or "/etc/ghost-shaper/shaper.conf"
            try:
                devices = list(parse_config(read(f"cat {shlex.quote(config)}") or "").qdiscs)
            except ValueError:
                devices = []
            found.append(
                DaemonState(
                    name="ghost-shaper",
                    managed_via=f"{config} + systemctl reload ghost-shaper",
                    owns=[OwnedResource(kind="tc_qdisc", name=d) for d in devices],
                )
            )
        elif comm == "harden-net":
            rules_file = _option(args, "--rules") or "/etc/iptables/rules.v4"
            try:
                rules = parse_rules(read(f"cat {shlex.quote(rules_file)}") or "")
            except ValueError:
                rules = None
            owned_chains = sorted({chain for _t, chain, _a in rules.rules}) if rules else []
            found.append(
                DaemonState(
                    name="harden-net",
                    managed_via=f"edit {rules_file} then run harden-net --apply",
                    owns=[OwnedResource(kind="file", name=rules_file)]
                    + [OwnedResource(kind="iptables_chain", name=c) for c in owned_chains],
                )
            )
        else:
            continue
        seen.add(comm)
    return found


def _host_state(host: SshHost) -> HostState:
    client: paramiko.SSHClient = ssh_connect(host)
    prefix = "" if host.user == "root" else "sudo -n "

    def read(command: str) -> str | None:
        code, out, _err = ssh_run(client, prefix + command, _TIMEOUT_S)
        return out if code == 0 else None

    try:
        iptables = read("iptables-save")
        state = HostState(
            name=host.name, iptables_save=iptables, nft_ruleset=read("nft list ruleset"), tc_qdisc=read("tc qdisc show")
        )
        processes = read("ps -eo comm=,args=") or ""
        state.daemons = daemons_of(processes, iptables or "", read)
    finally:
        client.close()
    return state


def take_snapshot(target: Target) -> InfraSnapshot:
    """The infrastructure as it is now: control plane through the SDK, each VM over SSH. Read-only."""
    snapshot = InfraSnapshot(taken_at=datetime.now(UTC), target=target.name)
    _control_plane(target, snapshot)
    for host in target.hosts.values():
        try:
            snapshot.hosts.append(_host_state(host))
        except TargetError as exc:
            raise TargetError(f"snapshot of {host.name}: {exc}") from None
    return snapshot
