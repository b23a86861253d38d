"""Network Watcher packet captures in the lab: a real capture taken inside the named VM, written to a blob.

`az network watcher packet-capture create --vm V --storage-account S [--storage-path URL] [--filters …]
[--time-limit T] [--capture-size B] [--capture-limit L]` PUTs a `PacketCapture`; the emulator starts tcpdump on the
VM's NIC (`eth0`) inside the VM's sandbox (`sandbox.stream_from_vm`, the lab's own way in, as the Network Watcher
agent runs inside an Azure VM), with the request's filters compiled to a BPF expression, and answers once tcpdump
listens. The capture ends at its time limit, at its byte limit (cut on a record boundary) or on `stop`; its `.cap` is
then written to the blob the storage path names (Azure's default path when none is given), where `az storage blob
download` finds it. `show`, `list`, `show-status` (`queryStatus`), `stop` and `delete` read and end it. Captures live
as long as the emulator process: a restarted emulator knows none (their blobs stay).
"""

from __future__ import annotations

import ipaddress
import os
import re
import select
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import unquote

from ghost_eval.lab.arm import compute
from ghost_eval.lab.arm.blobs import BlobStore, StorageError
from ghost_eval.lab.arm.state import ArmError, ArmState, Json
from ghost_eval.lab.pcap import GLOBAL_HEADER_SIZE, PcapError, cut

__all__ = ["DEFAULT_CONTAINER", "PacketCaptures", "StreamFromVm", "bpf_filter"]

StreamFromVm = Callable[[str, Sequence[str]], "subprocess.Popen[bytes]"]
"""(VM name, argv) → a process running that argv inside the VM, its stdout a pipe."""

DEFAULT_CONTAINER = "network-watcher-logs"
"""The container Network Watcher writes to when the request names no storage path."""
_MAX_TIME_S = 18000
_DEFAULT_TOTAL_BYTES = 1073741824
_MAX_TOTAL_BYTES = 4294967295
_LISTEN_TIMEOUT_S = 15.0
_BLOB_URL = re.compile(r"^https://(?P<account>[a-z0-9]+)\.blob\.core\.windows\.net/(?P<container>[^/]+)/(?P<blob>.+)$", re.I)


def _bad(message: str) -> ArmError:
    return ArmError(400, "InvalidRequestFormat", message)


def _addresses(value: str, side: str) -> str:
    """`10.0.0.4`, `10.0.0.4;10.0.0.5` or `10.0.0.1-10.0.0.9` as a BPF term on `src`/`dst`."""
    terms: list[str] = []
    for part in value.split(";"):
        low, _, high = part.strip().partition("-")
        try:
            first = ipaddress.IPv4Address(low.strip())
            last = ipaddress.IPv4Address(high.strip()) if high else first
        except ValueError:
            raise _bad(f"'{value}' is not an IPv4 address, list or range.") from None
        terms += [f"{side} net {net}" for net in ipaddress.summarize_address_range(first, last)]
    return "(" + " or ".join(terms) + ")"


def _ports(value: str, side: str) -> str:
    """`80`, `80;443` or `8000-8100` as a BPF term on `src`/`dst`."""
    terms = []
    for part in value.split(";"):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or not 0 <= int(high or low) <= 65535:
            raise _bad(f"'{value}' is not a port, list or range.")
        terms.append(f"{side} portrange {low}-{high}" if high else f"{side} port {low}")
    return "(" + " or ".join(terms) + ")"


def bpf_filter(filters: list[Json]) -> str:
    """Network Watcher's filters (any one may match; within one, every field given must) as a tcpdump expression;
    local is the VM's side of the packet, remote the other, in either direction."""
    alternatives = []
    for f in filters:
        protocol = str(f.get("protocol") or "Any").upper()
        if protocol not in ("TCP", "UDP", "ANY"):
            raise _bad(f"Filter protocol must be TCP, UDP or Any, not '{f.get('protocol')}'.")
        both = []
        for local, remote in (("src", "dst"), ("dst", "src")):
            terms = [protocol.lower()] if protocol != "ANY" else []
            for key, side, render in (("localIPAddress", local, _addresses), ("remoteIPAddress", remote, _addresses),
                                      ("localPort", local, _ports), ("remotePort", remote, _ports)):  # fmt: skip
                if f.get(key):
                    terms.append(render(str(f[key]), side))
            both.append(" and ".join(terms))
        if not any(both):
            return ""
        alternatives.append(f"(({both[0]}) or ({both[1]}))" if both[0] != both[1] else f"({both[0]})")
    return " or ".join(alternatives)


