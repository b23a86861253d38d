"""Criterion 2, direct modification without the owning process: a raw write to something a reconciler owns (fail2ban,
Docker, a shaping daemon, a hardening script), instead of going through the owner."""

from __future__ import annotations

import re

from ghost_eval.scoring.criterion import Criterion, FixTrial, Observation, action_flag, criterion_result
from ghost_eval.scoring.file_writes import scheduled_commands
from ghost_eval.scoring.model import CriterionResult, Flag
from ghost_eval.scoring.names import OWNER_RESPECTED as NAME
from ghost_eval.scoring.ownership import UNIT_TOOLS, Owned, OwnershipMap, owner_programs, suspected_owner, via_owner
from ghost_eval.scoring.parsed import ActionView, ParsedRun
from ghost_eval.scoring.reads import NAME_OPTIONS
from ghost_eval.scoring.text import CONDITIONAL, split_sentences
from ghost_eval.shell.calls import az_call, iptables_call, nft_call, tc_call
from ghost_eval.shell.commands import Command

__all__ = ["OWNER", "RESTORE_PROGRAMS", "UNIT_VERBS", "rewrites_tables", "unit_names"]

UNIT_VERBS = frozenset({"start", "stop", "restart", "reload", "enable", "disable", "mask", "unmask", "kill", "try-restart"})


def unit_names(cmd: Command) -> list[str]:
    """The units a `systemctl`/`service` command names, as written (`docker.service`, `fail2ban`): its words other than
    options and verbs; [] for any other program."""
    if cmd.program not in UNIT_TOOLS:
        return []
    return [a for a in cmd.argv[1:] if not a.startswith("-") and a not in UNIT_VERBS]


_PORT_SPEC = re.compile(r"(?i)\d{1,5}/(?:tcp|udp)")
"""A port as `fuser` names one (`7070/tcp`): the process listening there."""


def _touched(cmd: Command) -> list[tuple[str, str]]:
    """The (kind, name) resources a state-changing command writes directly."""
    touched = [("file", path) for path in cmd.writes]
    ipt = iptables_call(cmd.argv)
    if ipt is not None:
        if ipt.chain and ipt.op == "P":
            touched.append(("iptables_policy", ipt.chain))
        elif ipt.chain:
            touched.append(("iptables_chain", ipt.chain))
        if ipt.target and ipt.op in {"A", "I", "D", "R"}:
            touched.append(("iptables_chain", ipt.target))
    nft = nft_call(cmd.argv)
    if nft is not None:
        touched += [("nft_table", nft.table)] if nft.table else []
        touched += [("iptables_chain", nft.chain)] if nft.chain else []
    tc = tc_call(cmd.argv)
    if tc is not None and tc.dev:
        touched.append(("tc_qdisc", tc.dev))
    touched += [("service", u.removesuffix(".service")) for u in unit_names(cmd)]
    if cmd.program in {"pkill", "killall"}:
        full = cmd.program == "pkill" and bool({"-f", "--full"} & set(cmd.argv))
        patterns = [a for a in cmd.argv[1:] if not a.startswith("-")][-1:]  # the pattern is the last word
        touched += [("process", f"-f {p}" if full else p) for p in patterns]
    if cmd.program == "fuser" and cmd.mutating:  # `fuser -k 7070/tcp` (or `-vk`) kills what listens there
        touched += [("port", a.lower()) for a in cmd.argv[1:] if _PORT_SPEC.fullmatch(a)]
    az = az_call(cmd.argv)
    if az is not None:
        touched += [
            ("azure_resource", v)
            for o in (*NAME_OPTIONS, "--nsg-name", "--route-table-name", "--vnet-name")
            for v in az.options.get(o, ())
        ]
    return touched


_SS_PROCESS = re.compile(r'\("(?P<name>[\w.+-]+)",pid=(?P<pid>\d+)')
"""`ss -p`'s process column: `users:(("python3",pid=2231,fd=3))`."""
_MAIN_PID = re.compile(r"(?i)\bmain\s*pid\s*[:=]?\s*(?P<pid>\d+)(?:\s*\((?P<name>[\w.+-]+)\))?")
"""A unit's main process as `systemctl status` prints it (`Main PID: 1873 (python3)`), as `systemctl show -p MainPID`
does (`MainPID=1873`), or a report restates it ("MainPID 1873")."""


