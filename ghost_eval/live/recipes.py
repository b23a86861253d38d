# Over 600 lines: the recipe schema and its runner share their step types; next seam: schema vs. runner.
"""Fault recipes: the `recipe:` block of a case, typed, and applied exactly as an operator would apply it.

A recipe has `setup` steps (plant the fault), `teardown` steps (remove it), and `symptoms` (checks that give
one answer while the fault is in place and, by default, the other once it is gone). A step is either

- `ssh: <vm>` + `run: <command>`: a shell command on the VM over SSH (through `sudo -n` for a non-root user);
- `azure: <operation>`: one control-plane change through azure-mgmt-network — create/delete an NSG rule,
  create an NSG with its rules or a route table with routes (either associated with the target's subnet) /
  delete it, change or restore the subnet's service endpoints, change or restore a storage account's firewall.

`applied(target, recipe)` runs the setup and always runs the teardown (even when the setup or the body fails),
every teardown step even when one fails. Azure changes never take over what the run did not create: a rule or
route table or NSG that already exists makes the setup fail, and a teardown deletes only what this run created
and puts back what it replaced (a subnet's route table or NSG, its service endpoints).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import paramiko
from pydantic import Discriminator, Field, Tag

from ghost_eval.base.errors import CaseError, GhostEvalError
from ghost_eval.base.records import Record, parse_record
from ghost_eval.cases.case import Case
from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import Target

if TYPE_CHECKING:
    from azure.mgmt.network import NetworkManagementClient
    from azure.mgmt.storage import StorageManagementClient

__all__ = [
    "CreateNetworkSecurityGroup",
    "CreateRouteTable",
    "CreateSecurityRule",
    "DeleteNetworkSecurityGroup",
    "DeleteRouteTable",
    "DeleteSecurityRule",
    "DissociateRouteTable",
    "Recipe",
    "RecipeError",
    "RecipeRun",
    "Reconcile",
    "RestoreServiceEndpoints",
    "RestoreStorageFirewall",
    "RouteSpec",
    "SecurityRuleSpec",
    "SetServiceEndpoints",
    "SetStorageFirewall",
    "SshStep",
    "Step",
    "StepResult",
    "Symptom",
    "applied",
    "recipe_of",
]


class RecipeError(GhostEvalError):
    """A setup or teardown step failed; the message names the case, the phase and the step."""


class SshStep(Record):
    """A command run on a VM over SSH."""

    ssh: str
    """VM name, a key of the target's `hosts`."""
    run: str
    check: bool = True
    """Fail the phase when the command exits non-zero."""
    timeout: float = 60

    def describe(self) -> str:
        return f"ssh {self.ssh}: {self.run.strip().splitlines()[0]}"


class SecurityRuleSpec(Record):
    """One NSG security rule, with the fields `az network nsg rule create` takes (prefixes and ports default to `*`)."""

    name: str
    priority: int
    direction: Literal["Inbound", "Outbound"] = "Inbound"
    access: Literal["Allow", "Deny"]
    protocol: Literal["Tcp", "Udp", "Icmp", "*"] = "Tcp"
    source_address_prefix: str = "*"
    source_port_range: str = "*"
    destination_address_prefix: str = "*"
    destination_port_range: str = "*"
    description: str | None = None

    def sdk_rule(self) -> Any:
        from azure.mgmt.network.models import SecurityRule, SecurityRulePropertiesFormat

        return SecurityRule(
            name=self.name,
            properties=SecurityRulePropertiesFormat(
                protocol=self.protocol,
                access=self.access,
                direction=self.direction,
                priority=self.priority,
                source_address_prefix=self.source_address_prefix,
                source_port_range=self.source_port_range,
                destination_address_prefix=self.destination_address_prefix,
                destination_port_range=self.destination_port_range,
                description=self.description,
            ),
        )

    def summary(self) -> str:
        return f"p{self.priority} {self.access} {self.protocol} {self.destination_port_range} {self.direction}"


class CreateSecurityRule(SecurityRuleSpec):
    """Add a rule to an NSG (Azure: `az network nsg rule create`); refuses to replace an existing rule."""

    azure: Literal["create_security_rule"]
    nsg: str

    def describe(self) -> str:
        return f"azure: create rule {self.nsg}/{self.name} ({self.summary()})"


class DeleteSecurityRule(Record):
    """Remove a rule this run created."""

    azure: Literal["delete_security_rule"]
    nsg: str
    name: str

    def describe(self) -> str:
        return f"azure: delete rule {self.nsg}/{self.name}"


