"""The host check leaves out what other labs own (their links, and the kernel settings of those links), so labs
built and removed beside a trial neither show as a breach nor break the check as they vanish."""

from __future__ import annotations

import os
import subprocess

import pytest

from ghost_eval.trials.host import host_changes, host_snapshot
from tests.lab.helpers import HOST_MARKS

pytestmark = HOST_MARKS


@pytest.mark.skipif(os.geteuid() != 0, reason="adding a link needs root")
def test_a_labs_link_coming_and_going_is_no_host_change() -> None:
    name, peer = f"gh{os.getpid() % 0xFFFFFF:06x}t", f"gh{os.getpid() % 0xFFFFFF:06x}u"
    before = host_snapshot()
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", peer], check=True)
    try:
        during = host_snapshot()
        assert not [k for k in during.sysctls if f"/{name}/" in k]
        assert name not in during.links and host_changes(before, during) == []
    finally:
        subprocess.run(["ip", "link", "delete", name], check=False)
    other = "ghostest0"  # not a lab's name: a link like any other, and a change when it appears
    subprocess.run(["ip", "link", "add", other, "type", "veth", "peer", "name", "ghostest1"], check=True)
    try:
        assert f"link added: {other}" in host_changes(before, host_snapshot())
    finally:
        subprocess.run(["ip", "link", "delete", other], check=False)
