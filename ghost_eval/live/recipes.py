"""Fault recipes: the `recipe:` block of a case, typed, and applied exactly as an operator would apply it.

A recipe has `setup` steps (plant the fault), `teardown` steps (remove it), and `symptoms` (checks that give
one answer while the fault is in place and, by default, the other once it is gone). A step is either

- `ssh: <vm>` + `run: <command>`: a shell command on the VM over SSH (through `sudo -n` for a non-root user);
- `azure: <operation>`: one control-plane change through azure-mgmt-network — create/delete an NSG rule,
  create a route table with routes (associated with the target's subnet) / delete it, change or restore the
  subnet's service endpoints.

`applied(target, recipe)` runs the setup and always runs the teardown (even when the setup or the body fails),
every teardown step even when one fails. Azure changes never take over what the run did not create: a rule or
route table that already exists makes the setup fail, and a teardown deletes only what this run created and
puts back what it replaced (a subnet's route table, its service endpoints).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal

import paramiko
from pydantic import Discriminator, Field, Tag

from ghost_eval.cases import Case
from ghost_eval.errors import CaseError, GhostEvalError
from ghost_eval.live.target import Target, ssh_connect, ssh_run
from ghost_eval.records import Record, parse_record

if TYPE_CHECKING:
    from azure.mgmt.network import NetworkManagementClient

__all__ = [
    "CreateRouteTable",
    "CreateSecurityRule",
    "DeleteRouteTable",
    "DeleteSecurityRule",
    "Recipe",
    "RecipeError",
    "RecipeRun",
    "Reconcile",
    "RestoreServiceEndpoints",
    "RouteSpec",
    "SetServiceEndpoints",
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


class CreateSecurityRule(Record):
    """Add a rule to an NSG (Azure: `az network nsg rule create`); refuses to replace an existing rule."""

    azure: Literal["create_security_rule"]
    nsg: str
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

    def describe(self) -> str:
        return (
            f"azure: create rule {self.nsg}/{self.name} (p{self.priority} {self.access} {self.protocol} "
            f"{self.destination_port_range} {self.direction})"
        )


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


class CreateRouteTable(Record):
    """Create a route table with routes and (by default) associate it with the target's subnet."""

    azure: Literal["create_route_table"]
    name: str
    routes: list[RouteSpec] = Field(min_length=1)
    associate_subnet: bool = True

    def describe(self) -> str:
        routes = ", ".join(f"{r.address_prefix} -> {r.next_hop_type}" for r in self.routes)
        return f"azure: create route table {self.name} ({routes})" + (" on the subnet" if self.associate_subnet else "")


class DeleteRouteTable(Record):
    """Give the subnet back the route table it had, then delete the table this run created."""

    azure: Literal["delete_route_table"]
    name: str

    def describe(self) -> str:
        return f"azure: delete route table {self.name}"


class SetServiceEndpoints(Record):
    """Change the subnet's service endpoints (read first, every other endpoint kept); the first call saves the list."""

    azure: Literal["set_service_endpoints"]
    add: list[str] = []
    remove: list[str] = []

    def describe(self) -> str:
        return f"azure: subnet service endpoints +{self.add} -{self.remove}"


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
    | Annotated[SetServiceEndpoints, Tag("set_service_endpoints")]
    | Annotated[RestoreServiceEndpoints, Tag("restore_service_endpoints")],
    Discriminator(_step_kind),
]


