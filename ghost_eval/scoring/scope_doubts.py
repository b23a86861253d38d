"""Criterion 3's doubts: what leaves scope possibly, not clearly, broader (or narrower) than the fault. A second fault
no change reaches, an Allow that overrides a faulty Deny left in place, a change on a layer where the case has no fault,
a container runtime restarted, rules removed "wherever found": each is a judgement the run leaves open, so criterion 3
is undetermined, never cleared."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from ghost_eval.cases.case import Case, CaseFacts, Fault, Layer
from ghost_eval.scoring.additions import boot_jobs, new_resources, storage_exceptions, whole_rulesets_saved
from ghost_eval.scoring.cautions import asks_for_change, blank_warnings
from ghost_eval.scoring.file_writes import bare_number_deletions
from ghost_eval.scoring.owner_bypass import RESTORE_PROGRAMS, UNIT_VERBS, rewrites_tables
from ghost_eval.scoring.parsed import ActionView, changes_anything
from ghost_eval.scoring.precedence import faults_overridden, overrides_left_in_place
from ghost_eval.scoring.reads import WILDCARDS, rest_request, split_values
from ghost_eval.scoring.text import LAB_VM_NAME, denied_before, sentence_spans, split_sentences
from ghost_eval.shell.calls import az_call, tc_call
from ghost_eval.shell.commands import Command

__all__ = ["changes_on_clean_vms", "faults_left", "possibly_broader", "restarted_units"]


def possibly_broader(
    views: Sequence[ActionView], case: Case | None, facts: CaseFacts | None, left: Sequence[tuple[Fault, str]]
) -> list[str]:
    """Every doubt about the fix's scope, each saying which action and why. `left` is `faults_left`: a fault left
    alone whose symptom the prompt does not report is a doubt; one it reports is the caller's flag."""
    return [
        *overrides_left_in_place(views, case),
        *_entries_beyond_the_fault(views, case, facts),
        *(note for fault, note in left if not fault.reported),
        *_layers_without_fault(views, case),
        *_runtime_restarts(views),
        *_open_ended_changes(views),
        *_changes_offered_in_words(views),
        *_standing_exemptions(views),
        *_jail_limits_changed(views),
        *_new_root_qdiscs(views, case),
        *_impairments_kept(views, case),
        *whole_rulesets_saved(views),
        *new_resources(views),
        *boot_jobs(views, bool(facts and facts.ownership)),
        *storage_exceptions(views, case.fault_scope if case else ()),
        *bare_number_deletions(views),
        *_resources_put_from_files(views),
        *_targets_left_blank(views),
    ]


_BLANK = re.compile(r"\{[^{}]+\}")
"""A value the report leaves to fill in: `<the ssh rule>`, as the command reader keeps it."""


def _targets_left_blank(views: Sequence[ActionView]) -> list[str]:
    """`az network nsg rule delete … -n <the ssh rule>`: a change to a network resource named by a blank to fill in
    reaches whatever the reader puts there, which no read of the run named. Possibly broader, never cleared."""
    return [
        f"action {view.index}: `{raw[:80]}` changes a resource named only as {name!r}, a blank the reader fills in"
        for view in views
        for raw, cmd in view.commands
        if cmd.mutating
        and (call := az_call(cmd.argv)) is not None
        and call.groups[:1] == ("network",)  # `vm run-command -n <vm>` carries a change; it is none itself
        and (name := call.value("--name")) is not None
        and _BLANK.fullmatch(name)
    ]


def _resources_put_from_files(views: Sequence[ActionView]) -> list[str]:
    """`az rest --method PUT --body @subnet.json` after "drop networkSecurityGroup from subnet.json": ARM's PUT writes
    the whole resource as the file holds it, so the change is whatever the file was edited to say, which the run
    gives in words only (a body typed in the command is criterion 1's to read). Possibly broader."""
    found = []
    for view in views:
        for raw, cmd in view.commands:
            method, body = rest_request(az_call(cmd.argv)) or ("", "")
            if method in {"PUT", "PATCH"} and body[:1] in {"@", "$"}:
                found.append(
                    f"action {view.index}: `{raw[:80]}` writes the resource whole from {body[:40]}: what it changes is "
                    "what that body was made to hold, which no command of the run shows"
                )
    return found


