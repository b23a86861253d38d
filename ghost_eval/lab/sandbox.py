"""A lab VM as a sandbox: an OCI container run by crun, so that root inside changes nothing outside.

Fix trials run, as root in a VM, commands a language model wrote. Each VM is therefore a crun container with
- a user namespace of its own: VM root is a high, unused host uid (`uid_base`), so root inside is nobody outside;
- a root filesystem of its own (pivot_root): an overlay whose lower layer is the host's root file system, mounted
  read-only and id-mapped so that host-root files belong to VM root, and whose upper layer (every write the VM
  makes) lives in the lab's state folder. /run, /tmp, /var/tmp, /home and /var/log are fresh, and a lab's state
  folder must lie under one of them, so no key, token, `/run/netns` entry or other lab is visible;
- its own network namespace, created inside its user namespace (so iptables, nft and tc work for VM root) and
  wired by the host before the VM starts; its own PID, UTS, IPC and mount namespaces; a private /dev; /sys
  read-only; /proc/sys writable only where the kernel lets a namespace's root write (its own network settings);
- a capability set without CAP_SYS_ADMIN, `no_new_privs`, and a seccomp filter refusing mount/umount, setns,
  unshare and namespace-creating clone, pivot_root, kexec, module loading, bpf, keyctl, perf and the clock.

Why crun: it is Debian's packaged OCI runtime, starts a container in about 20 ms, applies every item above from
one declarative file, and keeps the namespaces that hand-written `unshare` code left open shut (see the README).
The root file system is built by `rootfs` in a private mount namespace that only the container keeps, so the host's
mount table never holds it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ghost_eval.lab import rootfs
from ghost_eval.lab.errors import LabError
from ghost_eval.lab.layout import LabLayout, VmSpec
from ghost_eval.lab.rootfs import ROOTFS, STAGE, LaunchSpec

__all__ = [
    "CAPABILITIES",
    "DENIED_SYSCALLS",
    "MASKED_PATHS",
    "MASKED_ROOTS",
    "in_masked_root",
    "READONLY_PATHS",
    "UID_FIRST",
    "UID_SPAN",
    "container_pid",
    "create_vm",
    "crun_command",
    "destroy_vm",
    "exec_in_vm",
    "launcher_argv",
    "oci_config",
    "seccomp_profile",
    "start_vm",
    "stream_from_vm",
    "tmpfs_mount",
    "uid_base",
]

CAPABILITIES = (
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_SETFCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_RESOURCE",
    "CAP_AUDIT_WRITE",
)
"""What a VM's root may do, all of it only over the VM's own namespaces: sshd (setuid, chroot), iptables and tc
(net admin), `ss -p` (ptrace). No CAP_SYS_ADMIN, so no mount, no host name change, no namespace administration."""

DENIED_SYSCALLS = (
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "setns",
    "unshare",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "userfaultfd",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
)
"""Refused with EPERM inside every VM (the process that a console or `crun exec` starts included)."""

_CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a clone with any of them is refused."""

MASKED_ROOTS = ("/run", "/tmp", "/var/tmp", "/home", "/root", "/var/log", "/var/lib/fail2ban")
"""Fresh, empty folders in every VM: the host's runtime state, scratch space (where labs and their keys live),
users' homes (root's too: the lower layer is id-mapped, so VM root could read a key root writes there while the lab
runs) and logs never show through the lower layer."""

_MASKED_MODES = {"/tmp": "1777", "/var/tmp": "1777", "/root": "0700"}


def in_masked_root(path: Path) -> bool:
    """Whether every VM sees this path fresh: a lab's state folder must be, or another lab's VMs could read its keys
    through the host's root file system."""
    return any(path == Path(root) or Path(root) in path.parents for root in MASKED_ROOTS)


MASKED_PATHS = (
    "/proc/acpi",
    "/proc/asound",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
)
"""Kernel files no sandbox may read (hidden by crun)."""
READONLY_PATHS = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sysrq-trigger")

UID_SPAN = 65536
UID_FIRST = 1_000_000_000
_CRUN = "crun"


def uid_base(layout: LabLayout, vm: VmSpec) -> int:
    """The host uid that is root in this VM: a range of its own per lab and VM, far above any real account."""
    return UID_FIRST + (layout.mgmt_index * 16 + layout.vms.index(vm)) * UID_SPAN