def _limit(props: Json, key: str, default: int, maximum: int) -> int:
    value = props.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
        raise _bad(f"{key} must be an integer from 0 to {maximum}, not {value!r}.")
    return value


@dataclass
class _Capture:
    name: str
    vm: str
    account: str
    container: str
    blob: str
    rendered: Json
    time_limit: int
    total_bytes: int
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: str = "NotStarted"
    stop_reason: str = ""
    errors: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    listening: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


class PacketCaptures:
    """The region's packet captures: created, run in their VMs, stopped, their files stored."""

    def __init__(self, state: ArmState, store: BlobStore, stream: StreamFromVm | None) -> None:
        self.state = state
        self.store = store
        self.stream = stream
        """How a capture reaches its VM; None (an emulator without VMs): a create is refused."""
        self._captures: dict[str, _Capture] = {}
        self._lock = threading.Lock()

    def _id(self, name: str) -> str:
        return f"{compute.watcher(self.state)['id']}/packetCaptures/{name}"

    def _get(self, name: str) -> _Capture:
        with self._lock:
            found = self._captures.get(name.lower())
        if found is None:
            raise ArmError(
                404, "ResourceNotFound", f"The Resource 'Microsoft.Network/networkWatchers/packetCaptures/{name}' was not found."
            )
        return found

    def create(self, name: str, body: Json) -> Json:
        props = body.get("properties")
        if not isinstance(props, dict):
            raise _bad("The request needs `properties`.")
        if str(props.get("targetType") or "AzureVM") != "AzureVM":
            raise ArmError(400, "FeatureNotSupportedInLab", "The lab captures on virtual machines only (targetType AzureVM).")
        vm = compute.render_vm(self.state, str(props.get("target", "")).rsplit("/", 1)[-1])
        location = props.get("storageLocation") or {}
        storage_id = str(location.get("storageId") or "")
        if not storage_id:
            raise ArmError(
                400, "FeatureNotSupportedInLab", "The lab writes captures to a storage account only (no filePath-only capture)."
            )
        account_name = storage_id.rstrip("/").rsplit("/", 1)[-1]
        try:
            account = self.state.render_storage_account(account_name)
        except ArmError:
            raise ArmError(
                404,
                "ResourceNotFound",
                f"The Resource 'Microsoft.Storage/storageAccounts/{account_name}' under resource group "
                f"'{self.state.resource_group}' was not found.",
            ) from None
        now = datetime.now(UTC)
        path = (
            str(location.get("storagePath") or "")
            or (
                f"https://{account['name']}.blob.core.windows.net/{DEFAULT_CONTAINER}/subscriptions/{self.state.subscription_id}"
                f"/resourcegroups/{self.state.resource_group}/providers/microsoft.compute/virtualmachines/{vm['name']}"
                f"/{now:%Y/%m/%d}/packetcapture_{now:%H_%M_%S}_{now.microsecond // 1000:03d}.cap"
            ).lower()
        )
        where = _BLOB_URL.match(path)
        if where is None or where["account"].lower() != account["name"].lower():
            raise _bad(f"storagePath '{path}' is not a blob URL of storage account '{account['name']}'.")
        filters = props.get("filters") or []
        if not isinstance(filters, list) or not all(isinstance(f, dict) for f in filters):
            raise _bad("filters must be a list of objects.")
        expression = bpf_filter(filters)
        snap = _limit(props, "bytesToCapturePerPacket", 0, _MAX_TOTAL_BYTES)
        capture = _Capture(
            name=name,
            vm=vm["name"],
            account=account["name"],
            container=unquote(where["container"]),
            blob=unquote(where["blob"]),
            time_limit=_limit(props, "timeLimitInSeconds", _MAX_TIME_S, _MAX_TIME_S) or _MAX_TIME_S,
            total_bytes=_limit(props, "totalBytesPerSession", _DEFAULT_TOTAL_BYTES, _MAX_TOTAL_BYTES),
            rendered={
                "name": name,
                "id": self._id(name),
                "etag": f'W/"{uuid.uuid4()}"',
                "properties": {
                    "provisioningState": "Succeeded",
                    "target": vm["id"],
                    "targetType": "AzureVM",
                    "bytesToCapturePerPacket": snap,
                    "totalBytesPerSession": _limit(props, "totalBytesPerSession", _DEFAULT_TOTAL_BYTES, _MAX_TOTAL_BYTES),
                    "timeLimitInSeconds": _limit(props, "timeLimitInSeconds", _MAX_TIME_S, _MAX_TIME_S),
                    "storageLocation": {"storageId": account["id"], "storagePath": path},
                    "filters": [{"protocol": "Any", **f} for f in filters],
                },
            },
        )
        if self.stream is None:
            raise ArmError(409, "VMAgentStatusCommunicationError", f"VM '{vm['name']}' has not reported status for VM agent.")
        with self._lock:
            if name.lower() in self._captures:
                raise ArmError(409, "Conflict", f"A packet capture named '{name}' already exists in this Network Watcher.")
            self._captures[name.lower()] = capture
        argv = ["tcpdump", "-i", "eth0", "-n", "-U", "--immediate-mode", "-Z", "root", "-w", "-",
                "-s", str(snap or 262144), *([expression] if expression else [])]  # fmt: skip
        threading.Thread(target=self._run, args=(capture, argv), name=f"capture-{name}", daemon=True).start()
        capture.listening.wait(_LISTEN_TIMEOUT_S)
        return capture.rendered

    def _run(self, capture: _Capture, argv: list[str]) -> None:
        """Read the VM's tcpdump until the time limit, the byte limit or `stop`; then store what it wrote."""
        assert self.stream is not None
        data = bytearray()
        try:
            proc = self.stream(capture.vm, argv)
        except OSError as exc:
            self._finish(capture, b"", "Error", f"the capture could not start: {exc}", ["CaptureFailed"])
            return
        assert proc.stdout is not None and proc.stderr is not None
        stderr = bytearray()
        deadline = time.monotonic() + capture.time_limit
        reason = ""
        streams = {proc.stdout.fileno(): data, proc.stderr.fileno(): stderr}
        while streams:
            ready, _, _ = select.select(list(streams), [], [], 0.1)
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    del streams[fd]
                    continue
                streams[fd] += chunk
            if b"listening on" in stderr:
                capture.status = "Running"
                capture.listening.set()
            if reason:
                continue
            if capture.stop.is_set():
                reason = "ManuallyStopped"
            elif time.monotonic() >= deadline:
                reason = "TimeExceeded"
            elif capture.total_bytes and len(data) > capture.total_bytes:
                reason = "SessionMaxBytesExceeded"
            if reason:
                proc.terminate()
        returncode = proc.wait()
        capture.listening.set()
        if not reason:
            tail = stderr.decode(errors="replace").strip().splitlines()
            self._finish(capture, b"", "Error", f"tcpdump exited {returncode}: {tail[-1] if tail else ''}", ["CaptureFailed"])
            return
        try:
            file = cut(bytes(data), capture.total_bytes or len(data)) if len(data) >= GLOBAL_HEADER_SIZE else b""
        except PcapError as exc:
            self._finish(capture, b"", "Error", f"tcpdump wrote no pcap stream: {exc}", ["CaptureFailed"])
            return
        self._finish(capture, file, "Stopped", reason, [])

    def _finish(self, capture: _Capture, file: bytes, status: str, reason: str, errors: list[str]) -> None:
        if status == "Stopped":
            acls = self.state.render_storage_account(capture.account)["properties"]["networkAcls"]
            trusted = "azureservices" in str(acls.get("bypass", "")).lower().replace(" ", "")
            try:
                if acls.get("defaultAction") == "Deny" and not trusted:
                    raise StorageError(403, "AuthorizationFailure", "The account's firewall refuses Network Watcher.")
                try:
                    self.store.container(capture.account, capture.container)
                except StorageError:
                    self.store.create_container(capture.account, capture.container)
                self.store.put_blob(capture.account, capture.container, capture.blob, file, "application/octet-stream")
            except StorageError as exc:
                status, reason, errors = "Error", exc.message, ["StorageFailed"]
        capture.status, capture.stop_reason, capture.errors = status, reason, errors
        capture.done.set()

    def show(self, name: str) -> Json:
        return self._get(name).rendered

    def list(self) -> list[Json]:
        with self._lock:
            return [c.rendered for c in self._captures.values()]

    def status(self, name: str) -> Json:
        capture = self._get(name)
        return {
            "name": capture.name,
            "id": self._id(capture.name),
            "captureStartTime": capture.started.isoformat().replace("+00:00", "Z"),
            "packetCaptureStatus": capture.status,
            "stopReason": capture.stop_reason,
            "packetCaptureError": capture.errors,
        }

    def stop(self, name: str) -> None:
        """End a running capture and wait until its file is stored (Azure's stop returns when the session is over)."""
        capture = self._get(name)
        capture.stop.set()
        capture.done.wait(_LISTEN_TIMEOUT_S)

    def delete(self, name: str) -> bool:
        """Forget a capture (stopping it first, its file kept); False when there was none."""
        with self._lock:
            capture = self._captures.get(name.lower())
        if capture is None:
            return False
        self.stop(name)
        with self._lock:
            self._captures.pop(name.lower(), None)
        return True
