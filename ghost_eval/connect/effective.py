"""Reading Azure's effective routes and effective security rules the way Azure applies them, for one flow.

Effective security rules are evaluated in Azure's order: inbound, the subnet's NSG then the NIC's; outbound,
the NIC's then the subnet's; in each NSG the matching rule with the lowest priority number decides, and both
must allow. Inputs are the REST JSON the API returns (`model.as_dict()` in the SDK).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any, Literal

__all__ = ["flow_allowed", "next_hop", "port_in_ranges"]

Json = dict[str, Any]


def _in(address: str, prefixes: list[str]) -> bool:
    ip = ipaddress.ip_address(address)
    return any(ip in ipaddress.ip_network(p, strict=False) for p in prefixes)


def _vnet_prefixes(groups: list[Json]) -> list[str]:
    for g in groups:
        if g.get("tagMap", {}).get("VirtualNetwork"):
            return list(g["tagMap"]["VirtualNetwork"])
        for r in g.get("effectiveSecurityRules", []):
            if r.get("sourceAddressPrefix") == "VirtualNetwork" and r.get("expandedSourceAddressPrefix"):
                return list(r["expandedSourceAddressPrefix"])
    return []


def _address_matches(rule: Json, side: str, address: str, vnet: list[str]) -> bool:
    prefixes = rule.get(f"{side}AddressPrefixes") or [rule.get(f"{side}AddressPrefix")]
    expanded = rule.get(f"expanded{side[0].upper()}{side[1:]}AddressPrefix") or []
    for p in prefixes:
        if p in ("*", "0.0.0.0/0"):
            return True
        low = str(p).lower()
        if low == "internet":
            if not _in(address, vnet):
                return True
        elif low in ("virtualnetwork", "azureloadbalancer"):
            if _in(address, expanded or vnet):
                return True
        elif str(p)[:1].isdigit() and _in(address, [str(p)]):
            return True
    return False


def port_in_ranges(port: int, ranges: Iterable[str]) -> bool:
    """Whether port ranges as Azure writes them (`*`, `5432`, `6000-7000`) hold a port; anything else holds none."""
    for written in ranges:
        low, _, high = str(written).strip().partition("-")
        if low == "*" or (low.isdigit() and (high or low).isdigit() and int(low) <= port <= int(high or low)):
            return True
    return False


def _port_matches(rule: Json, port: int | None) -> bool:
    ranges = rule.get("destinationPortRanges") or [rule.get("destinationPortRange") or "*"]
    return port is None or port_in_ranges(port, ranges)


def flow_allowed(
    groups: list[Json], direction: Literal["Inbound", "Outbound"], protocol: str, port: int | None, source: str, destination: str
) -> bool:
    """Whether effective NSG groups (REST JSON) allow one flow."""
    vnet = _vnet_prefixes(groups)
    scope_order = ("subnet", "networkInterface") if direction == "Inbound" else ("networkInterface", "subnet")
    ordered = sorted(groups, key=lambda g: next(i for i, s in enumerate(scope_order) if s in g.get("association", {})))
    for group in ordered:
        rules = sorted(
            (r for r in group.get("effectiveSecurityRules", []) if r.get("direction") == direction),
            key=lambda r: int(r["priority"]),
        )
        for rule in rules:
            proto = str(rule.get("protocol") or "All")
            if proto not in ("All", "*") and proto.lower() != protocol.lower():
                continue
            if (
                _port_matches(rule, port if protocol.lower() in ("tcp", "udp") else None)
                and _address_matches(rule, "source", source, vnet)
                and _address_matches(rule, "destination", destination, vnet)
            ):
                if rule.get("access") != "Allow":
                    return False
                break
    return True


def next_hop(routes: list[Json], destination: str) -> Json | None:
    """The active effective route with the longest prefix containing the destination (User wins a tie)."""
    ip = ipaddress.ip_address(destination)
    best: tuple[tuple[int, bool], Json] | None = None
    for r in routes:
        if r.get("state", "Active") != "Active":
            continue
        for prefix in r.get("addressPrefix") or []:
            net = ipaddress.ip_network(prefix)
            if ip in net and (best is None or (net.prefixlen, r.get("source") == "User") > best[0]):
                best = ((net.prefixlen, r.get("source") == "User"), r)
    return best[1] if best else None
