"""The ARM emulator as the real azure-mgmt-network SDK sees it: auth, paths, long-running POSTs, ARM's validation."""

from __future__ import annotations

import json
import re
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.mgmt.network import NetworkManagementClient
from azure.mgmt.network.models import (
    Route,
    RoutePropertiesFormat,
    RouteTable,
    RouteTablePropertiesFormat,
    SecurityRule,
    SecurityRulePropertiesFormat,
)

from ghost_eval.lab.arm import ArmServer, ArmState, seed
from ghost_eval.lab.fabric import compile_fabric
from ghost_eval.lab.layout import LOCATION, RESOURCE_GROUP, SUBSCRIPTION_ID, VMS
from ghost_eval.live.effective import flow_allowed, next_hop
from ghost_eval.live.target import Target, network_client

RG = RESOURCE_GROUP
TOKEN = "lab-test-token"


@pytest.fixture
def arm(tmp_path: Path) -> Iterator[tuple[ArmServer, Target]]:
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "server.pem"))
    state = ArmState(SUBSCRIPTION_ID, RG, LOCATION)
    seed(state, VMS)
    server = ArmServer(state, TOKEN, tmp_path / "server.pem", tmp_path / "server.pem").start()
    target = Target(
        name="lab",
        subscription_id=SUBSCRIPTION_ID,
        resource_group=RG,
        nics={vm.name: vm.nic for vm in VMS},
        nsgs={vm.name: vm.nsg for vm in VMS},
        arm_endpoint=server.url,
        ca_bundle=str(tmp_path / "ca.pem"),
        credential="static_token",
        token=TOKEN,
        hosts={},
    )
    try:
        yield server, target
    finally:
        server.stop()


def _client(target: Target, **changes: Any) -> NetworkManagementClient:
    return network_client(target.model_copy(update=changes))