def _name(layout: LabLayout, vm: VmSpec) -> str:
    return layout.vm_ns(vm)


def crun_command(layout: LabLayout, *args: str) -> list[str]:
    """crun with the lab's own state folder and no cgroup manager (see the README on cgroups)."""
    return [_CRUN, "--root", str(layout.state_dir / "crun"), "--cgroup-manager=disabled", *args]


def _runtime_binds() -> list[str]:
    """Where the lab's Python and this package live, when that is inside a folder the VM sees fresh (a checkout or
    virtualenv under /tmp, as a CI clone is): bound read-only at the same path so the VM's daemons still start."""
    import ghost_eval

    needed = {Path(p).absolute() for p in (sys.prefix, sys.base_prefix, Path(ghost_eval.__file__).parent)}
    needed |= {Path(sys.executable).absolute().parent}
    return sorted(str(p) for p in needed if in_masked_root(p) and p.exists())


def seccomp_profile() -> dict[str, object]:
    namespace_clone = [
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": 1,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for flag in _CLONE_NEW_FLAGS
    ]
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
        "syscalls": [
            {"names": list(DENIED_SYSCALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
            # clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall back to clone.
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
            *namespace_clone,
        ],
    }


def tmpfs_mount(destination: str, mode: str = "0755") -> dict[str, object]:
    return {"destination": destination, "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", f"mode={mode}"]}


def oci_config(layout: LabLayout, vm: VmSpec, args: Sequence[str]) -> dict[str, object]:
    """The OCI runtime configuration of one VM."""
    base = uid_base(layout, vm)
    mounts: list[dict[str, object]] = [
        {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755"]},
        {
            "destination": "/dev/pts",
            "type": "devpts",
            "source": "devpts",
            "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"],
        },
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
        *(tmpfs_mount(root, _MASKED_MODES.get(root, "0755")) for root in MASKED_ROOTS),
    ]
    mounts += [
        {"destination": path, "type": "bind", "source": str(STAGE / str(i)), "options": ["rbind", "ro", "nosuid", "nodev"]}
        for i, path in enumerate(_runtime_binds())
    ]
    capabilities = list(CAPABILITIES)
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": list(args),
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"],
            "cwd": "/",
            "capabilities": {k: capabilities for k in ("bounding", "effective", "permitted")},
            "noNewPrivileges": True,
        },
        "root": {"path": str(ROOTFS), "readonly": False},
        "hostname": vm.name,
        "mounts": mounts,
        "linux": {
            "uidMappings": [{"containerID": 0, "hostID": base, "size": UID_SPAN}],
            "gidMappings": [{"containerID": 0, "hostID": base, "size": UID_SPAN}],
            "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "user", "mount")],
            "maskedPaths": list(MASKED_PATHS),
            "readonlyPaths": list(READONLY_PATHS),
            "seccomp": seccomp_profile(),
        },
    }


def _bundle(layout: LabLayout, vm: VmSpec) -> Path:
    return layout.vm_dir(vm) / "bundle"


def upper_dir(layout: LabLayout, vm: VmSpec) -> Path:
    """Where every write the VM makes lands (the upper layer of its root file system)."""
    return layout.vm_dir(vm) / "upper"


def own_upper(layout: LabLayout, vm: VmSpec) -> None:
    """Hand the prepared upper layer to VM root (the host wrote it as host root, whom the VM cannot act for)."""
    base = uid_base(layout, vm)
    upper = upper_dir(layout, vm)
    for folder, dirs, files in os.walk(upper):
        for name in [folder, *(os.path.join(folder, d) for d in dirs), *(os.path.join(folder, f) for f in files)]:
            st = os.lstat(name)
            if st.st_uid < UID_SPAN and st.st_gid < UID_SPAN:
                os.lchown(name, base + st.st_uid, base + st.st_gid)


def launcher_argv(spec: LaunchSpec) -> list[str]:
    """The command that builds a sandbox's root file system in a private mount namespace, then runs `spec`'s crun."""
    return [sys.executable, "-I", str(Path(rootfs.__file__)), json.dumps(spec)]


