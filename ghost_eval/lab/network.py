"""Namespaces, bridges and veth pairs of one lab: building them, and removing them by name even after a crash.

The data path: each VM's eth0 (10.0.1.x/24, default route via the fabric's 10.0.1.1) is a port of br0 in the
fabric namespace, where bridged IPv4 goes through netfilter so the emulator's NSGs and routes apply. The
management path: each VM's mgmt0 (198.18.N.x/24) is an isolated port of a bridge in the host namespace that
holds 198.18.N.1, so the host reaches every VM and the VMs cannot reach each other that way. The fabric also
routes to the Internet stand-in's namespace (198.51.100.0/24 on its inet0), so Internet egress crosses the same
enforcement as VNet traffic.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path

from ghost_eval.lab.errors import LabError
from ghost_eval.lab.layout import (
    FABRIC_GATEWAY,
    INTERNET_GATEWAY,
    INTERNET_HOST,
    INTERNET_PREFIX,
    MGMT_PREFIX,
    STORAGE_ACCOUNTS,
    SUBNET_PREFIX,
    LabLayout,
    VmSpec,
)
from ghost_eval.lab.shell import kill_pids, netns_pids, run

__all__ = [
    "choose_mgmt_index",
    "create_network",
    "destroy_network",
    "lab_links",
    "lab_namespaces",
    "unwire_agent",
    "wire_agent",
    "wire_vm",
]

_PLEN = ipaddress.ip_network(SUBNET_PREFIX).prefixlen


def _ip(*args: str, netns: str | None = None) -> None:
    run(["ip", *(["-n", netns] if netns else []), *args])


def _sysctl(netns: str, key: str, value: str) -> None:
    run(["ip", "netns", "exec", netns, "sysctl", "-qw", f"{key}={value}"])


def choose_mgmt_index(layout: LabLayout) -> int:
    """A 198.18.N.0/24 no address on this host uses, starting from one derived from the lab id."""
    used = {int(m.group(1)) for m in re.finditer(rf"inet {re.escape(MGMT_PREFIX)}\.(\d+)\.", run(["ip", "-4", "-o", "addr"]))}
    start = int(layout.lab_id, 16) % 256
    for offset in range(256):
        n = (start + offset) % 256
        if n not in used:
            return n
    raise LabError(f"no free management subnet in {MGMT_PREFIX}.0.0/16")


def _mgmt_table(layout: LabLayout) -> str:
    return f"ghost_{layout.lab_id}_mgmt"


def _guard_management(layout: LabLayout) -> None:
    """The management bridge carries the host's SSH to the VMs and nothing else: a VM may answer, never open a
    connection to the host (whose services listen on every address) nor be routed beyond it. The one exception is the
    external agent's sandbox (`agentbox`), a port of the same bridge: it may open SSH to the VMs (bridged frames
    cross this forward hook, the host running br_netfilter) and get the answers."""
    bridge = layout.mgmt_bridge
    vms = ", ".join(layout.mgmt_address(vm) for vm in layout.vms)
    run(
        ["nft", "-f", "-"],
        input=f"""table inet {_mgmt_table(layout)} {{
    chain input {{
        type filter hook input priority -10; policy accept;
        iifname "{bridge}" ct state established,related accept
        iifname "{bridge}" counter drop
    }}
    chain forward {{
        type filter hook forward priority -10; policy accept;
        iifname "{bridge}" ip saddr {layout.agent_mgmt_address} ip daddr {{ {vms} }} tcp dport 22 accept
        iifname "{bridge}" ip saddr {{ {vms} }} ip daddr {layout.agent_mgmt_address} ct state established,related accept
        iifname "{bridge}" counter drop
        oifname "{bridge}" counter drop
    }}
}}
""",
    )


def create_network(layout: LabLayout) -> None:
    """The fabric, the Internet stand-in and the management bridge; each VM is wired later (`wire_vm`)."""
    fabric, internet = layout.fabric_ns, layout.internet_ns
    for ns in (fabric, internet):
        run(["ip", "netns", "add", ns])
        _ip("link", "set", "lo", "up", netns=ns)
    _ip("link", "add", "br0", "type", "bridge", netns=fabric)
    _ip("addr", "add", f"{FABRIC_GATEWAY}/{_PLEN}", "dev", "br0", netns=fabric)
    _ip("link", "set", "br0", "up", netns=fabric)
    _sysctl(fabric, "net.ipv4.ip_forward", "1")
    _sysctl(fabric, "net.bridge.bridge-nf-call-iptables", "1")
    inet_plen = ipaddress.ip_network(INTERNET_PREFIX).prefixlen
    _ip("link", "add", layout.internet_link, "type", "veth", "peer", "name", "inet0", "netns", fabric)
    _ip("link", "set", layout.internet_link, "netns", internet)
    _ip("link", "set", layout.internet_link, "name", "eth0", netns=internet)
    _ip("addr", "add", f"{INTERNET_GATEWAY}/{inet_plen}", "dev", "inet0", netns=fabric)
    _ip("link", "set", "inet0", "up", netns=fabric)
    for address in (INTERNET_HOST, *STORAGE_ACCOUNTS.values()):
        _ip("addr", "add", f"{address}/{inet_plen}", "dev", "eth0", netns=internet)
    _ip("link", "set", "eth0", "up", netns=internet)
    _ip("route", "add", "default", "via", INTERNET_GATEWAY, netns=internet)
    bridge = layout.mgmt_bridge
    _ip("link", "add", bridge, "type", "bridge")
    _ip("addr", "add", f"{layout.mgmt_host_address}/24", "dev", bridge)
    _ip("link", "set", bridge, "up")
    _guard_management(layout)


def wire_vm(layout: LabLayout, vm: VmSpec, pid: int) -> None:
    """Name the network namespace of the VM whose init is `pid` (created inside the VM's own user namespace, so VM
    root administers it) and give it eth0 on the fabric's bridge and mgmt0 on the management bridge."""
    ns, fabric = layout.vm_ns(vm), layout.fabric_ns
    run(["ip", "netns", "attach", ns, str(pid)])
    _ip("link", "set", "lo", "up", netns=ns)
    data_vm, data_fab = layout.data_vm_link(vm), layout.data_fabric_link(vm)
    _ip("link", "add", data_vm, "type", "veth", "peer", "name", data_fab)
    _ip("link", "set", data_vm, "netns", ns)
    _ip("link", "set", data_fab, "netns", fabric)
    _ip("link", "set", data_vm, "name", "eth0", "address", vm.mac, netns=ns)
    _ip("link", "set", data_fab, "name", vm.short, "master", "br0", "up", netns=fabric)
    _ip("addr", "add", f"{vm.address}/{_PLEN}", "dev", "eth0", netns=ns)
    _ip("link", "set", "eth0", "up", netns=ns)
    _ip("route", "add", "default", "via", FABRIC_GATEWAY, netns=ns)
    mgmt_host, mgmt_vm = layout.mgmt_host_link(vm), layout.mgmt_vm_link(vm)
    _ip("link", "add", mgmt_host, "type", "veth", "peer", "name", mgmt_vm)
    _ip("link", "set", mgmt_host, "master", layout.mgmt_bridge, "up")
    _ip("link", "set", "dev", mgmt_host, "type", "bridge_slave", "isolated", "on")
    _ip("link", "set", mgmt_vm, "netns", ns)
    _ip("link", "set", mgmt_vm, "name", "mgmt0", netns=ns)
    _ip("addr", "add", f"{layout.mgmt_address(vm)}/24", "dev", "mgmt0", netns=ns)
    _ip("link", "set", "mgmt0", "up", netns=ns)


