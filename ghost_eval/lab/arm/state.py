# Over 600 lines: validation and computed views read one emulated state; next seam: the effective routes and rules.
"""The emulated subscription: VNets and subnets, NSGs and rules, route tables and routes, NICs — as ARM JSON.

Resources are kept in the REST shape Azure returns (what `model.as_dict()` gives back in the SDK), validated
the way ARM validates them (priorities, prefixes, next hops, references, resources in use), and the read-only
views Azure computes — effective routes and effective security rules of a NIC — are computed from the same
state, so what the agent reads is what the lab's fabric enforces.
"""

from __future__ import annotations

import copy
import ipaddress
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_SECURITY_RULES", "ArmError", "ArmState", "Json", "expand_prefix"]

Json = dict[str, Any]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
_TAGS = {
    "virtualnetwork": "VirtualNetwork",
    "internet": "Internet",
    "azureloadbalancer": "AzureLoadBalancer",
}
_AZURE_LB = "168.63.129.16/32"
_PROTOCOLS = {"tcp": "Tcp", "udp": "Udp", "icmp": "Icmp", "esp": "Esp", "ah": "Ah", "*": "*"}
_NEXT_HOPS = {h.lower(): h for h in ("VirtualNetworkGateway", "VnetLocal", "Internet", "VirtualAppliance", "None")}
_SYSTEM_NONE_PREFIXES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
"""Private ranges Azure drops (next hop None) unless the VNet's own address space covers them."""


def _default_rule(name: str, priority: int, direction: str, access: str, source: str, destination: str) -> Json:
    return {
        "name": name,
        "properties": {
            "description": f"Default {direction.lower()} rule",
            "protocol": "*",
            "sourcePortRange": "*",
            "destinationPortRange": "*",
            "sourceAddressPrefix": source,
            "destinationAddressPrefix": destination,
            "access": access,
            "priority": priority,
            "direction": direction,
        },
    }


DEFAULT_SECURITY_RULES: tuple[Json, ...] = (
    _default_rule("AllowVnetInBound", 65000, "Inbound", "Allow", "VirtualNetwork", "VirtualNetwork"),
    _default_rule("AllowAzureLoadBalancerInBound", 65001, "Inbound", "Allow", "AzureLoadBalancer", "*"),
    _default_rule("DenyAllInBound", 65500, "Inbound", "Deny", "*", "*"),
    _default_rule("AllowVnetOutBound", 65000, "Outbound", "Allow", "VirtualNetwork", "VirtualNetwork"),
    _default_rule("AllowInternetOutBound", 65001, "Outbound", "Allow", "*", "Internet"),
    _default_rule("DenyAllOutBound", 65500, "Outbound", "Deny", "*", "*"),
)


class ArmError(Exception):
    """An ARM error response: HTTP status plus the `{"error": {"code", "message"}}` body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> Json:
        return {"error": {"code": self.code, "message": self.message}}


def _bad(code: str, message: str) -> ArmError:
    return ArmError(400, code, message)


@dataclass(frozen=True)
class _Kind:
    segment: str
    child: str | None
    """Collection segment of the child resources, which ARM also lists under `properties.<child>`."""

    @property
    def type(self) -> str:
        return f"Microsoft.Network/{self.segment}"


_KINDS = {
    k.segment.lower(): k
    for k in (
        _Kind("virtualNetworks", "subnets"),
        _Kind("networkSecurityGroups", "securityRules"),
        _Kind("routeTables", "routes"),
        _Kind("networkInterfaces", None),
    )
}


def _kind(segment: str) -> _Kind:
    try:
        return _KINDS[segment.lower()]
    except KeyError:
        raise ArmError(400, "InvalidResourceType", f"The resource type '{segment}' is not supported here.") from None


def expand_prefix(prefix: str, vnet_prefixes: list[str]) -> list[str] | None:
    """What a rule's address prefix covers: CIDRs for tags; None for Internet (everything outside the VNet)."""
    key = prefix.lower()
    if key == "virtualnetwork":
        return list(vnet_prefixes)
    if key == "azureloadbalancer":
        return [_AZURE_LB]
    if key == "internet":
        return None
    if prefix == "*":
        return ["0.0.0.0/0"]
    if "/" in prefix or prefix[:1].isdigit():
        return [str(ipaddress.ip_network(prefix, strict=False))]
    return []