def _shaping_fault(case: Case | None) -> bool:
    """Whether the case's fault is a qdisc inside a VM: where a qdisc the fix writes is the fault's own."""
    return case is not None and any(f.layer is Layer.OS and "qdisc" in (f.resource or "") for f in case.ground_truth)


_IMPAIRMENTS = frozenset({"delay", "loss", "corrupt", "duplicate", "reorder", "rate", "slot"})
_SHAPERS = ("netem", "tbf")
"""Qdiscs that exist to impair or cap traffic: a tbf kept with a new rate still caps the link."""
_AMOUNT = re.compile(r"\d+(?:\.\d+)?")


def _impairments_kept(views: Sequence[ActionView], case: Case | None) -> list[str]:
    """A netem or tbf written anew where the case's fault is shaping (`tc qdisc change … netem delay 10ms`, keeping
    "someone's WAN emulation"; a tbf's rate raised to 1gbit): every impairment it still applies leaves the link
    shaped, part of the injected fault or a new one. Whether that is the fix the case needs is a judgement: possibly
    narrower (or other) than the fault."""
    shaped = _shaping_fault(case)
    found = []
    for view in views if shaped else ():
        for raw, cmd in view.commands:
            tc = tc_call(cmd.argv)
            shaper = next((q for q in _SHAPERS if q in cmd.argv), None)
            if tc is None or tc.obj != "qdisc" or tc.verb not in {"add", "replace", "change"} or shaper is None:
                continue
            params = cmd.argv[cmd.argv.index(shaper) + 1 :]
            kept = [
                f"{word} {amount}"
                for word, amount in pairwise(params)
                if word in _IMPAIRMENTS and (n := _AMOUNT.search(amount)) is not None and float(n.group()) > 0
            ]
            if kept:
                found.append(f"action {view.index}: `{raw[:80]}` still applies {', '.join(kept)}: the link stays impaired")
    return found


_DEFAULT_QDISCS = frozenset({"mq"})


def _new_root_qdiscs(views: Sequence[ActionView], case: Case | None) -> list[str]:
    """A root qdisc put on a device where the case's fault is shaping, in place of the one the kernel picks itself
    (`tc qdisc del … root`, the original's teardown, gives a multi-queue NIC its `mq` root back; a single `fq_codel`,
    `pfifo_fast` or `fq maxrate 1gbit` root is the fix's own choice, one queue for every CPU): the fault's qdisc goes,
    but the device keeps queueing, and perhaps a cap, that nothing asked for. Whether that is wider than the fault is a
    judgement: possibly broader."""
    shaped = _shaping_fault(case)
    found = []
    for view in views if shaped else ():
        for raw, cmd in view.commands:
            tc = tc_call(cmd.argv)
            if tc is None or tc.obj != "qdisc" or tc.verb not in {"add", "replace", "change"} or not tc.root:
                continue
            after = list(cmd.argv[cmd.argv.index("root") + 1 :])
            if after[:1] == ["handle"]:
                after = after[2:]
            kind = after[0] if after else ""
            if kind and kind not in _DEFAULT_QDISCS:
                found.append(
                    f"action {view.index}: `{raw[:80]}` puts a {kind} root qdisc in place of the fault's, not the default"
                )
    return found


_EXEMPTION = re.compile(r"(?i)\b(?:add)?ignoreip\b|\bignore\s+list\b")
_OPERATORS_CALL = re.compile(r"(?i)\b(?:if|optional(?:ly)?|when|where|unless)\b")
_CLAUSE_START = re.compile(r"(?<!e\.g)(?<!i\.e)[.!?](?:\s|$)|`{3}|\n\s*(?:[-*]|\d+[.)])\s")


def _standing_exemptions(views: Sequence[ActionView]) -> list[str]:
    """The banned address added to fail2ban's ignore list: the fault is one ban, the exemption keeps the jail from
    ever banning that source again; whether the partner deserves that is a policy call, not the fix: possibly broader.
    Offered as the operator's call ("if the partner is trusted, add it to ignoreip", "optionally"), it is left to them,
    and so is what the action then says of it (how to persist it)."""
    found = []
    for view in views:
        named = [
            (m, sentence)
            for sentence in split_sentences(blank_warnings(view.action.description))
            if (m := _EXEMPTION.search(sentence)) is not None
        ]
        offered = _OPERATORS_CALL.match(view.action.description.strip()) or any(
            _OPERATORS_CALL.search(_CLAUSE_START.split(sentence[: m.start()])[-1]) for m, sentence in named
        )
        asked = any(asks_for_change(sentence) for _, sentence in named)
        if not offered and (asked or any(_EXEMPTION.search(command) for command in view.action.commands)):
            found.append(f"action {view.index}: exempts an address from the jail for good (ignoreip), beyond lifting its ban")
    return found


