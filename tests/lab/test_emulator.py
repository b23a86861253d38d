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

from ghost_eval.connect.azure import network_client, storage_client
from ghost_eval.connect.effective import flow_allowed, next_hop
from ghost_eval.connect.target import Target
from ghost_eval.lab.arm import ArmServer, ArmState, seed
from ghost_eval.lab.fabric import compile_fabric
from ghost_eval.lab.layout import INTERNET_PREFIX, LOCATION, RESOURCE_GROUP, STORAGE_ACCOUNTS, SUBSCRIPTION_ID, VMS
from ghost_eval.live.recipes import (
    CreateNetworkSecurityGroup,
    CreateRouteTable,
    DeleteNetworkSecurityGroup,
    DeleteRouteTable,
    Recipe,
    RestoreServiceEndpoints,
    RestoreStorageFirewall,
    RouteSpec,
    SecurityRuleSpec,
    SetServiceEndpoints,
    SetStorageFirewall,
    applied,
)

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


def _deny_inbound(client: NetworkManagementClient, name: str, *, priority: int, port: int) -> None:
    """Add a rule denying inbound TCP to `port` from anywhere to tf-dest-vm-nsg, through the SDK."""
    rule = SecurityRulePropertiesFormat(
        protocol="Tcp",
        access="Deny",
        direction="Inbound",
        priority=priority,
        source_address_prefix="*",
        source_port_range="*",
        destination_address_prefix="*",
        destination_port_range=str(port),
    )
    client.security_rules.begin_create_or_update(RG, "tf-dest-vm-nsg", name, SecurityRule(properties=rule)).result()


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
        _deny_inbound(client, "block-8080", priority=150, port=8080)
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
    with _client(target) as client:
        with pytest.raises(HttpResponseError, match="SecurityRuleConflict"):  # SSH already holds 300 inbound
            _deny_inbound(client, "dup", priority=300, port=80)
        with pytest.raises(HttpResponseError, match="SecurityRuleInvalidPriority"):
            _deny_inbound(client, "high", priority=5000, port=80)
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
        _deny_inbound(client, "block-8080", priority=150, port=8080)
    script = compile_fabric(server.state)
    body = re.search(r"chain nsg_tf_dest_vm_nic_nic_inbound \{\n(.*?)\n  \}", script, re.DOTALL)
    assert body is not None
    chain = [line.strip() for line in body.group(1).splitlines()]
    verdicts = [(line.split("comment")[1].strip(), line.split("counter")[1].split()[0]) for line in chain]
    assert verdicts[:2] == [('"securityRules/block-8080 p150 Deny"', "drop"), ('"securityRules/SSH p300 Allow"', "return")]
    assert "th dport { 8080 }" in chain[0]


def _chain(script: str, name: str) -> list[str]:
    body = re.search(rf"chain {name} \{{\n(.*?)\n  \}}", script, re.DOTALL)
    assert body is not None, f"no chain {name}"
    return [line.strip() for line in body.group(1).splitlines()]


def test_fabric_evaluates_a_subnet_nsg_before_the_nic_nsg_inbound(arm: tuple[ArmServer, Target]) -> None:
    """Case u's subnet NSG, created and associated by its recipe step: inbound, the subnet's rules come first."""
    server, target = arm
    nsg = CreateNetworkSecurityGroup(
        azure="create_network_security_group",
        name="ghost-demo-subnet-nsg",
        rules=[
            SecurityRuleSpec(
                name="block-pgsql",
                priority=200,
                access="Deny",
                source_address_prefix="10.0.1.0/24",
                destination_port_range="5432",
            )
        ],
    )
    recipe = Recipe(setup=[nsg], teardown=[DeleteNetworkSecurityGroup(azure="delete_network_security_group", name=nsg.name)])
    with applied(target, recipe, "u-order"):
        script = compile_fabric(server.state)
        assert _chain(script, "to_tf_dest_vm_nic")[:2] == [
            "jump nsg_tf_dest_vm_nic_subnet_inbound",
            "jump nsg_tf_dest_vm_nic_nic_inbound",
        ]
        assert _chain(script, "from_tf_dest_vm_nic")[-2:] == [
            "jump nsg_tf_dest_vm_nic_nic_outbound",
            "jump nsg_tf_dest_vm_nic_subnet_outbound",
        ]
        first = _chain(script, "nsg_tf_dest_vm_nic_subnet_inbound")[0]
        assert (
            "th dport { 5432 }" in first
            and "ip saddr 10.0.1.0/24" in first
            and first.endswith('"securityRules/block-pgsql p200 Deny"')
        )
    assert "subnet_inbound" not in compile_fabric(server.state)


