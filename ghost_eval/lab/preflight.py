"""Checks before `lab up`: root, the tools, and each kernel feature the lab needs, probed for real in a scratch namespace.

A failed check names the missing piece (e.g. "kernel feature missing: tc tbf qdisc") instead of leaving the
user with a half-built lab and an `ip` error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from ghost_eval.lab.errors import LabError
from ghost_eval.lab.shell import in_netns, run

__all__ = ["REQUIRED_TOOLS", "preflight"]

REQUIRED_TOOLS: dict[str, str] = {
    "ip": "iproute2",
    "tc": "iproute2",
    "nft": "nftables",
    "iptables": "iptables",
    "iptables-save": "iptables",
    "sshd": "openssh-server",
    "ssh-keygen": "openssh-client",
    "fail2ban-server": "fail2ban",
    "fail2ban-client": "fail2ban",
    "unshare": "util-linux",
    "crun": "crun",
    "ps": "procps",
    "ping": "iputils-ping",
}


def _check_root() -> None:
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, veth, nftables, mounts); run it as root")


def _check_tools() -> None:
    missing = sorted({f"{tool} ({pkg})" for tool, pkg in REQUIRED_TOOLS.items() if shutil.which(tool) is None})
    if missing:
        raise LabError(f"missing tools: {', '.join(missing)}; `make lab-deps` installs them")


def _filesystems() -> set[str]:
    return {line.split()[-1] for line in Path("/proc/filesystems").read_text().splitlines() if line.strip()}


def _probe(feature: str, check: Callable[[], object]) -> None:
    try:
        check()
    except LabError as exc:
        raise LabError(f"kernel feature missing or not permitted here: {feature} ({exc})") from None


def _load_module(name: str) -> None:
    """Kernels built with modules load these on demand only: try once, quietly (built-in kernels need nothing)."""
    if shutil.which("modprobe"):
        subprocess.run(["modprobe", name], capture_output=True, check=False)


def _probes(ns: str) -> list[tuple[str, Callable[[], object]]]:
    x = ns.removeprefix("ghost-probe-")
    a, b = f"gpa{x}"[:15], f"gpb{x}"[:15]

    def ns_run(*argv: str) -> Callable[[], object]:
        return lambda: run(in_netns(ns, *argv))

    def new_namespaces() -> None:
        proc = subprocess.run(
            ["unshare", "--user", "--pid", "--uts", "--fork", "--mount-proc", "true"], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise LabError(proc.stderr.strip() or f"exit {proc.returncode}")

    def overlay() -> None:
        if "overlay" not in _filesystems():
            _load_module("overlay")
        if "overlay" not in _filesystems():
            raise LabError("overlay is not in /proc/filesystems")

    def bridge_netfilter() -> None:
        sysctl = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
        if not sysctl.exists():
            _load_module("br_netfilter")
        if not sysctl.exists():
            raise LabError(f"{sysctl} is absent (br_netfilter)")

    return [
        ("veth pairs", ns_run("ip", "link", "add", a, "type", "veth", "peer", "name", b)),
        ("bridges", ns_run("ip", "link", "add", f"gpbr{x}"[:15], "type", "bridge")),
        (
            "tc tbf qdisc",
            ns_run("tc", "qdisc", "add", "dev", a, "root", "tbf", "rate", "1mbit", "burst", "4kb", "latency", "50ms"),
        ),
        ("tc htb qdisc", ns_run("tc", "qdisc", "replace", "dev", b, "root", "handle", "1:", "htb", "default", "10")),
        ("nftables (inet family)", ns_run("nft", "add", "table", "inet", "ghost_probe")),
        ("iptables", ns_run("iptables", "-w", "-N", "GHOST-PROBE")),
        ("bridge netfilter (br_netfilter)", bridge_netfilter),
        ("overlay filesystem", overlay),
        ("user/pid/uts/mount namespaces (unshare)", new_namespaces),
    ]


def preflight() -> None:
    """Raise LabError naming the first missing requirement; leaves nothing behind."""
    _check_root()
    _check_tools()
    ns = f"ghost-probe-{os.getpid()}"
    try:
        run(["ip", "netns", "add", ns])
    except LabError as exc:
        raise LabError(f"kernel feature missing or not permitted here: network namespaces ({exc})") from None
    try:
        for feature, check in _probes(ns):
            _probe(feature, check)
    finally:
        run(["ip", "netns", "delete", ns], check=False)
