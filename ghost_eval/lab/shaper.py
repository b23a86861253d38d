"""`ghost-shaper`: the shaping daemon of case g, which owns the root qdisc of the devices its config names.

Config (default /etc/ghost-shaper/shaper.conf):

    interval = 300          # seconds between passes
    [eth0]
    qdisc = tbf rate 2mbit burst 4kb limit 6kb

Each pass compares the device's root qdisc with what the daemon last applied and re-applies its own when they
differ (deleted, replaced or changed by hand); SIGHUP (`systemctl reload ghost-shaper`) re-reads the config and
re-applies at once. Only tbf and htb are accepted: this kernel has no netem, so loss is emulated by a tbf whose
queue is too short for bursts, and delay by rate limiting (the queue adds latency under load).
"""

from __future__ import annotations

import argparse
import configparser
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.lab.reconciler import log, run_command, serve

__all__ = ["ALLOWED_QDISCS", "DEFAULT_CONFIG", "ShaperConfig", "main", "parse_config", "root_qdisc"]

DEFAULT_CONFIG = Path("/etc/ghost-shaper/shaper.conf")
ALLOWED_QDISCS = ("tbf", "htb")
_NAME = "ghost-shaper"


@dataclass
class ShaperConfig:
    interval: float = 300.0
    qdiscs: dict[str, list[str]] = field(default_factory=dict)
    """Device → `tc qdisc replace dev DEV root …` arguments."""


def parse_config(text: str) -> ShaperConfig:
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#",))
    parser.read_string("[general]\n" + text)
    config = ShaperConfig(interval=parser.getfloat("general", "interval", fallback=300.0))
    for dev in parser.sections():
        if dev == "general":
            continue
        args = shlex.split(parser.get(dev, "qdisc", fallback=""))
        if not args or args[0] not in ALLOWED_QDISCS:
            raise ValueError(f"[{dev}] qdisc must start with one of {', '.join(ALLOWED_QDISCS)}, got {args[:1]}")
        config.qdiscs[dev] = args
    return config


def root_qdisc(dev: str) -> str:
    """The root qdisc line of `tc qdisc show dev DEV root`, without the refcount that changes on its own."""
    out = run_command(["tc", "qdisc", "show", "dev", dev, "root"]).stdout.strip()
    return re.sub(r"\s+refcnt \d+", "", out.splitlines()[0] if out else "")


class _Shaper:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.config = ShaperConfig()
        self.applied: dict[str, str] = {}

    def reconcile(self, force: bool) -> None:
        if force:
            self.config = parse_config(self.path.read_text(encoding="utf-8"))
        for dev, args in self.config.qdiscs.items():
            current = root_qdisc(dev)
            if not force and current == self.applied.get(dev):
                continue
            proc = run_command(["tc", "qdisc", "replace", "dev", dev, "root", *args])
            if proc.returncode != 0:
                log(_NAME, f"tc qdisc replace dev {dev} root {' '.join(args)} failed: {proc.stderr.strip()}")
                continue
            self.applied[dev] = root_qdisc(dev)
            log(
                _NAME,
                f"{'applied' if force else 're-applied'} root qdisc on {dev}: {self.applied[dev]}"
                + ("" if force else f" (found: {current or 'none'})"),
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=_NAME, description="Keeps the egress shaping of its config applied.")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--once", action="store_true", help="apply once and exit")
    args = parser.parse_args(argv)
    shaper = _Shaper(args.config)
    if args.once:
        shaper.reconcile(True)
        return 0
    return serve(_NAME, lambda: shaper.config.interval, shaper.reconcile)
