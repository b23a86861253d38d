"""The external agent (an original Ghost Agent checkout) in a sandbox of its own, so a real model is safe on the lab.

The original's shell runs every command that is not `az` on the machine the agent runs on. On the lab, that agent
process therefore runs inside a crun container made as the VMs are (`sandbox`), with less:
- a user namespace whose uids are unused on the host (`agent_uid_base`), the agent an ordinary user in it, with no
  capability at all, `no_new_privs`, the VMs' seccomp filter and masked /proc paths, at most 512 processes;
- the host's root file system read-only and not id-mapped: the agent sees host files as a stranger does (a file only
  root may read stays unreadable); /run, /tmp, /home, /var/log, /root and the lab's state folder are fresh and empty;
  the only writable folders are its working folder (where it writes its session and audit) and a private folder
  holding a copy of the lab's `az` profile, the emulator's CA, the lab's SSH key and a home; the azure-cli/original
  environment and the original checkout are bound read-only;
- only the variables listed in `environment` (never the host's): the host's secrets in the environment stay out;
- its own PID namespace (no host process, nor its environment, is visible) and a network namespace the host made
  (`network.wire_agent`): loopback, where the host's relays (`relay`) answer for the ARM emulator, the scripted model
  and, for a real model, a CONNECT tunnel to the vendor's API name only; and mgmt0 on the lab's management bridge,
  from which only SSH to the VMs may leave. No route leads to the host or anywhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from ghost_eval.lab.arm.paths import ENDPOINT_NAME
from ghost_eval.lab.azcli import ToolEnv, az_login, az_variables
from ghost_eval.lab.control import lab_layout
from ghost_eval.lab.errors import LabError
from ghost_eval.lab.layout import LabLayout
from ghost_eval.lab.network import unwire_agent, wire_agent
from ghost_eval.lab.relay import Relay
from ghost_eval.lab.rootfs import ROOTFS, STAGE, LaunchSpec
from ghost_eval.lab.sandbox import (
    MASKED_PATHS,
    MASKED_ROOTS,
    READONLY_PATHS,
    UID_FIRST,
    UID_SPAN,
    crun_command,
    in_masked_root,
    launcher_argv,
    seccomp_profile,
    tmpfs_mount,
)

__all__ = ["AGENT_UID", "PRIVATE", "VENDOR_API", "AgentBox", "agent_uid_base"]

AGENT_UID = 1000
"""The agent's uid inside its namespace (host uid `agent_uid_base + AGENT_UID`)."""
PRIVATE = "/run/agentbox"
"""Where the agent sees its private folder: the `az` profile, CA, SSH key and home."""
VENDOR_API = {"anthropic": ("api.anthropic.com:443",), "gemini": ("generativelanguage.googleapis.com:443",)}
"""What a real model's tunnel may reach, by provider: the API host name the vendor's SDK calls, on 443."""
_PATH = "/usr/local/bin:/usr/bin:/bin"
_MAX_PROCESSES = 512


def agent_uid_base(layout: LabLayout) -> int:
    """The host uid that is root in the agent's namespace: the lab's last slot of 16 (VMs take the first ones)."""
    return UID_FIRST + (layout.mgmt_index * 16 + 15) * UID_SPAN