def _agent_firewall(layout: LabLayout) -> str:
    """The agent's own namespace lets out only SSH to the VMs (and loopback, where the host's relays listen); its
    user holds no capability over this namespace, so the rules stay as the host wrote them."""
    vms = ", ".join(layout.mgmt_address(vm) for vm in layout.vms)
    return f"""table inet agentbox {{
    chain output {{
        type filter hook output priority 0; policy drop;
        oifname "lo" accept
        ct state established,related accept
        oifname "mgmt0" ip daddr {{ {vms} }} tcp dport 22 accept
    }}
    chain input {{
        type filter hook input priority 0; policy drop;
        iifname "lo" accept
        ct state established,related accept
    }}
}}
"""


def wire_agent(layout: LabLayout) -> None:
    """The external agent's network namespace: loopback, and mgmt0 on the management bridge (the VMs' SSH), no
    route beyond that subnet; created by the host and owned by it (the agent joins it without any capability)."""
    ns = layout.agent_ns
    unwire_agent(layout)  # what a crashed run left
    run(["ip", "netns", "add", ns])
    _ip("link", "set", "lo", "up", netns=ns)
    _sysctl(ns, "net.ipv6.conf.all.disable_ipv6", "1")
    _ip("link", "add", layout.agent_host_link, "type", "veth", "peer", "name", "mgmt0", "netns", ns)
    _ip("link", "set", layout.agent_host_link, "master", layout.mgmt_bridge, "up")
    _ip("addr", "add", f"{layout.agent_mgmt_address}/24", "dev", "mgmt0", netns=ns)
    _ip("link", "set", "mgmt0", "up", netns=ns)
    run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=_agent_firewall(layout))


def unwire_agent(layout: LabLayout) -> None:
    """Kill whatever still runs in the agent's namespace and delete it (its mgmt0 pair goes with it)."""
    ns = layout.agent_ns
    if ns not in lab_namespaces(layout):
        return
    kill_pids(netns_pids(ns), grace=0.5)
    run(["ip", "netns", "delete", ns])
    run(["ip", "link", "delete", layout.agent_host_link], check=False)


def lab_namespaces(layout: LabLayout) -> list[str]:
    netns_dir = Path("/run/netns")
    if not netns_dir.is_dir():
        return []
    return sorted(p.name for p in netns_dir.iterdir() if p.name.startswith(layout.ns_prefix))


def lab_links(layout: LabLayout) -> list[str]:
    names = re.findall(r"^\d+: ([^:@]+)", run(["ip", "-o", "link", "show"]), flags=re.MULTILINE)
    return sorted(n for n in names if n.startswith(layout.link_prefix))


def destroy_network(layout: LabLayout) -> list[str]:
    """Kill every process in the lab's namespaces, delete them and the host-side links; returns what was removed."""
    removed = []
    namespaces = lab_namespaces(layout)
    for ns in namespaces:
        kill_pids(netns_pids(ns))
    for ns in namespaces:
        leftover = [p for p in netns_pids(ns) if p != os.getpid()]
        if leftover:
            kill_pids(leftover, grace=0.5)
        run(["ip", "netns", "delete", ns])
        removed.append(f"netns {ns}")
    for link in lab_links(layout):
        run(["ip", "link", "delete", link], check=False)
        removed.append(f"link {link}")
    if _mgmt_table(layout) in run(["nft", "list", "tables"], check=False).split():
        run(["nft", "delete", "table", "inet", _mgmt_table(layout)], check=False)
        removed.append(f"nft table inet {_mgmt_table(layout)}")
    return removed