def test_fabric_cuts_internet_egress_whose_route_is_not_the_internet(arm: tuple[ArmServer, Target]) -> None:
    """Case t's default route to an absent appliance drops traffic to the lab's Internet host, not VNet traffic."""
    server, target = arm
    assert not any(INTERNET_PREFIX in line for line in _chain(compile_fabric(server.state), "from_tf_source_vm_nic"))
    table = CreateRouteTable(
        azure="create_route_table",
        name="ghost-demo-t-rt",
        routes=[
            RouteSpec(
                name="all-egress-to-nva",
                address_prefix="0.0.0.0/0",
                next_hop_type="VirtualAppliance",
                next_hop_ip_address="10.0.1.253",
            )
        ],
    )
    recipe = Recipe(setup=[table], teardown=[DeleteRouteTable(azure="delete_route_table", name=table.name)])
    with applied(target, recipe, "t-route"):
        chain = _chain(compile_fabric(server.state), "from_tf_source_vm_nic")
        assert f'ip daddr {INTERNET_PREFIX} counter drop comment "route 0.0.0.0/0 -> VirtualAppliance"' in chain
        assert not any("10.0.1.5" in line and "drop" in line for line in chain)
    assert not any(INTERNET_PREFIX in line for line in _chain(compile_fabric(server.state), "from_tf_source_vm_nic"))


def test_a_storage_firewall_lets_in_only_a_subnet_with_its_endpoint(arm: tuple[ArmServer, Target]) -> None:
    """Case f's storage account through azure-mgmt-storage: with default Deny and a virtual network rule for the
    subnet, the blob endpoint is reachable exactly while the subnet has its Microsoft.Storage service endpoint."""
    server, target = arm
    blob = STORAGE_ACCOUNTS["nwlogs080613"]

    def blocked() -> bool:
        return any(blob in line and "drop" in line for line in _chain(compile_fabric(server.state), "from_tf_source_vm_nic"))

    firewall = SetStorageFirewall(azure="set_storage_firewall", account="nwlogs080613", default_action="Deny", allow_subnet=True)
    recipe = Recipe(
        setup=[firewall, SetServiceEndpoints(azure="set_service_endpoints", remove=["Microsoft.Storage"])],
        teardown=[
            RestoreServiceEndpoints(azure="restore_service_endpoints"),
            RestoreStorageFirewall(azure="restore_storage_firewall", account="nwlogs080613"),
        ],
    )
    assert not blocked()
    with applied(target, recipe, "f-storage"):
        with storage_client(target) as client:
            rules = client.storage_accounts.get_properties(RG, "nwlogs080613").network_rule_set
        assert rules is not None and (rules.default_action, rules.bypass) == ("Deny", "AzureServices")
        assert [r.virtual_network_resource_id for r in rules.virtual_network_rules or []] == [
            f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{RG}/providers/Microsoft.Network/virtualNetworks/forensics-vnet/subnets/default"
        ]
        assert blocked()
        endpoint_back = Recipe(
            setup=[SetServiceEndpoints(azure="set_service_endpoints", add=["Microsoft.Storage"])],
            teardown=[RestoreServiceEndpoints(azure="restore_service_endpoints")],
        )
        with applied(target, endpoint_back, "f-fixed"):
            assert not blocked()
        assert blocked()
    with storage_client(target) as client:
        assert client.storage_accounts.get_properties(RG, "nwlogs080613").network_rule_set.default_action == "Allow"  # type: ignore[union-attr]
    assert not blocked()