def _free_port() -> int:
    """A port for the tunnel's listener; the agent's namespace is empty, any port the host has free is free there."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _chown_tree(root: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [folder, *(os.path.join(folder, n) for n in (*dirs, *files))]:
            os.lchown(name, uid, uid)


class AgentBox:
    """One sandboxed run of an external agent on the lab in `state_dir`: enter to build it (namespace, relays,
    private folder), `run` the agent, exit to remove every trace. `work` is the agent's working folder, seen at the
    same path inside; `readonly` folders are bound read-only at their own path (the original checkout); `models`
    are host ports on 127.0.0.1 to relay (the scripted model); `egress` are the `host:port` names a real model's
    API may be reached at through the tunnel."""

    def __init__(
        self,
        state_dir: Path,
        tools: ToolEnv,
        work: Path,
        readonly: Sequence[Path] = (),
        models: Iterable[int] = (),
        egress: Sequence[str] = (),
    ):
        self.layout = lab_layout(state_dir)
        self.tools = tools
        self.work = work.absolute()
        self.readonly = [p.absolute() for p in readonly]
        self.models = list(models)
        self.egress = list(egress)
        self.folder = self.layout.state_dir / "agentbox"
        self.private = self.folder / "private"
        self.tunnel_port = _free_port() if egress else None
        self._relay: Relay | None = None

    # -- building -------------------------------------------------------------------------------

    def __enter__(self) -> AgentBox:
        try:
            self.close()  # what a crashed run left: its container, namespace, folder
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self) -> None:
        arm = self.layout.arm_dir
        try:
            emulator = urlsplit(json.loads((arm / ENDPOINT_NAME).read_text(encoding="utf-8"))["url"]).port
        except (OSError, ValueError, KeyError) as exc:
            raise LabError(f"the lab in {self.layout.state_dir} is not up (its emulator endpoint: {exc})") from None
        if emulator is None:
            raise LabError(f"{arm / ENDPOINT_NAME}: the emulator's URL names no port")
        az_login(self.layout.state_dir, self.tools)
        shutil.rmtree(self.folder, ignore_errors=True)
        (self.folder / "bundle").mkdir(parents=True, mode=0o700)
        self.private.mkdir(mode=0o700)
        shutil.copytree(self.layout.state_dir / "az", self.private / "az", ignore=shutil.ignore_patterns("*.lock"))
        shutil.copy(arm / "ca.pem", self.private / "ca.pem")
        (self.private / "ssh").mkdir()
        for key in (self.layout.client_key, Path(f"{self.layout.client_key}.pub"), self.layout.known_hosts):
            shutil.copy(key, self.private / "ssh" / key.name)  # the client's key only, never the VMs' host keys
        (self.private / "home").mkdir()
        self._write_target()
        uid = agent_uid_base(self.layout) + AGENT_UID
        _chown_tree(self.private, uid)
        _chown_tree(self.work, uid)
        wire_agent(self.layout)
        self._relay = Relay(self.layout.agent_ns, [emulator, *self.models], self.tunnel_port, self.egress)

    def _write_target(self) -> None:
        """The lab's target as the agent sees it: SSH key and known_hosts in its private folder."""
        target = json.loads(self.layout.target_file.read_text(encoding="utf-8"))
        target["ca_bundle"] = f"{PRIVATE}/ca.pem"
        for host in target.get("hosts", {}).values():
            host["key_file"] = f"{PRIVATE}/ssh/{Path(host['key_file']).name}"
            host["known_hosts_file"] = f"{PRIVATE}/ssh/{Path(host['known_hosts_file']).name}"
        (self.private / "target.json").write_text(json.dumps(target, indent=1), encoding="utf-8")

    def environment(self) -> dict[str, str]:
        """Every variable the agent gets (nothing of the host's own environment): the lab's `az`, its target, and the
        tunnel as the HTTPS proxy when a real model is used (loopback, where the emulator and models answer, is not
        proxied)."""
        env = {
            "PATH": f"{self.tools.bin}:{_PATH}",
            "HOME": f"{PRIVATE}/home",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "GHOST_EVAL_TARGET": f"{PRIVATE}/target.json",
            "NO_PROXY": "127.0.0.1,localhost",
            **az_variables(Path(PRIVATE) / "az", Path(PRIVATE) / "ca.pem"),
        }
        if self.tunnel_port is not None:
            proxy = f"http://127.0.0.1:{self.tunnel_port}"
            env |= {"HTTPS_PROXY": proxy, "https_proxy": proxy}
        return env

    # -- the container --------------------------------------------------------------------------

    def _binds(self) -> list[tuple[Path, str, bool]]:
        """(host folder, path inside, writable)."""
        runtime = {self.tools.root, Path(os.path.realpath(self.tools.python)).parent.parent}
        return [
            (self.work, str(self.work), True),
            (self.private, PRIVATE, True),
            *((p, str(p), False) for p in sorted(runtime | set(self.readonly))),
        ]

    def oci_config(self, argv: Sequence[str], env: dict[str, str]) -> dict[str, object]:
        """The agent's OCI runtime configuration (see the module's docstring for what each part is for)."""
        base = agent_uid_base(self.layout)
        state = self.layout.state_dir.absolute()
        masked = [*MASKED_ROOTS, *([] if in_masked_root(state) else [str(state)])]
        mounts: list[dict[str, object]] = [
            {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance"]},
            {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev"]},
            *(tmpfs_mount(root, "1777" if root == "/tmp" else "0755") for root in masked),
        ]
        mounts += [
            {
                "destination": inside,
                "type": "bind",
                "source": str(STAGE / str(i)),
                "options": ["rbind", "rw" if writable else "ro", "nosuid", "nodev"],
            }
            for i, (_, inside, writable) in enumerate(self._binds())
        ]
        return {
            "ociVersion": "1.0.2",
            "process": {
                "terminal": False,
                "user": {"uid": AGENT_UID, "gid": AGENT_UID},
                "args": list(argv),
                "env": [f"{k}={v}" for k, v in env.items()],
                "cwd": str(self.work),
                "capabilities": {k: [] for k in ("bounding", "effective", "permitted", "inheritable", "ambient")},
                "noNewPrivileges": True,
                "rlimits": [
                    {"type": "RLIMIT_NPROC", "hard": _MAX_PROCESSES, "soft": _MAX_PROCESSES},
                    {"type": "RLIMIT_CORE", "hard": 0, "soft": 0},
                ],
            },
            "root": {"path": str(ROOTFS), "readonly": True},
            "hostname": "ghost-agent",
            "mounts": mounts,
            "linux": {
                "uidMappings": [{"containerID": 0, "hostID": base, "size": UID_SPAN}],
                "gidMappings": [{"containerID": 0, "hostID": base, "size": UID_SPAN}],
                "namespaces": [
                    *({"type": t} for t in ("pid", "ipc", "uts", "user", "mount")),
                    {"type": "network", "path": f"/run/netns/{self.layout.agent_ns}"},
                ],
                "maskedPaths": list(MASKED_PATHS),
                "readonlyPaths": list(READONLY_PATHS),
                "seccomp": seccomp_profile(),
            },
        }

    def run(self, argv: Sequence[str], stdin: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        """Run `argv` in the box with `env` (start from `environment()`); raises subprocess.TimeoutExpired as
        subprocess.run does (the container is killed on the way out)."""
        bundle = self.folder / "bundle"
        (bundle / "config.json").write_text(json.dumps(self.oci_config(argv, env), indent=1), encoding="utf-8")
        launch: LaunchSpec = {
            "uid_base": agent_uid_base(self.layout),
            "uid_span": UID_SPAN,
            "binds": [str(host) for host, _, _ in self._binds()],
            "upper": None,
            "work": None,
            "crun": crun_command(self.layout, "run", "--bundle", str(bundle), self.layout.agent_ns),
        }
        return subprocess.run(launcher_argv(launch), input=stdin, capture_output=True, text=True, timeout=timeout, check=False)

    # -- removing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Kill the container, stop the relays, remove the namespace and the private folder; safe to repeat."""
        name = self.layout.agent_ns
        subprocess.run(crun_command(self.layout, "kill", name, "KILL"), capture_output=True, check=False)
        subprocess.run(crun_command(self.layout, "delete", "--force", name), capture_output=True, check=False)
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        unwire_agent(self.layout)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
