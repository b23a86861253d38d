"""`harden-net`: the hardening script of case j, which keeps the rules of /etc/iptables/rules.v4 in place.

The file is in `iptables-save` format. Each pass makes sure every chain it declares exists and every `-A` rule
it lists is present, inserting a missing rule at its position among the file's rules of that chain; rules
added by others (fail2ban, Docker, an operator) are left alone. `--apply` runs one pass; `--watch` keeps
running (every `--interval` seconds, and at once on SIGHUP).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.lab.reconciler import log, run_command, serve

__all__ = ["DEFAULT_RULES", "RuleFile", "main", "parse_rules"]

DEFAULT_RULES = Path("/etc/iptables/rules.v4")
_NAME = "harden-net"
_BUILTIN = {"INPUT", "OUTPUT", "FORWARD", "PREROUTING", "POSTROUTING"}


@dataclass
class RuleFile:
    chains: dict[str, dict[str, str]] = field(default_factory=dict)
    """Table → chain → policy (`-` for user chains)."""
    rules: list[tuple[str, str, list[str]]] = field(default_factory=list)
    """(table, chain, rule arguments after `-A CHAIN`) in file order."""


def parse_rules(text: str) -> RuleFile:
    parsed = RuleFile()
    table = "filter"
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line == "COMMIT":
            continue
        if line.startswith("*"):
            table = line[1:]
            parsed.chains.setdefault(table, {})
        elif line.startswith(":"):
            name, policy = ([*line[1:].split(), "-"])[:2]
            parsed.chains.setdefault(table, {})[name] = policy
        elif line.startswith("-A "):
            words = shlex.split(line)
            parsed.rules.append((table, words[1], words[2:]))
        else:
            raise ValueError(f"line {number}: expected *table, :chain, -A rule or COMMIT, got {line!r}")
    return parsed


def _iptables(table: str, *args: str) -> int:
    return run_command(["iptables", "-w", "-t", table, *args]).returncode


def _apply(rules: RuleFile) -> list[str]:
    changes = []
    for table, chains in rules.chains.items():
        for chain, policy in chains.items():
            if chain in _BUILTIN:
                listing = run_command(["iptables", "-w", "-t", table, "-S", chain]).stdout.split()
                if policy != "-" and listing[:2] == ["-P", chain] and listing[2:3] != [policy]:
                    _iptables(table, "-P", chain, policy)
                    changes.append(f"set policy {table}/{chain} {policy}")
            elif _iptables(table, "-S", chain) != 0 and _iptables(table, "-N", chain) == 0:
                changes.append(f"created chain {table}/{chain}")
    position: dict[tuple[str, str], int] = {}
    for table, chain, args in rules.rules:
        key = (table, chain)
        position[key] = position.get(key, 0) + 1
        if _iptables(table, "-C", chain, *args) != 0:
            _iptables(table, "-I", chain, str(position[key]), *args)
            changes.append(f"restored -A {chain} {' '.join(args)} ({table})")
    return changes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=_NAME, description="Keeps the host firewall rules of a rules file in place.")
    parser.add_argument("--rules", type=Path, default=DEFAULT_RULES)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--apply", action="store_true", help="one pass, then exit (the default)")
    mode.add_argument("--watch", action="store_true", help="keep the rules in place")
    parser.add_argument("--interval", type=float, default=600.0)
    args = parser.parse_args(argv)

    def reconcile(force: bool) -> None:
        for change in _apply(parse_rules(args.rules.read_text(encoding="utf-8"))):
            log(_NAME, change)

    if not args.watch:
        reconcile(True)
        return 0
    return serve(_NAME, lambda: float(args.interval), reconcile)
