"""Which fault of the case a check can prove gone: the traffic a probe sends against the traffic each fault acts on, the
object a read shows against the object each fault is, and what a shaper does against what a result measures. A fix
that removes two faults is verified only when each of them is."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ghost_eval.cases.case import Case, Fault, Layer
from ghost_eval.scoring.reads import resource_kind
from ghost_eval.shell.calls import az_call
from ghost_eval.shell.checks import tool_layer, watcher_check
from ghost_eval.shell.commands import Command, parse_command_block

__all__ = ["FaultTarget", "fault_targets", "misses_the_faults", "unproven"]


_SHAPER = re.compile(r"(?i)\b(?:qdisc|netem|tbf|htb)\b")
_FIREWALL = re.compile(r"(?i)\b(?:iptables|nft|chain|f2b-[\w-]+|DOCKER[\w-]*)\b")
_ROUTE_TABLE = re.compile(r"(?i)-rt/|\broute\s+table\b")
_MEASURES = {
    "loss": re.compile(r"(?i)\b(?:loss|drops?|dropped|received|retrans\w*|corrupt\w*)\b|\d\s*%"),
    "delay": re.compile(r"(?i)\d\s*ms\b|\b(?:latency|rtt|round[\s-]trip|delay\w*|time=)"),
    "rate": re.compile(
        r"(?i)\d\s*(?:[kmg]i?b(?:its?)?(?:/s|ps)?|bits?/s|[kmg]bps)\b|\b(?:throughput|bandwidth|rate|seconds?|minutes?)\b"
    ),
}
"""What a result measures: a loss, a delay or a rate."""
_SHAPES = {
    "loss": re.compile(r"(?i)\b(?:loss|corrupt\w*|drop\w*|duplicat\w*)\b"),
    "delay": re.compile(r"(?i)\b(?:delay|latency)\b"),
    "rate": re.compile(r"(?i)\b(?:tbf|htb|rate|mbit|kbit)\b"),
}
"""What a shaper does to the traffic it carries, as its description states it: a netem loss thins it, a netem delay
slows it, a tbf or an htb class caps its rate. A check proves the shaper gone only by measuring that: a rate cap
passes every ping, and a delay loses no packet."""


@dataclass(frozen=True)
class FaultTarget:
    """One fault of the case as a check must reach it."""

    fault: Fault
    kind: str | None
    """The object it is: `firewall`, `shaper`, `nsg` or `route`; None where it is none of these."""
    affects: frozenset[str]
    """The only traffic it acts on (`tcp/5001`); empty: all but `spares`."""
    spares: frozenset[str]
    shapes: frozenset[str]
    """For a shaper, what it does: `loss`, `delay`, `rate`."""

    @property
    def name(self) -> str:
        return self.fault.resource or self.fault.description[:60]


def _kind(fault: Fault) -> str | None:
    text = fault.resource or ""
    if fault.layer is Layer.CONTROL_PLANE:
        return "nsg" if fault.nsg_rule else "route" if _ROUTE_TABLE.search(f"{text} {fault.description[:40]}") else None
    return "shaper" if _SHAPER.search(text) else "firewall" if _FIREWALL.search(text) else None


def fault_targets(case: Case | None) -> list[FaultTarget]:
    """Each fault of the case with the traffic it acts on and spares as the case states them; an NSG rule's port facts
    say what it acts on where the fault does not."""
    if case is None:
        return []
    ports = {resource: value for resource, value in case.stated("port").items() if value.isdigit()}
    out = []
    for f in case.ground_truth:
        kind = _kind(f)
        rule = f.nsg_rule
        affects = f.affects or ([f"tcp/{ports[rule[1]]}"] if rule and rule[1] in ports else [])
        said = f"{f.resource} {f.description}"
        shapes = frozenset(k for k, p in _SHAPES.items() if p.search(said)) if kind == "shaper" else frozenset()
        out.append(FaultTarget(f, kind, frozenset(affects), frozenset(f.spares), shapes))
    return out


_PORT = re.compile(r"^(\d{1,5})(?:-(\d{1,5}))?$")
_URL = re.compile(r"^(?P<scheme>https?)://[^/\s:]*(?::(?P<port>\d{1,5}))?(?:/|$)")
_VALUED = frozenset({"-w", "-i", "-p", "-s", "-q", "-W", "-x", "-X", "-I", "-O", "-T", "-P", "-o"})
"""netcat's options that take a value (`nc -w 5`, a source port `nc -p 40000`): no host, no destination port."""
_DEFAULT_PORTS = {"ssh": 22, "scp": 22, "sftp": 22, "iperf3": 5201, "iperf": 5001, "psql": 5432, "redis-cli": 6379}
_PORT_OPTION = {"ssh": "-p", "scp": "-P", "sftp": "-P", "iperf3": "-p", "iperf": "-p", "psql": "-p", "redis-cli": "-p"}