class RouteSpec(Record):
    name: str
    address_prefix: str
    next_hop_type: Literal["VirtualAppliance", "None", "Internet", "VnetLocal", "VirtualNetworkGateway"]
    next_hop_ip_address: str | None = None


class _SubnetResource(Record):
    """A route table or NSG a recipe creates and (by default) associates with the target's subnet."""

    name: str
    associate_subnet: bool = True

    def _describe(self, what: str, content: str) -> str:
        return f"azure: create {what} {self.name} ({content})" + (" on the subnet" if self.associate_subnet else "")


class _DeleteSubnetResource(Record):
    """Give the subnet back what it had, then delete the resource this run created."""

    name: str
    _what: ClassVar[str]

    def describe(self) -> str:
        return f"azure: delete {self._what} {self.name}"


class CreateRouteTable(_SubnetResource):
    """Create a route table with routes and (by default) associate it with the target's subnet."""

    azure: Literal["create_route_table"]
    routes: list[RouteSpec] = Field(min_length=1)

    def describe(self) -> str:
        return self._describe("route table", ", ".join(f"{r.address_prefix} -> {r.next_hop_type}" for r in self.routes))


class DeleteRouteTable(_DeleteSubnetResource):
    """Give the subnet back the route table it had, then delete the table this run created."""

    azure: Literal["delete_route_table"]
    _what = "route table"


class DissociateRouteTable(Record):
    """Take this run's route table off the subnet and keep the table (`az network vnet subnet update --remove
    routeTable`): how a multi-phase case moves past its routing fault."""

    azure: Literal["dissociate_route_table"]
    name: str

    def describe(self) -> str:
        return f"azure: take route table {self.name} off the subnet"


class CreateNetworkSecurityGroup(_SubnetResource):
    """Create an NSG holding `rules` (besides Azure's default rules) and (by default) associate it with the target's
    subnet, as `az network nsg create` + `nsg rule create` + `vnet subnet update --network-security-group` do."""

    azure: Literal["create_network_security_group"]
    rules: list[SecurityRuleSpec] = []

    def describe(self) -> str:
        return self._describe("NSG", ", ".join(f"{r.name} {r.summary()}" for r in self.rules))


class DeleteNetworkSecurityGroup(_DeleteSubnetResource):
    """Give the subnet back the NSG it had, then delete the NSG this run created."""

    azure: Literal["delete_network_security_group"]
    _what = "NSG"


class SetServiceEndpoints(Record):
    """Change the subnet's service endpoints (read first, every other endpoint kept); the first call saves the list."""

    azure: Literal["set_service_endpoints"]
    add: list[str] = []
    remove: list[str] = []

    def describe(self) -> str:
        return f"azure: subnet service endpoints +{self.add} -{self.remove}"


class SetStorageFirewall(Record):
    """Set a storage account's firewall (`az storage account update --default-action/--bypass` and, with
    `allow_subnet`, `az storage account network-rule add --subnet <the target's subnet>`); the first call saves it."""

    azure: Literal["set_storage_firewall"]
    account: str
    default_action: Literal["Allow", "Deny"]
    bypass: str = "AzureServices"
    allow_subnet: bool = False

    def describe(self) -> str:
        rule = ", virtual network rule for the subnet" if self.allow_subnet else ""
        return f"azure: storage account {self.account} firewall: default {self.default_action}, bypass {self.bypass}{rule}"


class RestoreStorageFirewall(Record):
    """Put back the firewall of `account` saved by `set_storage_firewall`."""

    azure: Literal["restore_storage_firewall"]
    account: str

    def describe(self) -> str:
        return f"azure: restore storage account {self.account} firewall"


class RestoreServiceEndpoints(Record):
    """Put back the service endpoint list saved by `set_service_endpoints`."""

    azure: Literal["restore_service_endpoints"]

    def describe(self) -> str:
        return "azure: restore subnet service endpoints"


def _step_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return "ssh" if "ssh" in value else value.get("azure")
    return "ssh" if isinstance(value, SshStep) else getattr(value, "azure", None)


