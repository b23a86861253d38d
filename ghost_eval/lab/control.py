"""`lab up`, `lab down`, `lab status`: build the whole lab, check it, and remove every trace of it.

`lab_up` writes a manifest before creating anything, so a crash at any point leaves enough for `lab_down`
to clean up; `lab_down` also works from names alone (they derive from the state folder), killing the
processes of the lab's namespaces before deleting them, stopping the emulator and removing the state files.
The Target the lab serves is written to `<state_dir>/target.json`.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import SshHost, Target, TargetError, load_target
from ghost_eval.lab.arm.paths import CONFIG_NAME, ENDPOINT_NAME, write_json_atomic
from ghost_eval.lab.errors import LabError
from ghost_eval.lab.keys import generate_key, known_hosts_line
from ghost_eval.lab.layout import (
    DEFAULT_STATE_DIR,
    INTERNET_PORTS,
    RESOURCE_GROUP,
    SP_CLIENT_ID,
    SUBNET,
    SUBSCRIPTION_ID,
    VNET,
    LabLayout,
    VmSpec,
)
from ghost_eval.lab.network import (
    choose_mgmt_index,
    create_network,
    destroy_network,
    lab_links,
    lab_namespaces,
    wire_vm,
)
from ghost_eval.lab.preflight import preflight
from ghost_eval.lab.sandbox import MASKED_ROOTS, create_vm, destroy_vm, in_masked_root, start_vm
from ghost_eval.lab.shell import in_netns, kill_pids, netns_pids, pid_alive, run
from ghost_eval.lab.vm import INIT, prepare_vm

__all__ = ["API_VERSION", "LabStatus", "lab_down", "lab_layout", "lab_status", "lab_up"]

_STATE_ENTRIES = ("lab.json", "target.json", "ssh", "arm", "vms", "crun", "internet.log", "az", ".az.lock", "agentbox")
_BOOT_TIMEOUT_S = 30.0
API_VERSION = "2026-03-01"
"""The api-version azure-mgmt-network 33.x sends; the emulator accepts any."""


@dataclass
class LabStatus:
    state_dir: Path
    up: bool
    healthy: bool
    checks: dict[str, str] = field(default_factory=dict)
    """Check → "ok" or what is wrong."""


@contextmanager
def _host_lock() -> Iterator[None]:
    """One `lab up`/`lab down` at a time on this host (management subnets and names are chosen under it)."""
    folder = Path("/run/lock") if Path("/run/lock").is_dir() else Path(tempfile.gettempdir())
    fd = os.open(folder / "ghost-eval-lab.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _state_dir(state_dir: Path | None) -> Path:
    path = Path(os.path.normpath((state_dir or DEFAULT_STATE_DIR).absolute()))
    if path == Path("/"):
        raise LabError("the state folder cannot be /; use another (default /run/ghost-eval-lab, or set GHOST_EVAL_LAB_DIR)")
    return path


def _read_manifest(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def lab_layout(state_dir: Path) -> LabLayout:
    """The layout of the lab in `state_dir`, with the management subnet its `lab up` chose."""
    index = _read_manifest(state_dir / "lab.json").get("mgmt_index", 0)
    return LabLayout(state_dir, int(index) if isinstance(index, int) else 0)


def _wait(what: str, check: Callable[[], bool], timeout: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    tail = ""
    if log is not None and log.exists():
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-5:])
    raise LabError(f"{what} did not come up within {timeout:g} s" + (f" (log: {tail})" if tail else ""))


def _start_emulator(layout: LabLayout) -> tuple[int, Callable[[], None]]:
    """Start the emulator; returns its pid and the wait for it to answer (the VMs boot meanwhile)."""
    try:
        import trustme
    except ImportError:
        raise LabError("the ARM emulator needs the `trustme` package (pip install trustme)") from None
    arm = layout.arm_dir
    arm.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA(organization_name="ghost-eval lab")
    ca.cert_pem.write_to_path(str(arm / "ca.pem"))
    cert = ca.issue_cert("127.0.0.1", "localhost", "*.blob.core.windows.net")  # blob endpoints, through the proxy
    cert.private_key_and_cert_chain_pem.write_to_path(str(arm / "server.pem"))
    (arm / "server.pem").chmod(0o600)
    config = {
        "token": secrets.token_urlsafe(32),
        "client_id": SP_CLIENT_ID,
        "client_secret": secrets.token_urlsafe(24),
        "cert": str(arm / "server.pem"),
        "key": str(arm / "server.pem"),
        "fabric_netns": layout.fabric_ns,
    }
    write_json_atomic(arm / CONFIG_NAME, config)
    (arm / CONFIG_NAME).chmod(0o600)
    with (arm / "emulator.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ghost_eval.lab.arm.daemon", str(arm)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )

    def ready() -> bool:
        if proc.poll() is not None:
            raise LabError(f"the ARM emulator exited with {proc.returncode}; see {arm / 'emulator.log'}")
        return (arm / ENDPOINT_NAME).exists()

    return proc.pid, lambda: _wait("the ARM emulator", ready, 15, arm / "emulator.log")


def _internet_listening(layout: LabLayout) -> bool:
    listening = run(in_netns(layout.internet_ns, "ss", "-Hltn"), check=False)
    return all(f":{port} " in listening for port in INTERNET_PORTS)


def _start_internet(layout: LabLayout) -> Callable[[], None]:
    """The Internet stand-in: the lab's listener answering on `INTERNET_PORTS` in its own namespace. It dies with the
    namespace (`destroy_network` kills every process of the lab's namespaces)."""
    ports = [arg for port in INTERNET_PORTS for arg in ("--port", str(port))]
    with (layout.state_dir / "internet.log").open("ab") as log:
        subprocess.Popen(
            in_netns(layout.internet_ns, sys.executable, "-m", "ghost_eval.lab.appd", *ports),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    return lambda: _wait("the Internet stand-in", lambda: _internet_listening(layout), 15, layout.state_dir / "internet.log")


def _target(layout: LabLayout) -> Target:
    arm = layout.arm_dir
    endpoint = json.loads((arm / ENDPOINT_NAME).read_text())
    config = json.loads((arm / CONFIG_NAME).read_text())
    return Target(
        name="lab",
        subscription_id=SUBSCRIPTION_ID,
        resource_group=RESOURCE_GROUP,
        vnet=VNET,
        subnet=SUBNET,
        nics={vm.name: vm.nic for vm in layout.vms},
        nsgs={vm.name: vm.nsg for vm in layout.vms},
        arm_endpoint=endpoint["url"],
        ca_bundle=str(arm / "ca.pem"),
        credential="static_token",
        token=config["token"],
        hosts={
            vm.name: SshHost(
                name=vm.name,
                address=layout.mgmt_address(vm),
                port=22,
                user="root",
                key_file=str(layout.client_key),
                known_hosts_file=str(layout.known_hosts),
            )
            for vm in layout.vms
        },
    )


def _ssh_ready(host: SshHost, vm: VmSpec) -> Callable[[], bool]:
    checks = ["true"]
    if "fail2ban" in vm.boot_units:
        checks.append("fail2ban-client status sshd")
    checks += [f"ss -Htln 'sport = :{p}' | grep -q LISTEN" for p in vm.app_ports]

    def ready() -> bool:
        try:
            client = ssh_connect(host, timeout=2)
        except TargetError:
            return False
        try:
            return all(ssh_run(client, c, timeout=5)[0] == 0 for c in checks)
        finally:
            client.close()

    return ready


def lab_up(state_dir: Path | None = None) -> Target:
    """Build the lab (or return the running one) and write its Target to `<state_dir>/target.json`."""
    preflight()
    path = _state_dir(state_dir)
    if not in_masked_root(path):
        raise LabError(
            f"the state folder {path} is outside the folders every VM sees fresh ({', '.join(MASKED_ROOTS)}): another "
            "lab's VMs could read its keys there; use one under them (default /run/ghost-eval-lab)"
        )
    with _host_lock():
        if (path / "lab.json").exists():
            status = lab_status(path)
            if status.healthy:
                return load_target(path / "target.json")
            _down(path)
        elif lab_namespaces(LabLayout(path)) or lab_links(LabLayout(path)):
            _down(path)
        path.mkdir(parents=True, exist_ok=True)
        layout = LabLayout(path, choose_mgmt_index(LabLayout(path)))
        manifest: dict[str, object] = {
            "lab_id": layout.lab_id,
            "mgmt_index": layout.mgmt_index,
            "created_at": datetime.now(UTC).isoformat(),
            "launchers": {},
        }
        write_json_atomic(layout.manifest, manifest)
        try:
            target = _build(layout, manifest)
        except BaseException:
            _down(path)
            raise
    return target


def _build(layout: LabLayout, manifest: dict[str, object]) -> Target:
    create_network(layout)
    internet_ready = _start_internet(layout)
    manifest["emulator_pid"], emulator_ready = _start_emulator(layout)
    write_json_atomic(layout.manifest, manifest)
    client_key = generate_key(layout.client_key, f"ghost-eval-lab-{layout.lab_id}")
    public = Path(f"{client_key}.pub").read_text()
    known = ""
    launchers: dict[str, int] = {}
    for vm in layout.vms:
        host_key = generate_key(layout.ssh_dir / "hostkeys" / vm.name, f"root@{vm.name}")
        known += known_hosts_line(layout.mgmt_address(vm), 22, host_key)
        prepare_vm(layout, vm, public, host_key)
        launchers[vm.name] = create_vm(layout, vm, [INIT])
        manifest["launchers"] = launchers
        write_json_atomic(layout.manifest, manifest)
        wire_vm(layout, vm, launchers[vm.name])
        start_vm(layout, vm)
    layout.known_hosts.write_text(known)
    internet_ready()
    emulator_ready()
    target = _target(layout)
    for vm in layout.vms:
        _wait(
            f"{vm.name} (sshd and its boot units)",
            _ssh_ready(target.hosts[vm.name], vm),
            _BOOT_TIMEOUT_S,
            layout.vm_dir(vm) / "console.log",
        )
    write_json_atomic(layout.target_file, target.model_dump(mode="json"))
    layout.target_file.chmod(0o600)
    return target


def _emulator_pid(state_dir: Path) -> int | None:
    """The emulator serving this lab, found by its command line (so a lost manifest does not orphan it)."""
    needle = f"ghost_eval.lab.arm.daemon\0{state_dir / 'arm'}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle in (proc / "cmdline").read_bytes():
                return int(proc.name)
        except OSError:
            continue
    return None


def _down(state_dir: Path) -> list[str]:
    layout = lab_layout(state_dir)
    removed = [f"VM {vm.name}" for vm in layout.vms if destroy_vm(layout, vm)]
    pid = _emulator_pid(state_dir)
    if pid is not None:
        kill_pids([pid])
        removed.append(f"ARM emulator (pid {pid})")
    removed += destroy_network(layout)
    for entry in _STATE_ENTRIES:
        p = state_dir / entry
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    if state_dir.is_dir() and not any(state_dir.iterdir()):
        state_dir.rmdir()
    return removed


def lab_down(state_dir: Path | None = None) -> list[str]:
    """Remove the lab (processes, namespaces, links, emulator, state files), even half-built; returns what went."""
    if os.geteuid() != 0:
        raise LabError("the lab needs root to be removed (network namespaces); run it as root")
    path = _state_dir(state_dir)
    with _host_lock():
        return _down(path)


def _arm_answers(target: Target) -> str:
    url = f"{target.arm_endpoint}/subscriptions/{target.subscription_id}/resourceGroups/{target.resource_group}"
    request = urllib.request.Request(f"{url}?api-version={API_VERSION}", headers={"Authorization": f"Bearer {target.token}"})
    try:
        with urllib.request.urlopen(request, timeout=3, context=ssl.create_default_context(cafile=target.ca_bundle)) as r:
            return "ok" if r.status == 200 else f"HTTP {r.status}"
    except (OSError, ValueError) as exc:
        return f"no answer ({exc})"


def lab_status(state_dir: Path | None = None) -> LabStatus:
    """Whether the lab is up and every piece answers: namespaces, VM inits, SSH, the emulator."""
    path = _state_dir(state_dir)
    layout = lab_layout(path)
    status = LabStatus(path, up=layout.manifest.exists(), healthy=False)
    if not status.up:
        status.checks["lab"] = f"not up (no {layout.manifest})"
        return status
    present = set(lab_namespaces(layout))
    for ns in (layout.fabric_ns, layout.internet_ns, *(layout.vm_ns(vm) for vm in layout.vms)):
        status.checks[f"netns {ns}"] = "ok" if ns in present else "missing"
    status.checks["Internet stand-in"] = "ok" if netns_pids(layout.internet_ns) else "not running"
    launchers = _read_manifest(layout.manifest).get("launchers")
    for vm in layout.vms:
        pid = launchers.get(vm.name) if isinstance(launchers, dict) else None
        status.checks[f"{vm.name} init"] = "ok" if isinstance(pid, int) and pid_alive(pid) else "not running"
    status.checks["ARM emulator"] = "ok" if _emulator_pid(path) else "not running"
    try:
        target = load_target(layout.target_file)
    except GhostEvalError as exc:
        status.checks["target"] = str(exc)
    else:
        status.checks["target"] = "ok"
        status.checks["ARM API"] = _arm_answers(target)
        for name, host in target.hosts.items():
            try:
                client = ssh_connect(host, timeout=3)
            except TargetError as exc:
                status.checks[f"ssh {name}"] = str(exc)
            else:
                client.close()
                status.checks[f"ssh {name}"] = "ok"
    status.healthy = all(v == "ok" for v in status.checks.values())
    return status
