"""What the emulator answers beyond Microsoft.Network, so the real `az` CLI works against the lab as against Azure.

- Sign-in: the OpenID configuration and token endpoint of a tenant (`az login --service-principal` through MSAL),
  the subscription and tenant lists `az login` reads afterwards.
- Microsoft.Compute virtual machines, derived from the NICs that name them (`az vm show`, `az vm list`,
  `az vm nic list`), and `runCommand` (`az vm run-command invoke`): the script runs inside the VM's sandbox.
- Resource-provider metadata (`az resource show` resolves an api-version from it) and the resource group's
  generic resource list (`az resource list`).
- A Network Watcher for the lab's region with `ipFlowVerify` (`az network watcher test-ip-flow`), decided by the
  NIC's effective security rules, as Azure decides it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from ghost_eval.connect.effective import port_in_ranges
from ghost_eval.lab.arm.state import ArmError, ArmState, Json

__all__ = [
    "NETWORK_WATCHER",
    "NETWORK_WATCHER_RG",
    "RunInVm",
    "SignIn",
    "cloud_metadata",
    "ip_flow_verify",
    "list_vms",
    "openid_configuration",
    "provider",
    "render_vm",
    "resource_list",
    "run_command_output",
    "subscription",
    "token_reply",
    "watcher",
]

RunInVm = Callable[[str, str], tuple[int, str, str]]
"""(VM name, shell script) → (exit status, stdout, stderr), run inside that VM."""

NETWORK_WATCHER_RG = "NetworkWatcherRG"
"""Azure creates each region's Network Watcher in this resource group, not in the VMs' own."""
NETWORK_WATCHER = "NetworkWatcher_{location}"
_API_VERSIONS = ["2024-07-01", "2024-05-01", "2023-09-01"]
_RUN_COMMAND_OUTPUT_LIMIT = 4096
"""Azure keeps the last 4,096 bytes of a run-command's stdout and of its stderr."""


class SignIn:
    """The lab's one tenant and service principal; the token it issues is the emulator's bearer token."""

    def __init__(self, tenant_id: str, client_id: str, client_secret: str, token: str) -> None:
        self.tenant_id = tenant_id
        self.client_id = client_id
        self.client_secret = client_secret
        self.token = token


def openid_configuration(base: str, tenant: str, sign_in: SignIn) -> Json:
    if tenant.lower() not in (sign_in.tenant_id, "organizations", "common"):
        raise ArmError(400, "invalid_tenant", f"AADSTS90002: Tenant '{tenant}' not found.")
    root = f"{base}/{sign_in.tenant_id}"
    return {
        "issuer": f"{root}/v2.0",
        "authorization_endpoint": f"{root}/oauth2/v2.0/authorize",
        "token_endpoint": f"{root}/oauth2/v2.0/token",
        "device_authorization_endpoint": f"{root}/oauth2/v2.0/devicecode",
        "tenant_region_scope": "NA",
    }


def token_reply(tenant: str, form: dict[str, list[str]], sign_in: SignIn) -> tuple[int, Json]:
    """AAD's answer to a client-credentials grant: the token, or AAD's error body (OAuth 2 shape, not ARM's)."""

    def value(name: str) -> str:
        return (form.get(name) or [""])[0]

    if tenant.lower() != sign_in.tenant_id:
        return 400, {"error": "invalid_request", "error_description": f"AADSTS90002: Tenant '{tenant}' not found."}
    if value("grant_type") != "client_credentials":
        return 400, {
            "error": "unsupported_grant_type",
            "error_description": "AADSTS70003: The lab's tenant signs in service principals only.",
        }
    if value("client_id") != sign_in.client_id:
        return 400, {
            "error": "unauthorized_client",
            "error_description": f"AADSTS700016: Application with identifier '{value('client_id')}' was not found.",
        }
    if value("client_secret") != sign_in.client_secret:
        return 401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."}
    return 200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": sign_in.token}


def cloud_metadata(base: str, sign_in: SignIn) -> Json:
    """What ARM's `/metadata/endpoints` says of a cloud: its sign-in authority and audience are the emulator's own."""
    return {
        "name": "GhostEvalLab",
        "resourceManager": f"{base}/",
        "authentication": {"loginEndpoint": base, "audiences": [f"{base}/"], "tenant": sign_in.tenant_id,
                           "identityProvider": "AAD"},
        "suffixes": {"storage": "core.windows.net", "keyVaultDns": "vault.azure.net"},
    }  # fmt: skip


