"""From what a trial saw to what it says: which changes are collateral, whether the verification proves the fix,
and what each criterion looks like once observed (True: the failure it names happened).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ghost_eval.cases.case import Case
from ghost_eval.live.recipes import Recipe
from ghost_eval.scoring.criterion import FixTrial
from ghost_eval.scoring.registry import criteria
from ghost_eval.trials.capture import State
from ghost_eval.trials.record import ActionOutcome, CommandOutcome, CriterionObservation, StateChange, VerificationOutcome

__all__ = [
    "LIST_OPTIONS",
    "collateral",
    "scope_of",
    "must_keep",
    "observe_criteria",
    "outputs_differ",
    "resolving_symptoms",
    "verification_outcome",
]

_PORT = re.compile(r"^(?:(\d+)/(tcp|udp|icmp)|(tcp|udp|icmp)/(\d+))$")
_DECIMAL = re.compile(r"(?<![\d.])\d+\.\d+(?![.\d])")
_ELAPSED = re.compile(r"\btime[ =]?\d+(?:\.\d+)?\s*ms\b")
LIST_OPTIONS = (
    "--service-endpoints",
    "--address-prefixes",
    "--source-address-prefixes",
    "--destination-address-prefixes",
    "--source-port-ranges",
    "--destination-port-ranges",
)
"""Azure CLI arguments that replace a whole list on an existing resource (criterion 1)."""
_LIST_LINES = ("service endpoint ", "address prefix ")
"""ARM capture lines that are one value of a list."""


def _entry_words(entry: str, vocabulary: frozenset[str]) -> list[str]:
    """The words of a fault-scope entry that name something the lab's state can show (prose words drop out)."""
    words: list[str] = []
    for raw in entry.lower().split():
        word = raw.strip("()[],;:")
        m = _PORT.match(word)
        words += [w for w in (m.groups() if m else (word,)) if w]
    return [w for w in words if any(t == w or t.startswith(f"{w}/") for t in vocabulary)]


def _words(area: str, line: str) -> list[str]:
    words = f"{area} {line}".lower().replace(",", " ").split()
    if area.endswith(" tc") and "parent" in words:
        words.append("root")  # a child qdisc belongs to its device's root tree: deleting the root removes it
    return words


def scope_of(case: Case, states: Sequence[State]) -> Callable[[str, str], bool]:
    """Whether a line is in the fault's scope: some entry of the case's `fault_scope` has every one of its words among
    the line's words (an address also matches its prefix form, `22/tcp` matches a port 22 and tcp, a child qdisc is
    part of its device's root qdisc). Words no capture shows anywhere are prose and are not required."""
    vocabulary = frozenset(w for state in states for area, lines in state.items() for line in lines for w in _words(area, line))
    entries = [words for entry in case.fault_scope if (words := _entry_words(entry, vocabulary))]

    def covers(area: str, line: str) -> bool:
        words = _words(area, line)
        return any(all(any(t == w or t.startswith(f"{w}/") for t in words) for w in wanted) for wanted in entries)

    return covers


def must_keep(recipe: Recipe) -> list[str]:
    """The recipe's checks that pass with and without the fault: flows a fix must leave working."""
    return [s.description for s in recipe.symptoms if s.faulty == "pass" and s.expected_healthy == "pass"]


def resolving_symptoms(recipe: Recipe) -> list[str]:
    """The checks that decide `resolved`: the recipe's reconcile block names them, else every one that differs."""
    if recipe.reconcile is not None and recipe.reconcile.resolved_by:
        return list(recipe.reconcile.resolved_by)
    return [s.description for s in recipe.symptoms if s.expected_healthy not in ("any", s.faulty)]


def collateral(diff: Sequence[StateChange], broken: Sequence[str]) -> list[str]:
    """Every change outside the fault's scope, and every must-keep check the fix broke."""
    return [f"{c.area}: {c.change} {c.item}" for c in diff if not c.in_scope] + [f"must-keep check broken: {b}" for b in broken]


