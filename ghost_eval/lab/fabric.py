"""The lab's "Azure fabric": the emulator's effective routes and NSG rules compiled to nftables on the data-path bridge.

Every change the emulator accepts is recompiled into one `inet azure_fabric` table in the fabric namespace and
loaded atomically. The table is built from the same effective routes and effective security rules the API
returns, so what the agent reads through the SDK is exactly what drops its packets:

- flows are stateful, as in Azure: replies of an allowed flow pass (`ct state established,related`);
- a packet leaving a NIC is checked against that NIC's effective routes (a lab VM whose longest match is not
  `VnetLocal`, or the lab's Internet host whose longest match is not `Internet`, is black-holed: next hop None,
  an absent appliance), then its NIC NSG and its subnet NSG (outbound);
- a packet leaving a NIC for a storage account's blob endpoint is dropped when the account's firewall does not let
  that NIC's subnet in (default action Deny without a virtual network rule made effective by the subnet's
  Microsoft.Storage service endpoint; Azure would answer 403, the lab's endpoint has no HTTP to say it);
- a packet arriving at a NIC is checked against its subnet NSG, then its NIC NSG (inbound);
- an allow rule passes the packet on to the next stage, a deny drops it silently.

Service tags other than VirtualNetwork, AzureLoadBalancer and Internet match nothing here: the lab has no
Azure services behind them.
"""

from __future__ import annotations

import ipaddress
import itertools
import re

from ghost_eval.connect.effective import next_hop
from ghost_eval.lab.arm.state import ArmState, Json
from ghost_eval.lab.layout import INTERNET_HOST, INTERNET_PREFIX, STORAGE_ACCOUNTS
from ghost_eval.lab.shell import in_netns, run

__all__ = ["TABLE", "apply_fabric", "compile_fabric"]

TABLE = "azure_fabric"
_ANY = "any"


def _chain(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts))


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _address_alternatives(prefixes: list[str], expanded: list[str] | None, vnet: list[str]) -> list[str] | None:
    """nft matchers whose OR is the rule's address condition ('any' matches all); None when nothing can match."""
    out: list[str] = []
    for p in prefixes:
        low = p.lower()
        if p in ("*", "0.0.0.0/0"):
            return [_ANY]
        if low == "internet":
            out.append("!= { " + ", ".join(vnet) + " }")
        elif low in ("virtualnetwork", "azureloadbalancer"):
            out.append("{ " + ", ".join(expanded or vnet) + " }")
        elif p[:1].isdigit():
            out.append(str(ipaddress.ip_network(p, strict=False)))
    return out or None


def _ports(ranges: list[str]) -> str | None:
    items = []
    for r in ranges:
        lo, _, hi = r.partition("-")
        if (lo, hi) == ("0", "65535"):
            return None
        items.append(lo if not hi or hi == lo else f"{lo}-{hi}")
    return "{ " + ", ".join(items) + " }"


def _rule_lines(rule: Json, vnet: list[str]) -> list[str]:
    proto = rule["protocol"]
    head: list[str] = []
    sports, dports = _ports(rule["sourcePortRanges"]), _ports(rule["destinationPortRanges"])
    if proto in ("Tcp", "Udp"):
        head.append(f"meta l4proto {proto.lower()}")
    elif proto in ("Icmp", "Esp", "Ah"):
        head.append(f"meta l4proto {proto.lower()}")
        sports = dports = None
    elif sports or dports:
        head.append("meta l4proto { tcp, udp }")
    head += [f"th sport {sports}"] if sports else []
    head += [f"th dport {dports}"] if dports else []
    sources = _address_alternatives(rule["sourceAddressPrefixes"], rule.get("expandedSourceAddressPrefix"), vnet)
    dests = _address_alternatives(rule["destinationAddressPrefixes"], rule.get("expandedDestinationAddressPrefix"), vnet)
    if sources is None or dests is None:
        return []
    verdict = "return" if rule["access"] == "Allow" else "drop"
    comment = _quote(f"{rule['name']} p{rule['priority']} {rule['access']}")
    lines = []
    for s, d in itertools.product(sources, dests):
        match = list(head)
        match += [] if s == _ANY else [f"ip saddr {s}"]
        match += [] if d == _ANY else [f"ip daddr {d}"]
        lines.append(" ".join([*match, "counter", verdict, "comment", comment]))
    return lines


def compile_fabric(state: ArmState) -> str:
    """The nft script (delete + recreate, applied atomically) enforcing the state's routes and NSGs."""
    nics = state.nic_addresses()
    forward = [
        "type filter hook forward priority filter; policy accept;",
        "ct state established,related accept",
    ]
    chains: dict[str, list[str]] = {}
    for nic, ip in sorted(nics.items()):
        groups = state.effective_security_groups(nic)["value"]
        vnet = next((g["tagMap"]["VirtualNetwork"] for g in groups), None) or []
        routes = state.effective_routes(nic)["value"]
        by_scope = {("subnet" if "subnet" in g["association"] else "nic"): g for g in groups}
        out_chain, in_chain = _chain("from", nic), _chain("to", nic)
        forward += [f"ip saddr {ip} jump {out_chain}", f"ip daddr {ip} jump {in_chain}"]
        chains[out_chain] = []
        destinations = [(other_ip, other_ip, "VnetLocal") for other, other_ip in sorted(nics.items()) if other != nic]
        for address, matched, expected in [*destinations, (INTERNET_HOST, INTERNET_PREFIX, "Internet")]:
            hop = next_hop(routes, address)
            if hop is None or hop["nextHopType"] != expected:
                why = "no route" if hop is None else f"route {hop['addressPrefix'][0]} -> {hop['nextHopType']}"
                chains[out_chain].append(f"ip daddr {matched} counter drop comment {_quote(why)}")
        for account, address in STORAGE_ACCOUNTS.items():
            if not state.storage_reachable(nic, account):
                chains[out_chain].append(f"ip daddr {address} counter drop comment {_quote(f'storage {account} firewall')}")
        chains[in_chain] = []
        for direction, order, target in (("Outbound", ("nic", "subnet"), out_chain), ("Inbound", ("subnet", "nic"), in_chain)):
            for scope in order:
                group = by_scope.get(scope)
                if group is None:
                    continue
                name = _chain("nsg", nic, scope, direction.lower())
                chains[name] = [
                    line
                    for rule in group["effectiveSecurityRules"]
                    if rule["direction"] == direction
                    for line in _rule_lines(rule, vnet)
                ]
                chains[target].append(f"jump {name}")
    body = [f"table inet {TABLE} {{", "  chain forward {", *(f"    {x}" for x in forward), "  }"]
    for name, rules in chains.items():
        body += [f"  chain {name} {{", *(f"    {x}" for x in rules), "  }"]
    body.append("}")
    return "\n".join([f"table inet {TABLE} {{}}", f"delete table inet {TABLE}", *body]) + "\n"


def apply_fabric(netns: str, script: str) -> None:
    run(in_netns(netns, "nft", "-f", "-"), input=script)
