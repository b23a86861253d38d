"""Criterion 4, no verification step: no action, nor the report's verification section, gives a command together with
the result that proves the fix."""

from __future__ import annotations

import re

from ghost_eval.cases.case import Layer
from ghost_eval.run.artifacts import Verification
from ghost_eval.scoring.criterion import Criterion, FixTrial, Observation, action_flag, criterion_result
from ghost_eval.scoring.fault_checks import FaultTarget, fault_targets, misses_the_faults, unproven
from ghost_eval.scoring.model import CriterionResult
from ghost_eval.scoring.names import FIX_VERIFIED as NAME
from ghost_eval.scoring.parsed import ParsedRun, changes_anything
from ghost_eval.scoring.reads import VM_RESETS, resource_kind
from ghost_eval.scoring.text import has_expectation, inline_code, relative_only, split_sentences, terse_result
from ghost_eval.shell.calls import az_call
from ghost_eval.shell.checks import inspector_call, is_check, tool_check, tool_layer, watcher_check
from ghost_eval.shell.commands import Command, parse_command_block

__all__ = ["VERIFICATION"]

_VAGUE = re.compile(
    r"(?i)^\W*(?:it\s+)?(?:works?|should\s+work|looks?\s+(?:good|fine|ok|right)|ok|fine|n/?a|none|tbd|-|"
    r"(?:monitor|keep\s+an\s+eye|watch|observe|check|verify|confirm|ensure|make\s+sure|review|inspect|examine"
    r"|look\s+(?:at|over|through))\b.*)\W*$"
)
"""Words that promise a check without naming a result; they count only alongside a stated result."""


def _concrete(verification: Verification) -> bool:
    """A command that reads state, and a result to compare against that is more than "monitor" or "check"."""
    return (
        is_check(verification.command)
        and bool(verification.expected.strip())
        and (
            has_expectation(verification.expected)
            or terse_result(verification.expected)
            or not _VAGUE.match(verification.expected)
        )
    )


_PROBES = frozenset(
    {"ping", "ping6", "curl", "wget", "nc", "ncat", "netcat", "telnet", "socat", "dig", "nslookup", "host", "traceroute"}
    | {"tracepath", "mtr", "iperf3", "iperf", "nmap", "hping3", "ssh", "openssl", "psql", "redis-cli", "apt", "apt-get"}
)
"""End-to-end tries: they prove a fix on either layer, as the traffic crosses both."""


_SERVICE_STATE = frozenset({"status", "is-active", "is-enabled", "is-failed", "show", "list-units"})


def _service_state(cmd: Command) -> bool:
    """`systemctl status harden-net`, `service fail2ban status`: whether a service runs, not what it applied; the rule,
    qdisc or route the fix is about may still be there."""
    if cmd.program == "systemctl":
        return any(word in _SERVICE_STATE for word in cmd.argv[1:3])
    return cmd.program == "service" and cmd.argv[-1:] == ("status",)


def _proves(command: str, changed: set[Layer]) -> bool:
    """Whether a check can prove a fix: it tries the traffic end to end, or reads the layer the fix changed (an NSG
    listing proves nothing about a qdisc deleted inside the VM), as does one of the agent's tools that reads that layer
    (the effective-network drift check reads Azure's state). Another inspector call's layer is not known: it counts.
    A service's state alone proves no network fix."""
    if watcher_check(command) is not None:  # IP flow verify, next hop: Azure's own view of the path
        return Layer.CONTROL_PLANE in changed
    if changed and (read := tool_layer(command)) is not None:  # the drift check of Azure's state sees no iptables rule
        return read in changed
    parsed = parse_command_block(command)
    if parsed and all(_service_state(c) for c in parsed):
        return False
    if not changed or not parsed or inspector_call(command) or tool_check(command) == command.strip():
        return True
    return "/dev/tcp/" in command or any(c.program in _PROBES or c.layer in changed for c in parsed)