def _raw(
    server: ArmServer, target: Target, path: str, headers: dict[str, str], method: str = "GET", body: object = None
) -> tuple[int, dict[str, Any]]:
    ctx = ssl.create_default_context(cafile=target.ca_bundle)
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, headers=headers, method=method, data=data)
    try:
        with urllib.request.urlopen(request, context=ctx, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_requests_without_the_lab_token_are_refused(arm: tuple[ArmServer, Target]) -> None:
    server, target = arm
    path = (
        f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{RG}/providers/Microsoft.Network/networkSecurityGroups"
        "?api-version=2026-03-01"
    )
    status, body = _raw(server, target, path, {})
    assert (status, body["error"]["code"]) == (401, "AuthenticationFailed")
    status, body = _raw(server, target, path, {"Authorization": "Bearer not-the-token"})
    assert (status, body["error"]["code"]) == (401, "InvalidAuthenticationToken")
    status, body = _raw(server, target, path, {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and {n["name"] for n in body["value"]} == {"tf-source-vm-nsg", "tf-dest-vm-nsg"}
    with _client(target, token="wrong") as client, pytest.raises(ClientAuthenticationError):
        client.subnets.get(RG, "forensics-vnet", "default")


def test_api_version_and_scope_are_checked(arm: tuple[ArmServer, Target]) -> None:
    server, target = arm
    auth = {"Authorization": f"Bearer {TOKEN}"}
    status, body = _raw(server, target, f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{RG}", auth)
    assert (status, body["error"]["code"]) == (400, "MissingApiVersionParameter")
    vnet = f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{RG}/providers/Microsoft.Network/virtualNetworks/v2"
    status, body = _raw(
        server,
        target,
        f"{vnet}?api-version=2026-03-01",
        auth,
        "PUT",
        {"properties": {"addressSpace": {"addressPrefixes": ["10.9.0.0/16"]}, "subnets": [{"properties": {}}]}},
    )
    assert (status, body["error"]["code"]) == (400, "InvalidRequestContent")  # a subnet without a name
    assert [v["name"] for v in _raw(server, target, f"{vnet[:-3]}?api-version=2026-03-01", auth)[1]["value"]] == [
        "forensics-vnet"
    ]
    with _client(target, resource_group="other-rg") as client, pytest.raises(ResourceNotFoundError, match="other-rg"):
        client.network_security_groups.get("other-rg", "tf-dest-vm-nsg")


def test_effective_routes_with_a_user_route_through_the_sdk(arm: tuple[ArmServer, Target]) -> None:
    server, target = arm
    with _client(target) as client:
        table = client.route_tables.begin_create_or_update(
            RG,
            "blackhole-rt",
            RouteTable(
                location=LOCATION,
                properties=RouteTablePropertiesFormat(
                    routes=[
                        Route(
                            name="to-nva",
                            properties=RoutePropertiesFormat(
                                address_prefix="10.0.1.5/32", next_hop_type="VirtualAppliance", next_hop_ip_address="10.0.1.100"
                            ),
                        ),
                        Route(
                            name="default-to-nva",
                            properties=RoutePropertiesFormat(
                                address_prefix="0.0.0.0/0", next_hop_type="VirtualAppliance", next_hop_ip_address="10.0.1.100"
                            ),
                        ),
                    ]
                ),
            ),
        ).result()
        subnet = client.subnets.get(RG, "forensics-vnet", "default")
        subnet.route_table = RouteTable(id=table.id)
        client.subnets.begin_create_or_update(RG, "forensics-vnet", "default", subnet).result()
        client.routes.begin_create_or_update(
            RG,
            "blackhole-rt",
            "spare",
            Route(properties=RoutePropertiesFormat(address_prefix="192.0.2.0/24", next_hop_type="None")),
        ).result()
        assert client.routes.get(RG, "blackhole-rt", "spare").next_hop_type == "None"
        client.routes.begin_delete(RG, "blackhole-rt", "spare").result()
        assert {r.name for r in client.routes.list(RG, "blackhole-rt")} == {"to-nva", "default-to-nva"}
        nic = client.network_interfaces.get(RG, "tf-source-vm-nic")
        assert nic.ip_configurations[0].private_ip_address == "10.0.1.4"
        assert [s.route_table.id for s in client.subnets.list(RG, "forensics-vnet")] == [table.id]
        routes = [
            r.as_dict() for r in client.network_interfaces.begin_get_effective_route_table(RG, "tf-source-vm-nic").result().value
        ]
    user = [r for r in routes if r["source"] == "User"]
    assert {(r["name"], r["addressPrefix"][0], r["nextHopIpAddress"][0]) for r in user} == {
        ("to-nva", "10.0.1.5/32", "10.0.1.100"),
        ("default-to-nva", "0.0.0.0/0", "10.0.1.100"),
    }
    by_prefix = {(r["source"], r["addressPrefix"][0]): r for r in routes}
    assert by_prefix[("Default", "10.0.0.0/16")]["nextHopType"] == "VnetLocal"
    assert by_prefix[("Default", "0.0.0.0/0")]["state"] == "Invalid"  # overridden by the user route
    assert next_hop(routes, "10.0.1.5")["name"] == "to-nva"  # type: ignore[index]
    assert next_hop(routes, "10.0.1.4")["nextHopType"] == "VnetLocal"  # type: ignore[index]
    # the POST is a long-running operation: 202, then the operation URL, then the result on Location
    calls = [(r.method, r.path.rsplit("/", 2)[-2], r.status) for r in server.requests]
    post = calls.index(("POST", "tf-source-vm-nic", 202))
    assert [c[1] for c in calls[post + 1 : post + 3]] == ["operations", "operationResults"]
    assert server.requests[post + 2].status == 200


def test_effective_nsg_rules_with_a_deny_rule_through_the_sdk(arm: tuple[ArmServer, Target]) -> None:
    _server, target = arm
    with _client(target) as client:
        client.security_rules.begin_create_or_update(
            RG,
            "tf-dest-vm-nsg",
            "block-8080",
            SecurityRule(
                properties=SecurityRulePropertiesFormat(
                    protocol="Tcp",
                    access="Deny",
                    direction="Inbound",
                    priority=150,
                    source_address_prefix="*",
                    source_port_range="*",
                    destination_address_prefix="*",
                    destination_port_range="8080",
                )
            ),
        ).result()
        groups = [
            g.as_dict()
            for g in client.network_interfaces.begin_list_effective_network_security_groups(RG, "tf-dest-vm-nic").result().value
        ]
    assert len(groups) == 1 and groups[0]["association"]["networkInterface"]["id"].endswith("/tf-dest-vm-nic")
    rules = groups[0]["effectiveSecurityRules"]
    deny = next(r for r in rules if r["name"] == "securityRules/block-8080")
    assert (deny["access"], deny["priority"], deny["destinationPortRange"]) == ("Deny", 150, "8080-8080")
    vnet_rule = next(r for r in rules if r["name"] == "defaultSecurityRules/AllowVnetInBound")
    assert vnet_rule["expandedSourceAddressPrefix"] == ["10.0.0.0/16"]
    assert not flow_allowed(groups, "Inbound", "Tcp", 8080, "10.0.1.4", "10.0.1.5")
    assert flow_allowed(groups, "Inbound", "Tcp", 22, "203.0.113.9", "10.0.1.5")  # the SSH rule
    assert not flow_allowed(groups, "Inbound", "Tcp", 5432, "203.0.113.9", "10.0.1.5")  # DenyAllInBound
    assert flow_allowed(groups, "Inbound", "Tcp", 5432, "10.0.1.4", "10.0.1.5")  # AllowVnetInBound


def test_arm_validation_errors_reach_the_sdk(arm: tuple[ArmServer, Target]) -> None:
    _server, target = arm
    rule = SecurityRulePropertiesFormat(
        protocol="Tcp",
        access="Deny",
        direction="Inbound",
        priority=300,
        source_address_prefix="*",
        source_port_range="*",
        destination_address_prefix="*",
        destination_port_range="80",
    )
    with _client(target) as client:
        with pytest.raises(HttpResponseError, match="SecurityRuleConflict"):  # SSH already holds 300 inbound
            client.security_rules.begin_create_or_update(RG, "tf-dest-vm-nsg", "dup", SecurityRule(properties=rule)).result()
        rule.priority = 5000
        with pytest.raises(HttpResponseError, match="SecurityRuleInvalidPriority"):
            client.security_rules.begin_create_or_update(RG, "tf-dest-vm-nsg", "high", SecurityRule(properties=rule)).result()
        with pytest.raises(HttpResponseError, match="InUseNetworkSecurityGroupCannotBeDeleted"):
            client.network_security_groups.begin_delete(RG, "tf-dest-vm-nsg").result()
        subnet = client.subnets.get(RG, "forensics-vnet", "default")
        subnet.route_table = RouteTable(id=subnet.id.split("/virtualNetworks/")[0] + "/routeTables/missing")
        with pytest.raises(HttpResponseError, match="InvalidResourceReference"):
            client.subnets.begin_create_or_update(RG, "forensics-vnet", "default", subnet).result()
        names = {r.name for r in client.security_rules.list(RG, "tf-dest-vm-nsg")}
    assert names == {"SSH"}  # nothing was half-written


def test_fabric_enforces_what_the_api_reports(arm: tuple[ArmServer, Target]) -> None:
    server, target = arm
    with _client(target) as client:
        client.security_rules.begin_create_or_update(
            RG,
            "tf-dest-vm-nsg",
            "block-8080",
            SecurityRule(
                properties=SecurityRulePropertiesFormat(
                    protocol="Tcp",
                    access="Deny",
                    direction="Inbound",
                    priority=150,
                    source_address_prefix="*",
                    source_port_range="*",
                    destination_address_prefix="*",
                    destination_port_range="8080",
                )
            ),
        ).result()
    script = compile_fabric(server.state)
    body = re.search(r"chain nsg_tf_dest_vm_nic_nic_inbound \{\n(.*?)\n  \}", script, re.DOTALL)
    assert body is not None
    chain = [line.strip() for line in body.group(1).splitlines()]
    verdicts = [(line.split("comment")[1].strip(), line.split("counter")[1].split()[0]) for line in chain]
    assert verdicts[:2] == [('"securityRules/block-8080 p150 Deny"', "drop"), ('"securityRules/SSH p300 Allow"', "return")]
    assert "th dport { 8080 }" in chain[0]
