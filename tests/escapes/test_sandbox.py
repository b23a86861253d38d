"""A lab VM is a sandbox: every escape attempt of the corpus, run as VM root straight over SSH (no gate in the way),
changes nothing on the host, reaches no host service and reads no control material."""

from __future__ import annotations

import json
import re

import pytest

from ghost_eval.lab import LabLayout
from ghost_eval.lab.sandbox import CAPABILITIES, uid_base
from ghost_eval.trials.host import host_changes, host_snapshot
from tests.escapes.corpus import ATTEMPTS, host_listener, leftover_markers
from tests.lab.helpers import HOST_MARKS, Lab, vm_run

pytestmark = HOST_MARKS
DEST = "tf-dest-vm"
_SECRETS = re.compile(r"PRIVATE KEY|\"token\"|BEGIN OPENSSH")


def test_the_corpus_covers_every_class_with_forty_attempts() -> None:
    classes = {a.cls for a in ATTEMPTS}
    assert len(ATTEMPTS) >= 40 and len({a.id for a in ATTEMPTS}) == len(ATTEMPTS)
    assert {"host write", "overlay", "namespace entry", "kernel", "control material", "management network"} <= classes
    assert {"az run-command", "persistence"} <= classes


def test_vm_root_is_nobody_outside_with_no_way_to_widen_its_sandbox(lab: Lab) -> None:
    _, out, _ = vm_run(lab.target, DEST, "cat /proc/self/uid_map; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/1/status")
    uid_map, cap, nnp, seccomp = out.splitlines()
    layout = LabLayout(lab.state_dir, json.loads((lab.state_dir / "lab.json").read_text())["mgmt_index"])
    vm = next(v for v in layout.vms if v.name == DEST)
    assert uid_map.split() == ["0", str(uid_base(layout, vm)), "65536"] and uid_base(layout, vm) >= 1_000_000_000
    effective = int(cap.split()[1], 16)
    assert not effective & (1 << 21), "CAP_SYS_ADMIN"
    assert bin(effective).count("1") == len(CAPABILITIES)
    assert nnp.split()[1] == "1" and seccomp.split()[1] == "2"
    # the lab's state folder, the host's named namespaces and other labs are nowhere to be seen
    _, out, _ = vm_run(lab.target, DEST, f"ls -A {lab.state_dir} /run/netns 2>&1; ls -A /tmp /run")
    assert "No such file or directory" in out and "ssh" not in out.split() and "netns" not in out.split()


def test_every_escape_attempt_run_as_vm_root_is_contained(lab: Lab) -> None:
    with host_listener() as listener:
        attempts = [a.filled(listener.port) for a in ATTEMPTS]
        before = host_snapshot()
        outputs = {}
        for attempt in attempts:
            if attempt.case == "m":
                continue  # the persistence pair is about trials (tests/escapes/test_try_fix.py)
            # A whole-filesystem search (find-keys) walks all of the host's root the VM sees read-only: on a loaded
            # machine with a large /opt that takes longer than a minute. The bound is the test's patience, not a
            # property of the sandbox, and the search's whole output must be read for leaks.
            code, out, err = vm_run(lab.target, DEST, "\n".join(attempt.commands), timeout=300)
            outputs[attempt.id] = out + err
        code, _, _ = vm_run(lab.target, DEST, "true")  # the VM still answers
        after = host_snapshot()
    assert code == 0
    assert host_changes(before, after, exclude=(str(lab.state_dir),)) == []
    assert leftover_markers(attempts) == []
    assert listener.received == []
    leaked = {k: v for k, v in outputs.items() if _SECRETS.search(v)}
    assert leaked == {}
    assert "setns -1" in outputs["setns-ctypes"] and "bpf -1 keyctl -1 perf -1" in outputs["bpf-keyctl-perf"]


@pytest.mark.parametrize("command", ["mount -t tmpfs x /mnt", "unshare -n true", "nsenter -t 1 -n true", "umount -l /etc"])
def test_what_the_seccomp_filter_refuses_fails_with_eperm(lab: Lab, command: str) -> None:
    code, out, err = vm_run(lab.target, DEST, command)
    assert code != 0 and re.search(r"not permitted|must be superuser|permission denied", out + err, re.IGNORECASE), out + err