def subscription(state: ArmState, tenant_id: str) -> Json:
    return {
        "id": f"/subscriptions/{state.subscription_id}",
        "subscriptionId": state.subscription_id,
        "tenantId": tenant_id,
        "displayName": "ghost-eval lab",
        "state": "Enabled",
        "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01", "quotaId": "PayAsYouGo_2014-09-01"},
        "authorizationSource": "RoleBased",
    }


def _vm_nics(state: ArmState) -> dict[str, list[Json]]:
    """VM name (lower case) → the NICs attached to it; a VM exists in the lab when a NIC names it."""
    out: dict[str, list[Json]] = {}
    for nic in state.list_resources("networkInterfaces"):
        vm_id = (nic["properties"].get("virtualMachine") or {}).get("id")
        if vm_id:
            out.setdefault(vm_id.rsplit("/", 1)[-1].lower(), []).append(nic)
    return out


def _vm_id(state: ArmState, name: str) -> str:
    return f"{state.rg_id}/providers/Microsoft.Compute/virtualMachines/{name}"


def render_vm(state: ArmState, name: str) -> Json:
    nics = _vm_nics(state).get(name.lower())
    if not nics:
        raise ArmError(
            404,
            "ResourceNotFound",
            f"The Resource 'Microsoft.Compute/virtualMachines/{name}' under resource group "
            f"'{state.resource_group}' was not found.",
        )
    vm_name = nics[0]["properties"]["virtualMachine"]["id"].rsplit("/", 1)[-1]
    return {
        "id": _vm_id(state, vm_name),
        "name": vm_name,
        "type": "Microsoft.Compute/virtualMachines",
        "location": state.location,
        "properties": {
            "vmId": nics[0]["properties"]["resourceGuid"],
            "hardwareProfile": {"vmSize": "Standard_B2s"},
            "storageProfile": {"osDisk": {"osType": "Linux", "name": f"{vm_name}_OsDisk", "createOption": "FromImage"}},
            "osProfile": {"computerName": vm_name, "adminUsername": "azureuser", "linuxConfiguration": {}},
            "networkProfile": {
                "networkInterfaces": [{"id": n["id"], "properties": {"primary": i == 0}} for i, n in enumerate(nics)]
            },
            "provisioningState": "Succeeded",
        },
    }


def list_vms(state: ArmState) -> list[Json]:
    return [render_vm(state, name) for name in _vm_nics(state)]


def run_command_output(exit_status: int, stdout: str, stderr: str) -> Json:
    """A RunShellScript result as Azure's Linux agent reports it: one status whose message carries both streams."""
    out, err = stdout[-_RUN_COMMAND_OUTPUT_LIMIT:], stderr[-_RUN_COMMAND_OUTPUT_LIMIT:]
    head = (
        "Enable succeeded: "
        if exit_status == 0
        else f"Enable failed: failed to execute command: command terminated with exit status={exit_status}"
    )
    return {
        "value": [
            {
                "code": "ProvisioningState/succeeded" if exit_status == 0 else "ProvisioningState/failed",
                "displayStatus": "Provisioning succeeded" if exit_status == 0 else "Provisioning failed",
                "level": "Info" if exit_status == 0 else "Error",
                "message": f"{head}\n[stdout]\n{out}\n[stderr]\n{err}\n",
            }
        ]
    }


def provider(namespace: str) -> Json:
    """Resource-provider metadata: the types the lab serves, each with the api-versions `az resource` may pick."""
    types = {
        "microsoft.network": (
            "Microsoft.Network",
            ["virtualNetworks", "virtualNetworks/subnets", "networkSecurityGroups", "networkSecurityGroups/securityRules",
             "routeTables", "routeTables/routes", "networkInterfaces", "networkWatchers"],
        ),
        "microsoft.compute": ("Microsoft.Compute", ["virtualMachines"]),
        "microsoft.storage": ("Microsoft.Storage", ["storageAccounts"]),
    }.get(namespace.lower())  # fmt: skip
    if types is None:
        raise ArmError(404, "InvalidResourceNamespace", f"The resource namespace '{namespace}' is invalid.")
    name, kinds = types
    return {
        "id": f"/providers/{name}",
        "namespace": name,
        "registrationState": "Registered",
        "resourceTypes": [{"resourceType": k, "locations": ["East US"], "apiVersions": _API_VERSIONS} for k in kinds],
    }


