"""The real `az` CLI (azure-cli 2.91, its own environment) against a running lab: the commands the original Ghost
Agent and its tools issue, answered by the emulator, and Azure's error for one the lab does not emulate."""

from __future__ import annotations

import json
import subprocess

from ghost_eval.lab.azcli import az, original_env
from ghost_eval.lab.layout import RESOURCE_GROUP
from tests.lab.helpers import LAB_MARKS, Lab

pytestmark = LAB_MARKS

RG = ["--resource-group", RESOURCE_GROUP]


def _az(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    return az(lab.state_dir, list(args), original_env())


def _json(lab: Lab, *args: str) -> object:
    proc = _az(lab, *args, "--output", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_nsg_rule_write_read_effective_and_ip_flow(lab: Lab) -> None:
    created = _json(
        lab, "network", "nsg", "rule", "create", *RG, "--nsg-name", "tf-dest-vm-nsg", "--name", "ghost-demo-block-8080",
        "--priority", "150", "--direction", "Inbound", "--access", "Deny", "--protocol", "Tcp",
        "--destination-port-ranges", "8080",
    )  # fmt: skip
    assert isinstance(created, dict) and created["provisioningState"] == "Succeeded"
    names = _json(lab, "network", "nsg", "rule", "list", *RG, "--nsg-name", "tf-dest-vm-nsg", "--query", "[].name")
    assert names == ["SSH", "ghost-demo-block-8080"]
    effective = _json(
        lab, "network", "nic", "list-effective-nsg", *RG, "--name", "tf-dest-vm-nic",
        "--query", "value[0].effectiveSecurityRules[?priority==`150`].[name, access, destinationPortRange]",
    )  # fmt: skip
    assert effective == [["securityRules/ghost-demo-block-8080", "Deny", "8080-8080"]]
    flow = _json(
        lab, "network", "watcher", "test-ip-flow", *RG, "--vm", "tf-dest-vm", "--direction", "Inbound",
        "--protocol", "TCP", "--local", "10.0.1.5:8080", "--remote", "10.0.1.4:40000",
    )  # fmt: skip
    assert flow == {"access": "Deny", "ruleName": "securityRules/ghost-demo-block-8080"}
    deleted = _az(lab, "network", "nsg", "rule", "delete", *RG, "--nsg-name", "tf-dest-vm-nsg", "--name", "ghost-demo-block-8080")
    assert deleted.returncode == 0
    shown = _json(lab, "network", "nsg", "show", *RG, "--name", "tf-dest-vm-nsg", "--query", "securityRules[].name")
    assert shown == ["SSH"]


def test_vm_nic_routes_and_resource_reads(lab: Lab) -> None:
    nic_id = _json(lab, "vm", "show", *RG, "--name", "tf-dest-vm", "--query", "networkProfile.networkInterfaces[0].id")
    assert isinstance(nic_id, str) and nic_id.endswith("/networkInterfaces/tf-dest-vm-nic")
    ip = _json(lab, "network", "nic", "show", *RG, "--name", "tf-dest-vm-nic", "--query", "ipConfigurations[0].privateIPAddress")
    assert ip == "10.0.1.5"
    routes = _json(
        lab, "network", "nic", "show-effective-route-table", *RG, "--name", "tf-source-vm-nic",
        "--query", "value[?state=='Active'].[addressPrefix[0], nextHopType]",
    )  # fmt: skip
    assert ["10.0.0.0/16", "VnetLocal"] in routes  # type: ignore[operator]
    assert _json(lab, "resource", "show", "--ids", nic_id, "--query", "type") == "Microsoft.Network/networkInterfaces"
    vms = _json(lab, "resource", "list", "--name", "tf-dest-vm", *RG, "--query", "[].type")
    assert vms == ["Microsoft.Compute/virtualMachines"]
    endpoints = _json(
        lab, "network", "vnet", "subnet", "show", *RG, "--vnet-name", "forensics-vnet", "--name", "default",
        "--query", "serviceEndpoints[].service",
    )  # fmt: skip
    assert endpoints == ["Microsoft.Sql", "Microsoft.KeyVault", "Microsoft.Storage"]


def test_run_command_runs_inside_the_named_vm(lab: Lab) -> None:
    result = _json(
        lab, "vm", "run-command", "invoke", *RG, "--name", "tf-dest-vm", "--command-id", "RunShellScript",
        "--scripts", "ip -4 -o addr show eth0; echo arg=$1; exit 3", "--parameters", "hello",
    )  # fmt: skip
    assert isinstance(result, dict)
    message = result["value"][0]["message"]
    assert message.startswith("Enable failed: ") and "exit status=3" in message
    stdout = message.split("[stdout]\n", 1)[1].split("[stderr]", 1)[0]
    assert "10.0.1.5/" in stdout and "arg=hello" in stdout


def test_a_command_the_lab_does_not_emulate_fails_as_azure_would(lab: Lab) -> None:
    proc = _az(
        lab, "network", "watcher", "packet-capture", "create", *RG, "--vm", "tf-dest-vm", "--name", "cap1",
        "--storage-account", "nwlogs080613",
    )  # fmt: skip
    assert proc.returncode != 0
    missing = _az(lab, "network", "nsg", "show", *RG, "--name", "no-such-nsg")
    assert missing.returncode == 3 and "ResourceNotFound" in missing.stderr
