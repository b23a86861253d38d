"""The machine hosting the lab, before and after a fix trial: anything a VM changed outside itself is a breach.

A trial runs commands a language model wrote, as root of a VM. The sandbox (`lab.sandbox`) is meant to keep every
effect inside the VM; this module checks that it did, from the host's side, so a breach is never silent. It looks
at what a VM could reach if it got out: the host's mount table, its named network namespaces and links, its
firewall, the kernel settings, processes running in the host's namespaces that came from a VM (or that the kernel
started on a VM's behalf, as a `core_pattern` pipe does), and files created or changed in the host's writable
folders and in this package. Everything of the lab's own (its namespaces, links, firewall table, and every other
lab's) and scratch space (the temp folder, /run) is left out: those change under concurrent tests for good reasons.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import ghost_eval

__all__ = ["HostSnapshot", "host_changes", "host_snapshot", "restore_host"]

_LAB_NETNS = re.compile(r"^ghost-")
_LAB_LINK = re.compile(r"^gh[0-9a-f]{6}")
_LAB_TABLE = re.compile(r"^table inet ghost_[0-9a-f]{6}_mgmt \{$")
_VOLATILE_SYSCTLS = re.compile(
    r"^(kernel/random/|kernel/ns_last_pid|kernel/pty/nr|kernel/tainted|kernel/sched_domain/|fs/dentry-state|fs/inode-|"
    r"fs/file-nr|fs/aio-nr|fs/quota/|fs/dentry-negative|vm/stat_refresh|vm/drop_caches|vm/compact_memory|"
    r"net/netfilter/nf_conntrack_count|kernel/perf_event_max_sample_rate|kernel/hung_task_detect_count)"
)
_SYSCTL_AREAS = ("kernel", "vm", "fs", "net", "user", "abi", "debug", "dev")
_DEEP_ROOTS = ("/etc", "/opt", "/home", "/srv", "/mnt", "/media", "/usr/local", "/boot", "/var")
"""Walked through every file: where a host change would persist or run (the VM's root writes, if they escaped)."""
_DIR_ROOTS = ("/usr",)
"""Walked through folders only (a created or removed file changes its folder): too big to stat every file."""
_SHALLOW_ROOTS = ("/root",)
"""Walked three levels down (dotfiles, ~/.ssh, ~/.config/x): below that are toolchains and caches by the 100 000."""
_FILE_ROOTS = ("/dev/shm",)
"""Files only: programs create and unlink shared memory there all the time, so the folder itself always changes."""
_PRUNED = (
    "/var/log",
    "/var/cache",
    "/var/lib/apt",
    "/var/lib/dpkg",
    "/var/tmp",
    "/root/.cache",
    "/root/.npm",
    "/root/.pyenv/shims",
)
"""Caches and logs other programs on the host write all the time."""
_PRUNED_NAMES = ("__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache")


@dataclass
class HostSnapshot:
    """What a trial checks on the host, taken at `taken_at` (seconds since the epoch)."""

    taken_at: float
    mounts: set[str] = field(default_factory=set)
    netns: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
    firewall: list[str] = field(default_factory=list)
    sysctls: dict[str, str] = field(default_factory=dict)
    kernel_started: set[str] = field(default_factory=set)
    """Processes the kernel itself started in user space (parent kthreadd): pid and command line."""
    escaped: set[str] = field(default_factory=set)
    """Processes in a lab VM's PID namespace that share a namespace with the host: pid, which namespace, command."""


def _run(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _scratch() -> tuple[str, ...]:
    return (tempfile.gettempdir(), "/tmp", "/run", "/proc", "/sys", "/dev/pts", "/dev/mqueue")


def _mounts() -> set[str]:
    found = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point, fstype = fields[4], fields[fields.index("-") + 1]
        if not _under(point, _scratch()):
            found.add(f"{point} ({fstype})")
    return found


def _firewall() -> list[str]:
    """nftables (iptables-nft with it) and the legacy iptables tables, without the lab's own table or counters."""
    text = _run(["nft", "list", "ruleset"]) + "\n".join(
        line for line in _run(["iptables-legacy-save"]).splitlines() if not line.startswith("#")
    )
    lines, skipping = [], False
    for line in text.splitlines():
        if _LAB_TABLE.match(line):
            skipping = True
        elif skipping and line == "}":
            skipping = False
        elif not skipping:
            lines.append(re.sub(r"counter packets \d+ bytes \d+|\[\d+:\d+\]", "counter", line))
    return lines


def _sysctls() -> dict[str, str]:
    """Every writable kernel setting of the host, but those of labs' own links (`net/*/conf/gh…`), which come and go
    with labs built and removed beside this one (and may vanish while they are read)."""
    values = {}
    for area in _SYSCTL_AREAS:
        for folder, _dirs, files in os.walk(f"/proc/sys/{area}"):
            if any(_LAB_LINK.match(part) for part in Path(folder).parts):
                continue
            for name in files:
                path = os.path.join(folder, name)
                key = path.removeprefix("/proc/sys/")
                try:
                    if _VOLATILE_SYSCTLS.match(key) or not os.stat(path).st_mode & 0o200:
                        continue
                    with open(path) as fh:
                        values[key] = fh.read()
                except OSError:
                    continue
    return values


def _ns(pid: str, kind: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return ""


def _status_field(pid: str, name: str) -> str:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return ""


def _processes(vm_pid_namespaces: set[str]) -> tuple[set[str], set[str]]:
    host = {kind: _ns("1", kind) for kind in ("mnt", "net", "user", "uts", "ipc")}
    kernel_started, escaped = set(), set()
    for entry in Path("/proc").iterdir():
        pid = entry.name
        if not pid.isdigit():
            continue
        command = _cmdline(pid)
        if _status_field(pid, "PPid") == "2" and command:
            kernel_started.add(f"pid {pid}: {command}")
        if _ns(pid, "pid") in vm_pid_namespaces:
            shared = [kind for kind, inode in host.items() if inode and _ns(pid, kind) == inode]
            if shared:
                escaped.add(f"pid {pid} in the host's {'/'.join(shared)} namespace: {command}")
    return kernel_started, escaped


def _vm_pid_namespaces() -> set[str]:
    """The PID namespaces of every lab VM on the host (the init of each named lab network namespace)."""
    found: set[str] = set()
    netns = Path("/run/netns")
    names = {p.name for p in netns.iterdir() if _LAB_NETNS.match(p.name)} if netns.is_dir() else set()
    if not names:
        return found
    inodes = {os.stat(netns / n).st_ino for n in names}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.stat(f"/proc/{entry.name}/ns/net").st_ino in inodes:
                    pid_ns = _ns(entry.name, "pid")
                    if pid_ns and pid_ns != _ns("1", "pid"):
                        found.add(pid_ns)
            except OSError:
                continue
    return found


def host_snapshot() -> HostSnapshot:
    """The host as a VM could change it, now."""
    kernel_started, escaped = _processes(_vm_pid_namespaces())
    netns = Path("/run/netns")
    links = re.findall(r"^\d+: ([^:@]+)", _run(["ip", "-o", "link", "show"]), flags=re.MULTILINE)
    return HostSnapshot(
        taken_at=time.time(),
        mounts=_mounts(),
        netns={p.name for p in netns.iterdir() if not _LAB_NETNS.match(p.name)} if netns.is_dir() else set(),
        links={name for name in links if not _LAB_LINK.match(name)},
        firewall=_firewall(),
        sysctls=_sysctls(),
        kernel_started=kernel_started,
        escaped=escaped,
    )


def _watched_code() -> tuple[str, ...]:
    """This package and the interpreter's environment: code the host runs as root next time."""
    return (str(Path(ghost_eval.__file__).parent), sys.prefix)


def _changed_files(since: float, exclude: tuple[str, ...]) -> list[str]:
    stamp = f"@{since:.3f}"
    prune = [arg for path in (*_PRUNED, *exclude) for arg in ("-path", path, "-o")]
    prune += [arg for name in _PRUNED_NAMES for arg in ("-name", name, "-o")]
    deep = [r for r in (*_DEEP_ROOTS, *_watched_code()) if Path(r).exists() and not _under(r, _scratch())]
    found = _run(["find", *deep, "-xdev", "(", *prune[:-1], ")", "-prune", "-o", "-newerct", stamp, "-print"]).splitlines()
    folders = [r for r in _DIR_ROOTS if Path(r).exists()]
    found += _run(["find", *folders, "-xdev", "-type", "d", "-newerct", stamp, "-print"]).splitlines()
    files = [r for r in _FILE_ROOTS if Path(r).exists()]
    found += _run(["find", *files, "-xdev", "-type", "f", "-newerct", stamp, "-print"]).splitlines()
    shallow = [r for r in _SHALLOW_ROOTS if Path(r).exists()]
    found += _run(
        ["find", *shallow, "-xdev", "-maxdepth", "3", "(", *prune[:-1], ")", "-prune", "-o", "-newerct", stamp, "-print"]
    ).splitlines()
    return sorted(set(found))


def host_changes(before: HostSnapshot, after: HostSnapshot, exclude: tuple[str, ...] = ()) -> list[str]:
    """Every difference between two snapshots, one line each; `exclude` names folders (a lab's state) to leave out.
    Files are compared by change time, so a file changed between the snapshots is named even if its content is
    back."""
    changes = [f"mount added: {m}" for m in sorted(after.mounts - before.mounts)]
    changes += [f"mount removed: {m}" for m in sorted(before.mounts - after.mounts)]
    changes += [f"network namespace added: {n}" for n in sorted(after.netns - before.netns)]
    changes += [f"network namespace removed: {n}" for n in sorted(before.netns - after.netns)]
    changes += [f"link added: {n}" for n in sorted(after.links - before.links)]
    changes += [f"link removed: {n}" for n in sorted(before.links - after.links)]
    if after.firewall != before.firewall:
        added = [line.strip() for line in after.firewall if line not in before.firewall]
        removed = [line.strip() for line in before.firewall if line not in after.firewall]
        changes += [f"firewall rule added: {line}" for line in added if line] or ["firewall ruleset changed"]
        changes += [f"firewall rule removed: {line}" for line in removed if line]
    changes += [
        f"kernel setting {key}: {before.sysctls[key].strip()!r} -> {after.sysctls.get(key, '').strip()!r}"
        for key in sorted(before.sysctls)
        if key in after.sysctls and after.sysctls[key] != before.sysctls[key]
    ]
    changes += [f"process started by the kernel: {p}" for p in sorted(after.kernel_started - before.kernel_started)]
    changes += [f"process escaped a VM: {p}" for p in sorted(after.escaped)]
    changes += [f"file created or changed: {f}" for f in _changed_files(before.taken_at, exclude)]
    return changes


def restore_host(before: HostSnapshot, after: HostSnapshot) -> list[str]:
    """Undo what can be undone safely: kernel settings back to their values, escaped processes killed. Files are
    left for a person to look at (a file may be another program's); returns what was done."""
    done = []
    for key in sorted(before.sysctls):
        if key in after.sysctls and after.sysctls[key] != before.sysctls[key]:
            try:
                Path("/proc/sys", key).write_text(before.sysctls[key])
                done.append(f"kernel setting {key} restored")
            except OSError as exc:
                done.append(f"kernel setting {key} could not be restored: {exc.strerror}")
    for line in sorted(after.escaped):
        pid = int(line.split()[1])
        try:
            os.kill(pid, 9)
            done.append(f"killed escaped process {pid}")
        except OSError:
            continue
    return done
