"""The loop every lab daemon that owns a resource runs: apply the desired state now, then on a timer and on SIGHUP.

This is what makes the daemons' resources *owned*: change a qdisc or a chain behind the daemon's back and it
puts its own version back at the next pass (or at once on `systemctl reload`), exactly the behaviour that makes
a direct edit unsafe (criterion 2).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from ghost_eval.lab.units import READY_ENV

__all__ = ["log", "run_command", "serve"]


def log(name: str, message: str) -> None:
    print(f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ} {name}: {message}", flush=True)


def run_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False)


def serve(name: str, interval: Callable[[], float], reconcile: Callable[[bool], None]) -> int:
    """Run `reconcile(force)` at start (forced), every `interval()` seconds, and forced on SIGHUP; exit on SIGTERM."""
    wake = threading.Event()
    state = {"force": True, "stop": False}

    def on_hup(signum: int, frame: object) -> None:
        state["force"] = True
        wake.set()

    def on_term(signum: int, frame: object) -> None:
        state["stop"] = True
        wake.set()

    signal.signal(signal.SIGHUP, on_hup)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    log(name, "started")
    ready = os.environ.get(READY_ENV)
    while not state["stop"]:
        force, state["force"] = state["force"], False
        try:
            reconcile(force)
        except Exception as exc:  # a daemon keeps running when one pass fails, and says why
            log(name, f"pass failed: {exc}")
        if ready:
            Path(ready).touch()
            ready = None
        wake.wait(max(interval(), 0.1))
        wake.clear()
    log(name, "stopping")
    sys.stdout.flush()
    return 0