def _check_prefix(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _bad("SecurityRuleInvalidAddressPrefix", f"{what} must be a non-empty string, got {value!r}.")
    if value == "*" or value.lower() in _TAGS:
        return _TAGS.get(value.lower(), value)
    if value[:1].isdigit():
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise _bad("SecurityRuleInvalidAddressPrefix", f"{what} '{value}' is not a valid IP prefix.") from None
        return value
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9.]*", value):
        return value  # another service tag (Storage, Sql, AzureCloud.EastUS, …)
    raise _bad("SecurityRuleInvalidAddressPrefix", f"{what} '{value}' is neither a prefix nor a service tag.")


def _check_port(value: Any, what: str) -> str:
    text = str(value)
    if text == "*":
        return text
    m = re.fullmatch(r"(\d{1,5})(?:-(\d{1,5}))?", text)
    if not m or int(m.group(1)) > 65535 or (m.group(2) and not int(m.group(1)) <= int(m.group(2)) <= 65535):
        raise _bad("SecurityRuleInvalidPortRange", f"{what} '{text}' is not a port or a port range (0-65535).")
    return text


def _single_or_list(props: Json, single: str, plural: str, check: Callable[[Any, str], str]) -> None:
    one, many = props.get(single), props.get(plural) or []
    if one not in (None, "") and many:
        raise _bad("SecurityRuleParameterContainsUnsupportedValue", f"Specify either {single} or {plural}, not both.")
    if many:
        props[plural] = [check(v, plural) for v in many]
        props.pop(single, None)
    elif one in (None, ""):
        raise _bad("SecurityRuleParameterMissing", f"Security rule parameter {single} is required.")
    else:
        props[single] = check(one, single)
        props[plural] = []


def _normalize_rule(name: str, props: Json) -> Json:
    props = {k: v for k, v in props.items() if k != "provisioningState"}
    priority = props.get("priority")
    if not isinstance(priority, int) or not 100 <= priority <= 4096:
        raise _bad(
            "SecurityRuleInvalidPriority",
            f"Security rule {name} has invalid priority {priority!r}; the value must be between 100 and 4096.",
        )
    for field, allowed in (("direction", ("Inbound", "Outbound")), ("access", ("Allow", "Deny"))):
        value = str(props.get(field) or "")
        match = [a for a in allowed if a.lower() == value.lower()]
        if not match:
            raise _bad("SecurityRuleInvalidParameter", f"Security rule {name}: {field} must be one of {allowed}.")
        props[field] = match[0]
    protocol = str(props.get("protocol") or "").lower()
    if protocol not in _PROTOCOLS:
        raise _bad(
            "SecurityRuleInvalidProtocol",
            f"Security rule {name}: protocol {props.get('protocol')!r} is not one of Tcp, Udp, Icmp, Esp, Ah, *.",
        )
    props["protocol"] = _PROTOCOLS[protocol]
    _single_or_list(props, "sourcePortRange", "sourcePortRanges", _check_port)
    _single_or_list(props, "destinationPortRange", "destinationPortRanges", _check_port)
    _single_or_list(props, "sourceAddressPrefix", "sourceAddressPrefixes", _check_prefix)
    _single_or_list(props, "destinationAddressPrefix", "destinationAddressPrefixes", _check_prefix)
    return props


def _normalize_route(name: str, props: Json) -> Json:
    props = {k: v for k, v in props.items() if k != "provisioningState"}
    try:
        props["addressPrefix"] = str(ipaddress.ip_network(str(props.get("addressPrefix")), strict=True))
    except ValueError:
        raise _bad(
            "InvalidRouteAddressPrefix", f"Route {name} has an invalid addressPrefix {props.get('addressPrefix')!r}."
        ) from None
    hop = _NEXT_HOPS.get(str(props.get("nextHopType") or "").lower())
    if hop is None:
        raise _bad(
            "InvalidNextHopType",
            f"Route {name}: nextHopType {props.get('nextHopType')!r} is not one of {', '.join(_NEXT_HOPS.values())}.",
        )
    props["nextHopType"] = hop
    ip = props.get("nextHopIpAddress")
    if hop == "VirtualAppliance":
        try:
            ipaddress.ip_address(str(ip))
        except ValueError:
            raise _bad(
                "InvalidNextHopIpAddress", f"Route {name}: next hop VirtualAppliance needs a nextHopIpAddress, got {ip!r}."
            ) from None
    elif ip:
        raise _bad(
            "NextHopIpAddressNotAllowed", f"Route {name}: nextHopIpAddress is only allowed with next hop VirtualAppliance."
        )
    return props