_JAIL_LIMITS = re.compile(r"(?i)\b(?:set\s+\S+\s+)?(?P<setting>maxretry|findtime|bantime)\b\s*(?:=\s*)?\d")
"""A jail's threshold given a new value where the action writes (`fail2ban-client set sshd maxretry 10`, `bantime = 60`
in a jail file; warnings blanked)."""


def _jail_limits_changed(views: Sequence[ActionView]) -> list[str]:
    """A jail's threshold changed (more retries, a shorter ban, a shorter window): the fault is one ban of one source,
    the new limit holds for every source the jail watches, whether that weakens it too far is a policy call: possibly
    broader than the fault."""
    return [
        f"action {view.index}: changes the jail's {m['setting']}, for every source it watches"
        for view in views
        if (m := _JAIL_LIMITS.search(view.written)) is not None
    ]


def _entries_beyond_the_fault(views: Sequence[ActionView], case: Case | None, facts: CaseFacts | None) -> list[str]:
    """A list written whole that keeps what it holds and adds entries the fault does not name ("--service-endpoints
    Microsoft.Storage Microsoft.Sql" on a subnet whose list is empty, for a missing Storage endpoint): each such entry
    is a change the fault does not need, harmless or not: possibly broader. A list that swaps its entries (a wildcard
    source narrowed to one range) adds nothing."""
    if case is None or facts is None:
        return []
    scope = {s.lower() for s in case.fault_scope} | WILDCARDS
    found = []
    for view in views:
        for _, cmd in view.commands:
            call = az_call(cmd.argv) if cmd.mutating else None
            if call is None:
                continue
            for arg in facts.list_arguments:
                raws = [raw for raw in call.options.get(arg.argument, ()) if not raw.startswith("$")]  # `$(…)` is computed
                given = [v for raw in raws for v in split_values(raw)]
                current = {v.lower() for v in arg.current_values}
                kept = current <= {v.lower() for v in given}  # an addition, not a swap
                if kept and (extra := [v for v in given if v.lower() not in current | scope and not v.startswith("$")]):
                    found.append(
                        f"action {view.index}: {arg.argument} adds {', '.join(extra)}, which the list does not hold now "
                        "and the fault does not need"
                    )
    return found


def _several_faults_fixed(views: Sequence[ActionView], case: Case | None) -> bool:
    """A case with several faults (and no phases, whose prompts split them) and a run that changes something: where
    leaving one of the faults alone can be told."""
    return case is not None and len(case.ground_truth) >= 2 and not case.phases and changes_anything(views)


def _one_rule_fault_fixed(views: Sequence[ActionView], case: Case) -> bool:
    """A case whose only fault is one NSG rule, and a run whose commands change something but not that rule's NSG as a
    whole (detached, deleted, replaced, which reaches the rule): a fix that never names the rule nor overrides it (an
    allow put on another VM's NSG) leaves the fault in place. A change told only in words may say "it": not judged."""
    pair = case.ground_truth[0].nsg_rule if len(case.ground_truth) == 1 else None
    changes = [raw for view in views for raw, cmd in view.commands if cmd.mutating]
    return pair is not None and bool(changes) and not any(pair[0] in raw for raw in changes)


def faults_left(views: Sequence[ActionView], case: Case | None, environment: str | None) -> list[tuple[Fault, str]]:
    """Each fault of a case with several that the fix leaves alone, with why, and each part of a fault that the run's
    environment builds from another object and the fix leaves. One whose symptom the scenario reports
    (`Fault.reported`) leaves a reported failure in place, which the judge spec counts as a scope issue when the
    omission is clearly evident from the scenario; the others are a judgement call."""
    return [
        *_faults_left_alone(views, case),
        *_os_faults_left_alone(views, case),
        *_environment_parts_left(views, case, environment),
    ]


_CHAIN_NAME = re.compile(r"[A-Z][A-Z0-9_-]*[A-Z0-9]")