_ONLY_ON_ARRIVAL = frozenset({"echo", "true", "hostname", "uptime", "id", "whoami", "date", "exit", "uname"})
"""Remote commands that only show the login arrived: what an ssh carrying them tries is the login itself."""


def _probed(cmd: Command) -> list[str] | None:
    """The traffic a connection probe sends (`icmp` for ping, `tcp/22` for `nc -zv -w 5 10.0.1.5 22` or an ssh
    login, `tcp/8080` for `curl http://10.0.1.5:8080/`); None where it is no such probe or its port is not written."""
    carrier = next((w for w in cmd.wrappers if w[:1] == ("ssh",)), None)
    if carrier is not None and cmd.program in _ONLY_ON_ARRIVAL:  # `ssh host 'echo ok'`: the login is the probe
        return _sent("ssh", carrier[1:])
    return _sent(cmd.program, cmd.argv[1:])


def _sent(program: str, args: tuple[str, ...]) -> list[str] | None:
    if program in {"ping", "ping6"}:
        return ["icmp"]
    if program in {"nc", "ncat", "netcat", "telnet"}:
        positional, skip = [], False
        for word in args:
            if not skip and not word.startswith("-"):
                positional.append(word)
            skip = not skip and word in _VALUED
        proto = "udp" if "-u" in args or "-zu" in args or "-uz" in args else "tcp"
        ports = positional[1:]
        return [f"{proto}/{p}" for p in ports] if ports and all(_PORT.match(p) for p in ports) else None
    if program in {"curl", "wget"}:
        urls = [m for word in args if (m := _URL.match(word))]
        return [f"tcp/{m['port'] or (443 if m['scheme'] == 'https' else 80)}" for m in urls] or None
    if program in _DEFAULT_PORTS:
        option = _PORT_OPTION[program]
        given = [args[i + 1] for i, a in enumerate(args[:-1]) if a == option]
        port = given[-1] if given else str(_DEFAULT_PORTS[program])
        return [f"{'udp' if '-u' in args else 'tcp'}/{port}"] if _PORT.match(port) else None
    return None


def _acted_on(traffic: str, target: FaultTarget) -> bool:
    """Whether the fault acts on this traffic as a probe sees it; a port range (`tcp/5000-5500`) stands for every port
    in it. A fault no probe can show (an allow that opens no working path) acts on none."""
    if not target.fault.probe_visible:
        return False
    proto, _, ports = traffic.partition("/")
    m = _PORT.match(ports)
    span = range(int(m[1]), int(m[2] or m[1]) + 1) if m else range(0)

    def within(named: frozenset[str]) -> bool:
        return any(t == traffic or (t.startswith(f"{proto}/") and int(t.partition("/")[2]) in span) for t in named)

    return within(target.affects) if target.affects else not within(target.spares)


_WHERE_NOTE = re.compile(r"(?<=\s)\([^()$]*\)\s*$")
"""A note in brackets after a command (`nc -zv -w5 10.0.1.5 22   (from tf-source-vm)`) says where it runs; it is no
argument of the command, and the shell would not take it as one."""


def misses_the_faults(command: str, targets: list[FaultTarget]) -> list[str]:
    """The traffic a check tries where no fault of the case acts on any of it (`nc -zv 10.0.1.5 22` where the deny
    is on 5432, an ssh login past a DROP policy that accepts SSH, scp where the shaper spares port 22, any probe where
    the fault is an allow no probe can show): it gets the same answer with the faults in place, so it proves nothing
    about the fix. Empty where it reaches one, or is not such a probe."""
    parsed = parse_command_block(_WHERE_NOTE.sub("", command))
    tried = [_probed(c) for c in parsed]
    if not targets or not parsed or any(t is None for t in tried):
        return []
    traffic = [t for probe in tried for t in probe or ()]
    return [] if any(_acted_on(t, target) for t in traffic for target in targets) else traffic


