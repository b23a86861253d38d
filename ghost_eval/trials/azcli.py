"""The Azure CLI commands recommendations use, carried out as azure-mgmt-network calls against the target.

There is no `az` in the lab: each supported subcommand becomes the ARM calls the CLI itself would make (a list
argument replaces the whole list, as the CLI does), and reads print the CLI's JSON (properties flattened),
with `--query` applied (JMESPath, as the CLI does) and `-o tsv|json` honoured. Anything else is reported as not
executable, with why: the trial never guesses what an unknown command would have done.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jmespath
from azure.core.exceptions import HttpResponseError

from ghost_eval.live.recipes import RecipeRun
from ghost_eval.scoring.commands import AzCall, az_call

__all__ = ["AzOutcome", "run_az"]


@dataclass(frozen=True)
class AzOutcome:
    """What an az command did: its exit status and output, or why it cannot be carried out in the lab."""

    executable: bool
    exit_status: int | None = None
    output: str = ""
    why: str = ""


def _flat(model: Any) -> dict[str, Any]:
    """The CLI's JSON for a resource: REST JSON with `properties` lifted to the top."""
    data = dict(model.as_dict())
    return {**data, **dict(data.pop("properties", None) or {})}


def _render(call: AzCall, data: Any) -> str:
    query = call.value("--query")
    if query:
        data = jmespath.search(query, data)
    if call.value("--output") == "tsv":
        rows = data if isinstance(data, list) else [data]
        lines = []
        for row in rows:
            if isinstance(row, dict):
                lines.append("\t".join("" if v is None else str(v) for v in row.values() if not isinstance(v, (dict, list))))
            elif row is not None:
                lines.append(str(row))
        return "\n".join(lines)
    return json.dumps(data, indent=2, sort_keys=True)


def _arg(call: AzCall, option: str) -> str:
    value = call.value(option)
    if not value:
        raise ValueError(f"{option} is required")
    return value


def _values(call: AzCall, *names: str) -> list[str] | None:
    """A list argument's values, None when absent; `""` or `[]` alone means an empty list, as in the CLI."""
    for name in names:
        if name in call.options:
            values = [v for v in call.options[name] if v not in ("", "[]", '""', "''")]
            return values
    return None


def _rule_fields(call: AzCall) -> dict[str, Any]:
    """The rule properties an `nsg rule create|update` sets, by REST name (plural options set the list fields)."""
    fields: dict[str, Any] = {}
    for option, name in (
        ("--priority", "priority"),
        ("--direction", "direction"),
        ("--access", "access"),
        ("--protocol", "protocol"),
        ("--description", "description"),
    ):
        value = call.value(option)
        if value is not None:
            fields[name] = int(value) if name == "priority" else value
    for option, single, plural in (
        ("--source-address-prefixes", "sourceAddressPrefix", "sourceAddressPrefixes"),
        ("--destination-address-prefixes", "destinationAddressPrefix", "destinationAddressPrefixes"),
        ("--source-port-ranges", "sourcePortRange", "sourcePortRanges"),
        ("--destination-port-ranges", "destinationPortRange", "destinationPortRanges"),
    ):
        values = _values(call, option, option.removesuffix("es").removesuffix("s"))
        if values is None:
            continue
        if len(values) == 1:
            fields[single], fields[plural] = values[0], []
        else:
            fields[single], fields[plural] = None, values
    return fields