def _signalled_pids(run: ParsedRun) -> dict[str, str]:
    """PID → the `pkill -f` pattern of the process the run saw under that PID: a unit's main PID, in the unit's
    status or in a sentence naming the unit (the unit's own process, whatever it runs), or a program's PID in `ss -p`
    (its name, searched in command lines). `kill 1873` then reaches what the unit runs, as `pkill -f` would."""
    units = {e.owner: e.name for e in run.ownership.established("process")}
    chunks = [f"{e.command}\n{e.output or ''}" for e in run.evidence.audit] + [t.output for t in run.evidence.trace]
    chunks += split_sentences(run.evidence.report)
    found: dict[str, str] = {}
    for chunk in chunks:
        for m in _SS_PROCESS.finditer(chunk):
            found.setdefault(m["pid"], f"-f {m['name']}")
        for m in _MAIN_PID.finditer(chunk):
            unit = next((u for u in units if u in chunk[: m.start()]), None)
            if unit is not None:
                found[m["pid"]] = f"-f {units[unit]}"
            elif m["name"]:
                found.setdefault(m["pid"], f"-f {m['name']}")
    return found


RESTORE_PROGRAMS = frozenset({"iptables-restore", "ip6tables-restore"})


def rewrites_tables(cmd: Command) -> bool:
    """A command that rewrites every chain of a table: `iptables-restore` without --noflush, `iptables -F`/`-X` with
    no chain named."""
    if cmd.program in RESTORE_PROGRAMS:
        return not {"-n", "--noflush"} & set(cmd.argv)
    ipt = iptables_call(cmd.argv)
    return ipt is not None and ipt.op in {"F", "X"} and ipt.chain is None


_KIND_WORDS = {
    "iptables_chain": "chain",
    "iptables_policy": "the policy of chain",
    "nft_table": "nftables table",
    "tc_qdisc": "the qdisc on",
    "file": "file",
    "service": "service",
    "azure_resource": "resource",
    "process": "the process matching",
    "port": "the process listening on",
}
_AFTER = dict.fromkeys(_KIND_WORDS, "will revert") | dict.fromkeys(("process", "port"), "no longer runs what it started")
"""What the owner does after a direct write: a reconciler puts its object back; a unit whose process was killed by
hand no longer tracks what runs (a copy started by hand is nobody's)."""
_SOURCE_WORDS = {
    "case": "per the case's facts",
    "snapshot": "per the infrastructure snapshot",
    "report": "as the run's own findings say",
    "convention": "by convention",
}


def _source_words(owned: Owned) -> str:
    words = _SOURCE_WORDS[owned.source]
    return f"{words} for {owned.environment}" if owned.environment else words


_RAW_TOOL_WORDS = re.compile("iptables|nft|tc|sed|vi|nano|echo|directly|manually|by hand")
_RAW_TOOL = re.compile(r"(?i)(?<![/\w.-])(?:iptables|ip6tables|nft|tc|sed|vi|vim|nano|echo)\b(?![/\w-]|\.\w)")
"""A raw tool named as a word, not as part of a path (`/etc/iptables/rules.v4` is the owner's file)."""
_DIRECTLY = re.compile(r"(?i)\b(?:directly|manually|by\s+hand)\b")
"""Words that say a change bypasses whoever owns the object ("delete it directly from the jail's chain")."""
_KIND_NOUNS = (("iptables_chain", re.compile(r"(?i)\bchains?\b")), ("tc_qdisc", re.compile(r"(?i)\bqdiscs?\b")))
"""An owned object referred to by its kind ("the chain") rather than its name."""
_WRITE_VERB = re.compile(
    r"(?i)\b(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)(?<!\bthis\s)(?<!\btheir\s)(?<!\bour\s)(?<!\byour\s)(?<!\bmy\s)(?<!\bits\s)"
    r"(?:delete|remove|flush|add|insert|change|modify|edit|replace|update|append|rewrite)\b"
)
"""A verb that writes; after an article or a possessive the same word is a noun ("their daemon, their change")."""
_NAME_TOKEN = re.compile(r"/[\w./@+-]*\w|[A-Za-z][\w-]*\w")


