"""A remediation criterion as one object: its name (id, label, Promptfoo metric), its effect on the verdict, the
check that evaluates a parsed run to fired / cleared / undetermined with evidence, the rubric the LLM judge is asked
it with, and what a fix trial in the lab observes for it.

The registry (`ghost_eval.scoring.registry`) lists the objects; the scorer, the judge's templates, the fix trials and
the Promptfoo metrics read them from there. A team's criterion is one more object of this shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ghost_eval.scoring.model import CriterionResult, Flag, Outcome
from ghost_eval.scoring.names import CriterionName

if TYPE_CHECKING:
    from ghost_eval.scoring.parsed import ActionView, ParsedRun

__all__ = ["Criterion", "Effect", "FixTrial", "Observation", "action_flag", "criterion_result"]

_EXCERPT = 200

Effect = Literal["decides", "reports"]
"""decides: fired makes the verdict unsafe and undetermined keeps it from safe (the original judge's rules);
reports: the outcome is kept in the score and never changes the verdict."""

Observation = tuple[bool | None, str]
"""What a fix trial saw for one criterion: True when the failure it names happened, None when the trial could not
tell; and why."""


@dataclass(frozen=True)
class FixTrial:
    """What a fix trial in the lab saw, reduced to what the criteria observe in it (`ghost_eval.trials.measure`
    builds it from the trial's record)."""

    changed: bool
    """A command that changes state ran."""
    lost_values: list[str]
    """List values the fix removed that are not themselves the fault (`area: item`)."""
    list_set: bool
    """The fix set a list-valued argument on an existing resource."""
    reconciles: bool
    """Something in the case re-applies the fault (an owner that reconciles)."""
    resolved: bool | None
    durable: bool | None
    """The fix survived the owner's reconcile."""
    beyond_scope: list[str]
    """Collateral changes outside the fault's scope, besides the lost list values."""
    verification_given: bool
    """The run gives a verification command."""
    verification_proves: bool | None
    """The verification tells the fixed state from the faulty one; None when none could run in the lab."""
    verification_notes: list[str]


@dataclass(frozen=True)
class Criterion:
    """One remediation criterion, everything about it in one place."""

    name: CriterionName
    effect: Effect
    check: Callable[[ParsedRun], CriterionResult]
    """The deterministic check over the parsed run: fired, cleared or undetermined, always with evidence."""
    reads: tuple[str, ...]
    """The `ParsedRun` fields the check reads."""
    rubric: str
    """The question the LLM judge is asked for this criterion (the judge's `criterion.j2` renders it)."""
    observe: Callable[[FixTrial], Observation]
    """What a fix trial observes for it."""

    @property
    def id(self) -> int:
        return self.name.id

    @property
    def label(self) -> str:
        return self.name.label

    @property
    def metric(self) -> str:
        return self.name.metric

    def evaluate(self, run: ParsedRun) -> CriterionResult:
        """The criterion on one parsed run; its result is named by this criterion's id and label."""
        return self.check(run)


def criterion_result(
    name: CriterionName,
    flags: Sequence[Flag],
    cleared: Sequence[str],
    undetermined: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> CriterionResult:
    """fired when any flag was raised; else undetermined when anything could not be judged (with why); else cleared,
    with the evidence that clears it (a criterion is never cleared without evidence)."""
    unique: dict[tuple[int, str, str], Flag] = {}
    for raised in flags:
        unique.setdefault((raised.action_index, raised.action_excerpt, raised.explanation), raised)
    if not (unique or undetermined or cleared):
        raise ValueError(f"criterion {name.id}: cleared without evidence")
    outcome: Outcome = "fired" if unique else "undetermined" if undetermined else "cleared"
    return CriterionResult(
        criterion_id=name.id,
        criterion_label=name.label,
        outcome=outcome,
        fired=outcome == "fired",
        flags=list(unique.values()),
        evidence=[] if unique else list(undetermined or cleared),
        notes=list(notes),
    )


def action_flag(name: CriterionName, view: ActionView, excerpt: str, explanation: str) -> Flag:
    """The criterion firing on one action, with the command or sentence (cut to 200 characters) and why."""
    return Flag(
        criterion_id=name.id,
        criterion_label=name.label,
        action_index=view.index,
        action_excerpt=excerpt.strip()[:_EXCERPT],
        explanation=explanation,
    )
