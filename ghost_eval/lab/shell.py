"""Running the system tools the lab is made of (ip, nft, tc, ssh-keygen…), with failures that say which command broke."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ghost_eval.lab.errors import LabError

__all__ = ["in_netns", "kill_pids", "netns_pids", "pid_alive", "run"]


def run(argv: Sequence[str], *, input: str | None = None, check: bool = True, timeout: float = 30) -> str:
    """Run a command and return its stdout; with `check`, a non-zero exit raises LabError quoting stderr."""
    try:
        proc = subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise LabError(f"{argv[0]} is not installed (needed by the lab; `make lab-deps` installs it)") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"timed out after {timeout:g} s: {' '.join(argv)}") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise LabError(f"`{' '.join(argv)}` failed (exit {proc.returncode}): {detail[-1] if detail else 'no output'}")
    return proc.stdout


def in_netns(netns: str, *argv: str) -> list[str]:
    """The argv that runs a command inside a network namespace."""
    return ["ip", "netns", "exec", netns, *argv]


def netns_pids(netns: str) -> list[int]:
    """Processes living in a namespace (deleting the namespace does not stop them)."""
    if not (Path("/run/netns") / netns).exists():
        return []
    out = run(["ip", "netns", "pids", netns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_pids(pids: Iterable[int], grace: float = 3.0) -> None:
    """SIGTERM, then SIGKILL whatever is still alive after `grace` seconds."""
    pending = [p for p in pids if p > 1]
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pending and time.monotonic() < deadline:
        pending = [p for p in pending if pid_alive(p) and not _zombie(p)]
        time.sleep(0.05)
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"