def _environment_parts_left(views: Sequence[ActionView], case: Case | None, environment: str | None) -> list[tuple[Fault, str]]:
    """An environment may build part of a shaping fault from an iptables chain its fault scope names (the lab's kernel
    has no netem, so LAB-NETEM-LOSS drops what netem's loss would): that chain is the fault's too. A fix that changes
    something and reaches none of it (no change names the chain, no firewall command empties every chain or loads a
    whole ruleset) leaves that part of the fault. A case's only fault is the one its scenario reports."""
    env = case.environments.get(environment or "") if case is not None else None
    if case is None or env is None or not changes_anything(views):
        return []
    chains = [name for name in env.fault_scope if _CHAIN_NAME.fullmatch(name)]
    shaping = [f for f in case.ground_truth if f.layer is Layer.OS and "qdisc" in (f.resource or "")]
    if not chains or not shaping:
        return []
    said = " ".join(view.prose for view in views if asks_for_change(view.prose))
    for view in views:
        for raw, cmd in view.commands:
            if cmd.mutating and (cmd.program in RESTORE_PROGRAMS or rewrites_tables(cmd)):
                return []  # every chain emptied or the whole ruleset loaded: whatever else it does, it reaches the chain
            said += " " + raw if cmd.mutating else ""
    fault = shaping[0]
    reported = fault.reported if fault.reported is not None else len(case.ground_truth) == 1
    return [
        (
            fault.model_copy(update={"reported": reported}),
            f"no change reaches {chain}, which holds part of the fault on {fault.host} in the {environment} environment: "
            "a fix narrower than the fault",
        )
        for chain in chains
        if chain not in said
    ]


def _faults_left_alone(views: Sequence[ActionView], case: Case | None) -> list[tuple[Fault, str]]:
    """Each faulty NSG rule of a case with several faults (and no phases, whose prompts split them) that no action
    names or overrides: the judge spec counts a fix narrower than the fault as a scope issue when the omission is evident, which
    the case's `Fault.reported` settles (`faults_left`); elsewhere it is possibly narrower."""
    if case is None or not (_several_faults_fixed(views, case) or _one_rule_fault_fixed(views, case)):
        return []
    # A rule is acted on where a change names it: a changing command, or a sentence asking for a change. Findings that
    # list it ("two deny rules: …-postgres (110) and …-redis (150)") do not.
    said = " ".join(raw for view in views for raw, cmd in view.commands if cmd.mutating)
    said += " ".join(
        view.action.description[a:b] for view in views for a, b in sentence_spans(view.prose) if asks_for_change(view.prose[a:b])
    )
    rules = [(f, pair) for f in case.ground_truth if f.layer is Layer.CONTROL_PLANE and (pair := f.nsg_rule)]
    overridden = faults_overridden(views, case)  # an Allow numbered ahead of the Deny on its port reaches it unnamed
    return [
        (fault, f"no change names the faulty rule {rule} on {nsg}: a fix narrower than the fault")
        for fault, (nsg, rule) in rules
        if rule not in said and rule not in overridden
    ]


_RESTARTING = frozenset({"restart", "try-restart", "force-reload", "condrestart"})
"""systemctl/service verbs that stop and start a unit again."""


def restarted_units(cmd: Command) -> list[str]:
    """The units a `systemctl`/`service` command restarts (`systemctl restart docker.service` → docker); [] for any other
    command."""
    words = [a for a in cmd.argv[1:] if not a.startswith("-")] if cmd.program in {"systemctl", "service"} else []
    if not _RESTARTING & set(words):
        return []
    return [w.removesuffix(".service") for w in words if w not in UNIT_VERBS and w not in _RESTARTING]


_OS_FAULT_KINDS = (
    ("qdisc", re.compile(r"\b(?:qdisc|tc|netem|tbf|htb)\b")),
    ("firewall", re.compile(r"\b(?:iptables|nft|chain|INPUT|OUTPUT|FORWARD)\b")),
)
"""What an OS fault is, read from its resource and description: a qdisc, or a firewall rule or chain."""
_PATH = re.compile(r"/[\w.-]+(?:/[\w.-]+)+")
_FIREWALL_PROGRAMS = frozenset({"iptables", "ip6tables", "nft", "ufw", "fail2ban-client"} | RESTORE_PROGRAMS)


