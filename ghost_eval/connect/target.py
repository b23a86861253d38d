"""What a live run points at: the Azure subscription and the VMs' SSH endpoints, read from a target file.

One `Target` describes either the local lab (its ARM emulator, a fixed bearer token, a throwaway CA) or a
real environment (public Azure through `DefaultAzureCredential`). Everything that talks to the
infrastructure — fault recipes, the snapshot, the reference agent — opens its clients from it
(`ghost_eval.connect.ssh`, `ghost_eval.connect.azure`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ghost_eval.base.errors import GhostEvalError, RecordError
from ghost_eval.base.records import Record, load_yaml_record

__all__ = ["TARGET_SCHEMA_VERSION", "SshHost", "Target", "TargetError", "load_target"]

TARGET_SCHEMA_VERSION = "1"


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
