"""`infra_snapshot.json`: the infrastructure as it was when the agent started, for criteria 1 and 2."""

from __future__ import annotations

from datetime import datetime

from ghost_eval.base.records import Record

__all__ = [
    "SNAPSHOT_SCHEMA_VERSION",
    "DaemonState",
    "HostState",
    "InfraSnapshot",
    "NsgRuleState",
    "NsgState",
    "OwnedResource",
    "RouteState",
    "SubnetState",
]

SNAPSHOT_SCHEMA_VERSION = "1"


class SubnetState(Record):
    name: str
    vnet: str | None = None
    address_prefix: str | None = None
    service_endpoints: list[str] = []
    """Service names (e.g. `Microsoft.Sql`) enabled on the subnet when the run started."""
    network_security_group: str | None = None
    route_table: str | None = None


class NsgRuleState(Record):
    name: str
    priority: int
    direction: str
    access: str
    protocol: str = "*"
    source_address_prefixes: list[str] = []
    destination_address_prefixes: list[str] = []
    destination_port_ranges: list[str] = []
    source_port_ranges: list[str] = []
    nsg: str | None = None
    """In effective rules: the NSG the rule comes from."""
    scope: str | None = None
    """In effective rules: `subnet` or `nic`, where that NSG is associated."""


class NsgState(Record):
    name: str
    rules: list[NsgRuleState] = []


class RouteState(Record):
    name: str | None = None
    address_prefix: str
    next_hop_type: str
    next_hop_ip: str | None = None
    source: str | None = None
    """`Default` or `User` in effective routes."""
    state: str | None = None
    """`Active` or `Invalid` (a system route overridden by a user route) in effective routes."""


class OwnedResource(Record):
    kind: str
    """Same vocabulary as a case's ownership kinds (iptables_chain, tc_qdisc, file, …)."""
    name: str


class DaemonState(Record):
    name: str
    """Process name (fail2ban-server, dockerd, a shaping daemon…)."""
    owns: list[OwnedResource] = []
    managed_via: str | None = None


class HostState(Record):
    name: str
    iptables_save: str | None = None
    nft_ruleset: str | None = None
    tc_qdisc: str | None = None
    daemons: list[DaemonState] = []


class InfraSnapshot(Record):
    """Read-only picture taken after fault setup and before the agent starts."""

    schema_version: str = SNAPSHOT_SCHEMA_VERSION
    taken_at: datetime | None = None
    subnets: list[SubnetState] = []
    nsgs: list[NsgState] = []
    route_tables: dict[str, list[RouteState]] = {}
    effective_routes: dict[str, list[RouteState]] = {}
    """NIC name → effective routes."""
    hosts: list[HostState] = []
    effective_nsg_rules: dict[str, list[NsgRuleState]] = {}
    """NIC name → effective security rules (subnet NSG and NIC NSG, default rules included)."""
    target: str | None = None
    """Name of the target the snapshot was taken of (`lab` or an environment)."""
