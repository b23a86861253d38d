"""What each known program's words do: whether a command changes state, and why in words a report can show.

The command model in `commands` splits and unwraps a block; this module reads one program's argv once it is known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ghost_eval.shell.calls import az_call, az_reads, ip_words, iptables_call, nft_call, tc_call

__all__ = ["HANDLERS", "INSPECTION_PROGRAMS", "file_targets", "loads_settings"]

INSPECTION_PROGRAMS = (
    frozenset({"iptables", "ip6tables", "iptables-save", "ip6tables-save", "iptables-legacy", "iptables-nft", "nft", "ipset"})
    | frozenset({"conntrack", "fail2ban-client", "firewall-cmd", "ufw", "docker", "systemctl", "service", "journalctl"})
    | frozenset({"tc", "ip", "ss", "netstat", "arp", "ifconfig", "ethtool", "bridge", "sysctl", "dmesg", "lsof"})
    | frozenset({"ping", "ping6", "curl", "wget", "nc", "ncat", "netcat", "telnet", "socat", "dig", "nslookup"})
    | frozenset({"traceroute", "tracepath", "mtr", "tcpdump", "tshark", "iperf3", "iperf", "nmap", "hping3", "nstat"})
)
"""Host tools that show network, firewall or shaping state: running one inspects the OS layer."""


_FILE_EDITORS = frozenset({"vi", "vim", "nano", "emacs", "truncate", "touch", "rm", "chmod", "chown"})
_PACKAGE_MANAGERS = frozenset({"apt", "apt-get", "dnf", "yum", "pip"})
_PACKAGE_WRITES = frozenset({"install", "remove", "purge", "upgrade", "uninstall", "autoremove"})


def file_targets(program: str, argv: tuple[str, ...]) -> tuple[str, ...]:
    """Files a program writes by its own arguments (`tee`, `sed -i`, editors, `cp`/`mv` targets), not by redirection."""
    args = [a for a in argv[1:] if not a.startswith("-")]
    if program == "tee":
        return tuple(args)
    if program == "sed":
        if not any(a == "-i" or a.startswith(("-i", "--in-place")) for a in argv[1:]):
            return ()
        has_script_option = any(a in {"-e", "-f", "--expression", "--file"} for a in argv[1:])
        files = _sed_operands(argv)
        return tuple(files if has_script_option else files[1:])
    if program in _FILE_EDITORS:
        return tuple(args)
    if program in {"cp", "mv", "install", "ln"} and len(args) >= 2:
        return (args[-1],)
    return ()


def _sed_operands(argv: tuple[str, ...]) -> list[str]:
    operands: list[str] = []
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in {"-e", "-f", "--expression", "--file"}:
            skip = True
        elif not a.startswith("-"):
            operands.append(a)
    return operands


def _verb_after(argv: tuple[str, ...]) -> str:
    """The first word after the program that is not an option: the subcommand of fail2ban-client, ufw, …"""
    return next((a for a in argv[1:] if not a.startswith("-")), "")


_IPT_WRITES = frozenset("AIDRFXPNE")
"""The operations that change what the tables do; `-Z` only zeroes counters, so a check can count anew."""


def _iptables(argv: tuple[str, ...]) -> tuple[bool, str]:
    call = iptables_call(argv)
    if (call is None or not call.op) and any(a.startswith("$") for a in argv[1:]):
        return True, "iptables given its command in a variable may change any rule"  # `while read r; do iptables $r`
    if call is None or call.op not in _IPT_WRITES:
        return False, "lists or checks rules"
    return True, f"iptables -{call.op} changes the {call.table} table"


_TC_WRITES = frozenset({"add", "del", "delete", "change", "replace", "link"})


def _tc(argv: tuple[str, ...]) -> tuple[bool, str]:
    call = tc_call(argv)
    if call is not None and call.verb in _TC_WRITES:
        return True, f"tc {call.obj} {call.verb} changes traffic control"
    return False, "shows traffic control state"


_NFT_WRITES = frozenset({"add", "insert", "delete", "destroy", "flush", "replace", "create", "reset", "rename"})


def _has_option(argv: tuple[str, ...], short: str, long: str) -> bool:
    """Whether a command gives an option, long (`--test`) or short, alone or among others (`-t`, `-nt`)."""
    return any(a == long or (a.startswith("-") and not a.startswith("--") and short in a[1:]) for a in argv[1:])


def _restore(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`iptables-restore --test` (-t) only parses and builds the ruleset, committing nothing."""
    if _has_option(argv, "t", "--test"):
        return False, f"{argv[0]} --test only checks the ruleset"
    return True, f"replaces the {argv[0].removesuffix('-restore')} ruleset"


def _nft(argv: tuple[str, ...]) -> tuple[bool, str]:
    if _has_option(argv, "c", "--check"):
        return False, "nft --check only checks the commands"
    call = nft_call(argv)
    if call is None:
        return False, "lists the ruleset"
    if call.verb == "load":
        return True, "nft -f loads a ruleset"
    if call.verb in _NFT_WRITES:
        return True, f"nft {call.verb} changes the ruleset"
    return False, "lists the ruleset"