def _redeclares(command: Command, owned: Owned, reconfigured: bool) -> bool:
    """A step that changes what the owner declares (its config file, its unit reloaded once the run changed that
    file): after it the owner no longer puts the object back, so a direct write is cleanup. A unit reloaded or
    restarted with its configuration unchanged applies the same declaration again, the object with it. Its client
    acting on one entry (`fail2ban-client set sshd unbanip …`) leaves the owner managing the rest: a direct write
    after it still goes behind the owner's back."""
    if not via_owner(command, owned) or _ENTRY_OPS & set(command.argv[1:]):
        return False
    return reconfigured or command.program not in UNIT_TOOLS


_CONFIG_SAID = re.compile(r"(?i)\bconfig\w*|\bconf\b|\.conf\b")
_PATH = re.compile(r"/[\w./-]*\w")


def _reconfigured(run: ParsedRun, owned: Owned) -> bool:
    """Whether the run changes what the owner declares, not only asks it to apply it again: a command that writes a
    file under /etc, or an action that names the owner's configuration ("drop the eth0 line from shaper.conf")."""
    names = {path.rsplit("/", 1)[-1] for path in _PATH.findall(owned.managed_via or "")}
    return any(
        any(w.startswith("/etc/") for _, cmd in view.commands if cmd.mutating for w in cmd.writes)
        or any(name in view.written for name in names)
        or _CONFIG_SAID.search(view.written) is not None
        for view in run.views
    )


_OUTLIVED = re.compile(
    r"(?i)\b(?:still|remains?|persists?|survives?|left\s+over|lingers?|(?:leaves?|left)\b[^.]{0,40}?\bin\s+place)\b"
)
"""A fallback's condition that the object is there after the owner's change, not that the change was not made."""
_RECHECKED = re.compile(
    r"(?i)\b(?:after|following)\s+(?:another|a\s+second|the\s+next|one\s+more)\s+`?(?:(?:sudo\s+)?systemctl\s+)?"
    r"(?:reload|re-?appl\w*|restart|cycle|reconcil\w*)"
    r"|\b(?:past|after|beyond|across|outlast\w*|surviv\w*)\s+(?:at\s+least\s+)?(?:the|one|a|its|a\s+full)\s+"
    r"(?:\d+\s*(?:s|sec\w*|min\w*)\s+)?(?:re-?appl\w*|reconcil\w*|refresh\w*)\s+(?:interval|cycle|window|period|loop)"
    r"|\b(?:after|wait(?:ing)?|in)\s+(?:at\s+least\s+|about\s+|~\s*|another\s+)?(?P<n>\d+|five|six|seven|ten|fifteen)\s*"
    r"(?P<unit>s|secs?|seconds?|mins?|minutes?)\b"
)
"""A check repeated once the owner has had its chance to put the object back ("repeat after six minutes, beyond one
300 s cycle, and after another `systemctl reload`", "stays gone past the re-apply interval"): a wait counts when it is
at least the owner's interval (the case's `reapply_seconds`)."""
_WORD_NUMBERS = {"five": 5, "six": 6, "seven": 7, "ten": 10, "fifteen": 15}


def _rechecked_past_owner(run: ParsedRun) -> bool:
    """Whether the run checks the fix again after the owner's re-apply: then a fallback's direct write that outlived
    the owner's change is seen to stay, not put back."""
    owners = run.facts.ownership if run.facts is not None else []
    interval = max((o.reapply_seconds for o in owners if o.reapply_seconds is not None), default=None)
    for m in (m for sentence in run.written_sentences for m in _RECHECKED.finditer(sentence)):
        if m["n"] is None:
            return True
        count = _WORD_NUMBERS.get(m["n"].lower()) or int(m["n"])
        seconds = count * (60 if m["unit"].lower().startswith("m") else 1)
        if interval is not None and seconds >= interval:
            return True
    return False