_SECURITY_RULES_ONLY = re.compile(r"(?i)\b(?:ip\s+flow\s+verify|test-ip-flow)\b")
"""IP flow verify answers whether the VM's security rules allow a flow; it never looks at a route, so a blackhole
route leaves its answer `Allow`."""


def _route_change(cmd: Command) -> bool:
    """A change to routing only: a route or route table, or a subnet's route table association."""
    call = az_call(cmd.argv)
    if call is None:
        return False
    if resource_kind(call) in {"route", "route-table"}:
        return True
    removed = [v.lower() for v in call.options.get("--remove", ())]
    return resource_kind(call) == "subnet" and ("--route-table" in call.options or "routetable" in removed)


def _reached(cmd: Command) -> set[Layer]:
    """The layers a change acts on: its own, and the guest OS too where an `az vm` call restarts or stops the VM (a
    restart clears a qdisc: `tc qdisc show` proves it)."""
    call = az_call(cmd.argv)
    if call is not None and resource_kind(call) == "vm" and call.verb in VM_RESETS:
        return {cmd.layer, Layer.OS}
    return {cmd.layer}


_SAME_READ = re.compile(r"(?i)\b(?:the\s+)?same\s+(?:[\w-]+\s+){0,2}?(?:query|command|read|check|listing|call|show)\b")
_STEP_AGAIN = re.compile(r"(?i)\b(?:re-?run|repeat|redo)\s+step\s+(\d{1,2})\b|\bstep\s+(\d{1,2})\s+again\b")


def _step_again(run: ParsedRun) -> Verification | None:
    """ "re-run step 1 -> expect two lines now": the check a numbered step of the report already wrote, named by its
    number, with the result it should give after the fix."""
    for view in run.views:
        for sentence in split_sentences(view.action.description):
            if (m := _STEP_AGAIN.search(sentence)) is None or not has_expectation(sentence[m.end() :]):
                continue
            step = int(m[1] or m[2])
            if not 0 < step <= len(run.views) or step == view.index:
                continue
            earlier = run.views[step - 1].action
            checks = [c for c in (earlier.verification.command if earlier.verification else "", *earlier.commands) if is_check(c)]
            if checks:
                return Verification(command=checks[0], expected=sentence[:300])
    return None


def _repeated_read(run: ParsedRun, changed: set[Layer]) -> Verification | None:
    """ "After: the same show query should print Microsoft.Sql, Microsoft.Storage": a read the run already ran, named by
    reference, with the result it should give now, in an action or anywhere in the report (a "verify ->" line after
    the fix's block). The run's last read that can prove the fix is the one meant (an NSG
    rule listing, not the `ss` run after it, for an NSG change), of the kind it names where it names one ("the same
    subnet show")."""
    said = next((s for s in run.written_sentences if _SAME_READ.search(s) and has_expectation(s)), None)
    if said is None or (same := _SAME_READ.search(said)) is None:
        return None
    executed = [c for cmds in (*run.audit_commands, *run.trace_commands) if cmds for c in cmds if is_check(c.text)]
    provable = [c for c in reversed(executed) if _proves(c.text, changed)]
    words = same.group(0).lower().split()
    kind = words[words.index("same") + 1 : -1]  # "the same subnet show": a subnet read, not the storage account's
    meant = next((c for c in provable if all(word in c.text.split() for word in kind)), None) or next(iter(provable), None)
    return Verification(command=meant.text, expected=said[:300]) if meant is not None else None


_RERUN = re.compile(r"(?i)\b(?:re-?run\w*|retr(?:y|ies|ied)|repeat\w*|re-?test\w*)\b|\brun\s+(?:[\w-]+\s+){0,4}?again\b")
_WATCHED = re.compile(r"(?i)\b(?:monitor\w*|keep\s+an\s+eye|watch\w*|portal|dashboards?|over\s+the\s+next)\b")
_OUTCOME = re.compile(
    r"(?i)\b(?:should|will|must|expect\w*)\b[^.;\n]{0,120}?(?:\d+(?:\.\d+)?\s*(?:%|ms\b|[gmk]bits?|[gmk]bps|[gmk]b/s)|\b(?:complet\w*|finish\w*|succeed\w*|connect\w*|"
    r"upload\w*|pass\w*|report\w*|respon\w*|without|no\s+(?:timeouts?|loss|drops?|errors?)|back|normal|improv\w*|"
    r"faster|lower|higher|better|be\s+gone|work\w*\s+again)\b)"
)


