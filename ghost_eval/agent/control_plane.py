"""The control-plane inspector: read-only Azure network state through azure-mgmt-network.

Only reads are exposed (effective routes and NSG rules of a NIC, NSGs, route tables, subnets); the agent has
no tool that writes to Azure. Each answer is the resource as REST-like JSON, so the model and the trace see
what the portal and `az` would show.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from azure.core.exceptions import AzureError

from ghost_eval.connect.azure import network_client
from ghost_eval.connect.target import Target, TargetError

if TYPE_CHECKING:
    from azure.mgmt.network import NetworkManagementClient

__all__ = ["ControlPlaneInspector"]


@dataclass
class ControlPlaneInspector:
    """Answers the control-plane tools from the target's subscription and resource group; the client opens lazily."""

    target: Target
    timeout_s: float = 60.0
    _client: NetworkManagementClient | None = field(default=None, init=False, repr=False)

    def effective_routes(self, nic: str) -> tuple[str, bool]:
        return self._read(
            lambda c: c.network_interfaces.begin_get_effective_route_table(
                self.target.resource_group, nic, **self._timeouts()
            ).result(timeout=self.timeout_s)
        )

    def effective_nsg_rules(self, nic: str) -> tuple[str, bool]:
        return self._read(
            lambda c: c.network_interfaces.begin_list_effective_network_security_groups(
                self.target.resource_group, nic, **self._timeouts()
            ).result(timeout=self.timeout_s)
        )

    def nsg(self, name: str) -> tuple[str, bool]:
        return self._read(lambda c: c.network_security_groups.get(self.target.resource_group, name, **self._timeouts()))

    def route_tables(self) -> tuple[str, bool]:
        return self._read(
            lambda c: {"value": [t.as_dict() for t in c.route_tables.list(self.target.resource_group, **self._timeouts())]}
        )

    def subnet(self, vnet: str | None, subnet: str | None) -> tuple[str, bool]:
        return self._read(
            lambda c: c.subnets.get(
                self.target.resource_group, vnet or self.target.vnet, subnet or self.target.subnet, **self._timeouts()
            )
        )

    def _timeouts(self) -> dict[str, Any]:
        return {"connection_timeout": self.timeout_s, "read_timeout": self.timeout_s}

    def _read(self, call: Callable[[NetworkManagementClient], Any]) -> tuple[str, bool]:
        """Run one SDK read; an Azure or credential error becomes the tool's error text instead of a crash."""
        try:
            if self._client is None:
                self._client = network_client(self.target)
            result = call(self._client)
        except (AzureError, TargetError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            return f"error: {type(exc).__name__}: {message}", True
        data = result if isinstance(result, dict) else result.as_dict()
        return json.dumps(data, indent=1, sort_keys=True, default=str), False
