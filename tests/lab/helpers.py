"""One running lab per test module, and the small probes the lab and live tests share.

The `lab` fixture is defined here once and imported by the conftest of each test folder that needs a lab.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import Target
from ghost_eval.lab import LabLayout, lab_down, lab_up

__all__ = ["HOST_MARKS", "LAB_MARKS", "Lab", "lab", "normalized_firewall", "require_lab_host", "vm_run", "wait_until"]

LAB_MARKS = [pytest.mark.slow, pytest.mark.xdist_group("lab")]
HOST_MARKS = [pytest.mark.slow, pytest.mark.xdist_group("host"), pytest.mark.usefixtures("host_alone")]
"""Tests that check the whole host for changes (fix trials through `lab try-fix` or `trial_stored_run`) or change it
on purpose (to see the check catch it) run one at a time, in a group of their own: each would be the other's breach.
The group alone did not keep two of them apart (seen: try-fix's breach test on one worker, the escape corpus on the
other), so each also holds a lock on the machine while it runs."""


def require_lab_host() -> None:
    """The lab needs root and its tools; say why a test cannot run rather than fail obscurely."""
    if os.geteuid() != 0:
        pytest.skip("the lab needs root")
    missing = [t for t in ("ip", "nft", "tc", "sshd", "fail2ban-server", "tcpdump") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"lab tools missing ({', '.join(missing)}): run `make lab-deps`")


@dataclass
class Lab:
    target: Target
    state_dir: Path

    @property
    def layout(self) -> LabLayout:
        return LabLayout(self.state_dir)


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A fresh lab for the module. Its folder is unique to this run (and xdist worker), so concurrent test runs on
    one host never share or tear down each other's labs; a run killed mid-way leaves its lab for
    `ghost-eval lab down --state-dir <that folder>`."""
    require_lab_host()
    state_dir = tmp_path_factory.mktemp(f"lab-{request.module.__name__.rsplit('.', 1)[-1]}")
    try:
        yield Lab(lab_up(state_dir), state_dir)
    finally:
        lab_down(state_dir)


def vm_run(target: Target, vm: str, command: str, timeout: float = 30) -> tuple[int, str, str]:
    client = ssh_connect(target.hosts[vm])
    try:
        return ssh_run(client, command, timeout)
    finally:
        client.close()


def wait_until(check: Callable[[], bool], what: str, timeout: float = 10) -> None:
    """Poll `check` until it holds; fail naming `what` when the deadline passes (no fixed sleeps in tests)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not seen within {timeout:g} s"
        time.sleep(0.05)


def normalized_firewall(text: str | None) -> str:
    """iptables-save / nft output without timestamps and packet counters, which change on their own."""
    lines = [line for line in (text or "").splitlines() if not line.startswith("#")]
    body = "\n".join(lines)
    body = re.sub(r"\[\d+:\d+\]", "", body)
    return re.sub(r"counter packets \d+ bytes \d+", "counter", body)