_FILTERS = frozenset({"grep", "egrep", "head", "tail", "wc", "awk", "sed", "sort", "uniq", "cut", "jq", "sleep", "echo"})
"""Commands that only shape or pace another's output: they read nothing of their own."""
_FIREWALL_READS = frozenset({"iptables", "ip6tables", "iptables-save", "ip6tables-save", "nft", "ufw", "fail2ban-client"})


_TOOL_READS = {
    "detect_config_drift": ("firewall",),
    "detect_effective_network_drift": ("nsg", "route"),
    "effective_route_inspector": ("route",),
    "inspect_nsg": ("nsg",),
}
"""The agent's tools and what each reads, as the original's README and tool descriptions state: the config drift
probes the guest's iptables/nftables state, not its qdiscs."""


def _read_kinds(cmd: Command) -> frozenset[str] | None:
    """The fault objects a read shows (`tc qdisc show`: shapers; `az network nsg rule list`: NSG rules); None where
    the read is not one of them, which may show anything."""
    if cmd.program == "tc":
        return frozenset({"shaper"})
    if cmd.program in _FIREWALL_READS:
        return frozenset({"firewall"})
    if tool_layer(cmd.text) is not None:
        return frozenset(k for tool, kinds in _TOOL_READS.items() if tool in cmd.text for k in kinds)
    if (watched := watcher_check(cmd.text)) is not None:
        return frozenset({"route"} if re.search(r"(?i)route|hop", watched) else {"nsg"})
    call = az_call(cmd.argv)
    if call is None:
        return None
    kind = resource_kind(call)
    if kind in {"nsg", "nsg_rule"} or call.verb == "list-effective-nsg":
        return frozenset({"nsg"})
    if kind in {"route-table", "route"} or call.verb == "show-effective-route-table":
        return frozenset({"route"})
    return None


def _covers(command: str, expected: str, target: FaultTarget) -> bool | None:
    """Whether a check proves this fault gone: True, False, or None where a probe the shaper acts on states no measure
    of what it does (it may or may not show the shaper gone)."""
    verdicts: list[bool | None] = []
    for cmd in parse_command_block(command):
        if (traffic := _probed(cmd)) is not None:
            if not any(_acted_on(t, target) for t in traffic):
                verdicts.append(False)
            elif target.shapes:
                said = {k for k, p in _MEASURES.items() if p.search(expected.replace(command, " "))}
                verdicts.append(bool(said & target.shapes) if said else None)
            else:
                verdicts.append(True)
        elif cmd.program not in _FILTERS:
            kinds = _read_kinds(cmd)
            verdicts.append(kinds is None or target.kind in kinds)
    if not verdicts or True in verdicts:
        return True
    return None if None in verdicts else False


def _changes(cmd: Command, target: FaultTarget) -> bool:
    """Whether a change acts on the fault's object: the shaper by `tc`, the firewall by its tools, the NSG rule by its
    name, the route table by `az network route-table`."""
    if target.kind == "shaper":
        return cmd.program == "tc"
    if target.kind == "firewall":
        return cmd.program in _FIREWALL_READS or cmd.program in {"iptables-restore", "ip6tables-restore", "netfilter-persistent"}
    call = az_call(cmd.argv)
    if call is None:
        return False
    if target.kind == "nsg":
        rule = target.fault.nsg_rule
        return resource_kind(call) in {"nsg", "nsg_rule"} and rule is not None and rule[1] in cmd.text
    return target.kind == "route" and resource_kind(call) in {"route-table", "route"}


def unproven(changes: list[Command], checks: list[tuple[str, str]], targets: list[FaultTarget]) -> tuple[list[str], list[str]]:
    """For a fix that changes two faults or more, those no check (command, expected result) proves gone, and those a
    check may prove gone (one that states no result, or no measure of what a shaper does); both empty where the fix
    changes fewer, as one check then serves the one fault."""
    changed = [t for t in targets if t.kind is not None and any(_changes(c, t) for c in changes)]
    if len(changed) < 2:
        return [], []
    missed: list[str] = []
    maybe: list[str] = []
    for target in changed:
        found = [_covers(command, expected, target) and (bool(expected.strip()) or None) for command, expected in checks]
        if True not in found:
            (maybe if None in found else missed).append(target.name)
    return missed, maybe
