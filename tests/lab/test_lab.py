"""The lab itself: it comes up as two VMs that behave like VMs, stays reachable, and goes away without a trace."""

from __future__ import annotations

import json
import os
from pathlib import Path

import paramiko
import pytest

from ghost_eval.cli import main
from ghost_eval.connect.ssh import ssh_connect
from ghost_eval.connect.target import TargetError, load_target
from ghost_eval.lab import LabError, LabLayout, lab_down, lab_status, lab_up
from ghost_eval.lab import preflight as preflight_module
from ghost_eval.lab.network import lab_links, lab_namespaces
from ghost_eval.lab.vm import _without_hashes as without_hashes
from tests.lab.helpers import LAB_MARKS, Lab, require_lab_host, vm_run, wait_until

pytestmark = LAB_MARKS
SOURCE, DEST = "tf-source-vm", "tf-dest-vm"


def _lab_processes(state_dir: Path) -> list[int]:
    """Host pids whose command line mentions the lab's state folder (VM inits, daemons, the emulator)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(state_dir).encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def test_up_writes_a_target_that_reaches_both_vms(lab: Lab) -> None:
    target = load_target(lab.state_dir / "target.json")
    assert target == lab.target
    assert target.credential == "static_token" and target.arm_endpoint and target.arm_endpoint.startswith("https://127.0.0.1:")
    status = lab_status(lab.state_dir)
    assert status.healthy, status.checks
    for vm in (SOURCE, DEST):
        code, out, _ = vm_run(target, vm, "hostname; cat /proc/1/comm; ip -br addr show eth0")
        hostname, init, eth0 = out.splitlines()
        assert code == 0 and hostname == vm and init == "lab-init"
        assert ("10.0.1.4/24" if vm == SOURCE else "10.0.1.5/24") in eth0


def test_vms_are_isolated_from_each_other_and_from_the_host(lab: Lab) -> None:
    target = lab.target
    _, source_ps, _ = vm_run(target, SOURCE, "ps -eo comm=")
    assert "fail2ban-server" not in source_ps and "lab-appd" not in source_ps  # dest's processes are not visible
    _, dest_ps, _ = vm_run(target, DEST, "ps -eo comm=")
    assert {"fail2ban-server", "lab-appd", "sshd"} <= set(dest_ps.split())
    # the VM's /etc is its own: a file written there is not on the host
    vm_run(target, SOURCE, "echo lab > /etc/ghost-eval-isolation-probe")
    assert not Path("/etc/ghost-eval-isolation-probe").exists()
    vm_run(target, SOURCE, "rm /etc/ghost-eval-isolation-probe")
    # the management path is host-only: a VM cannot reach the other VM's management address
    dest_mgmt = target.hosts[DEST].address
    code, _, _ = vm_run(target, SOURCE, f"timeout 2 bash -c '</dev/tcp/{dest_mgmt}/22'")
    assert code != 0
    code, out, _ = vm_run(target, SOURCE, "timeout 2 bash -c '</dev/tcp/10.0.1.5/22' && echo data-path-ok")
    assert code == 0 and "data-path-ok" in out


def test_lookups_answer_from_hosts_and_fail_fast(lab: Lab) -> None:
    """An unknown name fails at once (exit 2, not found) instead of hanging on a resolver (the `timeout` would give 124)."""
    code, out, _ = vm_run(lab.target, SOURCE, "getent hosts tf-dest-vm; timeout 5 getent hosts no-such-host.example.com")
    assert out.split() == ["10.0.1.5", "tf-dest-vm"] and code == 2


def test_ssh_is_key_only_and_host_keys_are_pinned(lab: Lab, tmp_path: Path) -> None:
    host = lab.target.hosts[DEST]
    client = paramiko.SSHClient()
    client.load_host_keys(host.known_hosts_file)
    try:
        with pytest.raises(paramiko.AuthenticationException):
            client.connect(
                host.address, port=host.port, username="root", password="root", look_for_keys=False, allow_agent=False, timeout=5
            )
    finally:
        client.close()
    other = lab.target.hosts[SOURCE]
    wrong = tmp_path / "known_hosts"
    key_line = Path(host.known_hosts_file).read_text().splitlines()
    source_key = next(line for line in key_line if line.startswith(other.address + " ")).split(" ", 1)[1]
    wrong.write_text(f"{host.address} {source_key}\n")  # the source VM's key pinned for the dest address
    with pytest.raises(TargetError, match="does not match"):
        ssh_connect(host.model_copy(update={"known_hosts_file": str(wrong)}))
    wrong.write_text("")
    with pytest.raises(TargetError, match="never accepted unseen"):
        ssh_connect(host.model_copy(update={"known_hosts_file": str(wrong)}))


def test_fail2ban_runs_an_sshd_jail_on_dest(lab: Lab) -> None:
    code, out, _ = vm_run(lab.target, DEST, "fail2ban-client status sshd; systemctl is-active fail2ban")
    assert code == 0 and "Currently banned:\t0" in out and out.strip().endswith("active")


def test_a_daemon_restores_what_it_owns_on_its_own(lab: Lab) -> None:
    """ghost-shaper's loop (here every second) puts its qdisc back after a direct `tc` delete, with no reload."""
    target = lab.target
    script = (
        "mkdir -p /run/probe && printf 'interval = 1\\n[eth0]\\nqdisc = tbf rate 50mbit burst 32kb limit 64kb\\n'"
        " > /run/probe/shaper.conf && (ghost-shaper --config /run/probe/shaper.conf >/run/probe/log 2>&1 &)"
    )
    assert vm_run(target, SOURCE, script)[0] == 0
    try:
        wait_until(lambda: "tbf" in vm_run(target, SOURCE, "tc qdisc show dev eth0 root")[1], "ghost-shaper's first qdisc")
        assert vm_run(target, SOURCE, "tc qdisc del dev eth0 root")[0] == 0
        wait_until(lambda: "re-applied root qdisc on eth0" in vm_run(target, SOURCE, "cat /run/probe/log")[1], "the re-apply")
        assert "qdisc tbf" in vm_run(target, SOURCE, "tc qdisc show dev eth0 root")[1]
    finally:
        stopped = "pkill -x ghost-shaper; timeout 5 sh -c 'while pgrep -x ghost-shaper >/dev/null; do sleep 0.05; done'"
        vm_run(target, SOURCE, f"{stopped}; tc qdisc del dev eth0 root; rm -rf /run/probe")
    assert "noqueue" in vm_run(target, SOURCE, "tc qdisc show dev eth0 root")[1]


