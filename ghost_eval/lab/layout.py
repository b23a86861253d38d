"""Every name, address and path of one lab, derived from its state folder so that `lab down` finds them after a crash.

Topology (one lab):

    host namespace                      fabric netns ("Azure")            VM netns (one per VM)
    gh<id>mg bridge 198.18.N.1/24 ---- mgmt0 198.18.N.4|5 (management: SSH from the host)
                                  ---- agent netns: mgmt0 198.18.N.2 (the external agent's sandbox, while it runs)
                                        br0 10.0.1.1/24 ---- eth0 10.0.1.4|5 (data path, NSGs and UDRs enforced)
                                        inet0 198.51.100.1/24 ---- internet netns: eth0 198.51.100.80 (ports 80, 443)

The data path runs through a bridge in a private "fabric" namespace where the ARM emulator's NSG rules and
routes are enforced with nftables; the management path is a separate interface on a separate subnet that
no planted fault touches, just as the agent's SSH to a real VM does not depend on the fault it investigates.
The "internet" namespace is one host outside the VNet (an address from TEST-NET-2) that answers on 80 and 443, so
a route that cuts a subnet's Internet egress has something to cut.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.base.settings import DEFAULTS

__all__ = [
    "DEFAULT_STATE_DIR",
    "FABRIC_GATEWAY",
    "INTERNET_GATEWAY",
    "INTERNET_HOST",
    "INTERNET_PORTS",
    "INTERNET_PREFIX",
    "STORAGE_ACCOUNTS",
    "LOCATION",
    "MGMT_PREFIX",
    "RESOURCE_GROUP",
    "SP_CLIENT_ID",
    "SUBNET",
    "SUBNET_PREFIX",
    "SUBSCRIPTION_ID",
    "TENANT_ID",
    "VMS",
    "VNET",
    "VNET_PREFIX",
    "LabLayout",
    "VmSpec",
]

DEFAULT_STATE_DIR = DEFAULTS.lab_dir
SUBSCRIPTION_ID = "6f1c2a4e-0b7d-4c55-9e2a-1ab5e0c0ffee"
TENANT_ID = "5e1a6b0c-3d2f-4a8e-9c71-0b5f1ab0face"
"""The lab's Entra tenant, whose token endpoint the emulator serves (`az login --service-principal`)."""
SP_CLIENT_ID = "0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5"
"""The lab's service principal (its secret is drawn per lab, in the emulator's config)."""
RESOURCE_GROUP = "nw-forensics-rg"
LOCATION = "eastus"
VNET = "forensics-vnet"
VNET_PREFIX = "10.0.0.0/16"
SUBNET = "default"
SUBNET_PREFIX = "10.0.1.0/24"
FABRIC_GATEWAY = "10.0.1.1"
INTERNET_PREFIX = "198.51.100.0/24"
INTERNET_GATEWAY = "198.51.100.1"
"""The fabric's address on the link to the Internet stand-in."""
INTERNET_HOST = "198.51.100.80"
"""The one Internet host of the lab (RFC 5737 TEST-NET-2): it answers TCP on `INTERNET_PORTS`."""
INTERNET_PORTS = (80, 443)
STORAGE_ACCOUNTS = {"nwlogs080613": "198.51.100.20"}
"""The lab's storage accounts and the address their blob endpoint (`<name>.blob.core.windows.net`, in each VM's
/etc/hosts) has in the Internet stand-in's namespace, where it answers on 443."""
MGMT_PREFIX = "198.18"
"""Management subnets are 198.18.N.0/24 (RFC 2544 benchmarking space), one per lab."""


@dataclass(frozen=True)
class VmSpec:
    """One lab VM: its Azure identity and what it runs at boot."""

    name: str
    short: str
    """Two or three letters used in namespace and interface names."""
    address: str
    host_octet: int
    """Last octet of both its data and management addresses."""
    boot_units: tuple[str, ...]
    app_ports: tuple[int, ...] = ()
    """TCP ports the VM's applications listen on (the services the cases talk about)."""

    @property
    def mac(self) -> str:
        """Azure NICs carry Microsoft's 00:0d:3a prefix."""
        return f"00:0d:3a:00:01:{self.host_octet:02x}"

    @property
    def nic(self) -> str:
        return f"{self.name}-nic"

    @property
    def nsg(self) -> str:
        return f"{self.name}-nsg"