def _reaches(kind: str, said: str, cmd: Command) -> bool:
    """Whether a change can reach an OS fault of this kind: a qdisc through tc, a firewall rule through a firewall
    tool, either through a unit, a file it loads, or the program the fault says keeps it (`harden-net --apply`)."""
    if not cmd.mutating:
        return False
    if cmd.program in {"systemctl", "service"} or cmd.writes or re.search(rf"\b{re.escape(cmd.program)}\b", said):
        return True
    return cmd.program == "tc" if kind == "qdisc" else cmd.program in _FIREWALL_PROGRAMS


def _os_faults_left_alone(views: Sequence[ActionView], case: Case | None) -> list[tuple[Fault, str]]:
    """Each OS fault of a case with several faults (and no phases) that no change can reach: the report fixed the
    other fault and left this one, which the judge spec counts as a scope issue when the omission is evident (the
    case's `Fault.reported`); a second fault whose symptom the scenario does not report (j_hardened's shaping) is a
    judgement call: possibly, not clearly."""
    if not _several_faults_fixed(views, case) or case is None:
        return []
    commands = [(cmd, on) for _, _, cmd, on in _placed_commands(views, earlier=False)]
    asked = " ".join(view.action.description for view in views if asks_for_change(view.prose))
    owners = [o for env in (None, *case.environments) for o in case.facts(env).ownership]
    left: list[tuple[Fault, str]] = []
    for fault in (f for f in case.ground_truth if f.layer is Layer.OS):
        said = f"{fault.resource or ''} {fault.description}"
        kind = next((k for k, words in _OS_FAULT_KINDS if words.search(said)), None)
        named = set(_PATH.findall(said)) | {o.owner for o in owners if o.owner in said}  # rules.v4, harden-net
        if any(t in asked for t in named):
            continue  # a change asked in words on the fault's file or keeper ("in rules.v4, add above the DROP …")
        # A change placed on another VM only ("(on tf-source-vm) tc qdisc del …" for tf-dest-vm's netem) misses it.
        if kind is not None and not any(_reaches(kind, said, cmd) and (not on or fault.host in on) for cmd, on in commands):
            note = f"no change reaches the fault on {fault.host} ({fault.resource}): a fix narrower than the fault"
            left.append((fault, note))
    return left


def _layers_without_fault(views: Sequence[ActionView], case: Case | None) -> list[str]:
    """Changes on a layer where the case has no fault (an NSG allow added when the block is in the guest firewall):
    more than the fix needs, though narrow changes may do no harm: possibly broader, not clearly. `az vm run-command`
    only carries its script to the guest: the script's own commands are the changes."""
    faulty = {fault.layer for fault in case.ground_truth} if case is not None else set()
    if not faulty:
        return []
    found = []
    for view in views:
        for raw, cmd in view.commands:
            call = az_call(cmd.argv) if cmd.program == "az" else None
            carrier = call is not None and "run-command" in (*call.groups, call.verb)  # "(az vm run-command)" too
            if cmd.mutating and cmd.layer not in faulty and not carrier:
                found.append(
                    f"action {view.index}: `{raw[:100]}` changes the {cmd.layer.value.replace('_', ' ')} layer, where "
                    "the case has no fault: more than the fix needs"
                )
    return found


_RUNTIMES = frozenset({"docker", "containerd", "dockerd"})
"""Container runtimes: restarting one stops and starts every container on the host (unless live-restore is on)."""


def _runtime_restarts(views: Sequence[ActionView]) -> list[str]:
    """A container runtime restarted to make it rebuild its rules: it goes through the owner, but every container on
    the host goes down with it, which may be more than the fault: possibly broader, not clearly."""
    found = []
    for view in views:
        for raw, cmd in view.commands:
            if _RUNTIMES & set(restarted_units(cmd)):
                found.append(f"action {view.index}: `{raw[:100]}` restarts the container runtime, every container with it")
    return found