def test_up_again_keeps_the_running_lab(lab: Lab) -> None:
    """A second `lab up` on a healthy lab returns it as it is: same target, same VM inits, nothing rebuilt."""
    before = json.loads((lab.state_dir / "lab.json").read_text())
    again = lab_up(lab.state_dir)
    assert again == lab.target and json.loads((lab.state_dir / "lab.json").read_text()) == before


def test_cli_status_reports_the_lab(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["lab", "status", "--json", "--state-dir", str(lab.state_dir)])
    status = json.loads(capsys.readouterr().out)
    assert rc == 0 and status["healthy"] and status["checks"]["ARM API"] == "ok"


def test_down_after_a_crash_leaves_nothing_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A lab with a VM killed and its manifest lost is still removed completely, by name."""
    require_lab_host()
    state_dir = tmp_path / "crashed"
    lab_up(state_dir)
    layout = LabLayout(state_dir)
    try:
        manifest = json.loads((state_dir / "lab.json").read_text())
        os.kill(manifest["launchers"]["tf-source-vm"], 9)
        (state_dir / "lab.json").unlink()
        assert lab_namespaces(layout) and lab_links(layout) and _lab_processes(state_dir)
        assert not lab_status(state_dir).up
        assert main(["lab", "down", "--state-dir", str(state_dir)]) == 0
        assert "removed netns" in capsys.readouterr().out
        assert lab_namespaces(layout) == [] and lab_links(layout) == []
        wait_until(lambda: _lab_processes(state_dir) == [], "every lab process gone")
        assert not state_dir.exists()
    finally:
        assert lab_down(state_dir) == []  # idempotent, and nothing was left for it


def test_preflight_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    require_lab_host()
    monkeypatch.setattr(preflight_module, "_filesystems", lambda: {"ext4", "tmpfs"})
    with pytest.raises(LabError, match="kernel feature missing or not permitted here: overlay filesystem"):
        preflight_module.preflight()
    monkeypatch.setattr(preflight_module.shutil, "which", lambda tool: None if tool == "nft" else "/usr/bin/" + tool)
    with pytest.raises(LabError, match=r"missing tools: nft \(nftables\)"):
        preflight_module.preflight()
    monkeypatch.setattr(preflight_module.os, "geteuid", lambda: 1000)
    with pytest.raises(LabError, match="needs root"):
        preflight_module.preflight()
    assert not Path(f"/run/netns/ghost-probe-{os.getpid()}").exists()  # the probe namespace went away


def test_a_vm_gets_the_hosts_accounts_without_their_password_hashes(tmp_path: Path) -> None:
    """VM root reads host-root files as its own (the lower layer is id-mapped): /etc/shadow is the VM's own copy."""
    table = tmp_path / "shadow"
    table.write_text("root:$6$salt$ghostevalhash:19000:0:99999:7:::\nlocked:!$6$x$y:19000::::::\nnopass::19000::::::\n")
    written = without_hashes(table)
    assert written == "root:*:19000:0:99999:7:::\nlocked:!:19000::::::\nnopass::19000::::::\n"
    assert without_hashes(tmp_path / "absent") is None


def test_a_state_folder_is_invisible_to_every_vm_and_one_outside_the_fresh_folders_is_refused(tmp_path: Path) -> None:
    """Every VM sees /run, /tmp and /var/tmp fresh, so a lab's keys there are read by no VM, its own or another lab's.
    A state folder elsewhere (/srv) would show through every other lab's VMs: refused before anything is made.
    Root's home is fresh too: a key the host's root writes there while the lab runs is not read by VM root (whose
    view of host-root files is id-mapped to its own)."""
    require_lab_host()
    outside = Path(f"/srv/ghost-lab-{tmp_path.name}")
    with pytest.raises(LabError, match="outside the folders every VM sees fresh"):
        lab_up(outside)
    assert not outside.exists()
    state_dir = Path(f"/var/tmp/ghost-lab-{tmp_path.name}")
    target = lab_up(state_dir)
    home_marker = Path(f"/root/ghost-eval-home-probe-{tmp_path.name}")
    try:
        home_marker.write_text("ghost-eval-home-probe\n", encoding="utf-8")
        home_marker.chmod(0o600)
        code, out, _ = vm_run(target, SOURCE, f"ls -A /var/tmp; ls -A {state_dir}; cat {state_dir}/ssh/id_ed25519")
        assert code != 0 and out.split() == []
        code, out, _ = vm_run(target, SOURCE, f"ls -A /root; cat {home_marker}")
        assert code != 0 and "ghost-eval-home-probe" not in out
        assert {name for name in out.split() if not name.startswith(".")} == set()  # only a runtime bind (.pyenv)
    finally:
        home_marker.unlink(missing_ok=True)
        lab_down(state_dir)
    assert not state_dir.exists()
