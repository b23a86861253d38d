"""The parsed forms of the calls the scorer and the gate read closely (`az`, iptables, tc, nft, `ip`), and each
program's own normal form: what a command means however it was abbreviated."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "AzCall",
    "IptablesCall",
    "NftCall",
    "TcCall",
    "az_call",
    "az_reads",
    "az_run_command_scripts",
    "ip_words",
    "iptables_call",
    "netns_command_start",
    "nft_call",
    "normal_forms",
    "tc_call",
]


_SHORT_FLAGS = re.compile(r"-[A-Za-z]+")


@dataclass(frozen=True, slots=True)
class AzCall:
    """`az <groups…> <verb> --option values…`."""

    groups: tuple[str, ...]
    verb: str
    options: dict[str, tuple[str, ...]]
    """Long option name (short forms expanded) → the values that followed it."""

    def value(self, *names: str) -> str | None:
        """First value of the first option present, e.g. the resource `--name`."""
        for name in names:
            values = self.options.get(name)
            if values:
                return values[0]
        return None


@dataclass(frozen=True, slots=True)
class IptablesCall:
    """An iptables/ip6tables command: its operation letter, table, chain and rule matches."""

    table: str
    op: str
    """Upper-case command letter (A I D R F X P N E Z L S C), "" when none was given."""
    chain: str | None
    target: str | None
    """`-j`/`-g` target."""
    matches: dict[str, str]
    """Match options (`-s`, `-p`, `--dport`, …) → value; an inverted match (`! -i docker0`) → `!docker0`."""
    policy: str | None = None


@dataclass(frozen=True, slots=True)
class TcCall:
    obj: str
    """qdisc, class or filter."""
    verb: str
    dev: str | None
    root: bool


@dataclass(frozen=True, slots=True)
class NftCall:
    verb: str
    obj: str
    """ruleset, table, chain, rule, set, element, … ("" for `nft -f`)."""
    table: str | None
    chain: str | None


_IP_VALUED = frozenset({"-n", "-netns", "-f", "-family", "-b", "-batch", "-rc", "-rcvbuf"})


def netns_command_start(argv: list[str]) -> int | None:
    """Where the command starts in `ip [options] netns exec NAME command` (`ip -all netns exec command`)."""
    i, every = 1, False
    while i < len(argv) and argv[i].startswith("-"):
        every = every or argv[i] in {"-a", "-all"}
        i += 2 if argv[i] in _IP_VALUED else 1
    if ip_words(("ip", *argv[i : i + 2])) != ("netns", "exec"):
        return None
    return i + 2 + (0 if every else 1)


_IP_OBJECTS = (
    *("address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour", "ntable", "ntbl", "link", "l2tp"),
    *("fou", "ila", "macsec", "tunnel", "tunl", "tuntap", "tap", "token", "tcpmetrics", "tcp_metrics", "monitor", "xfrm"),
    *("mroute", "mrule", "netns", "netconf", "vrf", "sr", "nexthop", "mptcp", "ioam", "help", "stats"),
)
"""`ip`'s objects in the order it tries them: a word names the first object it is a prefix of (`l` is link)."""
_IP_NEIGH_VERBS = ("add", "change", "chg", "replace", "delete", "get", "list", "show", "lst", "flush", "help")
_IP_VERBS: dict[str, tuple[str, ...]] = {
    "link": ("add", "set", "change", "replace", "delete", "show", "lst", "list", "xstats", "afstats", "property", "help"),
    "address": (
        *("add", "change", "chg", "replace", "delete", "list", "show", "lst", "flush", "save", "showdump", "restore"),
        "help",
    ),
    "route": (
        *("add", "change", "chg", "replace", "prepend", "append", "test", "delete", "list", "show", "lst", "get"),
        *("flush", "save", "restore", "showdump", "help"),
    ),
    "neighbor": _IP_NEIGH_VERBS,
    "neighbour": _IP_NEIGH_VERBS,
    "rule": ("list", "lst", "show", "save", "restore", "showdump", "add", "delete", "flush", "help"),
    "netns": ("list", "add", "attach", "delete", "set", "identify", "pids", "exec", "monitor", "list-id", "help"),
}
"""Each object's verbs in the order `ip` tries them: `ip l s` is `ip link set`, `ip a s` is `ip address show`."""
_IP_VALUED_OPTIONS = _IP_VALUED | {"-l", "-loops"}


def _first_prefixed(word: str, full_words: tuple[str, ...]) -> str:
    return next((full for full in full_words if full.startswith(word)), word) if word else word


def _ip_options_end(argv: tuple[str, ...]) -> int:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in _IP_VALUED_OPTIONS else 1
    return i