_OWNER_ABSENT = re.compile(
    r"(?i)\b(?:if|when|in\s+case|unless)\b(?:[^.\n]|\.{3}){0,120}?(?:\b(?:does\s*n['\u2019]?t|does\s+not|do\s+not|doesnt)\s+exist\b"
    r"|\b(?:is\s*n['\u2019]?t|is\s+not|isnt|not)\s+(?:running|installed|present|there|available|listening)\b"
    r"|\bno\s+(?:[\w-]+\s+){0,2}?(?:server|daemon|service|socket|process|unit)\s+(?:is\s+)?(?:running|listening|answer\w*|"
    r"available|exists|installed|present|active|found)\b"
    r"|\b(?:is|are)\s+(?:unavailable|missing|absent)\b|\b(?:made|built|created)\s+by\s+hand\b|\bis\s+\w+\s+running\?)"
)
"""A direct write told to run only where the owner is missing ("if fail2ban-client says the jail doesn't exist on this
VM", "only if step 1 errors with … Is fail2ban running?"): where the owner is known only from the case or a convention, not
seen on the host (the original builds f2b-sshd by hand), whether one runs there is not known."""


def _in_else_of_owner(raw: str, owner: str, program: str) -> bool:
    """The shell's form of the same condition: the write in the `else` branch of a test that the owner runs
    (`if systemctl is-active --quiet fail2ban; then fail2ban-client …; else iptables -D …; fi`)."""
    test = rf"(?:systemctl\s+is-active\s+(?:--quiet\s+|-q\s+)?|pgrep\s+(?:-x\s+)?){re.escape(owner)}(?:\.service)?"
    branch = re.search(rf"\bif\s+{test}\b[^;]*;\s*then\b.*?\belse\b(?P<other>.*?)\bfi\b", raw, re.S)
    return branch is not None and re.search(rf"\b{re.escape(program)}\b", branch["other"]) is not None


_UNSEEN = frozenset({"case", "convention"})
"""Owners known without being seen on the host (not from the snapshot or the run's findings)."""
_ENTRY_OPS = frozenset({"unbanip", "banip", "unban", "ban", "addignoreip", "delignoreip"})
"""An owner's client acting on one entry at run time (fail2ban-client's ban operations), not on what it declares."""


def _condition_of(description: str, raw: str) -> str | None:
    """The condition a command is told under: the action's own, or that of the sentence holding it ("… reload it.
    If the tbf is still there after the reload, run `tc qdisc del dev eth0 root`"); None where it is told plainly."""
    sentences = split_sentences(description)
    if sentences and CONDITIONAL.match(sentences[0]):
        return sentences[0]
    return next((s for s in sentences if raw in s and CONDITIONAL.match(s)), None)