def _normalize_network_acls(acls: Json) -> Json:
    """A storage account's `networkAcls` with Azure's defaults, validated."""
    action = acls.get("defaultAction", "Allow")
    if action not in ("Allow", "Deny"):
        raise _bad("InvalidValuesForRequestParameters", f"networkAcls.defaultAction must be Allow or Deny, not {action!r}.")
    rules = acls.get("virtualNetworkRules") or []
    for rule in rules:
        if not isinstance(rule, dict) or not str(rule.get("id", "")).startswith("/subscriptions/"):
            raise _bad("InvalidValuesForRequestParameters", "A virtual network rule needs the subnet's resource id in `id`.")
    return {
        "bypass": acls.get("bypass", "AzureServices"),
        "defaultAction": action,
        "virtualNetworkRules": [{"id": r["id"], "action": r.get("action", "Allow"), "state": "Succeeded"} for r in rules],
        "ipRules": list(acls.get("ipRules") or []),
    }


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise _bad("InvalidResourceName", f"Resource name {name} is invalid: 1-80 letters, digits, '_', '.', '-'.")


def _within(net: ipaddress.IPv4Network | ipaddress.IPv6Network, space: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    return (
        net.version == space.version
        and int(net.network_address) >= int(space.network_address)
        and int(net.broadcast_address) <= int(space.broadcast_address)
    )


def _ref(obj: Any) -> str | None:
    return obj.get("id") if isinstance(obj, dict) and obj.get("id") else None


class ArmState:
    """One subscription with one resource group; every read renders ARM JSON, every write is validated."""

    def __init__(
        self, subscription_id: str, resource_group: str, location: str, on_change: Callable[[ArmState], None] | None = None
    ) -> None:
        self.subscription_id = subscription_id
        self.resource_group = resource_group
        self.location = location
        self.on_change = on_change
        self._res: dict[str, dict[str, Json]] = {k: {} for k in _KINDS}
        self._storage: dict[str, Json] = {}
        """Storage accounts (Microsoft.Storage) by lower-case name: only their firewall (`networkAcls`) is modelled."""
        self._version = 0
        self.lock = threading.RLock()

    # -- identity ----------------------------------------------------------------------------------

    @property
    def rg_id(self) -> str:
        return f"/subscriptions/{self.subscription_id}/resourceGroups/{self.resource_group}"

    def resource_id(self, segment: str, name: str, child_segment: str | None = None, child: str | None = None) -> str:
        rid = f"{self.rg_id}/providers/Microsoft.Network/{_kind(segment).segment}/{name}"
        return f"{rid}/{child_segment}/{child}" if child_segment and child else rid

    def parse_id(self, rid: str) -> tuple[str, str, str | None, str | None]:
        """(segment, name, child segment, child name) of a resource id in this resource group."""
        prefix = f"{self.rg_id}/providers/Microsoft.Network/".lower()
        if not rid.lower().startswith(prefix):
            raise _bad("InvalidResourceReference", f"Resource {rid} is not in resource group {self.resource_group}.")
        parts = rid[len(prefix) :].split("/")
        if len(parts) not in (2, 4):
            raise _bad("LinkedInvalidPropertyId", f"Property id '{rid}' is invalid.")
        kind = _kind(parts[0])
        return kind.segment, parts[1], (parts[2] if len(parts) == 4 else None), (parts[3] if len(parts) == 4 else None)

    def _etag(self) -> str:
        return f'W/"{self._version:08x}-ghost-lab"'

    # -- raw access ----------------------------------------------------------------------------------

    def _top(self, segment: str, name: str) -> Json:
        kind = _kind(segment)
        found = self._res[kind.segment.lower()].get(name.lower())
        if found is None:
            raise ArmError(
                404,
                "ResourceNotFound",
                f"The Resource '{kind.type}/{name}' under resource group '{self.resource_group}' was not found.",
            )
        return found

    def _children(self, parent: Json, kind: _Kind) -> list[Json]:
        assert kind.child is not None
        children: list[Json] = parent["properties"].setdefault(kind.child, [])
        return children

    def _child(self, segment: str, name: str, child: str) -> Json:
        kind = _kind(segment)
        parent = self._top(segment, name)
        for c in self._children(parent, kind):
            if c["name"].lower() == child.lower():
                return c
        raise ArmError(404, "NotFound", f"Resource {self.resource_id(segment, name, kind.child, child)} not found.")

    def _exists(self, rid: str) -> bool:
        try:
            segment, name, _child_seg, child = self.parse_id(rid)
            if child:
                self._child(segment, name, child)
            else:
                self._top(segment, name)
        except ArmError:
            return False
        return True

    def _require_ref(self, obj: Any, owner: str) -> Json | None:
        rid = _ref(obj)
        if rid is None:
            return None
        if not self._exists(rid):
            raise _bad(
                "InvalidResourceReference",
                f"Resource {rid} referenced by resource {owner} was not found. "
                "Please make sure that the referenced resource exists.",
            )
        return {"id": self.resource_id(*self.parse_id(rid))}

    # -- back references -----------------------------------------------------------------------------

    def _subnets(self) -> list[tuple[Json, Json]]:
        return [(vnet, s) for vnet in self._res["virtualnetworks"].values() for s in vnet["properties"].get("subnets", [])]

    def _subnet_id(self, vnet: Json, subnet: Json) -> str:
        return self.resource_id("virtualNetworks", vnet["name"], "subnets", subnet["name"])

    def _nic_subnet_ids(self, nic: Json) -> list[str]:
        return [
            c["properties"]["subnet"]["id"]
            for c in nic["properties"].get("ipConfigurations", [])
            if _ref(c.get("properties", {}).get("subnet"))
        ]

    def _users(self, rid: str) -> list[str]:
        """Ids of the subnets and NICs that reference `rid` (an NSG or a route table)."""
        users = []
        for vnet, s in self._subnets():
            props = s["properties"]
            if any((_ref(props.get(k)) or "").lower() == rid.lower() for k in ("networkSecurityGroup", "routeTable")):
                users.append(self._subnet_id(vnet, s))
        for nic in self._res["networkinterfaces"].values():
            if (_ref(nic["properties"].get("networkSecurityGroup")) or "").lower() == rid.lower():
                users.append(self.resource_id("networkInterfaces", nic["name"]))
        return users

    # -- rendering -----------------------------------------------------------------------------------

    def _render_child(self, parent_kind: _Kind, parent: Json, child: Json) -> Json:
        assert parent_kind.child is not None
        out = copy.deepcopy(child)
        out["id"] = self.resource_id(parent_kind.segment, parent["name"], parent_kind.child, child["name"])
        out["type"] = f"{parent_kind.type}/{parent_kind.child}"
        out["etag"] = self._etag()
        props = out.setdefault("properties", {})
        props["provisioningState"] = "Succeeded"
        if parent_kind.segment == "virtualNetworks":
            props["serviceEndpoints"] = [dict(e, provisioningState="Succeeded") for e in props.get("serviceEndpoints", [])]
            nic_configs = [
                {"id": f"{self.resource_id('networkInterfaces', nic['name'])}/ipConfigurations/{c['name']}"}
                for nic in self._res["networkinterfaces"].values()
                for c in nic["properties"].get("ipConfigurations", [])
                if (_ref(c["properties"].get("subnet")) or "").lower() == out["id"].lower()
            ]
            if nic_configs:
                props["ipConfigurations"] = nic_configs
        return out

    def render(self, segment: str, name: str) -> Json:
        kind = _kind(segment)
        res = self._top(segment, name)
        out = copy.deepcopy(res)
        rid = self.resource_id(segment, res["name"])
        out.update(id=rid, type=kind.type, etag=self._etag(), location=res.get("location", self.location))
        props = out.setdefault("properties", {})
        props["provisioningState"] = "Succeeded"
        props.setdefault("resourceGuid", str(uuid.uuid5(uuid.NAMESPACE_URL, rid.lower())))
        if kind.child:
            props[kind.child] = [self._render_child(kind, res, c) for c in self._children(res, kind)]
        if kind.segment in ("networkSecurityGroups", "routeTables"):
            users = self._users(rid)
            subnets = [{"id": u} for u in users if "/virtualNetworks/" in u]
            if subnets:
                props["subnets"] = subnets
            if kind.segment == "networkSecurityGroups":
                props["defaultSecurityRules"] = [self.render_default_rule(res["name"], r["name"]) for r in DEFAULT_SECURITY_RULES]
                nics = [{"id": u} for u in users if "/networkInterfaces/" in u]
                if nics:
                    props["networkInterfaces"] = nics
        if kind.segment == "networkInterfaces":
            for c in props.get("ipConfigurations", []):
                c["id"] = f"{rid}/ipConfigurations/{c['name']}"
                c["type"] = "Microsoft.Network/networkInterfaces/ipConfigurations"
                c.setdefault("properties", {})["provisioningState"] = "Succeeded"
        return out

    def render_child(self, segment: str, name: str, child: str) -> Json:
        kind = _kind(segment)
        return self._render_child(kind, self._top(segment, name), self._child(segment, name, child))

    def render_default_rule(self, nsg: str, rule: str) -> Json:
        self._top("networkSecurityGroups", nsg)
        for r in DEFAULT_SECURITY_RULES:
            if r["name"].lower() == rule.lower():
                out = copy.deepcopy(r)
                out["id"] = f"{self.resource_id('networkSecurityGroups', nsg)}/defaultSecurityRules/{r['name']}"
                out["type"] = "Microsoft.Network/networkSecurityGroups/defaultSecurityRules"
                out["properties"]["provisioningState"] = "Succeeded"
                return out
        raise ArmError(404, "NotFound", f"Default security rule {rule} not found.")

    def list_resources(self, segment: str) -> list[Json]:
        kind = _kind(segment)
        return [self.render(kind.segment, r["name"]) for r in self._res[kind.segment.lower()].values()]

    def list_children(self, segment: str, name: str) -> list[Json]:
        kind = _kind(segment)
        parent = self._top(segment, name)
        return [self._render_child(kind, parent, c) for c in self._children(parent, kind)]

    # -- writes --------------------------------------------------------------------------------------

    def _changed(self) -> None:
        self._version += 1
        if self.on_change is not None:
            self.on_change(self)

    def _normalize_child(self, kind: _Kind, parent: Json, name: str, props: Json) -> Json:
        _check_name(name)
        owner = self.resource_id(kind.segment, parent["name"], kind.child, name)
        if kind.segment == "networkSecurityGroups":
            return _normalize_rule(name, props)
        if kind.segment == "routeTables":
            return _normalize_route(name, props)
        props = {k: v for k, v in props.items() if k not in ("provisioningState", "ipConfigurations")}
        space = [ipaddress.ip_network(p) for p in parent["properties"]["addressSpace"]["addressPrefixes"]]
        prefix = props.get("addressPrefix") or (props.get("addressPrefixes") or [None])[0]
        try:
            net = ipaddress.ip_network(str(prefix), strict=True)
        except ValueError:
            raise _bad("InvalidAddressPrefixFormat", f"Subnet {name}: address prefix {prefix!r} is invalid.") from None
        if not any(_within(net, s) for s in space):
            raise _bad(
                "NetcfgSubnetRangeOutsideVnet",
                f"Subnet '{name}' is not valid because its IP address range "
                "is outside the IP address range of virtual network "
                f"'{parent['name']}'.",
            )
        for key in ("networkSecurityGroup", "routeTable"):
            ref = self._require_ref(props.get(key), owner)
            if ref is None:
                props.pop(key, None)
            else:
                props[key] = ref
        endpoints = []
        for e in props.get("serviceEndpoints") or []:
            service = str(e.get("service") or "")
            if not re.fullmatch(r"Microsoft\.[A-Za-z]+(\.[A-Za-z]+)?", service):
                raise _bad(
                    "InvalidServiceNameOnSubnet", f"Subnet {name}: service endpoint {service!r} is not a valid service name."
                )
            endpoints.append({"service": service, "locations": list(e.get("locations") or [self.location])})
        props["serviceEndpoints"] = endpoints
        return props

    def _check_priorities(self, nsg: Json) -> None:
        seen: dict[tuple[str, int], str] = {}
        for r in nsg["properties"].get("securityRules", []):
            key = (r["properties"]["direction"], r["properties"]["priority"])
            if key in seen:
                raise _bad(
                    "SecurityRuleConflict",
                    f"Security rule {r['name']} conflicts with rule {seen[key]}: rules "
                    "cannot have the same Priority and Direction.",
                )
            seen[key] = r["name"]

    def _normalize_top(self, kind: _Kind, name: str, body: Json, existing: Json | None) -> Json:
        _check_name(name)
        read_only = {"provisioningState", "resourceGuid", "defaultSecurityRules", "subnets", "networkInterfaces"}
        props = {k: v for k, v in (body.get("properties") or {}).items() if k == kind.child or k not in read_only}
        res: Json = {
            "name": existing["name"] if existing else name,
            "location": body.get("location") or self.location,
            "tags": body.get("tags") or {},
            "properties": props,
        }
        if kind.segment == "virtualNetworks":
            prefixes = (props.get("addressSpace") or {}).get("addressPrefixes") or []
            if not prefixes:
                raise _bad("InvalidAddressSpace", f"Virtual network {name} needs addressSpace.addressPrefixes.")
        if kind.segment == "networkInterfaces":
            owner = self.resource_id(kind.segment, name)
            ref = self._require_ref(props.get("networkSecurityGroup"), owner)
            if ref is None:
                props.pop("networkSecurityGroup", None)
            else:
                props["networkSecurityGroup"] = ref
            for c in props.get("ipConfigurations") or []:
                cp = c.setdefault("properties", {})
                cp["subnet"] = self._require_ref(cp.get("subnet"), owner)
                c.pop("id", None)
        if kind.child:
            given = props.get(kind.child)
            old = self._children(existing, kind) if existing else []
            if given is None:
                props[kind.child] = copy.deepcopy(old)
            else:
                props[kind.child] = [
                    {"name": c["name"], "properties": self._normalize_child(kind, res, c["name"], c.get("properties") or {})}
                    for c in given
                ]
        return res

    def put(self, segment: str, name: str, body: Json) -> tuple[Json, bool]:
        """Create or replace a top-level resource; returns (rendered, created)."""
        kind = _kind(segment)
        with self.lock:
            existing = self._res[kind.segment.lower()].get(name.lower())
            res = self._normalize_top(kind, name, body, existing)
            if kind.segment == "networkSecurityGroups":
                self._check_priorities(res)
            if existing and kind.segment == "virtualNetworks":
                kept = {c["name"].lower() for c in res["properties"]["subnets"]}
                for s in self._children(existing, kind):
                    if s["name"].lower() not in kept:
                        self._check_subnet_unused(existing, s)
            self._res[kind.segment.lower()][name.lower()] = res
            self._changed()
            return self.render(segment, name), existing is None

    def put_child(self, segment: str, name: str, child: str, body: Json) -> tuple[Json, bool]:
        kind = _kind(segment)
        with self.lock:
            parent = self._top(segment, name)
            props = self._normalize_child(kind, parent, child, dict(body.get("properties") or {}))
            children = self._children(parent, kind)
            before = list(children)
            existing = next((c for c in children if c["name"].lower() == child.lower()), None)
            if existing is None:
                children.append({"name": child, "properties": props})
            else:
                children[children.index(existing)] = {"name": existing["name"], "properties": props}
            if kind.segment == "networkSecurityGroups":
                try:
                    self._check_priorities(parent)
                except ArmError:
                    children[:] = before
                    raise
            self._changed()
            return self.render_child(segment, name, child), existing is None

    def _check_subnet_unused(self, vnet: Json, subnet: Json) -> None:
        sid = self._subnet_id(vnet, subnet).lower()
        for nic in self._res["networkinterfaces"].values():
            if any(s.lower() == sid for s in self._nic_subnet_ids(nic)):
                raise _bad(
                    "InUseSubnetCannotBeDeleted",
                    f"Subnet {subnet['name']} is in use by "
                    f"{self.resource_id('networkInterfaces', nic['name'])} and "
                    "cannot be deleted.",
                )

    def delete(self, segment: str, name: str) -> bool:
        kind = _kind(segment)
        with self.lock:
            res = self._res[kind.segment.lower()].get(name.lower())
            if res is None:
                return False
            rid = self.resource_id(segment, res["name"])
            users = self._users(rid)
            if users and kind.segment == "networkSecurityGroups":
                raise _bad(
                    "InUseNetworkSecurityGroupCannotBeDeleted",
                    f"Network security group {rid} cannot be deleted because it is in use by: {', '.join(users)}",
                )
            if users and kind.segment == "routeTables":
                raise _bad(
                    "InUseRouteTableCannotBeDeleted", f"Route table {rid} is in use by {', '.join(users)} and cannot be deleted."
                )
            if kind.segment == "virtualNetworks":
                for s in self._children(res, kind):
                    self._check_subnet_unused(res, s)
            if kind.segment == "networkInterfaces" and res["properties"].get("virtualMachine"):
                raise _bad(
                    "NicInUse",
                    f"Network interface {rid} is attached to virtual machine "
                    f"{res['properties']['virtualMachine']['id']} and cannot be deleted.",
                )
            del self._res[kind.segment.lower()][name.lower()]
            self._changed()
            return True

    def delete_child(self, segment: str, name: str, child: str) -> bool:
        kind = _kind(segment)
        with self.lock:
            parent = self._top(segment, name)
            children = self._children(parent, kind)
            found = next((c for c in children if c["name"].lower() == child.lower()), None)
            if found is None:
                return False
            if kind.segment == "virtualNetworks":
                self._check_subnet_unused(parent, found)
            children.remove(found)
            self._changed()
            return True

    # -- computed views ------------------------------------------------------------------------------

    def _nic_context(self, nic_name: str) -> tuple[Json, Json | None, Json | None]:
        """(nic, its subnet, the subnet's VNet)."""
        nic = self._top("networkInterfaces", nic_name)
        for sid in self._nic_subnet_ids(nic):
            segment, vnet_name, _c, subnet_name = self.parse_id(sid)
            vnet = self._top(segment, vnet_name)
            if subnet_name is not None:
                return nic, self._child(segment, vnet_name, subnet_name), vnet
        return nic, None, None

    def vnet_prefixes(self, vnet: Json | None) -> list[str]:
        if vnet is None:
            return []
        prefixes: list[str] = vnet["properties"]["addressSpace"]["addressPrefixes"]
        return list(prefixes)

    def effective_routes(self, nic_name: str) -> Json:
        """`effectiveRouteTable` of a NIC: system routes, then the subnet's user routes (which win on equal prefixes)."""
        with self.lock:
            _nic, subnet, vnet = self._nic_context(nic_name)
            user: list[Json] = []
            rt_id = _ref(subnet["properties"].get("routeTable")) if subnet else None
            if rt_id:
                _seg, rt_name, _c, _n = self.parse_id(rt_id)
                for r in self._children(self._top("routeTables", rt_name), _KINDS["routetables"]):
                    p = r["properties"]
                    user.append(
                        {
                            "name": r["name"],
                            "source": "User",
                            "state": "Active",
                            "addressPrefix": [p["addressPrefix"]],
                            "nextHopType": p["nextHopType"],
                            "nextHopIpAddress": [p["nextHopIpAddress"]] if p.get("nextHopIpAddress") else [],
                            "disableBgpRoutePropagation": False,
                        }
                    )
            overridden = {r["addressPrefix"][0] for r in user}
            system = [(p, "VnetLocal") for p in self.vnet_prefixes(vnet)] + [("0.0.0.0/0", "Internet")]
            system += [(p, "None") for p in _SYSTEM_NONE_PREFIXES]
            routes = [
                {
                    "source": "Default",
                    "state": "Invalid" if p in overridden else "Active",
                    "addressPrefix": [p],
                    "nextHopType": hop,
                    "nextHopIpAddress": [],
                    "disableBgpRoutePropagation": False,
                }
                for p, hop in system
            ]
            return {"value": routes + user}

    def _effective_rule(self, kind: str, rule: Json, vnet_prefixes: list[str]) -> Json:
        p = rule["properties"]

        def ports(single: str, plural: str) -> list[str]:
            values = p.get(plural) or [p.get(single)]
            return ["0-65535" if v == "*" else (v if "-" in str(v) else f"{v}-{v}") for v in values]

        def prefixes(single: str, plural: str) -> tuple[list[str], list[str] | None]:
            values = p.get(plural) or [p.get(single)]
            shown = ["0.0.0.0/0" if v == "*" else v for v in values]
            expanded: list[str] = []
            for v in values:
                if v.lower() in _TAGS:
                    more = expand_prefix(v, vnet_prefixes)
                    if more is None:
                        return shown, None
                    expanded += more
            return shown, (expanded or None)

        src, src_exp = prefixes("sourceAddressPrefix", "sourceAddressPrefixes")
        dst, dst_exp = prefixes("destinationAddressPrefix", "destinationAddressPrefixes")
        sports, dports = ports("sourcePortRange", "sourcePortRanges"), ports("destinationPortRange", "destinationPortRanges")
        return {
            "name": f"{kind}/{rule['name']}",
            "protocol": "All" if p["protocol"] == "*" else p["protocol"],
            "sourcePortRange": sports[0] if len(sports) == 1 else None,
            "sourcePortRanges": sports,
            "destinationPortRange": dports[0] if len(dports) == 1 else None,
            "destinationPortRanges": dports,
            "sourceAddressPrefix": src[0] if len(src) == 1 else None,
            "sourceAddressPrefixes": src,
            "destinationAddressPrefix": dst[0] if len(dst) == 1 else None,
            "destinationAddressPrefixes": dst,
            "expandedSourceAddressPrefix": src_exp,
            "expandedDestinationAddressPrefix": dst_exp,
            "access": p["access"],
            "priority": p["priority"],
            "direction": p["direction"],
        }

    def effective_security_groups(self, nic_name: str) -> Json:
        """`effectiveNetworkSecurityGroups` of a NIC: the subnet's NSG and the NIC's NSG, each with its full rule set."""
        with self.lock:
            nic, subnet, vnet = self._nic_context(nic_name)
            prefixes = self.vnet_prefixes(vnet)
            groups: list[Json] = []
            pairs: list[tuple[str | None, Json]] = []
            if subnet is not None and vnet is not None:
                pairs.append(
                    (_ref(subnet["properties"].get("networkSecurityGroup")), {"subnet": {"id": self._subnet_id(vnet, subnet)}})
                )
            pairs.append(
                (
                    _ref(nic["properties"].get("networkSecurityGroup")),
                    {"networkInterface": {"id": self.resource_id("networkInterfaces", nic["name"])}},
                )
            )
            for nsg_id, association in pairs:
                if nsg_id is None:
                    continue
                _seg, nsg_name, _c, _n = self.parse_id(nsg_id)
                nsg = self._top("networkSecurityGroups", nsg_name)
                rules = [self._effective_rule("securityRules", r, prefixes) for r in nsg["properties"].get("securityRules", [])]
                rules += [self._effective_rule("defaultSecurityRules", r, prefixes) for r in DEFAULT_SECURITY_RULES]
                rules.sort(key=lambda r: (r["direction"] != "Inbound", r["priority"]))
                groups.append(
                    {
                        "networkSecurityGroup": {"id": self.resource_id("networkSecurityGroups", nsg["name"])},
                        "association": association,
                        "effectiveSecurityRules": rules,
                        "tagMap": {"VirtualNetwork": prefixes, "AzureLoadBalancer": [_AZURE_LB]},
                    }
                )
            return {"value": groups}

    def nic_addresses(self) -> dict[str, str]:
        """NIC name → primary private IP, for the fabric."""
        with self.lock:
            out = {}
            for nic in self._res["networkinterfaces"].values():
                for c in nic["properties"].get("ipConfigurations", []):
                    ip = c.get("properties", {}).get("privateIPAddress")
                    if ip:
                        out[nic["name"]] = ip
                        break
            return out

    # -- storage accounts (Microsoft.Storage): the firewall only ------------------------------------

    def storage_id(self, name: str) -> str:
        return f"{self.rg_id}/providers/Microsoft.Storage/storageAccounts/{name}"

    def _storage_account(self, name: str) -> Json:
        found = self._storage.get(name.lower())
        if found is None:
            raise ArmError(404, "ResourceNotFound", f"The Resource 'Microsoft.Storage/storageAccounts/{name}' was not found.")
        return found

    def render_storage_account(self, name: str) -> Json:
        with self.lock:
            account = copy.deepcopy(self._storage_account(name))
        account["properties"]["primaryEndpoints"] = {"blob": f"https://{account['name']}.blob.core.windows.net/"}
        account["properties"]["provisioningState"] = "Succeeded"
        return account

    def list_storage_accounts(self) -> list[Json]:
        with self.lock:
            names = [a["name"] for a in self._storage.values()]
        return [self.render_storage_account(n) for n in names]

    def put_storage_account(self, name: str, body: Json, *, patch: bool = False) -> tuple[Json, bool]:
        """Create or replace (PUT) or update (PATCH, `properties` merged key by key) an account's firewall."""
        _check_name(name)
        with self.lock:
            existing = self._storage.get(name.lower())
            if patch and existing is None:
                self._storage_account(name)
            props = dict(existing["properties"]) if patch and existing else {}
            props.update(body.get("properties") or {})
            props["networkAcls"] = _normalize_network_acls(props.get("networkAcls") or {})
            self._storage[name.lower()] = {
                "id": self.storage_id(name),
                "name": existing["name"] if existing else name,
                "type": "Microsoft.Storage/storageAccounts",
                "location": body.get("location") or (existing or {}).get("location") or self.location,
                "kind": body.get("kind") or (existing or {}).get("kind") or "StorageV2",
                "sku": body.get("sku") or (existing or {}).get("sku") or {"name": "Standard_LRS", "tier": "Standard"},
                "properties": props,
            }
            self._changed()
        return self.render_storage_account(name), existing is None

    def storage_reachable(self, nic_name: str, account: str) -> bool:
        """Whether the account's firewall lets the NIC in: its default action, else a virtual network rule for the
        NIC's subnet that the subnet's Microsoft.Storage service endpoint makes effective (IP rules match public
        addresses, which the lab's VMs do not have). An account that does not exist has no firewall."""
        with self.lock:
            found = self._storage.get(account.lower())
            acls: Json = found["properties"]["networkAcls"] if found else {"defaultAction": "Allow"}
            if acls["defaultAction"] == "Allow":
                return True
            _nic, subnet, vnet = self._nic_context(nic_name)
            if subnet is None or vnet is None:
                return False
            endpoints = {(e.get("service") or "").lower() for e in subnet["properties"].get("serviceEndpoints") or []}
            subnet_id = self._subnet_id(vnet, subnet).lower()
            rules = {r["id"].lower() for r in acls["virtualNetworkRules"] if r.get("action", "Allow") == "Allow"}
            return "microsoft.storage" in endpoints and subnet_id in rules

    # -- persistence ---------------------------------------------------------------------------------

    def dump(self) -> Json:
        with self.lock:
            return {
                "subscription_id": self.subscription_id,
                "resource_group": self.resource_group,
                "location": self.location,
                "resources": copy.deepcopy(self._res),
                "storage_accounts": copy.deepcopy(self._storage),
            }

    def load(self, data: Json) -> None:
        with self.lock:
            self._res = {k: dict(data["resources"].get(k, {})) for k in _KINDS}
            self._storage = dict(data.get("storage_accounts", {}))
            self._changed()