def _ip_normal(argv: tuple[str, ...]) -> tuple[str, ...]:
    """`ip` with its object and verb written out in full, as `ip` itself expands any prefix."""
    i = _ip_options_end(argv)
    if i >= len(argv):
        return argv
    obj = _first_prefixed(argv[i], _IP_OBJECTS)
    verb = argv[i + 1 : i + 2]
    if verb and obj in _IP_VERBS:
        verb = (_first_prefixed(verb[0], _IP_VERBS[obj]),)
    return (*argv[:i], obj, *verb, *argv[i + 2 :])


def ip_words(argv: tuple[str, ...]) -> tuple[str, ...]:
    """An `ip` command's object, verb and arguments, in full, without its options (`ip -n vm1 l s eth0 down` is
    `link set eth0 down`)."""
    normal = _ip_normal(argv)
    return normal[_ip_options_end(normal) :]


def _iptables_normal(argv: tuple[str, ...]) -> tuple[str, ...]:
    """iptables with abbreviated long options written out (`--fl` is `--flush`), as getopt expands a unique prefix;
    an ambiguous one (`--del`: --delete or --delete-chain?) is an error to iptables and is left as written."""
    out = [argv[0]]
    for word in argv[1:]:
        name, eq, value = word.partition("=")
        full = [o for o in _IPT_LONG if o.startswith(name)] if name.startswith("--") and name not in _IPT_LONG else []
        out.append(full[0] + eq + value if full and len({_IPT_OPS.get(o, o) for o in full}) == 1 else word)
    return tuple(out)


_NFT_VALUED = frozenset({"-I", "--includepath", "-D", "--define", "-o", "--optimize"})


def _nft_statements(argv: tuple[str, ...]) -> list[tuple[str, ...]]:
    """nft given its script as quoted words (`nft 'flush ruleset; add table t'`): one command per statement."""
    words = list(argv[1:])
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _NFT_VALUED else 1
    options, script = words[:i], words[i:]
    if not any(ch in w for w in script for ch in " \t\n;"):
        return [argv]
    statements = [s.split() for s in re.split(r"[;\n]", " ".join(script))]
    return [(argv[0], *options, *words) for words in statements if words] or [argv]


