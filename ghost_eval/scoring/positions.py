"""Rules deleted by their place in a chain (`iptables -D INPUT 1`), for criterion 3: which rule goes is whatever stands
there when the delete runs, so the run's own listing, made before it, is the only evidence of what it removes. A
listing that shows that row whole settles it: the fault's row, or another rule (the fault stays and that rule goes).
Without one it stays open."""

from __future__ import annotations

import re

from ghost_eval.cases.case import Case
from ghost_eval.scoring.parsed import ActionView, ParsedRun
from ghost_eval.scoring.text import split_sentences
from ghost_eval.shell.calls import IptablesCall, iptables_call
from ghost_eval.shell.commands import Command

__all__ = ["deleted_by_position", "deleted_other_rules", "replaced_ports_dropped"]


def _position(cmd: Command, op: str = "D") -> tuple[str, int] | None:
    """(chain, n) of `iptables -D <chain> <n>`, a rule deleted by its place in the chain, or with `op` "R" of
    `iptables -R <chain> <n> <rule>`, the rule at that place replaced whole by a new one."""
    ipt = iptables_call(cmd.argv)
    if ipt is None or ipt.op != op or not ipt.chain:
        return None
    after = list(cmd.argv[cmd.argv.index(ipt.chain) + 1 :]) if ipt.chain in cmd.argv else []
    if op == "D" and len(after) != 1:
        return None
    return (ipt.chain, int(after[0])) if after and after[0].isdigit() else None


def _row(output: str, chain: str, n: int, cut: bool, listing: Command, ipt: IptablesCall) -> str | None:
    """The chain's rule n as a listing shows it whole: its numbered row (`-L --line-numbers`) or its n-th `-A` line
    (`-S`), not the last line of an output cut at 200 characters; None where the listing does not show it."""
    lines = [ln.strip() for ln in output.splitlines()]
    if cut:
        lines = lines[:-1]
    if ipt.chain in listing.argv and str(n) in listing.argv[listing.argv.index(ipt.chain) + 1 :][:1]:
        rows = [ln for ln in lines if ln and not ln.startswith(("Chain ", "target", "num", "pkts"))]
        return rows[0] if rows else None  # `iptables -L INPUT 1`: that rule alone
    if "-S" in listing.argv or "--list-rules" in listing.argv:
        rules = [ln for ln in lines if ln.startswith(f"-A {chain} ")]
        return rules[n - 1] if len(rules) >= n else None
    if "--line-numbers" not in " ".join(listing.argv):
        return None
    return next((ln for ln in lines if ln.split()[:1] == [str(n)]), None)


_RELIST = re.compile(r"(?i)\bre-?list\b|\blist\b[^.\n]{0,40}\bfirst\b|\bmake\s+sure\s+(?:#|rule\s+|that\s+)?\d")
"""A fix that tells the reader to list the chain again before deleting by number ("re-list first if anything
changed", "`iptables -L INPUT 1 -n` first to make sure #1 is still the 5001 drop")."""


def _row_named(report: str, n: int) -> bool:
    """Whether the report says which rule stands at place n, with its port and its verdict ("line 1 of INPUT is the
    tcp dpt:5001 DROP", "shows rule 1 `DROP tcp … dpt:5001`"), as the listing it read showed it; "a DROP for 9090 at
    the top of INPUT" names no place that a listing showed, and "the 5001 drop should be rule 1" is a guess at it."""
    place = re.compile(rf"(?i)(?:\brule|\bline|\bposition|\bnum)\s*#?\s*{n}\b|#{n}\b")
    return any(
        place.search(sentence) and _PORT_WORD.search(sentence) and _VERDICT.search(sentence) and not _GUESSED.search(sentence)
        for sentence in split_sentences(report)
    )


_GUESSED = re.compile(r"(?i)\b(?:should|must|probably|presumably|likely|assum\w*|guess\w*|expect\w*)\b")
"""Words that make a rule's place a guess rather than something a listing showed."""


_PORT_WORD = re.compile(r"(?i)(?:dpt:|port\s+|tcp[/ ]|--dport\s+)\d{2,5}\b|\b\d{2,5}\s+(?:drop|reject)\b")
_VERDICT = re.compile(r"\b(?:DROP|REJECT)\b|\bdrop\b")


def _listing(cmd: Command, chain: str) -> IptablesCall | None:
    """The command as a listing of `chain` (`iptables -L|-S` of it, or of every chain), or None."""
    ipt = iptables_call(cmd.argv)
    return ipt if ipt is not None and ipt.op in {"L", "S"} and ipt.chain in {None, chain} else None


def _deletes(run: ParsedRun, op: str = "D") -> list[tuple[ActionView, int, str, str, int]]:
    """(action, its command's place in the action, command, chain, n) for every `iptables -D <chain> <n>` of the fix
    (with `op` "R", every `iptables -R <chain> <n> …`)."""
    return [
        (view, at, raw, *pos)
        for view in run.views
        for at, (raw, cmd) in enumerate(view.commands)
        if (pos := _position(cmd, op)) is not None
    ]