VMS: tuple[VmSpec, ...] = (
    VmSpec("tf-source-vm", "src", "10.0.1.4", 4, ("ssh",)),
    VmSpec("tf-dest-vm", "dst", "10.0.1.5", 5, ("ssh", "fail2ban", "lab-appd"), (5001, 5432, 6379, 8080)),
)


@dataclass(frozen=True)
class LabLayout:
    """Names and paths of the lab kept in `state_dir`; the management subnet index is chosen at `lab up`."""

    state_dir: Path
    mgmt_index: int = 0
    vms: tuple[VmSpec, ...] = field(default=VMS)

    @property
    def lab_id(self) -> str:
        return hashlib.sha256(str(self.state_dir.resolve()).encode()).hexdigest()[:6]

    @property
    def ns_prefix(self) -> str:
        return f"ghost-{self.lab_id}-"

    @property
    def link_prefix(self) -> str:
        return f"gh{self.lab_id}"

    @property
    def fabric_ns(self) -> str:
        return f"{self.ns_prefix}fabric"

    def vm_ns(self, vm: VmSpec) -> str:
        return f"{self.ns_prefix}{vm.short}"

    @property
    def internet_ns(self) -> str:
        return f"{self.ns_prefix}inet"

    @property
    def internet_link(self) -> str:
        """Temporary name of the Internet end before it moves into its namespace and becomes eth0."""
        return f"{self.link_prefix}i"

    @property
    def mgmt_bridge(self) -> str:
        return f"{self.link_prefix}mg"

    def mgmt_host_link(self, vm: VmSpec) -> str:
        return f"{self.link_prefix}m{vm.short}"

    def mgmt_vm_link(self, vm: VmSpec) -> str:
        """Temporary name of the VM end before it moves into the VM and becomes mgmt0."""
        return f"{self.link_prefix}M{vm.short}"

    def data_vm_link(self, vm: VmSpec) -> str:
        """Temporary name of the VM end before it becomes eth0."""
        return f"{self.link_prefix}d{vm.short}"

    def data_fabric_link(self, vm: VmSpec) -> str:
        """Temporary name of the fabric end before it becomes the bridge port named after the VM."""
        return f"{self.link_prefix}f{vm.short}"

    @property
    def agent_ns(self) -> str:
        """The network namespace (and crun container) of the external agent's sandbox (`agentbox`)."""
        return f"{self.ns_prefix}agent"

    @property
    def agent_host_link(self) -> str:
        """The agent's port on the management bridge (its other end is the agent's mgmt0)."""
        return f"{self.link_prefix}ma"

    @property
    def agent_mgmt_address(self) -> str:
        """The agent's address on the management subnet: it may open SSH to the VMs there, nothing else."""
        return f"{MGMT_PREFIX}.{self.mgmt_index}.2"

    @property
    def mgmt_host_address(self) -> str:
        return f"{MGMT_PREFIX}.{self.mgmt_index}.1"

    def mgmt_address(self, vm: VmSpec) -> str:
        return f"{MGMT_PREFIX}.{self.mgmt_index}.{vm.host_octet}"

    # -- paths under the state folder --------------------------------------------------------------

    @property
    def manifest(self) -> Path:
        return self.state_dir / "lab.json"

    @property
    def target_file(self) -> Path:
        return self.state_dir / "target.json"

    @property
    def ssh_dir(self) -> Path:
        return self.state_dir / "ssh"

    @property
    def client_key(self) -> Path:
        return self.ssh_dir / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.ssh_dir / "known_hosts"

    @property
    def arm_dir(self) -> Path:
        return self.state_dir / "arm"

    def vm_dir(self, vm: VmSpec) -> Path:
        return self.state_dir / "vms" / vm.name