def normal_forms(argv: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The command as the program itself reads it: `ip` objects and verbs and iptables long options unabbreviated,
    an nft script split into its statements. Rules then judge one spelling of each command."""
    program = argv[0].rsplit("/", 1)[-1]
    if program == "ip":
        return [_ip_normal(argv)]
    if program in {"iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ip6tables-legacy", "ip6tables-nft"}:
        return [_iptables_normal(argv)]
    if program == "nft":
        return _nft_statements(argv)
    return [argv]


def az_run_command_scripts(argv: list[str]) -> list[str] | None:
    """`az vm run-command invoke --scripts …` runs OS commands: score the scripts, not the wrapper."""
    if argv[0] != "az" or "run-command" not in argv[:4]:
        return None
    call = az_call(tuple(argv))
    if call is None or call.verb != "invoke":
        return None
    return list(call.options.get("--scripts", ()))


_IPT_OPS = {
    "--append": "A",
    "--insert": "I",
    "--delete": "D",
    "--replace": "R",
    "--flush": "F",
    "--delete-chain": "X",
    "--policy": "P",
    "--new-chain": "N",
    "--new": "N",
    "--rename-chain": "E",
    "--zero": "Z",
    "--list": "L",
    "--list-rules": "S",
    "--check": "C",
}
_IPT_LONG = (
    *_IPT_OPS,
    *("--table", "--jump", "--goto", "--source", "--destination", "--protocol", "--in-interface", "--out-interface"),
    *("--verbose", "--numeric", "--exact", "--line-numbers", "--wait", "--wait-interval", "--match", "--fragment"),
    *("--set-counters", "--modprobe", "--ipv4", "--ipv6"),
)
"""iptables' own long options, the operations first: getopt takes any unique prefix of one."""
_IPT_LETTERS = frozenset("AIDRFXPNEZLSC")
_IPT_VALUE_OPTIONS = frozenset(
    {
        "-s",
        "--source",
        "-d",
        "--destination",
        "-p",
        "--protocol",
        "-i",
        "--in-interface",
        "-o",
        "--out-interface",
        "--dport",
        "--sport",
        "--dports",
        "--sports",
        "--destination-port",
        "--source-port",
        "-m",
        "--match",
        "--icmp-type",
        "--state",
        "--ctstate",
        "--uid-owner",
        "--comment",
        "--src-range",
        "--dst-range",
    }
)


@lru_cache(maxsize=4096)
def iptables_call(argv: tuple[str, ...]) -> IptablesCall | None:
    """Structure of an iptables/ip6tables command (None for other programs)."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in {"iptables", "ip6tables", "iptables-legacy", "iptables-nft"}:
        return None
    table, op, chain, target, policy = "filter", "", None, None, None
    matches: dict[str, str] = {}
    i = 1
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        letter = _IPT_OPS.get(tok)
        if letter is None and _SHORT_FLAGS.fullmatch(tok):
            found = [c for c in tok[1:] if c in _IPT_LETTERS]
            letter = found[0] if found else None
        if tok in {"-t", "--table"} and nxt:
            table, i = nxt, i + 2
            continue
        if letter is not None:
            op = letter
            if nxt is not None and not nxt.startswith("-"):
                chain = nxt
                i += 1
                if letter == "P" and i + 1 < len(argv):
                    policy = argv[i + 1]
                    i += 1
            i += 1
            continue
        if tok in {"-j", "--jump", "-g", "--goto"} and nxt:
            target, i = nxt, i + 2
            continue
        if tok in _IPT_VALUE_OPTIONS and nxt is not None:
            matches[tok] = f"!{nxt}" if argv[i - 1] == "!" else nxt
            i += 2
            continue
        i += 1
    return IptablesCall(table=table, op=op, chain=chain, target=target, matches=matches, policy=policy)


@lru_cache(maxsize=4096)
def tc_call(argv: tuple[str, ...]) -> TcCall | None:
    if not argv or argv[0].rsplit("/", 1)[-1] != "tc":
        return None
    words = [a for a in argv[1:] if not a.startswith("-")]
    obj = words[0] if words else ""
    verb = words[1] if len(words) > 1 else "show"
    dev = None
    if "dev" in argv:
        idx = argv.index("dev")
        dev = argv[idx + 1] if idx + 1 < len(argv) else None
    return TcCall(obj=obj, verb=verb, dev=dev, root="root" in argv[2:])


_NFT_FAMILIES = frozenset({"ip", "ip6", "inet", "arp", "bridge", "netdev"})


@lru_cache(maxsize=4096)
def nft_call(argv: tuple[str, ...]) -> NftCall | None:
    if not argv or argv[0].rsplit("/", 1)[-1] != "nft":
        return None
    if "-f" in argv or "--file" in argv:
        return NftCall(verb="load", obj="", table=None, chain=None)
    words = [a for a in argv[1:] if not a.startswith("-")]
    verb = words[0] if words else "list"
    obj = words[1] if len(words) > 1 else ""
    rest = words[2:]
    if rest and rest[0] in _NFT_FAMILIES:
        rest = rest[1:]
    table = rest[0] if rest and obj != "ruleset" else None
    chain = rest[1] if len(rest) > 1 and obj in {"chain", "rule"} else None
    return NftCall(verb=verb, obj=obj, table=table, chain=chain)


_AZ_SHORT = {"-g": "--resource-group", "-n": "--name", "-o": "--output", "-l": "--location"}
_AZ_READ_VERBS = frozenset({"show", "list", "get", "wait", "exists", "query", "check", "test-ip-flow", "show-next-hop"})
_AZ_READ_PREFIXES = ("show-", "list-", "get-", "check-", "test-")


@lru_cache(maxsize=4096)
def az_call(argv: tuple[str, ...]) -> AzCall | None:
    """Structure of an `az` command (None for other programs)."""
    if not argv or argv[0] != "az":
        return None
    words: list[str] = []
    i = 1
    while i < len(argv) and not argv[i].startswith("-"):
        words.append(argv[i])
        i += 1
    options: dict[str, tuple[str, ...]] = {}
    while i < len(argv):
        tok = argv[i]
        name, eq, inline = tok.partition("=")
        name = _AZ_SHORT.get(name, name)
        values: list[str] = [inline] if eq else []
        i += 1
        while not eq and i < len(argv) and not (argv[i].startswith("-") and len(argv[i]) > 1 and not argv[i][1].isdigit()):
            values.append(argv[i])
            i += 1
        options[name] = options.get(name, ()) + tuple(values)
    # A read verb is always a leaf of az's command tree: words after it are the prose around a command written
    # without code marks ("az network nic list-effective-nsg for dest nic shows …"), not more of its path.
    leaf = next((k for k, w in enumerate(words) if w in _AZ_READ_VERBS or w.startswith(_AZ_READ_PREFIXES)), len(words) - 1)
    verb = words[leaf] if words else ""
    return AzCall(groups=tuple(words[:leaf]), verb=verb, options=options)


def az_reads(call: AzCall) -> bool:
    """Whether an az command's verb only reads Azure state (`show`, `list`, `show-effective-route-table`, …), or starts
    or stops a Network Watcher packet capture, which records traffic and changes no path (the agent's own capture
    tool creates one)."""
    capture = call.groups[-2:] == ("watcher", "packet-capture") and call.verb in {"create", "stop"}
    return capture or call.verb in _AZ_READ_VERBS or call.verb.startswith(_AZ_READ_PREFIXES)
