"""The real `az` CLI (azure-cli 2.91, its own environment) against a running lab: the commands the original Ghost
Agent and its tools issue, answered by the emulator, and Azure's error for one the lab does not emulate."""

from __future__ import annotations

import ipaddress
import json
import subprocess
import time
from pathlib import Path

from ghost_eval.lab.arm.blobs import BlobStore
from ghost_eval.lab.azcli import az, original_env
from ghost_eval.lab.layout import RESOURCE_GROUP
from ghost_eval.lab.pcap import read_pcap
from tests.lab.helpers import LAB_MARKS, Lab, vm_run

pytestmark = LAB_MARKS

RG = ["--resource-group", RESOURCE_GROUP]
ACCOUNT = "nwlogs080613"


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
    proc = _az(lab, "network", "vnet-gateway", "list", *RG)
    assert proc.returncode != 0 and "InvalidResourceType" in proc.stderr
    missing = _az(lab, "network", "nsg", "show", *RG, "--name", "no-such-nsg")
    assert missing.returncode == 3 and "ResourceNotFound" in missing.stderr


def _tcp_flows(cap: bytes) -> set[tuple[str, str, int, int]]:
    """(source, destination, source port, destination port) of the IPv4 TCP packets of an Ethernet pcap; any other
    packet as ("other", …)."""
    link_type, records = read_pcap(cap)
    assert link_type == 1  # Ethernet, as Network Watcher's captures are
    flows = set()
    for r in records:
        ip = r.data[14:]
        if r.data[12:14] != b"\x08\x00" or ip[9] != 6:
            flows.add(("other", r.data[12:14].hex(), 0, ip[9] if len(ip) > 9 else 0))
            continue
        tcp = ip[(ip[0] & 0x0F) * 4 :]
        flows.add((str(ipaddress.IPv4Address(ip[12:16])), str(ipaddress.IPv4Address(ip[16:20])),
                   int.from_bytes(tcp[0:2]), int.from_bytes(tcp[2:4])))  # fmt: skip
    return flows


def test_packet_capture_in_the_vm_is_stored_and_downloaded_as_the_original_does(lab: Lab, tmp_path: Path) -> None:
    """The orchestrator's own commands: create with a storage path, poll show-status until Stopped, list by prefix,
    download with the account key the CLI queries, delete; the .cap holds the traffic the filter selects."""
    path = f"https://{ACCOUNT}.blob.core.windows.net/pktcaptures/ghost_t1.cap"
    started = time.monotonic()
    created = _json(
        lab, "network", "watcher", "packet-capture", "create", "--vm", "tf-dest-vm", *RG, "--name", "ghost_t1",
        "--storage-account", ACCOUNT, "--storage-path", path, "--time-limit", "4",
        "--filters", '[{"protocol": "TCP", "localPort": "8080"}]',
    )  # fmt: skip
    assert isinstance(created, dict) and created["storageLocation"]["storagePath"] == path
    traffic = "ping -c 2 -i 0.2 10.0.1.5 >/dev/null; curl -s -m 3 -o /dev/null -w '%{http_code}' http://10.0.1.5:8080/"
    code, out, _err = vm_run(lab.target, "tf-source-vm", traffic)
    assert (code, out) == (0, "200")
    status = ""
    while status != "Stopped":
        assert time.monotonic() - started < 30, f"capture still {status!r} after 30 s"
        status = _json(lab, "network", "watcher", "packet-capture", "show-status", "--location", "eastus",
                       "--name", "ghost_t1", "--query", "packetCaptureStatus")  # fmt: skip
    print(f"capture of 4 s: created to Stopped in {time.monotonic() - started:.1f} s")
    names = _json(lab, "network", "watcher", "packet-capture", "list", "--location", "eastus",
                  "--query", "[?starts_with(name, 'ghost_')].name")  # fmt: skip
    assert names == ["ghost_t1"]
    local = tmp_path / "ghost_t1.cap"
    download = _az(lab, "storage", "blob", "download", "--account-name", ACCOUNT, "--container-name", "pktcaptures",
                   "--name", "ghost_t1.cap", "--file", str(local), "--no-progress")  # fmt: skip
    assert download.returncode == 0, download.stderr
    _record, stored = BlobStore(lab.layout.arm_dir / "blobs").blob(ACCOUNT, "pktcaptures", "ghost_t1.cap")
    assert local.read_bytes() == stored.read_bytes()
    flows = _tcp_flows(local.read_bytes())
    assert any(f[:2] == ("10.0.1.4", "10.0.1.5") and f[3] == 8080 for f in flows), flows
    assert all(8080 in (f[2], f[3]) for f in flows), flows  # the filter kept the pings out
    assert (
        _az(lab, "network", "watcher", "packet-capture", "delete", "--location", "eastus", "--name", "ghost_t1").returncode == 0
    )
    gone = _az(lab, "network", "watcher", "packet-capture", "show", "--location", "eastus", "--name", "ghost_t1")
    assert gone.returncode == 3 and "ResourceNotFound" in gone.stderr


def test_packet_capture_bad_input_gets_azure_errors(lab: Lab) -> None:
    no_vm = _az(lab, "network", "watcher", "packet-capture", "create", "--vm", "no-such-vm", *RG, "--name", "c1",
                "--storage-account", ACCOUNT)  # fmt: skip
    assert (
        no_vm.returncode != 0 and "(ResourceNotFound) The Resource 'Microsoft.Compute/virtualMachines/no-such-vm'" in no_vm.stderr
    )
    no_account = _az(lab, "network", "watcher", "packet-capture", "create", "--vm", "tf-dest-vm", *RG, "--name", "c2",
                     "--storage-account", "nosuchaccount1")  # fmt: skip
    assert no_account.returncode != 0 and "Microsoft.Storage/storageAccounts/nosuchaccount1" in no_account.stderr
    assert _json(lab, "network", "watcher", "packet-capture", "list", "--location", "eastus", "--query", "[].name") == []


def test_storage_containers_and_blobs(lab: Lab, tmp_path: Path) -> None:
    login = ["--account-name", ACCOUNT, "--auth-mode", "login"]
    assert _json(lab, "storage", "container", "create", "-n", "results", *login) == {"created": True}
    assert _az(lab, "storage", "container", "exists", "-n", "results", *login, "-o", "tsv").stdout.strip() == "True"
    assert "results" in _json(lab, "storage", "container", "list", *login, "--query", "[].name")  # type: ignore[operator]
    data = tmp_path / "result.json"
    data.write_bytes(b'{"ok": true}\n' * 1000)
    upload = _az(lab, "storage", "blob", "upload", *login, "-c", "results", "-n", "runs/result.json", "-f", str(data),
                 "--overwrite", "true")  # fmt: skip
    assert upload.returncode == 0, upload.stderr
    listed = _json(lab, "storage", "blob", "list", *login, "-c", "results", "--query", "[].[name, properties.contentLength]")
    assert listed == [["runs/result.json", 13000]]
    shown = _json(
        lab, "storage", "blob", "show", *login, "-c", "results", "-n", "runs/result.json", "--query", "properties.blobType"
    )
    assert shown == "BlockBlob"
    back = tmp_path / "back.json"
    download = _az(lab, "storage", "blob", "download", *login, "-c", "results", "-n", "runs/result.json", "--file", str(back),
                   "--no-progress")  # fmt: skip
    assert download.returncode == 0 and back.read_bytes() == data.read_bytes()
    missing = _az(lab, "storage", "blob", "show", *login, "-c", "results", "-n", "absent.json")
    assert missing.returncode != 0 and "BlobNotFound" in missing.stderr
