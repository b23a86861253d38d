"""`dockerd` for case o — an emulation: there is no Docker engine in the lab, only the firewall side of one.

What it reproduces is what matters to the case: the daemon owns its iptables chains. On every start it
creates the docker0 bridge (from `bip` in /etc/docker/daemon.json), sets FORWARD's policy to DROP, and
rewrites DOCKER, DOCKER-ISOLATION-STAGE-1 and DOCKER-ISOLATION-STAGE-2 (filter) and DOCKER (nat) from
scratch — anything an operator added there is gone — while DOCKER-USER, the chain Docker leaves to users, is
created if missing and never flushed. While running it checks its chains every `--interval` seconds and
rewrites them when they drifted. It runs no containers; `dockerd --version` says it is the lab's emulation.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
from collections.abc import Sequence
from pathlib import Path

from ghost_eval.lab.reconciler import log, run_command, serve

__all__ = ["DEFAULT_CONFIG", "desired_rules", "main"]

DEFAULT_CONFIG = Path("/etc/docker/daemon.json")
_NAME = "dockerd"
_VERSION = "Docker version 24.0.7, build ghost-lab (lab emulation: iptables chains only, no containers)"
_OWNED = {"filter": ("DOCKER", "DOCKER-ISOLATION-STAGE-1", "DOCKER-ISOLATION-STAGE-2"), "nat": ("DOCKER",)}


def desired_rules(bip: str) -> dict[str, dict[str, list[str]]]:
    """Table → chain → rules (iptables -S syntax, without `-A CHAIN`) the daemon writes for a bridge address."""
    subnet = str(ipaddress.ip_interface(bip).network)
    return {
        "filter": {
            "DOCKER": [],
            "DOCKER-ISOLATION-STAGE-1": ["-i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2", "-j RETURN"],
            "DOCKER-ISOLATION-STAGE-2": ["-o docker0 -j DROP", "-j RETURN"],
        },
        "nat": {"DOCKER": ["-i docker0 -j RETURN"]},
    } | {
        "jumps": {
            "filter/FORWARD": [
                "-j DOCKER-USER",
                "-j DOCKER-ISOLATION-STAGE-1",
                "-o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
                "-o docker0 -j DOCKER",
                "-i docker0 ! -o docker0 -j ACCEPT",
                "-i docker0 -o docker0 -j ACCEPT",
            ],
            "nat/PREROUTING": ["-m addrtype --dst-type LOCAL -j DOCKER"],
            "nat/OUTPUT": ["! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER"],
            "nat/POSTROUTING": [f"-s {subnet} ! -o docker0 -j MASQUERADE"],
        }
    }


def _ipt(table: str, *args: str) -> tuple[int, str]:
    proc = run_command(["iptables", "-w", "-t", table, *args])
    return proc.returncode, proc.stdout


def _chain_rules(table: str, chain: str) -> list[str] | None:
    rc, out = _ipt(table, "-S", chain)
    if rc != 0:
        return None
    prefix = f"-A {chain} "
    return [line[len(prefix) :] for line in out.splitlines() if line.startswith(prefix)]


def _write(bip: str) -> None:
    rules = desired_rules(bip)
    if run_command(["ip", "link", "show", "docker0"]).returncode != 0:
        run_command(["ip", "link", "add", "docker0", "type", "bridge"])
        run_command(["ip", "addr", "add", bip, "dev", "docker0"])
        run_command(["ip", "link", "set", "docker0", "up"])
    for table in ("filter", "nat"):
        for chain, body in rules[table].items():
            if _chain_rules(table, chain) is None:
                _ipt(table, "-N", chain)
            _ipt(table, "-F", chain)
            for rule in body:
                _ipt(table, "-A", chain, *rule.split())
    if _chain_rules("filter", "DOCKER-USER") is None:
        _ipt("filter", "-N", "DOCKER-USER")
        _ipt("filter", "-A", "DOCKER-USER", "-j", "RETURN")
    _ipt("filter", "-P", "FORWARD", "DROP")
    for where, jumps in rules["jumps"].items():
        table, chain = where.split("/")
        for rule in jumps:
            while _ipt(table, "-D", chain, *rule.split())[0] == 0:
                pass
        for position, rule in enumerate(jumps, 1):
            _ipt(table, "-I", chain, str(position), *rule.split())


def _drifted(bip: str) -> bool:
    rules = desired_rules(bip)
    return any(_chain_rules(table, chain) != body for table in _OWNED for chain, body in rules[table].items())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=_NAME, description=__doc__)
    parser.add_argument("--config-file", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--interval", type=float, default=30.0)
    parser.add_argument("--version", action="store_true")
    args = parser.parse_args(argv)
    if args.version:
        print(_VERSION)
        return 0
    config = json.loads(args.config_file.read_text(encoding="utf-8")) if args.config_file.exists() else {}
    bip = str(config.get("bip", "172.17.0.1/16"))

    def reconcile(force: bool) -> None:
        if force or _drifted(bip):
            _write(bip)
            log(_NAME, "wrote iptables chains " + ", ".join(f"{t}/{c}" for t, cs in _OWNED.items() for c in cs))

    return serve(_NAME, lambda: float(args.interval), reconcile)