_PROBE_NAMED = re.compile(
    rf"(?i)\b(?:{'|'.join(sorted(_PROBES, key=len, reverse=True))})\s+(?:-[\w-]+\s+)*(?:https?://|\d{{1,3}}\.\d)"
    r"[^,;`]*?(?=[,;`]|\s(?:and|should|it|then)\b|$)"
)
"""A probe named in prose with its target ("try curl http://10.0.1.5:8080 and ping 10.0.1.5"): a check, told in words."""


def _rerun_outcome(run: ParsedRun, changed: set[Layer], targets: list[FaultTarget]) -> str | None:
    """ "Re-run the failing pipeline job; it should complete without the timeout", "then iperf3 -c 10.0.1.5, it should
    look a lot better": the test that showed the fault run again, or a check named with its target, with an outcome it
    should give but nothing concrete to compare (a concrete one would have been read as the action's verification).
    The judge spec counts an observable outcome as a verification; with nothing to compare, it may or may not prove the
    fix: possibly unverified. A probe that no fault acts on proves nothing, whatever it is said to show. Watching a
    dashboard or "monitor over the next hours" observes nothing at a time the fix is closed."""

    def proves(check: str) -> bool:
        return _proves(check, changed) and not misses_the_faults(check, targets)

    checks = [t for view in run.views for t, cmd in view.commands if not cmd.mutating and is_check(t) and proves(t)]
    checks = [t for t in checks if parse_command_block(t)[0].program not in _PROBES or _PROBE_NAMED.match(t)]
    for sentence in run.written_sentences:
        if _WATCHED.search(sentence):
            continue
        named = [sentence.find(t) + len(t) for t in checks if t in sentence]
        named += [m.end() for m in _PROBE_NAMED.finditer(sentence) if proves(m.group(0))]
        if (m := _RERUN.search(sentence)) is not None:
            if (read := tool_layer(sentence)) is not None and changed and read not in changed:
                continue  # the agent's tool run again on a layer the fix did not change proves nothing
            named.append(m.end())
        if named and _OUTCOME.search(sentence, min(named)):
            return " ".join(sentence.split())[:160]
    return None


_MEASURED = re.compile(
    r"(?i)\d+(?:\.\d+)?\s*(?:%|ms\b|[kmg]bits?|[kmg]bps|[kmg]b/s|seconds?\b|s\b)|\b(?:loss|latency|rtt|throughput|"
    r"bandwidth|retr|retrans\w*|drops?|dropped|errors?|corrupt\w*|qdisc|netem|tbf|htb|no\s+(?:tbf|netem)|mq|fq_codel|pfifo\w*)\b"
)


def _reachability_only(v: Verification) -> bool:
    """ "Replies come back", "the connection succeeds": a probe that says only that traffic gets through, with no loss,
    delay, rate or qdisc to compare, which a loss or delay fault passes too (a 10% loss still answers most pings)."""
    probes = [c for c in parse_command_block(v.command) if c.program in _PROBES]
    return bool(probes) and _MEASURED.search(v.expected.replace(v.command, " ")) is None and not _MEASURED.search(v.command)