_IP_WRITES = frozenset({"add", "del", "delete", "change", "replace", "flush", "set", "append", "prepend"})


def _ip(argv: tuple[str, ...]) -> tuple[bool, str]:
    words = ip_words(argv)
    if len(words) >= 2 and words[1] in _IP_WRITES:
        return True, f"ip {words[0]} {words[1]} changes network configuration"
    return False, "shows network configuration"


_F2B_READS = frozenset({"status", "get", "ping", "banned", "version", "echo", "help", "-h", "--help"})


def _fail2ban(argv: tuple[str, ...]) -> tuple[bool, str]:
    verb = _verb_after(argv)
    if verb in _F2B_READS or not verb:
        return False, "reads fail2ban state"
    return True, f"fail2ban-client {verb} changes fail2ban state"


_SYSTEMCTL_WRITES = frozenset(
    {
        "start",
        "stop",
        "restart",
        "reload",
        "try-restart",
        "reload-or-restart",
        "enable",
        "disable",
        "mask",
        "unmask",
        "kill",
        "daemon-reload",
        "isolate",
        "edit",
        "set-property",
        "reset-failed",
        "link",
        "preset",
        "reboot",
        "poweroff",
        "halt",
    }
)


def _systemctl(argv: tuple[str, ...]) -> tuple[bool, str]:
    verb = _verb_after(argv)
    if verb in _SYSTEMCTL_WRITES:
        return True, f"systemctl {verb} changes a service"
    return False, "reads service state"


def _service(argv: tuple[str, ...]) -> tuple[bool, str]:
    words = [a for a in argv[1:] if not a.startswith("-")]
    if len(words) >= 2 and words[1] in _SYSTEMCTL_WRITES:
        return True, f"service {words[1]} changes a service"
    return False, "reads service state"