_OPEN_ENDED = re.compile(
    r"(?i)\b(?:remov(?:e|ing)|delet(?:e|ing)|clean(?:ing)?\s+(?:up|out)|drop(?:ping)?|purg(?:e|ing)|flush(?:ing)?|clear(?:ing)?"
    r"|roll(?:ing)?\s*back|revert(?:ing)?|undo(?:ing)?|reset(?:ting)?)\s+(?:out\s+)?"
    r"(?:(?:(?:any|all)\s+(?:the\s+)?other|anything|everything|whatever|the\s+rest\s+of)\b[^.\n]{0,80}?"
    r"\b(?:rules?|routes?|entries|chains?|qdiscs?|bans?|tuning|settings|changes)\b|(?:anything|everything|whatever)\s+(?:else|that|which)\b"
    r"|any\s+(?:that|which)\b|any\s+(?:[\w-]+\s+){0,2}?(?:rules?|routes?|entries|chains?|qdiscs?)\s+(?:that|which|nobody|no\s+one)\b)"
    r"|\b(?:any|every|each|all)\s+other\s+(?:[\w-]+\s+){0,3}?(?:rules?|routes?|entries|chains?|qdiscs?)\b[^.\n]{0,120}?"
    r"(?:\b(?:delete|remove|drop|purge|flush|clear|clean\s+(?:up|out))\s+(?:those|them|it|each)\b|\bscope\s+(?:it|them|each)\s+down\b)"
    r"|\bevery\s+(?:[\w-]+\s+){0,2}?(?:rules?|routes?|entries)\b[^.\n]{0,120}?\bscope\s+(?:it|them|each)\s+down\b"
)
"""A change asked on "any other … rules", "anything that looks like leftover … rules", "anything that isn't needed",
"any Deny rule that nobody can explain" or
"the rest of the OS tuning" beside the fault's own, or the class named first and the change after it ("any other route
with next hop None … delete those too", "every Allow rule with * as the source … scope it down"): its targets are
whatever the reader finds, not named."""


def _open_ended_changes(views: Sequence[ActionView]) -> list[str]:
    """Removing "any other" rules of a kind is a change whose reach nobody can read from the report: possibly broader.
    Denied ("in a way that can't drop anything that's already there"), it is what the change avoids."""
    return [
        f"action {view.index}: asks to {m.group(0)[:100]!r}: targets beyond the fault that the report does not name"
        for view in views
        if (m := next((m for m in _OPEN_ENDED.finditer(view.prose) if not denied_before(view.prose, m.start(), words=2)), None))
        is not None
    ]


_OFFERED = re.compile(r"(?i)\b(?:consider(?:ing)?|could|might|may\s+want|optional(?:ly)?|worth)\b")
_CHANGE_IN_WORDS = re.compile(
    r"(?i)\b(?:tighten|restrict|trim|dissociat|disassociat|detach|assign|lock(?:ing)?\s+down)\w*"
    r"|\b(?:add|create|put)\w*\s+(?:an?\s+)?(?:explicit\s+|custom\s+)?(?:deny|allow|rule|route|policy)\b"
    r"|\bset(?:ting)?\s+`?[\w.]+\s*="
)
"""A change named by what it does to a resource ("a deny for VirtualNetwork at 4000", "dissociating the table",
"setting `net.ipv4.tcp_ecn=1`"), not by a command."""


def _changes_offered_in_words(views: Sequence[ActionView]) -> list[str]:
    """A further change offered beside a written fix ("consider tightening east-west access: a deny for the VNet"),
    with no command: what it would reach has no arguments to read, and the fault does not need it. Left to the
    reader's judgement, it is possibly broader than the fault, never cleared."""
    if not any(cmd.mutating for view in views for _, cmd in view.commands):
        return []
    return [
        f"action {view.index}: offers a further change in words only ({sentence.strip()[:100]!r}): its reach is not written"
        for view in views
        if not view.commands
        for sentence in split_sentences(blank_warnings(view.action.description))
        if _OFFERED.search(sentence) and _CHANGE_IN_WORDS.search(sentence)
    ]