_BLOCKED = re.compile(r"(?i)\b(?:refused|timed?[\s-]*out|time-?out|no\s+route\s+to\s+host|unreachable|100%\s+packet\s+loss)\b")
"""What a probe prints when the traffic does not get through."""
_EXPECTS_BLOCKED = re.compile(
    r"(?i)\b(?:must|should|will|to)\s+(?:not|never)\s+(?:\w+\s+)?(?:connect|succeed|reach|answer|get\s+through|open)\w*"
    r"|\b(?:must|should|will)n['\u2019]?t\s+(?:\w+\s+)?(?:connect|succeed|reach|answer|get\s+through|open)\w*"
    r"|\b(?:must|should|will)\s+(?:still\s+)?(?:be\s+)?(?:refused|rejected|blocked|closed|filtered|time\s*out|fail)\w*"
)
"""A result that says the probe fails after the fix ("it must not connect (refused/timeout)", "should be refused")."""
_GETS_THROUGH = re.compile(r"(?i)\bsucceed\w*|\bconnected\b|\b(?:HTTP\s+)?200\b|\bopen\b|\b0%\s+(?:packet\s+)?loss")
_FAILURES = {
    "refused": re.compile(r"(?i)\brefused\b|\brejected\b|\bRST\b|\breset\b"),
    "timeout": re.compile(r"(?i)\btimed?[\s-]*out\b|\btimeout\b|\bhangs?\b|\bno\s+answer\b"),
    "unreachable": re.compile(r"(?i)\bunreachable\b|\bno\s+route\b"),
}
"""The ways a probe fails: a closed port answers with a refusal, a filter drops silently (a timeout)."""


def _passed_before(run: ParsedRun, v: Verification) -> str | None:
    """A probe expected to fail after the fix ("it must not connect (refused/timeout)") that the run already ran before
    it with that result ("Connection refused": nothing listens there): the result holds with the fault in place, so
    it proves nothing of the fix. The earlier read is the same probe: same program, every word of it in the check. A
    result that names another way of failing than the earlier read's ("now it times out; after the delete it should be
    refused") tells the two apart, and one that also says what gets through is about another check."""
    probes = [c for c in parse_command_block(v.command) if c.program in _PROBES]
    if not probes or not _EXPECTS_BLOCKED.search(v.expected) or _GETS_THROUGH.search(_EXPECTS_BLOCKED.sub(" ", v.expected)):
        return None
    named = {kind for kind, words in _FAILURES.items() if words.search(v.expected)}  # "fail with refused, not a hang"
    for cmd, output, _ in run.reads.checks():
        if any(cmd.program == p.program and set(cmd.argv[1:]) <= set(p.argv[1:]) for p in probes):
            seen = {kind for kind, words in _FAILURES.items() if words.search(output)}
            if _BLOCKED.search(output) is not None and (not named or seen & named):
                return f"`{cmd.text[:80]}` already failed the same way before the fix"
    return None


def _named_after(v: Verification) -> list[Verification]:
    """Further checks a verification names in its result (`systemctl is-active …` → `active`, and during a batch
    `curl … http://10.0.1.5:7070/` stays under 0.01 s): each is a check of its own, with what follows it as its result,
    so a service's state named first does not hide the probe that proves the fix."""
    out = []
    for span in inline_code(v.expected):
        if span != v.command and is_check(span) and (at := v.expected.find(span)) >= 0:
            out.append(Verification(command=span, expected=v.expected[at + len(span) :].lstrip("` ")[:300]))
    return out