class _Az:
    def __init__(self, run: RecipeRun) -> None:
        self.run = run
        self.net = run.net
        self.rg = run.target.resource_group

    def nsg_rule(self, call: AzCall) -> str:
        nsg, rules = _arg(call, "--nsg-name"), self.net.security_rules
        if call.verb == "list":
            return _render(call, [_flat(r) for r in rules.list(self.rg, nsg)])
        name = _arg(call, "--name")
        if call.verb == "delete":
            rules.begin_delete(self.rg, nsg, name).result()
            return ""
        if call.verb == "show":
            return _render(call, _flat(rules.get(self.rg, nsg, name)))
        from azure.mgmt.network.models import SecurityRule

        body: dict[str, Any] = {"sourcePortRange": "*", "sourceAddressPrefix": "*", "destinationAddressPrefix": "*"}
        if call.verb == "update":
            body = dict(rules.get(self.rg, nsg, name).as_dict().get("properties") or {})
        body.update(_rule_fields(call))
        body.pop("provisioningState", None)
        done = rules.begin_create_or_update(self.rg, nsg, name, SecurityRule({"properties": body})).result()
        return _render(call, _flat(done))

    def nsg(self, call: AzCall) -> str:
        return _render(call, _flat(self.net.network_security_groups.get(self.rg, _arg(call, "--name"))))

    def route(self, call: AzCall) -> str:
        table = _arg(call, "--route-table-name")
        if call.verb == "list":
            return _render(call, [_flat(r) for r in self.net.routes.list(self.rg, table)])
        name = _arg(call, "--name")
        if call.verb == "delete":
            self.net.routes.begin_delete(self.rg, table, name).result()
            return ""
        if call.verb == "show":
            return _render(call, _flat(self.net.routes.get(self.rg, table, name)))
        from azure.mgmt.network.models import Route

        body: dict[str, Any] = {}
        if call.verb == "update":
            body = dict(self.net.routes.get(self.rg, table, name).as_dict().get("properties") or {})
        for option, field in (
            ("--address-prefix", "addressPrefix"),
            ("--next-hop-type", "nextHopType"),
            ("--next-hop-ip-address", "nextHopIpAddress"),
        ):
            if call.value(option) is not None:
                body[field] = call.value(option)
        body.pop("provisioningState", None)
        return _render(
            call, _flat(self.net.routes.begin_create_or_update(self.rg, table, name, Route({"properties": body})).result())
        )

    def route_table(self, call: AzCall) -> str:
        name = _arg(call, "--name")
        if call.verb == "delete":
            self.net.route_tables.begin_delete(self.rg, name).result()
            return ""
        return _render(call, _flat(self.net.route_tables.get(self.rg, name)))

    def subnet(self, call: AzCall) -> str:
        vnet, name = _arg(call, "--vnet-name"), _arg(call, "--name")
        subnet = self.net.subnets.get(self.rg, vnet, name)
        if call.verb == "show":
            return _render(call, _flat(subnet))
        from azure.mgmt.network.models import ServiceEndpointPropertiesFormat, SubResource

        endpoints = _values(call, "--service-endpoints")
        if endpoints is not None:
            subnet.service_endpoints = [ServiceEndpointPropertiesFormat(service=s) for s in endpoints]
        base = f"/subscriptions/{self.run.target.subscription_id}/resourceGroups/{self.rg}/providers/Microsoft.Network"
        for option, attr, kind in (
            ("--route-table", "route_table", "routeTables"),
            ("--network-security-group", "network_security_group", "networkSecurityGroups"),
            ("--nsg", "network_security_group", "networkSecurityGroups"),
        ):
            if option in call.options:
                value = call.value(option) or ""
                ref = None if value in ("", '""', "null") else SubResource(id=value if "/" in value else f"{base}/{kind}/{value}")
                setattr(subnet, attr, ref)
        return _render(call, _flat(self.net.subnets.begin_create_or_update(self.rg, vnet, name, subnet).result()))

    def nic(self, call: AzCall) -> str:
        name = _arg(call, "--name")
        nics = self.net.network_interfaces
        if call.verb == "show-effective-route-table":
            return _render(
                call, {"value": [r.as_dict() for r in nics.begin_get_effective_route_table(self.rg, name).result().value or []]}
            )
        if call.verb == "list-effective-nsg":
            groups = nics.begin_list_effective_network_security_groups(self.rg, name).result().value or []
            return _render(call, {"value": [g.as_dict() for g in groups]})
        return _render(call, _flat(nics.get(self.rg, name)))


_HANDLERS: dict[tuple[tuple[str, ...], frozenset[str]], Callable[[_Az, AzCall], str]] = {
    (("network", "nsg", "rule"), frozenset({"create", "update", "delete", "show", "list"})): _Az.nsg_rule,
    (("network", "nsg"), frozenset({"show"})): _Az.nsg,
    (("network", "route-table", "route"), frozenset({"create", "update", "delete", "show", "list"})): _Az.route,
    (("network", "route-table"), frozenset({"delete", "show"})): _Az.route_table,
    (("network", "vnet", "subnet"), frozenset({"update", "show"})): _Az.subnet,
    (("network", "nic"), frozenset({"show", "show-effective-route-table", "list-effective-nsg"})): _Az.nic,
}


def run_az(run: RecipeRun, argv: list[str]) -> AzOutcome:
    """Carry out one `az` command against the target's ARM endpoint; unknown subcommands are not executable."""
    call = az_call(tuple(argv))
    if call is None:
        return AzOutcome(False, why="not an az command")
    handler = next((h for (groups, verbs), h in _HANDLERS.items() if call.groups == groups and call.verb in verbs), None)
    if handler is None:
        what = " ".join((*call.groups, call.verb))
        return AzOutcome(False, why=f"`az {what}` has no counterpart in the lab's ARM emulator")
    group = call.value("--resource-group")
    if group is not None and group.lower() != run.target.resource_group.lower():
        return AzOutcome(True, 3, why=f"resource group {group!r} is not the lab's ({run.target.resource_group})")
    try:
        return AzOutcome(True, 0, handler(_Az(run), call))
    except HttpResponseError as exc:
        return AzOutcome(True, 3, why=str(exc.message or exc).splitlines()[0])
    except (ValueError, TypeError, jmespath.exceptions.JMESPathError) as exc:
        return AzOutcome(True, 2, why=f"bad arguments: {exc}")