Step = Annotated[
    Annotated[SshStep, Tag("ssh")]
    | Annotated[CreateSecurityRule, Tag("create_security_rule")]
    | Annotated[DeleteSecurityRule, Tag("delete_security_rule")]
    | Annotated[CreateRouteTable, Tag("create_route_table")]
    | Annotated[DeleteRouteTable, Tag("delete_route_table")]
    | Annotated[DissociateRouteTable, Tag("dissociate_route_table")]
    | Annotated[CreateNetworkSecurityGroup, Tag("create_network_security_group")]
    | Annotated[DeleteNetworkSecurityGroup, Tag("delete_network_security_group")]
    | Annotated[SetServiceEndpoints, Tag("set_service_endpoints")]
    | Annotated[RestoreServiceEndpoints, Tag("restore_service_endpoints")]
    | Annotated[SetStorageFirewall, Tag("set_storage_firewall")]
    | Annotated[RestoreStorageFirewall, Tag("restore_storage_firewall")],
    Discriminator(_step_kind),
]


class Symptom(Record):
    """A check whose outcome differs with the fault in place: the recipe's claim, verified in the lab's tests.

    Exactly one probe: `ssh` + `run` (passes when the command exits 0), or `azure` with its fields:
    `service_endpoint` (the subnet has `service`), `nsg_allows` (the effective NSG rules of `vm` allow
    `protocol`/`port` from `source` in `direction`), `next_hop_vnet` / `next_hop_internet` (the effective route of
    `vm` towards `destination` is VnetLocal / Internet).
    """

    description: str
    ssh: str | None = None
    run: str | None = None
    azure: Literal["service_endpoint", "nsg_allows", "next_hop_vnet", "next_hop_internet"] | None = None
    vm: str | None = None
    service: str | None = None
    direction: Literal["Inbound", "Outbound"] = "Inbound"
    protocol: Literal["Tcp", "Udp", "Icmp"] = "Tcp"
    port: int | None = None
    source: str | None = None
    destination: str | None = None
    faulty: Literal["pass", "fail"]
    """Expected outcome while the fault is in place."""
    healthy: Literal["pass", "fail", "any"] | None = None
    """Expected outcome without it; default: the opposite of `faulty`."""

    @property
    def expected_healthy(self) -> str:
        return self.healthy or ("fail" if self.faulty == "pass" else "pass")


class Reconcile(Record):
    """What the fault's owner does on its own after a fix (a fix trial's durability check): re-apply, then hold."""

    notes: str | None = None
    """Who re-applies what, and why these steps stand for it."""
    run: list[SshStep] = []
    """The owner's re-apply, as it happens without the operator (a jail restart, a daemon restart, a reload)."""
    hold_s: float = Field(default=0, ge=0)
    """Seconds to wait after `run` before the symptoms are checked again."""
    resolved_by: list[str] = []
    """Descriptions of the symptoms that say whether the fault's effect is gone (default: every symptom);
    the others describe the owner's bookkeeping, which a fix behind its back leaves as it was."""


class Recipe(Record):
    """How to plant a case's fault in a target and remove it again."""

    notes: str | None = None
    """What the lab emulates and how (e.g. delay by rate limiting), in the case's words."""
    setup: list[Step] = Field(min_length=1)
    teardown: list[Step] = Field(min_length=1)
    symptoms: list[Symptom] = []
    """The checks of the fault as set up (the case's first phase)."""
    phases: dict[str, list[Step]] = {}
    """Steps that take the planted fault on to a later phase of the case (keyed by the case's phase id), as the
    original's between-phase script does; the teardown removes whatever is left."""
    reconcile: Reconcile | None = None
    """How the fault's owner reconciles after a fix (fix trials); None: nothing re-applies the fault."""


def recipe_of(case: Case) -> Recipe | None:
    """The case's recipe, validated; errors name the case file's field (`recipe.setup.0.run` …)."""
    if case.recipe is None:
        return None
    try:
        return parse_record(Recipe, case.recipe, f"cases/{case.id}.yaml", CaseError)
    except CaseError as exc:
        raise CaseError(exc.path, exc.detail, f"recipe.{exc.field}" if exc.field else "recipe") from None


class StepResult(Record):
    phase: Literal["setup", "teardown"]
    step: str
    ok: bool
    detail: str = ""