def resource_list(state: ArmState, odata_filter: str | None) -> list[Json]:
    """The resource group's resources in the generic shape, filtered by `name eq '…'` / `resourceType eq '…'`."""
    items = [*(r for k in ("virtualNetworks", "networkSecurityGroups", "routeTables", "networkInterfaces")
               for r in state.list_resources(k)), *list_vms(state), *state.list_storage_accounts()]  # fmt: skip
    wanted: dict[str, str] = {}
    for clause in (odata_filter or "").split(" and "):
        field, _, literal = clause.strip().partition(" eq ")
        if literal:
            wanted[field.strip().lower()] = literal.strip().strip("'").lower()
    return [
        {"id": r["id"], "name": r["name"], "type": r["type"], "location": r.get("location", state.location)}
        for r in items
        if wanted.get("name", r["name"].lower()) == r["name"].lower()
        and wanted.get("resourcetype", r["type"].lower()) == r["type"].lower()
        and wanted.get("resourcegroup", state.resource_group.lower()) == state.resource_group.lower()
    ]


def watcher(state: ArmState) -> Json:
    name = NETWORK_WATCHER.format(location=state.location)
    return {
        "id": f"/subscriptions/{state.subscription_id}/resourceGroups/{NETWORK_WATCHER_RG}"
        f"/providers/Microsoft.Network/networkWatchers/{name}",
        "name": name,
        "type": "Microsoft.Network/networkWatchers",
        "location": state.location,
        "properties": {"provisioningState": "Succeeded"},
    }


def _port_in(port: int | None, ranges: list[str]) -> bool:
    return port is None or port_in_ranges(port, ranges)


def _address_in(address: str, shown: list[str], expanded: list[str] | None) -> bool:
    """A rule's prefixes match an address; `Internet` (expanded None) matches what is outside the VNet's prefixes."""
    ip = ipaddress.ip_address(address)
    prefixes = expanded if expanded is not None else shown
    if expanded is None and any(p.lower() == "internet" for p in shown):
        return not ip.is_private
    return any(ip in ipaddress.ip_network(p, strict=False) for p in prefixes if p[:1].isdigit())


def _port(value: Any) -> int | None:
    text = str(value)
    return None if text == "*" else int(text)


def ip_flow_verify(state: ArmState, body: Json) -> Json:
    """`ipFlowVerify`: the first matching rule by priority in each NSG on the path (subnet then NIC inbound, NIC then
    subnet outbound); a Deny in either decides, as Azure evaluates the two gates."""
    vm = render_vm(state, str(body.get("targetResourceId", "")).rsplit("/", 1)[-1])
    nic = vm["properties"]["networkProfile"]["networkInterfaces"][0]["id"].rsplit("/", 1)[-1]
    direction = str(body.get("direction", "")).capitalize()
    protocol = str(body.get("protocol", "")).lower()
    if direction not in ("Inbound", "Outbound") or protocol not in ("tcp", "udp"):
        raise ArmError(400, "InvalidRequestFormat", "direction must be Inbound or Outbound and protocol TCP or UDP.")
    local, remote = str(body["localIPAddress"]), str(body["remoteIPAddress"])
    local_port, remote_port = _port(body.get("localPort", "*")), _port(body.get("remotePort", "*"))
    src, dst = (remote, local) if direction == "Inbound" else (local, remote)
    sport, dport = (remote_port, local_port) if direction == "Inbound" else (local_port, remote_port)
    groups = state.effective_security_groups(nic)["value"]
    if direction == "Outbound":
        groups = list(reversed(groups))
    verdict: Json = {"access": "Allow", "ruleName": ""}
    for group in groups:
        for rule in group["effectiveSecurityRules"]:
            if rule["direction"] != direction or rule["protocol"] not in ("All", protocol.capitalize()):
                continue
            if not (
                _address_in(src, rule["sourceAddressPrefixes"], rule["expandedSourceAddressPrefix"])
                and _address_in(dst, rule["destinationAddressPrefixes"], rule["expandedDestinationAddressPrefix"])
                and _port_in(sport, rule["sourcePortRanges"])
                and _port_in(dport, rule["destinationPortRanges"])
            ):
                continue
            verdict = {"access": rule["access"], "ruleName": rule["name"]}
            break
        if verdict["access"] == "Deny":
            return verdict
    return verdict
