"""Which resources a reconciling process owns, so a direct write to them can be told from a fix (criterion 2).

Evidence comes from four places, the run's own first: the infrastructure snapshot taken when the run started,
the run's own findings ("re-applied by a daemon every 5 minutes"), then the case's facts for the environment the
run was recorded in, and last well-known conventions (fail2ban's `f2b-*` chains, Docker's `DOCKER*` chains,
kube-proxy, firewalld, ufw). Chains an owner leaves to its users (Docker's `DOCKER-USER`) are data on the entry.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ghost_eval.cases.case import CaseFacts
from ghost_eval.run.snapshot import InfraSnapshot
from ghost_eval.scoring.text import ascii_lower, inline_code, sentence_spans
from ghost_eval.shell.commands import Command, parse_command_block

__all__ = [
    "LEFT_TO_USERS",
    "UNIT_TOOLS",
    "Owned",
    "OwnershipMap",
    "build_ownership",
    "findings_ownership",
    "owner_programs",
    "suspected_owner",
    "via_owner",
]


@dataclass(frozen=True, slots=True)
class Owned:
    """A resource (or a `*` pattern of them) that a reconciler rewrites."""

    kind: str
    """iptables_chain, iptables_policy (a built-in chain's policy), nft_table, tc_qdisc, file, service, azure_resource,
    process, or port (`7070/tcp`: the owned process listening there)."""
    name: str
    owner: str
    source: str
    """Where the fact came from: snapshot, report, case or convention."""
    managed_via: str | None = None
    user_chains: frozenset[str] = frozenset()
    """Names the pattern matches that the owner leaves to users: writing them is not a bypass."""
    environment: str | None = None
    """For a case fact: the environment whose facts it is."""

    def matches(self, kind: str, name: str) -> bool:
        if kind != self.kind or name in self.user_chains:
            return False
        if name in LEFT_TO_USERS and not (self.source == "case" and self.name == name):
            return False
        if self.kind == "tc_qdisc":
            return _device(self.name) == _device(name)
        if self.kind == "process":
            return _signalled(name, self.name)
        if "*" not in self.name:
            return self.name == name
        return fnmatchcase(name, self.name)


def _signalled(pattern: str, command_line: str) -> bool:
    """Whether `pkill`/`killall` with this pattern reaches a process with this command line: a `pkill -f` pattern
    (written `-f <regex>`) is searched in the whole line, the others in the program's name alone."""
    regex = pattern.removeprefix("-f ")
    target = command_line if regex != pattern else command_line.split()[0].rsplit("/", 1)[-1]
    try:
        return re.search(regex, target) is not None
    except re.error:  # a pattern pkill itself would refuse
        return regex in target


LEFT_TO_USERS = frozenset({"DOCKER-USER"})
"""Chains an owner creates but leaves to its users: writing them is the supported way, whoever claims them (a run
that says "Docker recreates DOCKER-USER" included). Only a case fact naming the chain itself, not a pattern, owns one."""

_CONVENTIONS: tuple[Owned, ...] = (
    Owned("iptables_chain", "f2b-*", "fail2ban", "convention", "fail2ban-client"),
    Owned("nft_table", "f2b-table", "fail2ban", "convention", "fail2ban-client"),
    Owned("iptables_chain", "DOCKER*", "docker", "convention", "the DOCKER-USER chain"),
    Owned("iptables_chain", "KUBE-*", "kube-proxy", "convention", "Kubernetes Service objects (kubectl)"),
    Owned("iptables_chain", "ufw-*", "ufw", "convention", "ufw"),
    Owned("iptables_chain", "ufw6-*", "ufw", "convention", "ufw"),
    *(
        Owned("iptables_chain", pattern, "firewalld", "convention", "firewall-cmd")
        for pattern in ("IN_*", "FWD_*", "FWDI_*", "FWDO_*", "PRE_*", "POST_*", "*_ZONES", "*_ZONES_SOURCE", "*_direct")
    ),
    Owned("nft_table", "firewalld", "firewalld", "convention", "firewall-cmd"),
    Owned("file", "/etc/resolv.conf", "systemd-resolved", "convention", "resolvectl or /etc/systemd/resolved.conf"),
)
_CLIENTS: dict[str, frozenset[str]] = {
    "fail2ban": frozenset({"fail2ban-client"}),
    "docker": frozenset({"docker"}),
    "firewalld": frozenset({"firewall-cmd"}),
    "ufw": frozenset({"ufw"}),
    "kube-proxy": frozenset({"kubectl"}),
}
_KNOWN_OWNERS = frozenset(o.owner for o in _CONVENTIONS)
"""Processes known to reconcile what they own."""
_SOURCE_RANK = {"snapshot": 0, "report": 1, "case": 2, "convention": 3}
_DEVICE_PARTS = re.compile(r"[\s:/]+")


def _device(name: str) -> str:
    parts = [p for p in _DEVICE_PARTS.split(name) if p and p not in {"dev", "root", "qdisc", "egress", "ingress"}]
    return parts[-1] if parts else name


class OwnershipMap:
    """Owned resources, looked up by kind and name; the most specific source wins.

    The run's findings are read on the first lookup of a name they mention (a finding can only own what it
    names): most runs never write to anything their report talks about, so most never pay for reading it.
    """

    def __init__(self, entries: Iterable[Owned], findings: str = "", reasons: str = "") -> None:
        self._entries = sorted(entries, key=lambda e: _SOURCE_RANK[e.source])
        self._unread_findings = findings
        self._unread_reasons = reasons

    def _read_findings(self, name: str) -> None:
        found: list[Owned] = []
        if self._unread_findings and name in self._unread_findings:
            found += findings_ownership(self._unread_findings)
            self._unread_findings = ""
        if self._unread_reasons and name in self._unread_reasons:
            found += [o for o in findings_ownership(self._unread_reasons) if o.owner in _KNOWN_OWNERS]
            self._unread_reasons = ""
        if found:
            self._entries = sorted([*self._entries, *found], key=lambda e: _SOURCE_RANK[e.source])

    def owner_of(self, kind: str, name: str) -> Owned | None:
        """The most specific owner; one a finding leaves unnamed ("a reconciling process puts it back") yields to the
        same object's named owner from another source."""
        self._read_findings(name)
        found = [e for e in self._entries if e.matches(kind, name)]
        return next((e for e in found if not e.owner.startswith("a ")), found[0] if found else None)

    def established(self, kind: str) -> list[Owned]:
        """What this host is known to have of a kind (from the snapshot, the report or the case, not a convention):
        the owned objects a command that rewrites every one of them reaches."""
        self._read_findings("")
        return [e for e in self._entries if e.kind == kind and e.source != "convention"]

    def is_owner(self, process: str) -> bool:
        """Whether the process owns something here (conventions apart: naming a convention's owner proves nothing)."""
        self._read_findings(process)
        return any(e.owner == process and e.source != "convention" for e in self._entries)


def owner_programs(owned: Owned) -> frozenset[str]:
    """Programs that change the resource the supported way: the owner's client and its `managed_via` commands
    (which a case may write as several steps: "edit the file + systemctl reload the-owner")."""
    programs = _CLIENTS.get(owned.owner, frozenset())
    if owned.managed_via:
        steps = _STEPS.split(owned.managed_via)
        programs |= {c.program for step in steps for c in parse_command_block(step) if not c.program.startswith("/")}
    return programs


def via_owner(command: Command, owned: Owned) -> bool:
    """Whether a command goes through the owner: its client, its tool, its unit, or the config file it reads."""
    if command.program in UNIT_TOOLS:
        unit = _OWNER_WORDS.sub("", owned.owner)  # "the ghost-shaper service" runs as the unit ghost-shaper
        names = {unit, f"{unit}.service"}
        return bool(names & set(command.argv)) and bool(_OWNER_PATH_VERBS & set(command.argv))
    if command.program in owner_programs(owned):
        return True
    return owned.managed_via is not None and any(path in owned.managed_via for path in command.writes)


_STEPS = re.compile(r"\s(?:\+|then|and)\s|[;,]|&&")
UNIT_TOOLS = frozenset({"systemctl", "service"})
"""The programs that drive a unit: asking one to reload or restart it re-applies what the unit declares."""
_OWNER_WORDS = re.compile(r"^(?:the|a|an)\s+|\s+(?:daemon|service|script|process|timer|job|agent)$")
_OWNER_PATH_VERBS = frozenset({"reload", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "start"})
"""Asking the owner to re-apply its state is its path; stopping or disabling it is not (that is criterion 3)."""


# --- the run's own findings ---------------------------------------------------------------------------

_RECONCILE = re.compile(
    r"(?:re-?appl(?:ied|ies|y)|re-?creat(?:ed|es|e)|re-?add(?:ed|s)?|re-?insert(?:ed|s)?|restor(?:ed|es)|revert(?:ed|s)|"
    r"rewrit(?:ten|es)|overwrit(?:ten|es)|reconcil(?:ed|es)|re-?generat(?:ed|es)|managed|owned|maintained|controlled|"
    r"enforc(?:ed|es)|puts?\s+(?:it\s+|them\s+)?back|belongs?\s+to)\b"
)
"""Verbs saying something reconciles a resource; matched on the lower-cased text (a case-insensitive scan is
several times slower), with the word start checked by hand."""
_NEGATION = re.compile(r"(?i)\b(?:not|no|never|nothing|none|(?:is|are|was)n['\u2019]?t|without)\b")
_BY_OWNER = re.compile(
    r"(?i)(?<!followed\s)(?<!preceded\s)(?<!replaced\s)(?<!caused\s)\bby\s+(?:the\s+|a\s+|an\s+|its\s+)?`?([\w.-]*\w)`?"
    r"(?:\s+(daemon|service|script|process|timer|job|agent)\b)?"
)
"""Who does it ("re-applied by ghost-shaper"), not what comes next ("put back with `tc …` followed by the netem")."""
_BELONGS_TO = re.compile(r"(?i)(?<=to)\s+(?:the\s+|a\s+)?`?([\w.-]+)`?")
_ACTIVE_OWNER = re.compile(
    r"(?i)\b([\w.-]+)\s+(daemon|service|timer|script|agent|job|process)\s+(?:that\s+|which\s+)?(?:re-?applies|re-?creates|"
    r"restores|rewrites|reconciles|re-?adds|manages|owns|maintains|enforces|resets)"
)
_PERIODIC = re.compile(
    r"(?i)\bevery\s+\d+\s*(?:s|sec|second|min|minute|h|hour)s?\b|\bperiodically\b|\bon\s+(?:every|each)\s+(?:restart|run|boot)"
)
_NOT_OWNERS = frozenset({"default", "design", "hand", "mistake", "accident", "you", "us", "me", "every", "itself"})
_GENERIC_OWNERS = frozenset({"daemon", "service", "script", "process", "timer", "job", "agent", "cron"})
_GENERIC_CHAIN = re.compile(r"(?i)\b(?:the|this|that|its|same)\s+(?:chain|rule)\b")
_BUILTIN_CHAIN = re.compile(r"\b(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING)\b")
"""The kernel's own chains, named in capitals: a chain wherever a firewall is spoken of ("drops ICMP in INPUT")."""
_CONVENTION_CHAIN = re.compile(r"\b(f2b-[\w-]+|DOCKER[\w-]*|KUBE-[\w-]+|ufw6?-[\w-]+)\b")
_NAMED_CHAIN = re.compile(r"(?i:`?\b([A-Za-z][\w-]*)`?\s+chains?\b|\bchains?\s+`?([A-Za-z][\w-]*)`?)")
_RULE_SPEC = re.compile(r"(?<!\S)-[AIDN]\s+([A-Za-z][\w-]*)")
_CHAIN_NAME = re.compile(r"[A-Z][A-Z0-9_-]+|[A-Za-z0-9]+[-_][\w-]+")
"""What a chain name looks like (INPUT, DOCKER-USER, f2b-sshd), so "these chains" names no chain."""
_NOT_CHAINS = frozenset({"ACCEPT", "DROP", "REJECT", "RETURN", "LOG", "MASQUERADE", "DNAT", "SNAT", "NSG", "TCP", "UDP"})
_SHAPING = re.compile(r"(?i)\b(?:qdisc|tc|shaping|shaper|netem|tbf|htb|traffic\s+control)\b")
_DEVICE = re.compile(r"\bdev\s+([\w.-]+)|\b((?:eth|ens|enp|eno|bond|veth|wlan)\w*|docker0|br-\w+)\b")
_OWNED_FILE = re.compile(
    r"(/(?:etc|opt|usr|var|run|lib|srv|home)/[\w./@+-]*[\w])[`'\")]*\s+(?:is|are|gets|will\s+be|was|keeps\s+being)\s+(?:\w+\s+)?"
    r"(?:overwritten|rewritten|re-?generated|restored|re-?applied|managed|owned|generated|reset|reverted|re-?created|templated)",
    re.IGNORECASE,
)
_PATH = re.compile(r"/(?:etc|opt|usr|var|run|lib|srv|home)/[\w./@+-]*[\w]")


_RAW_PROGRAMS = frozenset({"iptables", "ip6tables", "nft", "tc", "sed", "tee", "echo", "vi", "vim", "nano", "iptables-restore"})


def _supported_commands(sentence: str) -> list[str]:
    """Commands a finding names as the way to change the resource (`harden-net --apply`); raw writes and rule
    specs it quotes as evidence (`iptables -L`, `-A INPUT …`) do not count."""
    return [
        span
        for span in inline_code(sentence)
        if len(span.split()) > 1
        and not span.startswith("-")
        and not any(c.program in _RAW_PROGRAMS for c in parse_command_block(span))
    ]


def _chains_in(sentence: str) -> list[str]:
    found = [m.group(1) for m in _CONVENTION_CHAIN.finditer(sentence)] + _BUILTIN_CHAIN.findall(sentence)
    named: list[str] = []
    if "chain" in sentence.lower():
        named += [m.group(1) or m.group(2) for m in _NAMED_CHAIN.finditer(sentence)]
    if "-" in sentence:
        named += _RULE_SPEC.findall(sentence)
    found += [n for n in named if _CHAIN_NAME.fullmatch(n) and n not in _NOT_CHAINS]
    return found


def _devices_in(sentence: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _DEVICE.finditer(sentence)]


_SUBJECT = re.compile(
    r"(?i)(?:^|[\s(`])`?([a-z][\w.-]*[a-z0-9])`?(?:\s+(daemon|service|script|process|timer|job|agent|tool(?:ing)?))?"
    r"\s+(?:also\s+|always\s+|then\s+)?$"
)
"""The word just before the verb, as its subject ("ufw puts it back", "the hardening tooling enforces")."""


def _subject_owner(sentence: str, verb_start: int) -> str | None:
    """The verb's subject, where it is a process: an owner known by convention (ufw, fail2ban, Docker), or a name
    the sentence calls a daemon, service, tool and the like. Any other word before the verb ("and", "it") owns
    nothing."""
    m = _SUBJECT.search(sentence, 0, verb_start)
    if m is None:
        return None
    name, noun = m.group(1), m.group(2)
    if noun is not None and name.lower() not in _NOT_OWNERS:
        return f"the {name} {noun}"
    return name if name.lower() in _KNOWN_OWNERS else None


_DETERMINERS = frozenset({"the", "this", "that", "its", "their", "a", "an", "said"})
_NAMED_PROCESS = re.compile(r"(?i)\b([a-z][\w.-]*[a-z0-9])\s+(daemon|service|timer|script|job|process)\b")
"""A process named with what it is ("the ghost-shaper service"); an agent is the investigator, not a process on the VM."""


def _referent(earlier: list[str], noun: str) -> str:
    """What "the daemon" or "this service" stands for: the last process named before it ("the ghost-shaper service …
    The daemon re-applies its config"); a daemon unnamed where none was."""
    for text in reversed(earlier):
        plain = re.sub(r"[*`_]{1,2}(?=[\w/-])|(?<=[\w/-])[*`_]{1,2}", "", text)
        named = [m[1] for m in _NAMED_PROCESS.finditer(plain) if m[1].lower() not in _DETERMINERS | _GENERIC_OWNERS]
        if named:
            return named[-1]
    return f"a {noun.lower()}"


def _owner_in(sentence: str, verb_start: int, verb_end: int, previous: list[str]) -> str | None:
    belongs = _BELONGS_TO.match(sentence, verb_end)
    if belongs:
        return belongs.group(1)
    by = _BY_OWNER.search(sentence, verb_end)
    if by and by.group(1).lower() not in _NOT_OWNERS:
        name, noun = by.group(1), by.group(2)
        if name.lower() in _GENERIC_OWNERS:
            return _referent([*previous, sentence[: by.start()]], name)
        return f"the {name} {noun}" if noun else name
    active = _ACTIVE_OWNER.search(sentence)
    if active:
        name = active.group(1)
        return _referent([*previous, sentence[: active.start()]], active.group(2)) if name.lower() in _DETERMINERS else name
    if (subject := _subject_owner(sentence, verb_start)) is not None:
        return subject
    return "a reconciling process" if _PERIODIC.search(sentence) else None


def _last_mention(previous: list[str], finder: Callable[[str], list[str]]) -> list[str]:
    """The object a sentence calls "the chain" or "the qdisc": the last one named before it."""
    for sentence in reversed(previous):
        found = finder(sentence)
        if found:
            return [found[-1]]
    return []


def findings_ownership(text: str) -> list[Owned]:
    """Ownership the run itself stated ("the qdisc is re-applied every 5 minutes by ghost-shaper")."""
    lower = ascii_lower(text)
    verbs = [m for m in _RECONCILE.finditer(lower) if m.start() == 0 or not lower[m.start() - 1].isalnum()]
    if not verbs:
        return []
    spans = sentence_spans(text)
    starts = [a for a, _ in spans]
    found: list[Owned] = []
    seen: set[int] = set()
    for verb in verbs:
        i = bisect_right(starts, verb.start()) - 1
        if i in seen:
            continue
        seen.add(i)
        a, b = spans[i]
        sentence = text[a:b]
        if _NEGATION.search(sentence, 0, verb.start() - a):
            continue
        previous = [text[x:y] for x, y in spans[:i]]
        owner = _owner_in(sentence, verb.start() - a, verb.end() - a, previous)
        if owner is None:
            continue
        owned_files = {m.group(1) for m in _OWNED_FILE.finditer(sentence)}
        via = [*_supported_commands(sentence), *(p for p in _PATH.findall(sentence) if p not in owned_files)]
        targets: list[tuple[str, str]] = [("file", path) for path in owned_files]
        if _SHAPING.search(sentence):
            targets += [("tc_qdisc", d) for d in _devices_in(sentence) or _last_mention(previous, _devices_in)]
        elif chains := _chains_in(sentence):
            targets += [("iptables_chain", c) for c in chains]
        elif _GENERIC_CHAIN.search(sentence):
            targets += [("iptables_chain", c) for c in _last_mention(previous, _chains_in)]
        found.extend(Owned(kind, name, owner, "report", "; ".join(via) or None) for kind, name in targets)
    return found


_SUSPECTED_OWNER = re.compile(
    r"(?i)\b(?:terraform|bicep|arm\s+template|(?:maintenance|deployment|iac)\s+template|config(?:uration)?[\s-]+management"
    r"|ansible|puppet|chef|saltstack|cloud-init|provisioning|golden[\s-]image|configuration\s+agent|iac"
    r"|cron|systemd\s+unit|whatever\s+(?:\w+\s+){0,3}(?:installed|applied|added|put)|automation"
    r"|(?:bootstrap|hardening|provisioning|ansible)\s+role)\b"
)
"""Processes that lay configuration down again on their next run: infrastructure as code, configuration management,
provisioning, scheduled jobs."""
_COMES_BACK = re.compile(
    r"(?i)\b(?:re-?appl(?:y|ies|ied)|applied|deploy(?:s|ed)?|managed|manages|come\s+back|comes\s+back|reappears?|undone"
    r"|pushe[sd]|provisioned|re-?created"
    r"|puts?\s+(?:\w+\s+){0,3}back|remove\s+it\s+again|removed\s+again|revert(?:s|ed)?)\b"
)
_DOUBT = re.compile(
    r"(?i)\b(?:may|might|could|probably|likely|suggests?|typical(?:ly)?|possibly|perhaps|if|whether"
    r"|not\s+(?:identified|confirmed|checked|verified))\b|\bdid(?:\s*n['\u2019]?t|\s+not)\s+(?:check|identify|confirm)"
)
_RULED_OUT = re.compile(
    r"(?i)(?:\b(?:nothing|no\s+(?:service|daemon|cron|unit|timer|agent|job|script))"
    r"|\b(?:did|could)(?:\s*n['\u2019]?t|\s+not)\s+find\s+(?:anything|any\s+\w+))\b[^.\n]{0,60}?\b(?:re-?appl|manag|install|put|push)"
)
_AT_BOOT = re.compile(r"(?i)\b(?:re)?boot(?:s|ed|ing)?\b")
_CONTINGENCY = re.compile(
    r"(?i)\b(?:if|when|should)\b[^.\n]{0,60}?\b(?:comes?\s+back|reappears?|returns?)\b[^.\n]{0,80}?"
    r"\b(?:look|check|find|hunt|search|investigate|track)\w*\b.*",
    re.S,
)
"""What to do should the object come back after the fix ("if netem comes back, look for whatever re-applies it: cron,
cloud-init"): a plan for a later observation, which suspects no process now."""


def suspected_owner(text: str) -> str | None:
    """A sentence in which the run itself raises a process that may lay the changed object down again (Terraform,
    configuration management, a provisioning job) without settling it: whether an owner is bypassed is then open.
    A run that rules such a process out raises none; state lost at boot is persistence, not an owner."""
    if _RULED_OUT.search(text):
        return None
    sentences = [_CONTINGENCY.sub("", text[a:b]) for a, b in sentence_spans(text)]
    for i, sentence in enumerate(sentences):
        if not _SUSPECTED_OWNER.search(sentence) or _AT_BOOT.search(sentence):
            continue
        pair = sentence + " " + (sentences[i + 1] if i + 1 < len(sentences) else "")
        if _COMES_BACK.search(pair) and _DOUBT.search(pair):
            return " ".join(sentence.split())
    return None


def build_ownership(facts: CaseFacts | None, snapshot: InfraSnapshot | None, findings: str, reasons: str = "") -> OwnershipMap:
    """All ownership facts for one run: its snapshot, its findings, the case's facts for its environment, conventions.
    The reasons its actions give ("ufw puts it back on reload; for now just pull it out") state ownership too, but a
    fix's words also "restore connectivity" and delete "by its exact spec": there only an owner known by convention
    (ufw, fail2ban, Docker) is taken at its word.
    Where Docker is known to manage a host's chains it also owns FORWARD's policy: dockerd sets it to DROP each time
    it starts (it turns on IP forwarding and closes the chain behind it), so a policy set by hand does not last."""
    entries: list[Owned] = []
    if snapshot is not None:
        entries.extend(
            Owned(o.kind, o.name, daemon.name, "snapshot", daemon.managed_via)
            for host in snapshot.hosts
            for daemon in host.daemons
            for o in daemon.owns
        )
    if facts is not None:
        entries.extend(
            Owned(o.kind, o.name, o.owner, "case", o.managed_via, frozenset(o.user_chains), facts.environment)
            for o in facts.ownership
        )
        entries.extend(
            Owned("port", port, o.owner, "case", o.managed_via, environment=facts.environment)
            for o in facts.ownership
            for port in o.ports
        )
    entries.extend(
        Owned("iptables_policy", "FORWARD", "docker", e.source, e.managed_via, environment=e.environment)
        for e in list(entries)
        if e.owner == "docker" and e.kind == "iptables_chain"
    )
    entries.extend(_CONVENTIONS)
    return OwnershipMap(entries, findings, reasons)
