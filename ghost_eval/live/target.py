"""What a live run points at: the Azure subscription and the VMs' SSH endpoints, and how to open both.

One `Target` describes either the local lab (its ARM emulator, a fixed bearer token, a throwaway CA) or a
real environment (public Azure through `DefaultAzureCredential`). Everything that talks to the
infrastructure — fault recipes, the snapshot, the reference agent — opens its clients here, so host keys
are always verified against a pinned known_hosts file and never accepted on first sight.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import paramiko

from ghost_eval.errors import GhostEvalError, RecordError
from ghost_eval.records import Record, load_yaml_record

if TYPE_CHECKING:
    from azure.mgmt.network import NetworkManagementClient
    from azure.mgmt.storage import StorageManagementClient

__all__ = [
    "TARGET_SCHEMA_VERSION",
    "SshHost",
    "StaticTokenCredential",
    "Target",
    "TargetError",
    "load_target",
    "network_client",
    "storage_client",
    "ssh_connect",
    "ssh_run",
]

TARGET_SCHEMA_VERSION = "1"
_TOKEN_LIFETIME_S = 3600


class TargetError(GhostEvalError):
    """The infrastructure a target names cannot be reached or refused us (SSH, host key, Azure credential)."""


class SshHost(Record):
    """One VM as the agent reaches it over SSH."""

    name: str
    """VM name: tf-source-vm / tf-dest-vm."""
    address: str
    """IP or host name reachable from the machine running the agent."""
    port: int = 22
    user: str
    key_file: str
    """Private key path (relative paths in a target file are read from the file's folder)."""
    known_hosts_file: str
    """Pinned host keys; entries are `[addr]:port` for ports other than 22; unknown keys are refused."""


class Target(Record):
    """The environment a live run injects faults into and the agent investigates."""

    schema_version: str = TARGET_SCHEMA_VERSION
    name: str
    """`lab` or the environment's name."""
    subscription_id: str
    resource_group: str
    vnet: str = "forensics-vnet"
    subnet: str = "default"
    nics: dict[str, str]
    """VM name → NIC name (tf-dest-vm → tf-dest-vm-nic)."""
    nsgs: dict[str, str]
    """VM name → NSG name."""
    arm_endpoint: str | None = None
    """None = public Azure; the lab's emulator: https://127.0.0.1:PORT."""
    ca_bundle: str | None = None
    """CA file that signed the emulator's HTTPS certificate."""
    credential: Literal["default", "static_token"] = "default"
    """`DefaultAzureCredential`, or the fixed bearer token in `token` (the lab)."""
    token: str | None = None
    hosts: dict[str, SshHost]


def _resolve(base: Path, value: str) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())


def load_target(path: Path) -> Target:
    """Read a target file (YAML or JSON); errors name the file and the field."""
    target = load_yaml_record(Target, path)
    if target.credential == "static_token" and not target.token:
        raise RecordError(path, "is required when credential is static_token", "token")
    base = path.resolve().parent
    for key, host in target.hosts.items():
        if host.name != key:
            raise RecordError(path, f"host name {host.name!r} differs from its key {key!r}", f"hosts.{key}.name")
        host.key_file = _resolve(base, host.key_file)
        host.known_hosts_file = _resolve(base, host.known_hosts_file)
    if target.ca_bundle:
        target.ca_bundle = _resolve(base, target.ca_bundle)
    return target


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


def _where(host: SshHost) -> str:
    return f"{host.name} at {host.address}:{host.port}"


def ssh_connect(host: SshHost, timeout: float = 10) -> paramiko.SSHClient:
    """Open an SSH session with key-only login; the host key must already be in the pinned known_hosts file."""
    known = Path(host.known_hosts_file)
    if not known.is_file():
        raise TargetError(f"{_where(host)}: known_hosts file {known} is missing (host keys are never auto-accepted)")
    if not Path(host.key_file).is_file():
        raise TargetError(f"{_where(host)}: private key {host.key_file} is missing")
    client = paramiko.SSHClient()
    client.load_host_keys(str(known))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        client.connect(
            host.address,
            port=host.port,
            username=host.user,
            key_filename=host.key_file,
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            look_for_keys=False,
            allow_agent=False,
        )
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise TargetError(f"{_where(host)}: host key does not match {known} ({exc})") from None
    except paramiko.SSHException as exc:
        client.close()
        if "not found in known_hosts" in str(exc):
            raise TargetError(f"{_where(host)}: host key is not in {known}; it is never accepted unseen") from None
        raise TargetError(f"{_where(host)}: SSH failed ({exc})") from None
    except TimeoutError:
        client.close()
        raise TargetError(f"{_where(host)}: unreachable (no answer within {timeout:g} s)") from None
    except OSError as exc:
        client.close()
        raise TargetError(f"{_where(host)}: unreachable ({exc.strerror or exc})") from None
    return client


def ssh_run(client: paramiko.SSHClient, command: str, timeout: float) -> tuple[int, str, str]:
    """Run one command and return (exit code, stdout, stderr); both streams are drained together so neither blocks."""
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        raise TargetError("SSH session is closed")
    channel = transport.open_session(timeout=timeout)
    deadline = time.monotonic() + timeout
    out: list[bytes] = []
    err: list[bytes] = []
    try:
        channel.exec_command(command)
        while True:
            busy = False
            if channel.recv_ready():
                out.append(channel.recv(65536))
                busy = True
            if channel.recv_stderr_ready():
                err.append(channel.recv_stderr(65536))
                busy = True
            drained = channel.eof_received or channel.closed
            if drained and channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                break  # EOF comes after the last byte of both streams; the exit status may come before or after it
            if time.monotonic() > deadline:
                raise TargetError(f"command timed out after {timeout:g} s: {command}")
            if not busy:
                time.sleep(0.01)
        code = channel.recv_exit_status()
    finally:
        channel.close()
    return code, b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace")
