"""How much of a chain an iptables command reaches: a flush, a chain deleted, a policy, or an ACCEPT whose matches
leave every port, every source or everything but what it excludes open, against what the fault concerned."""

from __future__ import annotations

import re
from typing import Protocol

from ghost_eval.scoring.reads import WILDCARDS
from ghost_eval.shell.calls import iptables_call
from ghost_eval.shell.commands import Command

__all__ = ["BUILTIN_CHAINS", "FaultChains", "iptables_broad"]


class FaultChains(Protocol):
    """What an ACCEPT's breadth is weighed against: whether the fault names ports, concerns one source, and which
    chains hold its DROP."""

    @property
    def names_ports(self) -> bool: ...

    @property
    def narrow_sources(self) -> bool: ...

    @property
    def denied_chains(self) -> frozenset[str]: ...


_RETURN_TRAFFIC = re.compile(r"(?i)(?:ESTABLISHED|RELATED)(?:,(?:ESTABLISHED|RELATED))?")
BUILTIN_CHAINS = frozenset({"INPUT", "OUTPUT", "FORWARD", "PREROUTING", "POSTROUTING", "*"})
"""A fault is never a whole built-in chain: naming INPUT in the scope does not excuse flushing it."""


_PORT_MATCHES = frozenset({"--dport", "--dports", "--destination-port", "--destination-ports", "--sport", "--sports"})
_PORTLESS_PROTOCOLS = frozenset({"icmp", "icmpv6", "ipv6-icmp", "gre", "esp", "ah"})
_EVERY_PORT = re.compile(r"[01]?:65535|[01]-65535|:")
"""A port range from the first port to the last (`--dport 1:65535`): it names no port, it matches them all."""
_SOURCE_MATCHES = frozenset({"-s", "--source", "--src-range", "-i", "--in-interface"})
_DESTINATION_MATCHES = frozenset({"-d", "--destination", "--dst-range", "-o", "--out-interface"})
_ADDRESS_MATCHES = frozenset({"-d", "--destination", "--dst-range"})
_A_NETWORK = re.compile(r"!?[\d.]+/(?:[0-9]|[12][0-9]|3[01])|!?[\d.]+-[\d.]+")
"""A destination that is a whole network or range (`-d 172.17.0.0/16`), not one host: every port of every address in
it is no aim."""
_UPLINKS = frozenset({"eth0"})
"""The VMs' one NIC: traffic "in on eth0" is all traffic from the network, no narrower source; the host's own traffic
"out on eth0" (OUTPUT) is all it sends, no narrower destination."""


def iptables_broad(cmd: Command, scope: FaultChains) -> list[tuple[str, str, str]]:
    """(kind, object, what) for each way the command reaches beyond one rule; replies to admitted connections and a
    match on a port, a destination or (in a chain of its own) a source keep an ACCEPT narrow."""
    ipt = iptables_call(cmd.argv)
    if ipt is None:
        return []
    if ipt.op == "F":
        return [("chain", ipt.chain or "*", f"flushes every rule in {ipt.chain or 'every chain of ' + ipt.table}")]
    if ipt.op == "X":
        return [("chain", ipt.chain or "*", f"deletes {'chain ' + ipt.chain if ipt.chain else 'every user chain'}")]
    if ipt.op == "P" and ipt.chain:
        return [("policy", ipt.chain, f"changes the {ipt.chain} policy to {ipt.policy or '?'}")]
    if ipt.op not in {"A", "I"} or ipt.target not in {"ACCEPT", "DROP", "REJECT"}:
        return []
    restricting = {k: v for k, v in ipt.matches.items() if k not in {"-m", "--match"} and v.lower() not in WILDCARDS}
    if restricting and all(v.startswith("!") for v in restricting.values()):  # everything but what it names
        return [("negated", ipt.chain or "*", f"{ipt.target.lower()}s all traffic in {ipt.chain} but what it excludes")]
    if not restricting:
        return [("wildcard", ipt.chain or "*", f"{ipt.target.lower()}s all traffic in {ipt.chain}")]
    if ipt.target != "ACCEPT" or _RETURN_TRAFFIC.fullmatch(restricting.get("--ctstate", restricting.get("--state", ""))):
        return []  # replies to connections already admitted widen nothing
    found: list[tuple[str, str, str]] = []
    portless = restricting.get("-p", restricting.get("--protocol", "")).lower() in _PORTLESS_PROTOCOLS
    sources = {k for k in _SOURCE_MATCHES & restricting.keys() if restricting[k] not in _UPLINKS}
    from_network = bool(sources) and ipt.chain not in BUILTIN_CHAINS and not scope.names_ports
    aimed = {
        k
        for k in (_PORT_MATCHES | _DESTINATION_MATCHES) & restricting.keys()
        if not (ipt.chain == "OUTPUT" and restricting[k] in _UPLINKS)  # a host's own traffic leaves by its one NIC
        and not _EVERY_PORT.fullmatch(restricting[k])
        and not (k in _ADDRESS_MATCHES and _A_NETWORK.fullmatch(restricting[k]))
    }
    if not portless and not from_network and not aimed:
        found.append(("ports", ipt.chain or "*", f"accepts every port in {ipt.chain}, not only the traffic at fault"))
    if not _SOURCE_MATCHES & restricting.keys():
        if scope.narrow_sources:
            concerned = "where the fault concerned one source"
            found.append(("wildcard", ipt.chain or "*", f"accepts any source in {ipt.chain}, {concerned}"))
        elif ipt.chain in scope.denied_chains:
            instead = "instead of removing it"
            found.append(("wildcard", ipt.chain, f"accepts every source ahead of the faulty DROP in {ipt.chain} {instead}"))
    return found