def create_vm(layout: LabLayout, vm: VmSpec, args: Sequence[str]) -> int:
    """Create the VM's container (its namespaces exist, its init waits); returns the init's host pid."""
    if shutil.which(_CRUN) is None:
        raise LabError("crun is not installed (the lab's VM sandbox; `make lab-deps` installs it)")
    bundle = _bundle(layout, vm)
    for d in (bundle, layout.vm_dir(vm) / "work", upper_dir(layout, vm)):
        d.mkdir(parents=True, exist_ok=True)
    (layout.state_dir / "crun").mkdir(mode=0o700, exist_ok=True)
    own_upper(layout, vm)
    os.chown(layout.vm_dir(vm) / "work", uid_base(layout, vm), uid_base(layout, vm))
    config = bundle / "config.json"
    config.write_text(json.dumps(oci_config(layout, vm, args), indent=1), encoding="utf-8")
    pid_file = bundle / "init.pid"
    pid_file.unlink(missing_ok=True)
    launch: LaunchSpec = {
        "uid_base": uid_base(layout, vm),
        "uid_span": UID_SPAN,
        "binds": _runtime_binds(),
        "upper": str(upper_dir(layout, vm)),
        "work": str(layout.vm_dir(vm) / "work"),
        "crun": crun_command(layout, "create", "--bundle", str(bundle), "--pid-file", str(pid_file), _name(layout, vm)),
    }
    log = layout.vm_dir(vm) / "console.log"
    with log.open("ab") as console:
        proc = subprocess.run(
            launcher_argv(launch),
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=subprocess.STDOUT,
            timeout=60,
            check=False,
        )
    if proc.returncode != 0:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        raise LabError(f"{vm.name}: its sandbox could not be created (exit {proc.returncode}): {tail}")
    return int(pid_file.read_text().strip())


def start_vm(layout: LabLayout, vm: VmSpec) -> None:
    """Let the VM's init run (after the host has wired its network)."""
    proc = subprocess.run(crun_command(layout, "start", _name(layout, vm)), capture_output=True, text=True, check=False)
    _check(proc, vm, "start")


def container_pid(layout: LabLayout, vm: VmSpec) -> int | None:
    """The VM's init as the host sees it, or None when its container is gone."""
    proc = subprocess.run(crun_command(layout, "state", _name(layout, vm)), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    pid = json.loads(proc.stdout).get("pid")
    return int(pid) if isinstance(pid, int) and pid > 0 else None


def _exec_argv(layout: LabLayout, vm: VmSpec, *argv: str) -> list[str]:
    """The lab's own way in (no SSH): it joins the VM's namespaces with the VM's capabilities, seccomp filter and
    `no_new_privs`, so what it runs can do nothing the VM itself could not."""
    return crun_command(layout, "exec", "--no-new-privs", _name(layout, vm), *argv)


def stream_from_vm(layout: LabLayout, vm: VmSpec, argv: Sequence[str]) -> subprocess.Popen[bytes]:
    """A program inside the VM whose binary output the caller reads as it comes (a packet capture); terminating the
    returned process signals the program in the VM (crun forwards it)."""
    return subprocess.Popen(
        _exec_argv(layout, vm, *argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def exec_in_vm(layout: LabLayout, vm: VmSpec, command: str, timeout: float) -> tuple[int, str, str]:
    """A shell command inside the VM by the lab's own way in (`_exec_argv`)."""
    argv = _exec_argv(layout, vm, "sh", "-c", command)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:g} s"
    return proc.returncode, proc.stdout, proc.stderr


def destroy_vm(layout: LabLayout, vm: VmSpec) -> bool:
    """Kill the VM's container and forget it; True when there was one."""
    root = layout.state_dir / "crun"
    if not (root / _name(layout, vm)).exists():
        return False
    subprocess.run(crun_command(layout, "kill", _name(layout, vm), "KILL"), capture_output=True, check=False)
    subprocess.run(crun_command(layout, "delete", "--force", _name(layout, vm)), capture_output=True, check=False)
    return True


def _check(proc: subprocess.CompletedProcess[str], vm: VmSpec, what: str) -> None:
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise LabError(f"{vm.name}: crun {what} failed (exit {proc.returncode}): {detail[-1] if detail else 'no output'}")
