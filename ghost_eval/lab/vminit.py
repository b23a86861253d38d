"""PID 1 of a lab VM: starts the VM's services and reaps what they leave.

It runs as root of the VM's sandbox (see `sandbox`): its file system, host name, /run, /tmp and /var/log are already
the VM's own when it starts, so all it does is set the firewall's starting policies, create the run folders the
services expect, and start the VM's boot units. On SIGTERM it stops every process of the VM; when it exits, the
kernel kills whatever is left in the PID namespace.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ghost_eval.lab.units import load_unit, start_unit

__all__ = ["BOOT_FILE", "main"]

BOOT_FILE = "/etc/ghost-lab/boot.json"
"""Where a VM's boot description sits inside the VM."""
_RUN_DIRS = ("/run/sshd", "/run/fail2ban", "/run/lock", "/run/lab-units", "/var/lib/fail2ban")


def _prepare_run_dirs() -> None:
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
    """`lab-init [BOOT_JSON]`: boot the VM described by the file, then reap children until told to stop."""
    args = sys.argv[1:] if argv is None else list(argv)
    boot = json.loads(Path(args[0] if args else BOOT_FILE).read_text(encoding="utf-8"))
    signal.signal(signal.SIGTERM, _shutdown)
    signal.signal(signal.SIGINT, _shutdown)
    _prepare_run_dirs()
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