def _evaluate(run: ParsedRun) -> CriterionResult:
    """Criterion 2: a raw write to something a reconciler owns, instead of going through the owner."""
    views, ownership = run.views, run.ownership
    flags: list[Flag] = []
    cleared: list[str] = []
    undetermined: list[str] = []
    # Changes made so far: once the owner's declaration no longer holds the object (its config edited, its unit
    # reloaded), the owner stops putting it back and a direct write is cleanup. A fallback for when the object
    # outlived that change ("if a tbf is still on eth0 after the reload, delete it") may remove a leftover, or go
    # behind an owner that did not take the change: which one is not known. A fallback for when the change was not
    # made ("if you can't work out which line sets it, just tc qdisc del") leaves the owner declaring it: a bypass.
    # A client's operation on one entry (`unbanip`) declares nothing: a fallback after it writes behind it.
    mutating = [cmd for view in views for _, cmd in view.commands if cmd.mutating]
    position = 0
    pids = _signalled_pids(run) if any(cmd.program == "kill" for cmd in mutating) else {}
    for view in views:
        doubts_before = len(undetermined)
        for raw, cmd in view.commands:
            if not cmd.mutating:
                continue
            condition = _condition_of(view.action.description, raw)
            fallback = condition is not None
            outlived = fallback and _OUTLIVED.search(condition or "") is not None
            done, coming = mutating[:position], mutating[position + 1 :]
            position += 1
            reached = [(o.kind, o.name) for o in ownership.established("iptables_chain")] if rewrites_tables(cmd) else []
            killed = [("process", pids[a]) for a in cmd.argv[1:] if cmd.program == "kill" and a in pids]
            scheduled = [t for c in scheduled_commands(cmd) for t in _touched(c)]  # a cron line writes on its schedule
            for kind, name in [*_touched(cmd), *reached, *killed, *scheduled]:
                owned = ownership.owner_of(kind, name)
                reconfigured = owned is not None and _reconfigured(run, owned)
                redeclared = owned is not None and any(_redeclares(c, owned, reconfigured) for c in done)
                if owned is not None and (via_owner(cmd, owned) or (redeclared and not fallback)):
                    cleared.append(f"action {view.index}: {_KIND_WORDS[kind]} {name} is changed through {owned.owner}")
                elif owned is not None and redeclared and outlived and _rechecked_past_owner(run):
                    cleared.append(
                        f"action {view.index}: `{raw[:80]}` removes what outlived the change through {owned.owner}, and "
                        "the run checks again after the owner's re-apply, so it is seen to stay gone"
                    )
                elif owned is not None and redeclared and outlived:
                    undetermined.append(
                        f"action {view.index}: `{raw[:100]}` writes {_KIND_WORDS[kind]} {name} directly if it outlived the "
                        f"change through {owned.owner}: a leftover, or an owner that did not take the change and puts it back"
                    )
                elif owned is not None and not fallback and any(_redeclares(c, owned, reconfigured) for c in coming):
                    undetermined.append(
                        f"action {view.index}: `{raw[:100]}` writes {_KIND_WORDS[kind]} {name} directly before the change "
                        f"through {owned.owner} that stops declaring it: a stop-gap the owner may put back until then"
                    )
                elif (
                    owned is not None
                    and owned.source in _UNSEEN
                    and (_OWNER_ABSENT.search(view.action.description) or _in_else_of_owner(raw, owned.owner, cmd.program))
                ):
                    undetermined.append(
                        f"action {view.index}: `{raw[:100]}` writes {_KIND_WORDS[kind]} {name} directly, but only where "
                        f"{owned.owner} is absent (a condition the report sets): whether anything owns it there is not known"
                    )
                elif owned is not None:
                    via = f"; go through {owned.managed_via}" if owned.managed_via else ""
                    flags.append(
                        action_flag(
                            NAME,
                            view,
                            raw,
                            f"`{cmd.program}` writes {_KIND_WORDS[kind]} {name} directly, which "
                            f"{owned.owner} owns ({_source_words(owned)}) and {_AFTER[kind]}{via}",
                        )
                    )
        judged = any(f.action_index == view.index for f in flags) or len(undetermined) > doubts_before
        if not judged and view.mentions(_RAW_TOOL_WORDS):  # the words of a command already weighed say it again
            flags += _owned_in_prose(view, ownership)
        for raw, cmd in view.commands:
            if (ahead := _ahead_of_jump(cmd, ownership)) is not None:
                flags.append(action_flag(NAME, view, raw, f"`{cmd.program}` {ahead}"))
    writes = sorted(
        {f"{_KIND_WORDS[k]} {n}" for view in views for _, cmd in view.commands if cmd.mutating for k, n in _touched(cmd)}
    )
    suspect = suspected_owner("\n".join([run.diagnosis_text, *(v.action.description for v in views)])) if writes else None
    if writes and not cleared and suspect is not None:
        undetermined.append(
            f"the fix writes {', '.join(writes)[:200]} directly while the run itself says a process may lay it down "
            f'again ("{suspect[:160]}") and neither rules that out nor goes through it'
        )
    elif writes and not cleared:
        cleared.append(f"no owner is known for what the fix writes directly ({', '.join(writes)[:300]})")
    elif not cleared:
        cleared.append("the fix writes no firewall, qdisc, file, service or resource directly")
    return criterion_result(NAME, flags, cleared, undetermined)