class Symptom(Record):
    """A check whose outcome differs with the fault in place: the recipe's claim, verified in the lab's tests.

    Exactly one probe: `ssh` + `run` (passes when the command exits 0), or `azure` with its fields:
    `service_endpoint` (the subnet has `service`), `nsg_allows` (the effective NSG rules of `vm` allow
    `protocol`/`port` from `source` in `direction`), `next_hop_vnet` (the effective route of `vm` towards
    `destination` is VnetLocal).
    """

    description: str
    ssh: str | None = None
    run: str | None = None
    azure: Literal["service_endpoint", "nsg_allows", "next_hop_vnet"] | None = None
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
        self._saved_route_table: dict[str, Any] = {}

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
            from ghost_eval.live.target import network_client

            self._net = network_client(self.target)
        return self._net

    def close(self) -> None:
        for client in self._ssh.values():
            client.close()
        self._ssh.clear()
        if self._net is not None:
            self._net.close()
            self._net = None

    # -- steps ---------------------------------------------------------------------------------------

    def run_command(self, vm: str, command: str, timeout: float = 60) -> tuple[int, str, str]:
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
            from azure.core.exceptions import ResourceNotFoundError
            from azure.mgmt.network.models import SecurityRule, SecurityRulePropertiesFormat

            try:
                self.net.security_rules.get(t.resource_group, step.nsg, step.name)
            except ResourceNotFoundError:
                pass
            else:
                raise RecipeError(f"rule {step.nsg}/{step.name} already exists; a recipe never takes over a rule")
            rule = SecurityRulePropertiesFormat(
                protocol=step.protocol,
                access=step.access,
                direction=step.direction,
                priority=step.priority,
                source_address_prefix=step.source_address_prefix,
                source_port_range=step.source_port_range,
                destination_address_prefix=step.destination_address_prefix,
                destination_port_range=step.destination_port_range,
                description=step.description,
            )
            self.net.security_rules.begin_create_or_update(
                t.resource_group, step.nsg, step.name, SecurityRule(properties=rule)
            ).result()
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
            return self._delete_route_table(step)
        if isinstance(step, SetServiceEndpoints):
            return self._set_endpoints(step)
        return self._restore_endpoints()

    def _subnet(self) -> Any:
        t = self.target
        return self.net.subnets.get(t.resource_group, t.vnet, t.subnet)

    def _put_subnet(self, subnet: Any) -> None:
        t = self.target
        self.net.subnets.begin_create_or_update(t.resource_group, t.vnet, t.subnet, subnet).result()

    def _create_route_table(self, step: CreateRouteTable) -> str:
        from azure.core.exceptions import ResourceNotFoundError
        from azure.mgmt.network.models import Route, RoutePropertiesFormat, RouteTable, RouteTablePropertiesFormat

        t = self.target
        try:
            self.net.route_tables.get(t.resource_group, step.name)
        except ResourceNotFoundError:
            pass
        else:
            raise RecipeError(f"route table {step.name} already exists; a recipe never takes over a route table")
        location = self.net.virtual_networks.get(t.resource_group, t.vnet).location
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
            t.resource_group,
            step.name,
            RouteTable(
                location=location,
                properties=RouteTablePropertiesFormat(routes=routes),
            ),
        ).result()
        self._created.add(("route_table", step.name))
        if step.associate_subnet:
            subnet = self._subnet()
            self._saved_route_table[step.name] = subnet.route_table
            subnet.route_table = RouteTable(id=table.id)
            self._put_subnet(subnet)
            return f"created {table.id} and associated it with {t.vnet}/{t.subnet}"
        return f"created {table.id}"

    def _delete_route_table(self, step: DeleteRouteTable) -> str:
        if ("route_table", step.name) not in self._created:
            return "not created by this run: left alone"
        if step.name in self._saved_route_table:
            subnet = self._subnet()
            current = (subnet.route_table.id if subnet.route_table else "") or ""
            if current.lower().endswith(f"/routetables/{step.name.lower()}"):
                subnet.route_table = self._saved_route_table[step.name]
                self._put_subnet(subnet)
            del self._saved_route_table[step.name]
        self.net.route_tables.begin_delete(self.target.resource_group, step.name).result()
        self._created.discard(("route_table", step.name))
        return "dissociated and deleted"

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
        for step in self.recipe.setup:
            error = self._step("setup", step)
            if error is not None:
                raise RecipeError(f"{self.label}: setup step failed: {step.describe()}: {error}")

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