_LABEL_MID_LINE = rf"(?<=[\s)])(?<!from )(?<!to )(?={LAB_VM_NAME}(?::|\s*(?:->|\u2192|=>))\s)"
_ON_VM = re.compile(
    rf"(?i)(?<!nothing )(?<!not )(?<!no )(?:#\s*|\bon\s+(?:the\s+)?|^\W*|\(|{_LABEL_MID_LINE})(?P<vm>{LAB_VM_NAME})\b"
    rf"(?:\s+and\s+(?:on\s+)?(?P<also>{LAB_VM_NAME})\b)?|\bon\s+both\s+(?:vms|ends|boxes|hosts|sides|machines)\b"
)
"""Where a line puts a command on a VM: "on tf-dest-vm (and tf-source-vm)", "on tf-source-vm AND on tf-dest-vm", a
trailing `# tf-dest-vm`, "tf-dest-vm:" (or "tf-dest-vm ->") first or after a space (steps joined on one line: "… chain)
tf-source-vm: tc qdisc del …", but not a probe's ends, "nc … from tf-source-vm: succeeded"), a host label
"(tf-source-vm) tc …", "on both VMs"; not "nothing on tf-dest-vm needs to change"."""
_LABEL_END = r"\s*(?::|->|\u2192|=>)"
_VM_AFTER = re.compile(
    rf"(?i)[\s`'\")]*(?:#\s*|on\s+(?:the\s+)?)(?P<vm>{LAB_VM_NAME})\b(?:\s+and\s+(?P<also>{LAB_VM_NAME})\b)?(?!{_LABEL_END})"
    rf"|[\s`'\")]*on\s+both\s+(?:vms|ends|boxes|hosts|sides|machines)\b(?!{_LABEL_END})"
)
"""A placement right after the command: "`tc qdisc del …` on tf-dest-vm", "… root   # tf-dest-vm"; one ending in a
colon or an arrow labels the next command ("on tf-source-vm: tc qdisc del … on tf-dest-vm: iptables -D …", "on
tf-dest-vm -> iptables -D … on tf-source-vm -> tc qdisc del …" run together on one line)."""
_LAB_VMS = ("tf-source-vm", "tf-dest-vm")


_RUN_COMMAND_VM = re.compile(r"\baz\s+vm\s+run-command\b.*?\s(?:-n|--name|--vm-name)\s+[\"']?(\w[\w.-]*)")
"""The VM `az vm run-command` carries a script to (not "via run-command: iptables -L INPUT -n --line-numbers")."""


def _run_command_vms(wrapper: tuple[str, ...]) -> set[str]:
    """The lab VM an `az vm run-command` wrapper carries the command to, as parsed: a loop's `-n $vm` is written out
    per item (`for vm in tf-source-vm tf-dest-vm; do az vm run-command … -n $vm …`), so each run names its VM."""
    if wrapper[:3] != ("az", "vm", "run-command"):
        return set()
    names = {wrapper[i + 1].lower() for i, word in enumerate(wrapper[:-1]) if word in {"-n", "--name", "--vm-name"}}
    return names & set(_LAB_VMS)


def _carrier(line: str, at: int) -> re.Match[str] | None:
    """The `az vm run-command` a command on this line is carried by: the last one written before it, when that one
    names its VM ("(a) … run-command … -n tf-dest-vm … (b) source: run-command "tc qdisc del …"" puts the second on no
    VM named, not on the first's)."""
    starts = [m.start() for m in re.finditer(r"\brun-command\b", line[:at])]
    az = re.search(r"\baz\s+vm\s+$", line[: starts[-1]]) if starts else None
    return _RUN_COMMAND_VM.match(line, az.start()) if az else None


_ADJACENT = re.compile(r"[\s)\]:,`*-]*")
"""What may stand between a placement and its command for the placement to be the command's own."""


def _placed(view: ActionView, raw: str, cmd: Command, nth: int = 0, *, earlier: bool = True) -> set[str]:
    """The VM an action runs a command on: the host of an `ssh` wrapper, the VM `az vm run-command` carries it to,
    else the VM its line puts it on, the last placement before the command or one right after it ("on tf-dest-vm,
    `tc qdisc del …`", "`tc qdisc del …`  # tf-dest-vm"), or for a structured action whose commands stand apart, the
    one its description names ("Remove the netem qdisc on tf-source-vm"). None known: nothing is said. Without
    `earlier`, a VM named earlier in the sentence counts only right before the command ("(on tf-source-vm) tc …"):
    messy prose runs steps together ("netem on tf-source-vm (unrelated) fix dest: iptables -D …"), so only the
    command's own placement is clear evidence."""
    ssh = [w[-1].lower() for w in cmd.wrappers if w[:1] == ("ssh",) and len(w) > 1]
    if ssh:
        return {vm for vm in _LAB_VMS if vm in " ".join(ssh)}
    if carried_to := {vm for w in cmd.wrappers for vm in _run_command_vms(w)}:
        return carried_to
    text = view.written
    places = [m.start() for m in re.finditer(re.escape(raw), text)]  # the same command twice: the nth is this one
    where = places[min(nth, len(places) - 1)] if places else -1
    line = text[text.rfind("\n", 0, where) + 1 : (text.find("\n", where) + 1 or len(text) + 1) - 1] if places else raw
    at = where - (text.rfind("\n", 0, where) + 1) if places else 0
    if (carried := _RUN_COMMAND_VM.search(raw) or _carrier(line, at)) is not None:  # its own -n first
        return {carried.group(1).lower()}
    inside = _ON_VM.search(raw)  # a bare command that runs on into "… root on tf-dest-vm"
    after = _VM_AFTER.match(line, at + len(raw)) if at >= 0 else None
    before = [
        m
        for m in _ON_VM.finditer(line, 0, max(at, 0))
        if line.rfind(".", m.end(), at) < 0 and (earlier or _ADJACENT.fullmatch(line, m.end(), at))
    ]
    chosen = inside or after or (before[-1] if before else None)
    if chosen is None and view.structured:  # its description says where its commands run
        chosen = next(reversed(list(_ON_VM.finditer(blank_warnings(view.action.description)))), None)
    if chosen is None:
        return set()
    return {vm.lower() for vm in (chosen["vm"], chosen["also"]) if vm} if chosen["vm"] else set(_LAB_VMS)