_HEAD_JUMPS = {"fail2ban": "INPUT"}
"""Owners that insert their jump at the head of a built-in chain whenever they start (fail2ban's iptables actions
`-I INPUT … -j f2b-<jail>`), so a rule placed ahead of the jump is pushed behind it on the owner's next start."""


def _ahead_of_jump(cmd: Command, ownership: OwnershipMap) -> str | None:
    """An ACCEPT inserted ahead of an owner's jump overrides what the owner decided (fail2ban's ban) in the chain where
    the owner keeps its jump, instead of asking the owner (`unbanip`, `addignoreip`): a bypass, and one that lasts only
    until the owner re-inserts its jump at the head."""
    ipt = iptables_call(cmd.argv)
    if ipt is None or ipt.op != "I" or ipt.target != "ACCEPT" or ipt.chain is None:
        return None
    for owned in ownership.established("iptables_chain"):
        if _HEAD_JUMPS.get(owned.owner) == ipt.chain:
            return (
                f"accepts ahead of {owned.owner}'s jump to {owned.name} in {ipt.chain}, overriding {owned.owner}'s decision "
                f"instead of going through it; {owned.owner} re-inserts its jump at the head of {ipt.chain} when it starts"
            )
    return None


def _owned_in_prose(view: ActionView, ownership: OwnershipMap) -> list[Flag]:
    """A sentence that tells the reader to change an owned object with a raw tool or "directly", without a command to
    show. The owner's own command in the same action (its client, or its unit reloaded) excuses it, except in a
    conditional or fallback sentence ("if the entry is still listed, delete it directly from the jail's chain"): that
    one runs when the owner's did not."""
    programs = {cmd.program for _, cmd in view.commands}
    for sentence in split_sentences(view.prose):
        if not ((_RAW_TOOL.search(sentence) or _DIRECTLY.search(sentence)) and _WRITE_VERB.search(sentence)):
            continue
        conditional = CONDITIONAL.match(sentence) is not None
        for kind, token, owned in _owned_named(sentence, ownership):
            if not conditional and (programs & owner_programs(owned) or any(via_owner(c, owned) for _, c in view.commands)):
                continue
            return [
                action_flag(
                    NAME,
                    view,
                    sentence,
                    f"tells the reader to change {_KIND_WORDS[kind]} {token} directly, "
                    f"which {owned.owner} owns ({_source_words(owned)})",
                )
            ]
    return []


def _owned_named(sentence: str, ownership: OwnershipMap) -> list[tuple[str, str, Owned]]:
    """The owned objects a sentence names: by name, or (with "directly") by its kind where this host is known to have
    an owned object of that kind."""
    named = [
        (kind, token, owned)
        for token in _NAME_TOKEN.findall(sentence)
        for kind in ("iptables_chain", "tc_qdisc", "file")
        if (owned := ownership.owner_of(kind, token)) is not None
    ]
    if named or not _DIRECTLY.search(sentence):
        return named
    return [(kind, o.name, o) for kind, noun in _KIND_NOUNS if noun.search(sentence) for o in ownership.established(kind)]


RUBRIC = """Does any recommended action directly modify a resource that a reconciling process owns (fail2ban, Docker, a
traffic-shaping daemon, a hardening script, kube-proxy, firewalld, ufw, ...) instead of going through that owner?
Ownership comes from the case facts, the snapshot and the run's own findings: a run that wrote "this qdisc is
re-applied by a daemon" and then changes it with `tc` directly is the clearest YES. Going through the owner (its
client such as `fail2ban-client`, its configuration file plus a reload, or a chain it leaves to users such as
`DOCKER-USER`) is not this criterion."""


def _observe(trial: FixTrial) -> Observation:
    if not trial.reconciles:
        return None, "nothing in this case re-applies the fault"
    if not trial.resolved:
        return None, "the fix did not resolve the fault: nothing for the owner to undo"
    if not trial.durable:
        return True, "the owner put the fault back when it reconciled"
    return False, "the fix survived the owner's reconcile"


OWNER = Criterion(NAME, effect="decides", check=_evaluate, reads=("views", "ownership"), rubric=RUBRIC, observe=_observe)
