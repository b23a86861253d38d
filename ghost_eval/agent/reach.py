"""What a command can reach: secret-bearing paths, device files, the network with local data, root.

Read-only is not harmless: a read of a password-hash backup, of a process's environment or of a device, or a probe
that carries a local file out, changes nothing and still does damage. These lists are data, kept apart from the
gate's logic so that a reader can check them against a host; every finding names the rule and the word that
tripped it, and the safety gate sends any command with a finding to approval.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ghost_eval.shell.commands import Command

__all__ = [
    "DEVICE_ALLOWLIST",
    "ESCALATION",
    "SECRET_NAMES",
    "SECRET_PATHS",
    "SecretPath",
    "content_hazard",
    "egress",
    "environment_dump",
    "escalation",
    "is_address",
    "path_hazard",
    "port_scan",
    "process_environments",
    "runs_code",
]


@dataclass(frozen=True)
class SecretPath:
    """A glob (`*` also crosses `/`) over normalised absolute paths, and what the matching files hold.

    A glob that starts at the root (`/etc/shadow*`) also matches the same tree mounted or copied anywhere else
    (`/mnt/rescue/etc/shadow`, `/proc/1/root/etc/shadow`, a container's `merged/etc/shadow`): a secret is what a
    file is, not where it sits.
    """

    glob: str
    holds: str


SECRET_PATHS: tuple[SecretPath, ...] = (
    SecretPath("/etc/shadow*", "password hashes and their backups"),
    SecretPath("/etc/gshadow*", "group password hashes and their backups"),
    SecretPath("/etc/sudoers*", "who may become root"),
    SecretPath("/etc/security/opasswd*", "old password hashes"),
    SecretPath("/etc/master.passwd*", "password hashes"),
    SecretPath("/proc/*/environ", "a process's environment"),
    SecretPath("/proc/*/task/*/environ", "a thread's environment"),
    SecretPath("/proc/*/mem", "a process's memory"),
    SecretPath("/proc/*/fd/*", "whatever file a process holds open"),
    SecretPath("/proc/*/root*", "the whole filesystem as a process sees it"),
    SecretPath("/proc/*/cwd*", "a process's working directory"),
    SecretPath("/proc/*/map_files/*", "files mapped into a process"),
    SecretPath("/proc/kcore", "kernel memory"),
    SecretPath("/root", "root's home: keys, tokens, shell history"),
    SecretPath("/root/*", "root's home: keys, tokens, shell history"),
    SecretPath("*/.ssh", "SSH keys"),
    SecretPath("*/.ssh/*", "SSH keys"),
    SecretPath("/etc/ssh/ssh_host_*_key*", "the host's private SSH keys and their backups"),
    SecretPath("/etc/ssl/private*", "TLS private keys"),
    SecretPath("/etc/pki/*/private*", "TLS private keys"),
    SecretPath("/etc/wireguard*", "WireGuard private keys"),
    SecretPath("/etc/ipsec.secrets*", "IPsec pre-shared keys"),
    SecretPath("/etc/NetworkManager/system-connections*", "Wi-Fi and VPN secrets"),
    SecretPath("/etc/kubernetes/*.conf", "a Kubernetes kubeconfig (cluster credentials)"),
    SecretPath("/etc/kubernetes/pki*", "Kubernetes cluster keys"),
    SecretPath("/var/lib/kubelet/pki*", "the kubelet's keys"),
    SecretPath("/etc/rancher*", "a k3s/RKE kubeconfig and tokens"),
    SecretPath("/run/secrets*", "secrets mounted into a container or pod"),
    SecretPath("/var/run/secrets*", "secrets mounted into a container or pod"),
    SecretPath("*/.azure*", "Azure CLI token cache"),
    SecretPath("*/.config/gcloud*", "gcloud credentials"),
    SecretPath("*/.aws*", "AWS credentials"),
    SecretPath("*/.oci*", "OCI credentials"),
    SecretPath("*/.kube*", "Kubernetes credentials"),
    SecretPath("*/.docker/config.json*", "registry credentials"),
    SecretPath("*/containers/auth.json*", "registry credentials"),
    SecretPath("*/.gnupg*", "GnuPG keys"),
    SecretPath("*credentials*", "credentials"),
    SecretPath("*secret*", "secrets"),
    SecretPath("*_history*", "shell history, which holds typed secrets"),
    SecretPath("/var/lib/waagent*", "the Azure agent's certificates, keys and provisioning data"),
    SecretPath("/var/lib/cloud/instance/user-data*", "cloud-init user data"),
    SecretPath("/var/lib/cloud/instances/*/user-data*", "cloud-init user data"),
)
"""Files a diagnosis never needs to read, by where they sit; the gate never lets a command name one unreviewed."""

SECRET_NAMES: tuple[SecretPath, ...] = (
    SecretPath("*shadow", "password hashes"),
    SecretPath("*shadow[-.~_]*", "a backup of password hashes"),
    SecretPath("passwd[-.~_]*", "a backup of the account database"),
    SecretPath("opasswd*", "old password hashes"),
    SecretPath("master.passwd*", "password hashes"),
    SecretPath("ssh_host_*_key*", "a host's private SSH key"),
    SecretPath("id_rsa*", "an SSH private key"),
    SecretPath("id_dsa*", "an SSH private key"),
    SecretPath("id_ecdsa*", "an SSH private key"),
    SecretPath("id_ed25519*", "an SSH private key"),
    SecretPath("*.pem*", "a certificate or private key"),
    SecretPath("*.key", "a private key"),
    SecretPath("*.key[-.~_]*", "a private key"),
    SecretPath("*.p12*", "a key store"),
    SecretPath("*.pfx*", "a key store"),
    SecretPath("*.jks*", "a key store"),
    SecretPath("*.keystore*", "a key store"),
    SecretPath("*.ppk*", "a private key"),
    SecretPath("*.prv*", "a private key"),
    SecretPath("*.keytab*", "Kerberos keys"),
    SecretPath("*kubeconfig*", "a Kubernetes kubeconfig (cluster credentials)"),
    SecretPath("k3s.yaml*", "a k3s kubeconfig (cluster credentials)"),
    SecretPath("*token*", "an access token"),
    SecretPath("[._]netrc*", "login passwords"),
    SecretPath(".git-credentials*", "git passwords"),
    SecretPath(".pgpass*", "database passwords"),
    SecretPath(".my.cnf*", "database passwords"),
    SecretPath(".pypirc*", "package-index passwords"),
    SecretPath(".npmrc*", "package-registry tokens"),
    SecretPath("*htpasswd*", "password hashes"),
    SecretPath(".env", "application secrets"),
    SecretPath(".env.*", "application secrets"),
)
"""Files that hold secrets by their name or content type (`*.key`, `id_ed25519`, `shadow.bak`), in any directory."""

_REROOTS = ("/etc/", "/root", "/home/", "/var/", "/proc/", "/run/")
"""Where a copy of a system tree shows itself inside a longer path: a rescue mount, a backup, a chroot, a layer."""

DEVICE_ALLOWLIST = frozenset({"/dev/null"})
"""The only device a command may name unreviewed. /dev/zero is not on it: it never ends, and a bounded read of it
diagnoses nothing."""
_DEVICE_LIKE = ("/proc/kmsg", "/proc/sysrq-trigger")
"""Outside /dev, yet a read blocks, consumes the kernel log or acts on the kernel."""

ESCALATION = frozenset({"sudo", "su", "doas", "pkexec", "runuser", "sudoedit"})
"""Programs that run a command as another user (root): the original agent's tool contract says no sudo."""

_HOME = "/root"
"""Where `~` lands when the login user is root."""


def is_address(word: str) -> bool:
    """An IPv4/IPv6 address or network, as a route, a rule or a probe names it (`10.0.0.0/8`, `10.0.1.5:80`,
    `2001:db8::/32`, `fe80::1%eth0`): never a path, whatever slashes it holds."""
    for candidate in (word, word.rpartition(":")[0]):
        try:
            ipaddress.ip_network(candidate.partition("%")[0], strict=False)
            return True
        except ValueError:
            continue
    return False


def _normalised(word: str) -> str | None:
    """The path a word names, `~` resolved against root's home; None when the word names no path.

    A relative path (`etc/shadow`, `.ssh/id_rsa`) lands wherever the working directory is, so it is judged by what it
    names from the root down, never as if every relative word were in root's home (`22/tcp`, a sed script).
    """
    if is_address(word) or "://" in word:
        return None
    if word.startswith("~"):
        user, _, rest = word[1:].partition("/")
        word = f"/home/{user}/{rest}" if user not in {"", "root"} else f"{_HOME}/{rest}"
    elif not word.startswith("/"):
        if "/" not in word and not word.startswith("."):
            return None
        word = f"/{word}"
    return posixpath.normpath(word).replace("//", "/")


def _secret(path: str) -> SecretPath | None:
    """The rule a path breaks: where it sits (also inside a copied or mounted tree), or what its name says it holds."""
    roots = [path, *(path[i:] for i in range(1, len(path)) if path.startswith(_REROOTS, i))]
    for rule in SECRET_PATHS:
        if any(fnmatchcase(root, rule.glob) for root in roots):
            return rule
    name = posixpath.basename(path)
    return next((rule for rule in SECRET_NAMES if fnmatchcase(name, rule.glob)), None)


def path_hazard(word: str) -> str | None:
    """Why naming this word (a path, `@path`, `name=@path`) is not safe: a secret-bearing path or a device."""
    for candidate in _path_candidates(word):
        path = _normalised(candidate)
        if path is None:
            continue
        if (path.startswith("/dev/") and path not in DEVICE_ALLOWLIST) or path in _DEVICE_LIKE:
            return f"device: {candidate} is a device file (only {', '.join(sorted(DEVICE_ALLOWLIST))} may be read)"
        hit = _secret(path)
        if hit is not None:
            shown = candidate if candidate == path or not candidate.startswith(("/", "~")) else f"{candidate} ({path})"
            return f"secret path: {shown} matches {hit.glob} ({hit.holds})"
    return None


def _path_candidates(word: str) -> list[str]:
    """The paths inside a word: after `=`, `@` or `<` (`x=@/etc/shadow`, `--header=@file`), and the word itself
    unless it is an option or an `@file` reference."""
    pieces = [piece.lstrip("@<") for sep in ("=", "@", "<") for piece in word.split(sep)[1:]]
    whole = [] if pieces and word.startswith(("-", "@")) else [word]
    return [w for w in dict.fromkeys(whole + pieces) if w]


_SECRET_CONTENT = re.compile(r"(?i)private key|begin [a-z ]*private|aws_secret_access_key|client-key-data")
"""Text that only key material or a credential file holds: a search for it finds secrets wherever they are."""


def content_hazard(word: str) -> str | None:
    """Why a word (a search pattern) seeks secret content: the marker of a private key or a credential file."""
    m = _SECRET_CONTENT.search(word)
    return f"secret content: {word!r} seeks {m.group(0)!r}, the content of a key or credential file" if m else None


def process_environments(words: Sequence[str]) -> str | None:
    """Why `ps` words print processes' environments: `ps e` (BSD) and any environment format; `-e` alone means every
    process, not environments."""
    for prev, word in zip(["", *words], words, strict=False):
        bundle = word.lstrip("-")
        if "env" in word.lower():
            return f"{word!r} prints processes' environments"
        if prev in _PS_VALUED or not bundle.isalpha() or "e" not in bundle:
            continue
        if not word.startswith("-") or {"u", "x"} & set(bundle):
            return f"{word!r} (BSD e) prints every process's environment"
    return None


_PS_VALUED = frozenset(
    [
        "-o",
        "o",
        "-O",
        "O",
        "--format",
        "-p",
        "p",
        "--pid",
        "--ppid",
        "-u",
        "U",
        "-U",
        "--user",
        "-C",
        "-g",
        "-G",
        "--sort",
        "-t",
        "t",
    ]
)


def environment_dump(cmd: Command) -> str | None:
    """Why a command prints other processes' environments (tokens, passwords): `ps` or `docker top` with ps's `e`."""
    words = [w for w in cmd.argv[1:] if w != "container"] if cmd.program == "docker" else []
    if cmd.program == "ps":
        why = process_environments(cmd.argv[1:])
    elif words[:1] == ["top"]:
        why = process_environments(words[2:])
    else:
        return None
    return f"secret environment: {' '.join(cmd.argv[:2])} {why}" if why else None


@dataclass(frozen=True)
class _Egress:
    """Options of one program that send local data to the network; a value starting with `@` reads a file."""

    sends: frozenset[str] = frozenset()
    """Options that always send data of the caller's choosing (a body, a file)."""
    sends_at: frozenset[str] = frozenset()
    """Options that send a local file when their value starts with `@` (`curl -H @file`)."""
    always: str = ""
    """Set when the program sends its input or files whenever it runs (the reason)."""


def _fs(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EGRESS: dict[str, _Egress] = {
    "curl": _Egress(
        sends=_fs(
            "-d --data --data-binary --data-raw --data-ascii --data-urlencode --json -F --form --form-string -T "
            "--upload-file -K --config"
        ),
        sends_at=_fs("-H --header -A --user-agent -e --referer -b --cookie -w --write-out"),
    ),
    "wget": _Egress(sends=_fs("--post-file --body-file --post-data --body-data -i --input-file")),
    "dig": _Egress(sends=_fs("-f")),
    "ping": _Egress(sends=_fs("-p")),
    "ping6": _Egress(sends=_fs("-p")),
    "scp": _Egress(always="copies files to or from another host"),
    "sftp": _Egress(always="copies files to or from another host"),
    "rsync": _Egress(always="copies files, possibly to another host"),
    "ssh": _Egress(always="runs a command on, or forwards data to, another host"),
    "socat": _Egress(always="relays data between the host and the network"),
    "telnet": _Egress(always="sends its input to the network"),
    "ftp": _Egress(always="sends files to the network"),
    "tftp": _Egress(always="sends files to the network"),
}
_INTERPRETER = re.compile(
    r"^(?:(?:ba|da|k|z|fi)?sh|python[\d.]*|pypy[\d.]*|perl[\d.]*|ruby[\d.]*|node(?:js)?|deno|php[\d.]*|lua[\d.]*|tclsh[\d.]*|pwsh|Rscript|[gmn]?awk)$"
)
_NETWORK_CODE = re.compile(
    r"\b(?:socket|urllib\d?|urlopen|requests|httplib\d?|http\.client|http\.server|SimpleHTTPServer|httpx|aiohttp|ftplib|smtplib"
    r"|telnetlib|paramiko|xmlrpc|IO::Socket|LWP|Net::\w+|HTTP::Tiny|Mojo::UserAgent|TCPSocket|UDPSocket|open-uri|net/https?"
    r"|fetch|XMLHttpRequest|fsockopen|stream_socket_client|curl_init|dgram)\b"
    r"|\brequire\W+(?:https?|net|tls)\b|\b(?:https?|ftp)://|/inet6?/(?:tcp|udp)/"
)
"""What code uses to reach the network, in any of the interpreters an agent may call (modules, classes, URLs, gawk's
/inet special files)."""


def runs_code(program: str) -> bool:
    """Whether a program is a shell or a language interpreter: it runs whatever code it is given."""
    return _INTERPRETER.match(program) is not None


_RELAYS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl"})
"""Programs that send whatever reaches their standard input."""
_SCANNERS = frozenset({"nmap", "masscan", "zmap", "hping3", "unicornscan"})
_PORT_RANGE = re.compile(r"^\d+-\d+$|,")
_NC_VALUED = _fs("-w -i -p -s -x -X -q -O -I -T -V -m")


def egress(cmd: Command, piped_input: bool) -> list[str]:
    """Reasons a command sends local data to the network (`piped_input`: its text has a pipe or input redirect)."""
    spec = _EGRESS.get(cmd.program, _Egress())
    reasons = [f"egress: {cmd.program} {spec.always}"] if spec.always else []
    for at, word in enumerate(cmd.argv[1:], start=1):
        if not word.startswith("-"):
            continue
        opt, value = _option_value(cmd.argv, at)
        letters = {f"-{c}" for c in word[1:]} if not word.startswith("--") else {opt}
        if (letters | {opt}) & spec.sends:
            reasons.append(f"egress: {cmd.program} {word} sends local data in the request")
        elif opt in spec.sends_at and value.startswith("@"):
            reasons.append(f"egress: {cmd.program} {opt} {value} sends the contents of a local file")
    if runs_code(cmd.program):
        code = next((m.group(0) for w in cmd.argv[1:] if (m := _NETWORK_CODE.search(re.sub(r"^-[A-Za-z]", "", w)))), None)
        if code is not None:
            reasons.append(f"egress: {cmd.program} runs code that uses the network ({code})")
    if cmd.program in {"nc", "ncat", "netcat"} and not any(re.match(r"^-[a-zA-Z]*z", a) for a in cmd.argv[1:]):
        reasons.append(f"egress: {cmd.program} without -z sends its input to the network")
    if cmd.program in _RELAYS and piped_input:
        reasons.append(f"egress: {cmd.program} is fed by a pipe or redirect and sends that input to the network")
    return list(dict.fromkeys(reasons))


def _option_value(argv: tuple[str, ...], at: int) -> tuple[str, str]:
    """The option at `at` and its value, in any of `-H v`, `-Hv`, `--header v`, `--header=v`."""
    word = argv[at]
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return name, value if eq else (argv[at + 1] if at + 1 < len(argv) else "")
    if word.startswith("-") and len(word) > 2:
        return word[:2], word[2:]
    return word, argv[at + 1] if at + 1 < len(argv) else ""


def port_scan(cmd: Command) -> str | None:
    """Why a command is a port scan: a scanner, or `nc -z` over a range or a list of ports."""
    if cmd.program in _SCANNERS:
        return f"port scan: {cmd.program} probes many ports or hosts"
    if cmd.program in {"nc", "ncat", "netcat"}:
        words = cmd.argv[1:]
        ports = [a for prev, a in zip(("", *words), words, strict=False) if not a.startswith("-") and prev not in _NC_VALUED][1:]
        if len(ports) > 1 or any(_PORT_RANGE.search(p) for p in ports):
            return f"port scan: {cmd.program} over ports {' '.join(ports)}"
    return None


def escalation(heads: list[tuple[str, ...]]) -> str | None:
    """Why a command runs with raised privileges: one of its wrappers or its program is sudo, su, doas, …"""
    for words in heads:
        prog = words[0].rsplit("/", 1)[-1]
        if prog in ESCALATION:
            return f"privilege escalation: {prog} runs the command as another user (root); it needs approval"
    return None
