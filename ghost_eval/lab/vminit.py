"""PID 1 of a lab VM: gives the VM its own filesystem view, host name and services, and reaps what they leave.

It runs inside the VM's network namespace and fresh PID, UTS and mount namespaces (`unshare`), so `ps`,
`hostname`, /etc, /run and /var/log inside the VM are the VM's own: /etc, /root, /usr/local and /var are
copy-on-write overlays whose writes land in the lab's state folder (the host's files never change), /run, /tmp
and /var/log are fresh tmpfs (unless the interpreter or the package lives there). Then it starts the VM's boot
units. On SIGTERM it stops every process of the VM; when it exits, the kernel kills whatever is left in the PID namespace.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ghost_eval.lab.units import load_unit, start_unit

__all__ = ["OVERLAYS", "TMPFS", "main"]

OVERLAYS = (("/etc", "etc"), ("/root", "root"), ("/usr/local", "usr-local"), ("/var", "var"))
"""Mount point → folder under the VM's overlay directory (holding upper/ and work/)."""
TMPFS = ("/run", "/tmp", "/var/log", "/var/lib/fail2ban")
_RUN_DIRS = ("/run/sshd", "/run/fail2ban", "/run/lock", "/run/lab-units")


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def _hides_runtime(target: str) -> bool:
    """The VM's programs run this interpreter and this package from the host's files. A fresh tmpfs over a folder
    that holds them (a checkout or virtualenv under /tmp, as a CI clone may be) would leave the VM unable to start
    them, so that folder stays the host's."""
    mount = Path(target)
    needed = (Path(sys.executable).absolute(), Path(sys.prefix).absolute(), Path(__file__).absolute().parents[2])
    return any(mount == p or mount in p.parents for p in needed)


def _prepare_filesystem(overlay_root: Path) -> None:
    for target, name in OVERLAYS:
        upper, work = overlay_root / name / "upper", overlay_root / name / "work"
        _mount("-t", "overlay", "overlay", "-o", f"lowerdir={target},upperdir={upper},workdir={work}", target)
    for target in TMPFS:
        if Path(target).is_dir() and not _hides_runtime(target):
            _mount("-t", "tmpfs", "-o", "mode=1777" if target == "/tmp" else "mode=0755", "tmpfs", target)
    for d in _RUN_DIRS:
        Path(d).mkdir(mode=0o755, parents=True, exist_ok=True)
    Path("/run/utmp").touch()


def _shutdown(signum: int, frame: object) -> None:
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 0.0)):
        try:
            os.kill(-1, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.05)
            except ChildProcessError:
                break
    sys.exit(0)


def main(argv: Sequence[str] | None = None) -> int:
    """`lab-init BOOT_JSON`: boot the VM described by the file, then reap children until told to stop."""
    args = sys.argv[1:] if argv is None else list(argv)
    boot = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    signal.signal(signal.SIGTERM, _shutdown)
    signal.signal(signal.SIGINT, _shutdown)
    _prepare_filesystem(Path(boot["overlay_root"]))
    socket.sethostname(boot["hostname"])
    for command in boot.get("commands", []):
        subprocess.run(command, check=False, capture_output=True)
    for name in boot["units"]:
        unit = load_unit(name)
        if unit is None:
            print(f"lab-init: unit {name} not found", flush=True)
            continue
        print(f"lab-init: started {name} (pid {start_unit(unit)})", flush=True)
    print("lab-init: boot complete", flush=True)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.5)
        except InterruptedError:
            continue