class RecipeRun:
    """One application of a recipe to a target; keeps what it created and replaced so its teardown can undo it."""

    def __init__(self, target: Target, recipe: Recipe, label: str = "recipe") -> None:
        self.target = target
        self.recipe = recipe
        self.label = label
        self.log: list[StepResult] = []
        self._ssh: dict[str, paramiko.SSHClient] = {}
        self._net: NetworkManagementClient | None = None
        self._created: set[tuple[str, str]] = set()
        self._saved_endpoints: list[Any] | None = None
        self._saved_firewalls: dict[str, Any] = {}
        """Storage account (lower-case) → its network rule set before this run changed it."""
        self._storage: StorageManagementClient | None = None
        self._saved_association: dict[tuple[str, str], Any] = {}
        """(subnet attribute, name of what this run put there) → what the subnet had before."""

    # -- clients -------------------------------------------------------------------------------------

    def ssh(self, vm: str) -> paramiko.SSHClient:
        if vm not in self.target.hosts:
            raise RecipeError(f"{self.label}: unknown VM {vm!r} (target has {sorted(self.target.hosts)})")
        client = self._ssh.get(vm)
        transport = client.get_transport() if client is not None else None
        if client is None or transport is None or not transport.is_active():
            client = self._ssh[vm] = ssh_connect(self.target.hosts[vm])
        return client

    @property
    def net(self) -> NetworkManagementClient:
        if self._net is None:
            from ghost_eval.connect.azure import network_client

            self._net = network_client(self.target)
        return self._net

    @property
    def storage(self) -> StorageManagementClient:
        if self._storage is None:
            from ghost_eval.connect.azure import storage_client

            self._storage = storage_client(self.target)
        return self._storage

    def close(self) -> None:
        for client in self._ssh.values():
            client.close()
        self._ssh.clear()
        for azure_client in (self._net, self._storage):
            if azure_client is not None:
                azure_client.close()
        self._net = self._storage = None

    # -- steps ---------------------------------------------------------------------------------------

    def run_command(self, vm: str, command: str, timeout: float = 60) -> tuple[int, str, str]:
        """A command of the harness's own (set-up, capture, teardown) on `vm`."""
        return self.run_over_ssh(vm, command, timeout)

    def run_over_ssh(self, vm: str, command: str, timeout: float = 60) -> tuple[int, str, str]:
        """A command over the VM's SSH and no other way (what a recommended command gets)."""
        if self.target.hosts[vm].user != "root":
            command = f"sudo -n sh -c {shlex.quote(command)}"
        return ssh_run(self.ssh(vm), command, timeout)

    def _apply(self, step: Step) -> str:
        t = self.target
        if isinstance(step, SshStep):
            code, out, err = self.run_command(step.ssh, step.run, step.timeout)
            if code != 0 and step.check:
                raise RecipeError(f"exit {code}: {(err or out).strip()[-500:]}")
            return (out + err).strip()[-500:]
        if isinstance(step, CreateSecurityRule):
            self._refuse_existing(self.net.security_rules.get, "rule", step.nsg, step.name)
            self.net.security_rules.begin_create_or_update(t.resource_group, step.nsg, step.name, step.sdk_rule()).result()
            self._created.add(("rule", f"{step.nsg}/{step.name}"))
            return "created"
        if isinstance(step, DeleteSecurityRule):
            if ("rule", f"{step.nsg}/{step.name}") not in self._created:
                return "not created by this run: left alone"
            self.net.security_rules.begin_delete(t.resource_group, step.nsg, step.name).result()
            self._created.discard(("rule", f"{step.nsg}/{step.name}"))
            return "deleted"
        if isinstance(step, CreateRouteTable):
            return self._create_route_table(step)
        if isinstance(step, DeleteRouteTable):
            return self._delete_associated("route_table", step.name, self.net.route_tables.begin_delete)
        if isinstance(step, DissociateRouteTable):
            return self._dissociate(step.name)
        if isinstance(step, CreateNetworkSecurityGroup):
            return self._create_nsg(step)
        if isinstance(step, DeleteNetworkSecurityGroup):
            return self._delete_associated("network_security_group", step.name, self.net.network_security_groups.begin_delete)
        if isinstance(step, SetServiceEndpoints):
            return self._set_endpoints(step)
        if isinstance(step, SetStorageFirewall):
            return self._set_firewall(step)
        if isinstance(step, RestoreStorageFirewall):
            return self._restore_firewall(step.account)
        return self._restore_endpoints()

    def _subnet(self) -> Any:
        t = self.target
        return self.net.subnets.get(t.resource_group, t.vnet, t.subnet)

    def _put_subnet(self, subnet: Any) -> None:
        t = self.target
        self.net.subnets.begin_create_or_update(t.resource_group, t.vnet, t.subnet, subnet).result()

    def _refuse_existing(self, get: Any, what: str, *names: str) -> None:
        """A recipe never takes over what it did not create: fail when the resource already exists."""
        from azure.core.exceptions import ResourceNotFoundError

        try:
            get(self.target.resource_group, *names)
        except ResourceNotFoundError:
            return
        raise RecipeError(f"{what} {'/'.join(names)} already exists; a recipe never takes over a {what}")

    def _associate(self, attribute: str, name: str, reference: Any) -> str:
        """Point the subnet's `attribute` (route_table, network_security_group) at `reference` (a model holding only
        the resource's id), saving what it had."""
        subnet = self._subnet()
        self._saved_association[(attribute, name)] = getattr(subnet, attribute)
        setattr(subnet, attribute, reference)
        self._put_subnet(subnet)
        return f" and associated it with {self.target.vnet}/{self.target.subnet}"

    def _dissociate(self, name: str) -> str:
        if ("route_table", name) not in self._created:
            raise RecipeError(f"route table {name} was not created by this run")
        subnet = self._subnet()
        current = subnet.route_table
        if not ((current.id if current else "") or "").lower().endswith(f"/{name.lower()}"):
            return "not on the subnet: left alone"
        subnet.route_table = None
        self._put_subnet(subnet)
        return f"taken off {self.target.vnet}/{self.target.subnet}"

    def _delete_associated(self, attribute: str, name: str, begin_delete: Any) -> str:
        """Give the subnet back what it had (when it still points at this run's resource), then delete the resource."""
        if (attribute, name) not in self._created:
            return "not created by this run: left alone"
        if (attribute, name) in self._saved_association:
            subnet = self._subnet()
            current = getattr(subnet, attribute)
            if ((current.id if current else "") or "").lower().endswith(f"/{name.lower()}"):
                setattr(subnet, attribute, self._saved_association[(attribute, name)])
                self._put_subnet(subnet)
            del self._saved_association[(attribute, name)]
        begin_delete(self.target.resource_group, name).result()
        self._created.discard((attribute, name))
        return "dissociated and deleted"

    def _location(self) -> str:
        return str(self.net.virtual_networks.get(self.target.resource_group, self.target.vnet).location)

    def _create_route_table(self, step: CreateRouteTable) -> str:
        from azure.mgmt.network.models import Route, RoutePropertiesFormat, RouteTable, RouteTablePropertiesFormat

        self._refuse_existing(self.net.route_tables.get, "route table", step.name)
        routes = [
            Route(
                name=r.name,
                properties=RoutePropertiesFormat(
                    address_prefix=r.address_prefix,
                    next_hop_type=r.next_hop_type,
                    next_hop_ip_address=r.next_hop_ip_address,
                ),
            )
            for r in step.routes
        ]
        table = self.net.route_tables.begin_create_or_update(
            self.target.resource_group,
            step.name,
            RouteTable(location=self._location(), properties=RouteTablePropertiesFormat(routes=routes)),
        ).result()
        self._created.add(("route_table", step.name))
        return f"created {table.id}" + (
            self._associate("route_table", step.name, RouteTable(id=table.id)) if step.associate_subnet else ""
        )

    def _create_nsg(self, step: CreateNetworkSecurityGroup) -> str:
        from azure.mgmt.network.models import NetworkSecurityGroup, NetworkSecurityGroupPropertiesFormat

        self._refuse_existing(self.net.network_security_groups.get, "network security group", step.name)
        nsg = self.net.network_security_groups.begin_create_or_update(
            self.target.resource_group,
            step.name,
            NetworkSecurityGroup(
                location=self._location(),
                properties=NetworkSecurityGroupPropertiesFormat(security_rules=[r.sdk_rule() for r in step.rules]),
            ),
        ).result()
        self._created.add(("network_security_group", step.name))
        return f"created {nsg.id}" + (
            self._associate("network_security_group", step.name, NetworkSecurityGroup(id=nsg.id)) if step.associate_subnet else ""
        )

    def _set_endpoints(self, step: SetServiceEndpoints) -> str:
        from azure.mgmt.network.models import ServiceEndpointPropertiesFormat

        subnet = self._subnet()
        current = list(subnet.service_endpoints or [])
        if self._saved_endpoints is None:
            self._saved_endpoints = [e.as_dict() for e in current]
        removed = {s.lower() for s in step.remove}
        kept = [e for e in current if (e.service or "").lower() not in removed]
        have = {(e.service or "").lower() for e in kept}
        kept += [ServiceEndpointPropertiesFormat(service=s) for s in step.add if s.lower() not in have]
        subnet.service_endpoints = kept
        self._put_subnet(subnet)
        return "service endpoints now " + ", ".join(e.service or "?" for e in kept)

    def _update_firewall(self, account: str, rules: Any) -> None:
        from azure.mgmt.storage.models import StorageAccountPropertiesUpdateParameters, StorageAccountUpdateParameters

        update = StorageAccountUpdateParameters(properties=StorageAccountPropertiesUpdateParameters(network_rule_set=rules))
        self.storage.storage_accounts.update(self.target.resource_group, account, update)

    def _set_firewall(self, step: SetStorageFirewall) -> str:
        from azure.mgmt.storage.models import NetworkRuleSet, VirtualNetworkRule

        current = self.storage.storage_accounts.get_properties(self.target.resource_group, step.account).network_rule_set
        self._saved_firewalls.setdefault(step.account.lower(), current)
        rules = list((current.virtual_network_rules if current else None) or [])
        subnet_id = str(self._subnet().id)
        if step.allow_subnet and not any(r.virtual_network_resource_id.lower() == subnet_id.lower() for r in rules):
            rules.append(VirtualNetworkRule(virtual_network_resource_id=subnet_id, action="Allow"))
        ip_rules = (current.ip_rules if current else None) or []
        self._update_firewall(
            step.account,
            NetworkRuleSet(
                bypass=step.bypass, default_action=step.default_action, virtual_network_rules=rules, ip_rules=ip_rules
            ),
        )
        return f"default {step.default_action}, {len(rules)} virtual network rule(s)"

    def _restore_firewall(self, account: str) -> str:
        saved = self._saved_firewalls.pop(account.lower(), None)
        if saved is None:
            return "nothing saved: left alone"
        self._update_firewall(account, saved)
        return "restored"

    def _restore_endpoints(self) -> str:
        from azure.mgmt.network.models import ServiceEndpointPropertiesFormat

        if self._saved_endpoints is None:
            return "nothing saved: left alone"
        subnet = self._subnet()
        subnet.service_endpoints = [
            ServiceEndpointPropertiesFormat(service=e.get("service"), locations=e.get("locations")) for e in self._saved_endpoints
        ]
        self._put_subnet(subnet)
        self._saved_endpoints = None
        return "restored"

    # -- phases --------------------------------------------------------------------------------------

    def _step(self, phase: Literal["setup", "teardown"], step: Step) -> str | None:
        """Run one step and log it; returns the error text, or None when it worked."""
        try:
            detail = self._apply(step)
        except Exception as exc:  # every failure is logged with its step; setup stops, teardown carries on
            error = str(exc).strip() or type(exc).__name__
            self.log.append(StepResult(phase=phase, step=step.describe(), ok=False, detail=error))
            return error
        self.log.append(StepResult(phase=phase, step=step.describe(), ok=True, detail=detail))
        return None

    def setup(self) -> None:
        self._run_phase("setup", self.recipe.setup)

    def enter_phase(self, phase: str) -> None:
        """Take the planted fault on to a later phase of the case (its steps are logged as setup)."""
        if phase not in self.recipe.phases:
            raise RecipeError(f"{self.label}: the recipe has no phase {phase!r} (it has {sorted(self.recipe.phases)})")
        self._run_phase("setup", self.recipe.phases[phase])

    def _run_phase(self, phase: Literal["setup"], steps: list[Step]) -> None:
        for step in steps:
            error = self._step(phase, step)
            if error is not None:
                raise RecipeError(f"{self.label}: {phase} step failed: {step.describe()}: {error}")

    def teardown(self) -> None:
        failures = [
            f"{step.describe()}: {error}" for step in self.recipe.teardown if (error := self._step("teardown", step)) is not None
        ]
        self.close()
        if failures:
            raise RecipeError(f"{self.label}: teardown left work undone: " + "; ".join(failures))


@contextmanager
def applied(target: Target, recipe: Recipe, label: str = "recipe") -> Iterator[RecipeRun]:
    """Plant the fault for the body of the `with`; the teardown runs whatever happens."""
    run = RecipeRun(target, recipe, label)
    try:
        run.setup()
        yield run
    except BaseException as exc:
        try:
            run.teardown()
        except RecipeError as teardown_error:
            exc.add_note(str(teardown_error))
        raise
    run.teardown()