def _netplan(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`netplan apply` (and `try`) applies the host's whole network configuration; `generate`, `get` and `status`
    change nothing running."""
    verb = _verb_after(argv)
    if verb in {"apply", "try"}:
        return True, f"netplan {verb} applies the host's network configuration"
    return False, "reads or renders network configuration"


def _crontab(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`crontab -l` lists; `-r` removes the whole table, `-e` edits it, a file argument replaces it."""
    if "-l" in argv[1:]:
        return False, "lists a crontab"
    return True, "removes, edits or replaces a crontab"


def _netfilter_persistent(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`netfilter-persistent save` writes the running ruleset to the files loaded at boot; `start`/`reload` load those
    files into the running ruleset, `flush` empties it. Only `--help`-like uses change nothing."""
    words = [a for a in argv[1:] if not a.startswith("-")]
    if words and words[0] in {"save", "start", "restart", "reload", "force-reload", "flush"}:
        return True, f"netfilter-persistent {words[0]} changes the saved or running ruleset"
    return False, "names the persistence tool"


def _firewall_cmd(argv: tuple[str, ...]) -> tuple[bool, str]:
    for a in argv[1:]:
        opt = a.split("=", 1)[0]
        if opt.startswith(("--add-", "--remove-", "--set-", "--new-", "--delete-", "--change-")) or opt in {
            "--reload",
            "--complete-reload",
            "--panic-on",
            "--panic-off",
            "--runtime-to-permanent",
            "--direct",
        }:
            return True, f"firewall-cmd {opt} changes firewalld"
    return False, "reads firewalld state"


_UFW_READS = frozenset({"status", "show", "version", "app", "help"})


def _ufw(argv: tuple[str, ...]) -> tuple[bool, str]:
    verb = _verb_after(argv)
    if verb in _UFW_READS or not verb:
        return False, "reads ufw state"
    return True, f"ufw {verb} changes the firewall"


_DOCKER_READS = frozenset({"ps", "inspect", "logs", "info", "version", "images", "stats", "top", "ls", "port", "events"})


def _docker(argv: tuple[str, ...]) -> tuple[bool, str]:
    words = [a for a in argv[1:] if not a.startswith("-")]
    if not words or words[0] in _DOCKER_READS or (len(words) > 1 and words[1] in _DOCKER_READS):
        return False, "reads docker state"
    return True, f"docker {' '.join(words[:2])} changes containers or networks"


def loads_settings(argv: tuple[str, ...]) -> bool:
    """`sysctl -p [file]` (also inside `-qp`), `--load[=file]` and `--system` apply every setting their files hold, so
    what the action wrote to those files takes effect host-wide."""
    return _has_option(argv, "p", "--load") or any(a.startswith("--load=") for a in argv[1:]) or "--system" in argv


def _sysctl(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`-w`/`--write` or `key=value` sets a kernel setting; `-p [file]`/`--load`, and `--system`, load every setting of
    the files they read (`--system`: all of /etc/sysctl.d and /etc/sysctl.conf), which is a write too."""
    if _has_option(argv, "w", "--write") or any("=" in a for a in argv[1:] if not a.startswith("--load")):
        return True, "sysctl writes a kernel setting"
    if loads_settings(argv):
        return True, "sysctl loads the kernel settings its files hold"
    return False, "reads kernel settings"


_ETHTOOL_SETS = frozenset(
    {
        "-s",
        "--change",
        "-K",
        "--features",
        "--offload",
        "-G",
        "--set-ring",
        "-L",
        "--set-channels",
        "-C",
        "--coalesce",
        "-A",
        "--pause",
        "-X",
        "--set-rxfh-indir",
        "--rxfh",
        "-N",
        "-U",
        "--config-nfc",
        "--config-ntuple",
        "-E",
        "--change-eeprom",
        "-f",
        "--flash",
        "-r",
        "--negotiate",
        "-t",
        "--test",
        "-W",
        "--set-dump",
        "--set-eee",
        "--set-priv-flags",
        "--set-fec",
        "--reset",
    }
)


def _ethtool(argv: tuple[str, ...]) -> tuple[bool, str]:
    if any(a in _ETHTOOL_SETS for a in argv[1:]):
        return True, "ethtool changes the interface's settings"
    return False, "reads interface settings"


def _conntrack(argv: tuple[str, ...]) -> tuple[bool, str]:
    if any(a in {"-D", "-F", "-I", "-U", "--delete", "--flush", "--create", "--update"} for a in argv[1:]):
        return True, "conntrack changes the connection table"
    return False, "lists connection tracking"


def _fixed(mutating: bool, reason: str) -> Callable[[tuple[str, ...]], tuple[bool, str]]:
    """A handler for programs whose every use is (or is not) a change, whatever the arguments."""
    return lambda _argv: (mutating, reason)


def _fuser(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`fuser -k 8080/tcp` kills whatever holds the port (a service stopped); without -k it only names the holders."""
    if _has_option(argv, "k", "--kill"):
        return True, "kills the processes that hold a port or file"
    return False, "lists the processes that hold a port or file"


def _netcat(argv: tuple[str, ...]) -> tuple[bool, str]:
    """`ncat -lk 9999`, `socat TCP-LISTEN:9999 …`: a listener is a new service on the host, open to whoever reaches the
    port; connecting out (`nc -zv host 9999`) only tries the path."""
    if argv[0].rsplit("/", 1)[-1] == "socat":
        listens = any("LISTEN" in a.upper() for a in argv[1:])
    else:
        listens = _has_option(argv, "l", "--listen")
    return (True, "opens a listening port") if listens else (False, "tries a connection")


def _ipset(argv: tuple[str, ...]) -> tuple[bool, str]:
    verb = _verb_after(argv)
    if verb in {"add", "del", "create", "destroy", "flush", "swap", "restore"}:
        return True, f"ipset {verb} changes an IP set"
    return False, "lists IP sets"


def _packages(argv: tuple[str, ...]) -> tuple[bool, str]:
    verb = _verb_after(argv)
    if verb in _PACKAGE_WRITES:
        return True, f"{argv[0]} {verb} changes installed packages"
    return False, "queries packages"


_AZ_LOCAL_GROUPS = frozenset({"login", "logout", "account", "config", "configure", "version", "extension", "find"})


def _az(argv: tuple[str, ...]) -> tuple[bool, str]:
    call = az_call(argv)
    if call is None or not call.verb:
        return False, "az without a command"
    if (call.groups[:1] or (call.verb,))[0] in _AZ_LOCAL_GROUPS:
        return False, "changes only the local az CLI session"
    if az_reads(call):
        return False, f"az {call.verb} reads Azure state"
    return True, f"az {' '.join((*call.groups, call.verb))} changes Azure resources"


HANDLERS: Mapping[str, Callable[[tuple[str, ...]], tuple[bool, str]]] = {
    "iptables": _iptables,
    "ip6tables": _iptables,
    "iptables-legacy": _iptables,
    "iptables-nft": _iptables,
    "iptables-restore": _restore,
    "ip6tables-restore": _restore,
    "nft": _nft,
    "tc": _tc,
    "ip": _ip,
    "fail2ban-client": _fail2ban,
    "systemctl": _systemctl,
    "service": _service,
    "netfilter-persistent": _netfilter_persistent,
    "firewall-cmd": _firewall_cmd,
    "ufw": _ufw,
    "docker": _docker,
    "sysctl": _sysctl,
    "ethtool": _ethtool,
    "conntrack": _conntrack,
    "ipset": _ipset,
    "az": _az,
    "sed": _fixed(False, "filters text"),
    "tee": _fixed(False, "copies its input"),
    "kill": _fixed(True, "signals a process"),
    "fuser": _fuser,
    **{name: _netcat for name in ("nc", "ncat", "netcat", "socat")},
    "pkill": _fixed(True, "signals processes"),
    "killall": _fixed(True, "signals processes"),
    "reboot": _fixed(True, "reboots the host"),
    "poweroff": _fixed(True, "powers the host off"),
    "halt": _fixed(True, "halts the host"),
    "netplan": _netplan,
    "crontab": _crontab,
    "shutdown": _fixed(True, "shuts the host down"),
    "modprobe": _fixed(True, "loads a kernel module"),
    "rmmod": _fixed(True, "unloads a kernel module"),
    "setenforce": _fixed(True, "changes SELinux mode"),
    **{name: _packages for name in _PACKAGE_MANAGERS},
}
