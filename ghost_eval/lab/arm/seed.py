"""The lab subscription as the original scenario had it: forensics-vnet/default, two VMs' NICs and their NSGs.

Written through the same validated `put` calls as any client write, so the seed cannot hold a state the API
would refuse. The healthy baseline: the subnet has the Microsoft.Sql, Microsoft.KeyVault and Microsoft.Storage
endpoints, no route table and no subnet NSG; each VM's NSG allows SSH (priority 300, as Azure creates it); the
storage account nwlogs080613 exists with its firewall open (default action Allow).
"""

from __future__ import annotations

from ghost_eval.lab.arm.state import ArmState, Json
from ghost_eval.lab.layout import STORAGE_ACCOUNTS, SUBNET, SUBNET_PREFIX, VNET, VNET_PREFIX, VmSpec

__all__ = ["BASELINE_SERVICE_ENDPOINTS", "seed"]

BASELINE_SERVICE_ENDPOINTS = ("Microsoft.Sql", "Microsoft.KeyVault", "Microsoft.Storage")


def _ssh_rule() -> Json:
    return {
        "name": "SSH",
        "properties": {
            "protocol": "Tcp",
            "sourcePortRange": "*",
            "destinationPortRange": "22",
            "sourceAddressPrefix": "*",
            "destinationAddressPrefix": "*",
            "access": "Allow",
            "priority": 300,
            "direction": "Inbound",
        },
    }


def seed(state: ArmState, vms: tuple[VmSpec, ...]) -> None:
    state.put(
        "virtualNetworks",
        VNET,
        {
            "properties": {
                "addressSpace": {"addressPrefixes": [VNET_PREFIX]},
                "subnets": [
                    {
                        "name": SUBNET,
                        "properties": {
                            "addressPrefix": SUBNET_PREFIX,
                            "serviceEndpoints": [{"service": s} for s in BASELINE_SERVICE_ENDPOINTS],
                        },
                    }
                ],
            }
        },
    )
    subnet_id = state.resource_id("virtualNetworks", VNET, "subnets", SUBNET)
    for vm in vms:
        state.put("networkSecurityGroups", vm.nsg, {"properties": {"securityRules": [_ssh_rule()]}})
        vm_id = (
            f"/subscriptions/{state.subscription_id}/resourceGroups/{state.resource_group}"
            f"/providers/Microsoft.Compute/virtualMachines/{vm.name}"
        )
        state.put(
            "networkInterfaces",
            vm.nic,
            {
                "properties": {
                    "ipConfigurations": [
                        {
                            "name": "ipconfig1",
                            "properties": {
                                "privateIPAddress": vm.address,
                                "privateIPAllocationMethod": "Dynamic",
                                "primary": True,
                                "subnet": {"id": subnet_id},
                            },
                        }
                    ],
                    "networkSecurityGroup": {"id": state.resource_id("networkSecurityGroups", vm.nsg)},
                    "macAddress": vm.mac.replace(":", "-").upper(),
                    "enableIPForwarding": False,
                    "primary": True,
                    "virtualMachine": {"id": vm_id},
                }
            },
        )
    for account in STORAGE_ACCOUNTS:
        state.put_storage_account(account, {"properties": {"networkAcls": {"defaultAction": "Allow", "bypass": "AzureServices"}}})
