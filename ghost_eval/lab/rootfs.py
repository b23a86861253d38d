"""Builds a lab sandbox's root file system and starts its crun: run by `sandbox` as a script of its own.

It runs as host root in a private mount namespace (so nothing it mounts appears on the host): a tmpfs on /mnt as
scratch (the host's /mnt is untouched, and every path the VM's user must cross to reach the root is traversable,
unlike a state folder under a 0700 temp dir), the host's root file system there read-only and id-mapped (host uid N
shown as the VM's uid base + N, so host-root files belong to VM root), an overlay on it whose upper layer is the VM's
own, the runtime folders the VM needs staged for binding, then `crun create`, which keeps the namespace alive.
The external agent's sandbox (`agentbox`) gets no overlay: the host's root read-only and not id-mapped, so its user
sees host files as a stranger does, and `crun run`.

Standard library only, and run with `python -I` by path: it starts without importing the package (a VM's start is
on the critical path of every fix trial).
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

__all__ = ["ROOTFS", "STAGE", "LaunchSpec", "main"]


class LaunchSpec(TypedDict):
    """What `sandbox.create_vm` hands over, as JSON on the command line."""

    uid_base: int
    uid_span: int
    binds: list[str]
    """Host folders the VM needs at the same path (the runtime), staged under STAGE/<index>."""
    upper: str | None
    """The overlay's upper layer (a VM's writes); None: the host's root read-only, not id-mapped, no overlay."""
    work: str | None
    crun: list[str]
    """The `crun create` (or `crun run`) command line."""


SCRATCH = Path("/mnt")
ROOTFS, LOWER, STAGE = SCRATCH / "ghost-vm-root", SCRATCH / "ghost-vm-lower", SCRATCH / "ghost-vm-stage"

# Linux's mount API (the same numbers on every architecture that has it).
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_MOUNT_SETATTR = 428, 429, 442
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC = 1, 0o2000000
_AT_FDCWD, _AT_EMPTY_PATH = -100, 0x1000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_IDMAP = 0x1, 0x100000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_CLONE_NEWUSER, _CLONE_NEWNS = 0x10000000, 0x00020000


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall_check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def _userns_fd(base: int, span: int) -> int:
    """A user namespace whose root is host uid `base` (a child unshares it and waits while the maps are written)."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only holds the namespace open
        os.close(ready_r)
        os.close(done_w)
        code = 0 if _libc().unshare(_CLONE_NEWUSER) == 0 else 1
        os.write(ready_w, b"x")
        os.read(done_r, 1)
        os._exit(code)
    os.close(ready_w)
    os.close(done_r)
    try:
        os.read(ready_r, 1)
        for name in ("uid_map", "gid_map"):
            Path(f"/proc/{pid}/{name}").write_text(f"0 {base} {span}\n")
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.write(done_w, b"x")
        os.waitpid(pid, 0)


def _host_root(target: Path, idmap: tuple[int, int] | None) -> None:
    """The host's root file system (that mount alone, not those below it) at `target`, read-only; with `idmap`
    (base, span), host uid N shown as `base + N`."""
    libc = _libc()
    userns = _userns_fd(*idmap) if idmap else 0
    tree = _syscall_check(libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, b"/", _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC), "open_tree /")
    flags = _MOUNT_ATTR_RDONLY | (_MOUNT_ATTR_IDMAP if idmap else 0)
    attr = ctypes.create_string_buffer(struct.pack("QQQQ", flags, 0, 0, userns))
    _syscall_check(libc.syscall(_SYS_MOUNT_SETATTR, tree, b"", _AT_EMPTY_PATH, attr, 32), "mount_setattr (read-only)")
    _syscall_check(
        libc.syscall(_SYS_MOVE_MOUNT, tree, b"", _AT_FDCWD, str(target).encode(), _MOVE_MOUNT_F_EMPTY_PATH), "move_mount"
    )
    os.close(tree)
    if idmap:
        os.close(userns)


def _mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise OSError(f"mount {' '.join(args)}: {proc.stderr.strip()}")


def _launch(spec: LaunchSpec) -> int:
    _syscall_check(_libc().unshare(_CLONE_NEWNS), "unshare (mount namespace)")
    _mount("--make-rprivate", "/")
    # crun refuses a hybrid cgroup layout whose v2 hierarchy has controllers; the VM needs no cgroup of its own.
    subprocess.run(["umount", "/sys/fs/cgroup/unified"], capture_output=True, check=False)
    _mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", str(SCRATCH))
    for i, path in enumerate(spec["binds"]):
        (STAGE / str(i)).mkdir(parents=True)
        _mount("--rbind", path, str(STAGE / str(i)))
    ROOTFS.mkdir()
    if spec["upper"] is None:
        _host_root(ROOTFS, None)
    else:
        LOWER.mkdir()
        _host_root(LOWER, (spec["uid_base"], spec["uid_span"]))
        _mount("-t", "overlay", "overlay", "-o", f"lowerdir={LOWER},upperdir={spec['upper']},workdir={spec['work']}", str(ROOTFS))
    os.execvp(spec["crun"][0], spec["crun"])


def main(argv: Sequence[str] | None = None) -> int:
    """`rootfs.py SPEC_JSON`: the launch `sandbox.create_vm` describes."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        spec: LaunchSpec = json.loads(args[0])
        return _launch(spec)
    except (OSError, ValueError, KeyError, IndexError) as exc:
        print(f"sandbox launcher: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