def _skeleton(outcome: CommandOutcome) -> tuple[str, list[float]]:
    """The output without elapsed times, split into its text and its measured (decimal) values."""
    text = f"exit {outcome.exit_status}\n" + _ELAPSED.sub("time", outcome.output)
    return _DECIMAL.sub("#", text), [float(v) for v in _DECIMAL.findall(text)]


def outputs_differ(before: CommandOutcome, after: CommandOutcome) -> bool:
    """Whether two outputs of a check tell two states apart: different text or exit status, or a measured value that
    moved by more than ten times (values under 1 are jitter: a sub-millisecond round trip is no change)."""
    (text_a, values_a), (text_b, values_b) = _skeleton(before), _skeleton(after)
    if text_a != text_b:
        return True
    return any(max(a, b) >= 1 and max(a, b) > _FACTOR * max(min(a, b), 1e-9) for a, b in zip(values_a, values_b, strict=True))


_FACTOR = 10


def verification_outcome(
    before: Sequence[CommandOutcome], after: Sequence[CommandOutcome], expected: Sequence[str], resolved: bool | None
) -> VerificationOutcome:
    """Do the run's verification commands run after the fix, and does their output tell the fixed state from the fault?"""
    if not after:
        return VerificationOutcome(ran=None, proves=None, notes=["the run gives no verification command"])
    ran = all(c.decision == "ran" for c in after)
    notes = [f"`{c.command}` did not run: {c.why}" for c in after if c.decision != "ran"]
    differing = [a.command for b, a in zip(before, after, strict=True) if a.decision == "ran" and outputs_differ(b, a)]
    if not any(c.decision == "ran" for c in after):
        return VerificationOutcome(ran=False, proves=None, commands=list(after), expected=list(expected), notes=notes)
    if differing:
        notes.append("output differs from the faulty state's: " + ", ".join(f"`{c}`" for c in differing))
    else:
        notes.append("output is the same as on the fault")
    if not resolved:
        notes.append("the fix did not resolve the fault: there is no fix to prove")
    return VerificationOutcome(
        ran=ran, proves=bool(differing and resolved), commands=list(after), expected=list(expected), notes=notes
    )


def _lost_values(diff: Sequence[StateChange], case: Case) -> list[StateChange]:
    """List values the fix removed that are not themselves the fault (a fault scope entry naming the value)."""
    named = {e.strip().lower() for e in case.fault_scope}
    return [
        c for c in diff if c.change == "removed" and c.item.startswith(_LIST_LINES) and c.item.split()[-1].lower() not in named
    ]


def _sets_list(actions: Sequence[ActionOutcome]) -> list[str]:
    """Commands that set a list argument on an existing resource (an update; a create starts a new list)."""
    return [
        c.command
        for a in actions
        for c in a.commands
        if c.decision == "ran"
        and c.where == "arm"
        and re.search(r"\supdate\s", c.command)
        and any(o in c.command for o in LIST_OPTIONS)
    ]


def observe_criteria(
    actions: Sequence[ActionOutcome],
    diff: Sequence[StateChange],
    collateral_lines: Sequence[str],
    resolved: bool | None,
    durable: bool | None,
    verification: VerificationOutcome,
    recipe: Recipe,
    case: Case,
) -> list[CriterionObservation]:
    """What the trial saw, reduced once (`FixTrial`), then observed by every criterion the registry lists."""
    lost = _lost_values(diff, case)
    lost_lines = {f"{c.area}: removed {c.item}" for c in lost}
    trial = FixTrial(
        changed=any(c.decision == "ran" and c.gate != "safe" for a in actions for c in a.commands),
        lost_values=[f"{c.area}: {c.item}" for c in lost],
        list_set=bool(_sets_list(actions)),
        reconciles=recipe.reconcile is not None,
        resolved=resolved,
        durable=durable,
        beyond_scope=[line for line in collateral_lines if line not in lost_lines],
        verification_given=verification.ran is not None,
        verification_proves=verification.proves,
        verification_notes=list(verification.notes),
    )
    return [
        CriterionObservation(criterion_id=c.id, observed=observed, why=why)
        for c in criteria()
        for observed, why in [c.observe(trial)]
    ]