def _evaluate(run: ParsedRun) -> CriterionResult:
    """Criterion 4: no action, nor the report's verification section, gives a command with its expected result. A run
    that changes nothing where the case has a fault leaves nothing to verify: undetermined, as the fault stays. A
    result stated only as "better" or "normal" may prove nothing: possibly unverified."""
    views, report_level, expects_change = run.views, run.report_verifications, run.expects_change
    if not changes_anything(views):
        why = "no recommended actions" if not views else "the actions change nothing (reads and advice only)"
        if expects_change:
            return criterion_result(NAME, [], [], [f"{why}, though the case has a fault to fix: no fix to verify"])
        return criterion_result(NAME, [], [f"{why}, and the case asks for no change"])
    layers = {layer for view in views for _, cmd in view.commands if cmd.mutating for layer in _reached(cmd)}
    first = next((view.index for view in views if any(cmd.mutating for _, cmd in view.commands)), 1)
    told = [  # a check told before any change is the evidence that found the fault
        (f"action {view.index} verifies with", view.action.verification)
        for view in views[first - 1 :]
        if view.action.verification is not None
    ]
    told += [("the report's verification runs", v) for v in report_level]
    told += [("a further check a verification names:", later) for _, v in told for later in _named_after(v)]
    if (again := _repeated_read(run, layers) or _step_again(run)) is not None:
        told.append(("the report runs its read again:", again))
    cleared: list[str] = []
    doubts: list[str] = []
    off_path: list[str] = []
    targets = fault_targets(run.case)
    impairing_only = bool(targets) and all(t.kind == "shaper" for t in targets)  # traffic still flows with every fault
    proofs = [(v.command, v.expected) for _, v in told]  # each fault's check may be any of them
    proofs += [(text, "") for view in views for text, cmd in view.commands if not cmd.mutating and is_check(text)]
    routes_only = bool(changes := [cmd for view in views for _, cmd in view.commands if cmd.mutating]) and all(
        map(_route_change, changes)
    )
    for where, v in told:
        if not is_check(v.command) or not _proves(v.command, layers):
            continue
        if routes_only and _SECURITY_RULES_ONLY.search(v.command):
            off_path.append(
                f"`{v.command[:80]}` (IP flow verify) evaluates security rules, not routes: it cannot prove a route fix"
            )
            continue
        if spared := misses_the_faults(v.command, targets):
            off_path.append(f"`{v.command[:80]}` sends only {', '.join(spared)}, which no fault of the case acts on")
            continue
        if (before := _passed_before(run, v)) is not None:
            off_path.append(f"{before}: the result `{v.command[:80]}` expects holds with the fault in place")
            continue
        said = f"{where} `{v.command[:120]}` expecting {v.expected[:120]!r}"
        if relative_only(v.expected, v.command):
            doubts.append(f"{said}: a result stated only as better or normal, with nothing to compare")
            continue
        if not _concrete(v):
            continue
        if impairing_only and _reachability_only(v):
            doubts.append(f"{said}: the fault slows or thins traffic without blocking it, so that result holds with it too")
            continue
        cleared.append(said)
    structured = all(view.structured for view in views)  # each action's verification is there, not read from prose
    missed, maybe = unproven(changes, proofs, targets) if cleared and structured else ([], [])
    if maybe and not missed:
        doubts.append(f"no check measures what {', '.join(maybe)} does to the traffic it reaches: it may still be there")
    elif cleared and not missed:
        return criterion_result(NAME, [], cleared[:1])
    if (rerun := _rerun_outcome(run, layers, targets)) is not None:
        doubts.append(f"the report only tells a check in words ({rerun!r}): an outcome with nothing concrete to compare")
    if doubts:
        return criterion_result(NAME, [], [], doubts)
    last = views[-1]
    fired = action_flag(
        NAME,
        last,
        last.action.description,
        "no action gives a concrete command together with the result that proves the fix (an output, a count or an exit status)"
        + "".join(f"; {note}" for note in off_path)
        + "".join(f"; the fix changes {name}, which no check proves gone" for name in missed),
    )
    return criterion_result(NAME, [fired], [])


RUBRIC = """Does the plan lack a verification step? A verification is a concrete command together with the result that proves
the fix worked (an output, a count, an exit status). "Monitor", "keep an eye on", a portal click, or a command with no
expected result do not count. Answer YES when no action gives one, with action_index set to the last action; answer
NO when at least one action does, with action_index set to that action."""


def _observe(trial: FixTrial) -> Observation:
    if not trial.verification_given:
        return True, "the run gives no verification command"
    if trial.verification_proves is None:
        return None, "no verification command could run in the lab"
    if not trial.resolved:
        return None, "the fix did not resolve the fault: nothing to prove"
    return not trial.verification_proves, "; ".join(trial.verification_notes)


VERIFICATION = Criterion(
    NAME,
    effect="decides",
    check=_evaluate,
    reads=("views", "report_verifications", "expects_change", "audit_commands", "trace_commands"),
    rubric=RUBRIC,
    observe=_observe,
)
