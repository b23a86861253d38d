"""Azure management clients for a target: public Azure through `DefaultAzureCredential`, or the lab's ARM emulator
with its fixed bearer token, its CA and no polling wait. The SDKs are imported only when a client is made."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ghost_eval.connect.target import Target, TargetError

if TYPE_CHECKING:
    from azure.mgmt.network import NetworkManagementClient
    from azure.mgmt.storage import StorageManagementClient

__all__ = ["StaticTokenCredential", "network_client", "storage_client"]

_TOKEN_LIFETIME_S = 3600


class StaticTokenCredential:
    """A credential that always presents the same bearer token (the lab's emulator checks it)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken(self._token, int(time.time()) + _TOKEN_LIFETIME_S)


def _management_args(target: Target) -> tuple[Any, dict[str, Any]]:
    """The credential and client options of an Azure management client for the target: public Azure, or the
    emulator with its CA and no polling wait."""
    credential: Any
    if target.credential == "static_token":
        if not target.token:
            raise TargetError(f"target {target.name!r}: credential static_token needs a token")
        credential = StaticTokenCredential(target.token)
    else:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    kwargs: dict[str, Any] = {}
    if target.arm_endpoint:
        kwargs["base_url"] = target.arm_endpoint
        kwargs["polling_interval"] = 0
    if target.ca_bundle:
        kwargs["connection_verify"] = target.ca_bundle
    return credential, kwargs


def network_client(target: Target) -> NetworkManagementClient:
    """An azure-mgmt-network client for the target."""
    from azure.mgmt.network import NetworkManagementClient

    credential, kwargs = _management_args(target)
    return NetworkManagementClient(credential, target.subscription_id, **kwargs)


def storage_client(target: Target) -> StorageManagementClient:
    """An azure-mgmt-storage client for the target (storage accounts' firewalls)."""
    from azure.mgmt.storage import StorageManagementClient

    credential, kwargs = _management_args(target)
    return StorageManagementClient(credential, target.subscription_id, **kwargs)