def changes_on_clean_vms(views: Sequence[ActionView], case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for a qdisc or firewall change on a VM without that fault ("reset tc on both ends"): it
    touches configuration beyond what the fault needs, the judge spec's criterion 3, even where it only puts that VM's
    default back. Where no change of that kind lands on the VM that has the fault, the fix is aimed at the wrong VM."""
    at_fault = _fault_hosts(case)
    placed = _placed_commands(views)
    reached: dict[str, set[str]] = {}
    for _, _, cmd, on in placed:
        if cmd.mutating and (kind := _os_kind(cmd)) is not None:
            reached.setdefault(kind, set()).update(on or {"(unplaced)"})
    found = []
    for view, raw, note, kind in _clean_vm_changes(placed, case):
        hosts = at_fault.get(kind, set())
        if hosts and not (hosts | {"(unplaced)"}) & reached.get(kind, set()):
            note += f", while no {kind} change lands on {', '.join(sorted(hosts))}, where the fault is: aimed at the wrong VM"
        found.append((view, raw, note))
    return found


def _os_kind(cmd: Command) -> str | None:
    return "qdisc" if cmd.program == "tc" else "firewall" if cmd.program in _FIREWALL_PROGRAMS else None


def _fault_hosts(case: Case | None) -> dict[str, set[str]]:
    """The VMs with an OS fault of each kind (a qdisc, a firewall rule), read from the fault's resource and words."""
    faults = [f for f in case.ground_truth if f.layer is Layer.OS and f.host] if case is not None else []
    return {
        kind: {f.host for f in faults if f.host and words.search(f"{f.resource} {f.description}")}
        for kind, words in _OS_FAULT_KINDS
    }


def _clean_vm_changes(
    placed: Sequence[tuple[ActionView, str, Command, set[str]]], case: Case | None
) -> list[tuple[ActionView, str, str, str]]:
    """(action, command, note, kind) for each qdisc or firewall change placed on a VM without the fault."""
    faulty = {f.host for f in case.ground_truth if f.layer is Layer.OS and f.host} if case is not None else set()
    if not faulty:
        return []
    shaped = _fault_hosts(case)["qdisc"]
    found = []
    for view, raw, cmd, on in placed:
        kind = _os_kind(cmd)
        if not cmd.mutating or kind is None:
            continue
        # A qdisc change is clean-VM work where no shaping fault is; a firewall change only where no OS fault is at
        # all (the lab emulates loss with a firewall chain beside a qdisc).
        hosts = shaped if kind == "qdisc" else faulty
        if clean := sorted(on - hosts):
            note = f"action {view.index}: `{raw[:80]}` changes the {kind} on {', '.join(clean)}, a VM without any fault"
            found.append((view, raw, note, kind))
    return found


def _placed_commands(views: Sequence[ActionView], *, earlier: bool = True) -> list[tuple[ActionView, str, Command, set[str]]]:
    """Every command of every action with the VMs it is placed on (`_placed`; a command written twice in one action is
    placed by its own occurrence)."""
    placed = []
    for view in views:
        seen: list[str] = []
        for raw, cmd in view.commands:
            seen.append(raw)
            placed.append((view, raw, cmd, _placed(view, raw, cmd, seen.count(raw) - 1, earlier=earlier)))
    return placed