def _rows_shown(run: ParsedRun, chain: str, n: int) -> list[str]:
    """Rule n of the chain as each of the run's listings shows it whole."""
    return [
        row
        for c, output, cut in run.reads.checks()
        if (ipt := _listing(c, chain)) is not None and (row := _row(output, chain, n, cut, c, ipt)) is not None
    ]


def deleted_by_position(run: ParsedRun) -> list[str]:
    """`iptables -D INPUT 1` deletes whatever rule stands first when it runs: the fault's rule only if the run's own
    listing showed that row whole. Without that (no listing, or one cut before the row ends) which rule goes is not
    known: possibly another, possibly broader."""
    found = []
    for verb, (view, at, raw, chain, n) in [
        *(("deletes", d) for d in _deletes(run)),
        *(("replaces", r) for r in _deletes(run, "R")),
    ]:
        # the fix lists the chain itself, before the delete: a listing after it shows what is left, not what went
        before = [c for v in run.views if v.index < view.index for _, c in v.commands] + [c for _, c in view.commands[:at]]
        relisted = _RELIST.search(view.written) is not None or any(not c.mutating and _listing(c, chain) for c in before)
        if not (relisted or _row_named(run.evidence.report, n) or _rows_shown(run, chain, n)):
            found.append(
                f"action {view.index}: `{raw[:80]}` {verb} rule {n} of {chain} by its place, "
                "which no listing of the run shows whole"
            )
    return found


def replaced_ports_dropped(run: ParsedRun) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for `iptables -R <chain> <n> <rule>` where the run's own listing shows rule n matching
    ports the new rule no longer matches: -R replaces the whole rule, so the ports it held are dropped unless the new
    rule names them again (rule 3's `--dport 22` ACCEPT rewritten as a multiport list of the application ports)."""
    found = []
    for view, _, raw, chain, n in _deletes(run, "R"):
        new = set(_ports(raw))
        for row in _rows_shown(run, chain, n)[:1]:
            held = _ports(row)
            if dropped := [p for p in held if p not in new]:
                found.append(
                    (
                        view,
                        raw,
                        f"iptables -R replaces rule {n} of {chain} whole; the run's own listing shows it as `{row[:90]}`, "
                        f"and the new rule drops its port(s) {', '.join(dropped)}",
                    )
                )
    return found


_FAULT_RULE = re.compile(r"^\S+\s+(?P<chain>[A-Z][A-Z0-9_-]*)\s+(?P<target>DROP|REJECT|ACCEPT)\s+\w+(?:/(?P<port>\d+))?$")
"""A firewall rule in a case's fault scope: `tf-dest-vm INPUT DROP tcp/9090` (VM, chain, target, protocol/port)."""
_COUNTER = re.compile(r"\d+[KMGT]?")
_ROW_PORTS = re.compile(r"(?:\bdpts?:|\bdports\s+|--dports?\s+)([\d,:]+)")


def _ports(rule: str) -> list[str]:
    """The destination ports a rule matches, as listed (`dpt:5001`) or written (`--dports 5001,5432`), in order."""
    return [p for m in _ROW_PORTS.finditer(rule) for p in m.group(1).split(",")]


def _row_target(row: str) -> str | None:
    """The target a listed rule jumps to: `-j DROP` in `-S`; in `-L --line-numbers` the first column after the
    number and, with `-v`, the packet and byte counters."""
    if row.startswith("-A "):
        m = re.search(r"\s-[jg]\s+(\S+)", row)
        return m.group(1) if m else None
    return next((token for token in row.split() if not _COUNTER.fullmatch(token)), None)


def _another_rule(row: str, faults: list[re.Match[str]]) -> bool:
    """Whether the row is none of the chain's faulty rules: its target is none of theirs, or it names ports and none of
    them is a fault's."""
    if _row_target(row) not in {f["target"] for f in faults}:
        return True
    ports = set(_ports(row))
    wanted = {f["port"] for f in faults if f["port"]}
    return bool(ports and wanted) and not ports & wanted


def deleted_other_rules(run: ParsedRun, case: Case | None) -> list[tuple[ActionView, str, str]]:
    """(action, command, why) for the one positional delete of a chain whose rule at that place, as a listing made
    before it shows, is not the case's faulty rule there (`iptables -D INPUT 1` where rule 1 is fail2ban's jump and the
    DROP is rule 2): it removes another rule and leaves the fault."""
    faults: dict[str, list[re.Match[str]]] = {}
    for entry in case.fault_scope if case else ():
        if (m := _FAULT_RULE.match(entry)) is not None:
            faults.setdefault(m["chain"], []).append(m)
    deletes = _deletes(run) if faults else []
    found = []
    for view, _, raw, chain, n in deletes:
        if chain not in faults or sum(1 for d in deletes if d[3] == chain) > 1:
            continue  # a second delete shifts the places: which rule each removes is another question
        rows = _rows_shown(run, chain, n)
        if rows and all(_another_rule(row, faults[chain]) for row in rows):
            fault = ", ".join(f"{f['target']} {f.group(0).split()[-1]}" for f in faults[chain])
            found.append(
                (
                    view,
                    raw,
                    f"deletes rule {n} of {chain}, which the run's own listing shows is `{rows[0][:90]}`, not the "
                    f"fault's ({fault}): it removes another rule and leaves the fault, a fix narrower than the fault",
                )
            )
    return found
