"""Criterion 3's breadth read where an action writes it, code kept: the prose rules mask inline code, which hides the
names and settings these turn on (`"iptables": false` in daemon.json, the NSG's name in "remove `x-nsg` from the
subnet")."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["broad_as_written"]

_NSG_TAKEN_OFF = re.compile(
    r"(?i)\b(?:remove|take|detach|unassign|unlink|pull)\s+`?(?:the\s+)?(?:subnet\s+|nic\s+)?(?P<obj>[\w-]*nsg|network\s+"
    r"security\s+group)`?\s+(?:off|from)\s+(?:the\s+)?(?:[\w-]+\s+)?(?P<place>subnet|nic|network\s+interface)\b"
)
"""An NSG taken off a subnet or NIC in words ("remove `ghost-demo-subnet-nsg` from the default subnet"), read with its
name, which the prose rules mask: a dissociation, whatever command carries it (`az rest --method PUT` without the field)."""
_DOCKER_UNMANAGED = re.compile(r"(?i)[\"']iptables[\"']\s*:\s*false\b|--iptables[= ]false\b")
"""Docker told to stop managing the firewall (`"iptables": false` in daemon.json, `dockerd --iptables=false`): NAT and
isolation go for every container. Read in code spans and commands too, where the setting is written."""


def broad_as_written(written: str, covers: Callable[[str, str], bool]) -> tuple[str, str] | None:
    """(excerpt, what) for a breadth read where the action writes it, code kept (the prose rules mask names and
    settings): Docker told to stop managing the firewall, an NSG taken off a subnet or NIC."""
    if (m := _DOCKER_UNMANAGED.search(written)) is not None:
        what = "turns off Docker's firewall management (NAT and isolation for every container), broader than the fault"
    elif (m := _NSG_TAKEN_OFF.search(written)) is not None and not covers("association", m["obj"]):
        what = f"takes {m['obj']} off the {m['place']}: every rule of it stops applying there, broader than the fault"
    else:
        return None
    return written[max(0, m.start() - 40) : m.end() + 40], what
