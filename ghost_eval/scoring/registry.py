"""Every check the scorer runs, listed here and nowhere else: the remediation criteria (one `Criterion` object each,
`ghost_eval.scoring.criterion`) and the run's other dimensions (diagnosis, trajectory, claims), each over the same
`ParsedRun`. Nothing registers itself on import: this module names the checks.

A team adds a criterion of its own with `register_criterion` (one object: name, effect, check, rubric, what a trial
observes); the scorer, the judge, the fix trials and the Promptfoo metrics then read it with the built-in four.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ghost_eval.scoring import claims, diagnosis, trajectory
from ghost_eval.scoring.criterion import Criterion
from ghost_eval.scoring.list_argument import LIST_ARGUMENT
from ghost_eval.scoring.owner_bypass import OWNER
from ghost_eval.scoring.parsed import ParsedRun
from ghost_eval.scoring.scope import SCOPE
from ghost_eval.scoring.verification import VERIFICATION

__all__ = [
    "BUILTIN",
    "DIMENSIONS",
    "Dimension",
    "DimensionCheck",
    "criteria",
    "criterion",
    "criterion_labels",
    "dimension_check",
    "register_criterion",
    "unregister_criterion",
]

BUILTIN: tuple[Criterion, ...] = (LIST_ARGUMENT, OWNER, SCOPE, VERIFICATION)
"""The four remediation criteria of the original judge, in id order."""
_ADDED: dict[int, Criterion] = {}


def criteria() -> tuple[Criterion, ...]:
    """Every criterion: the built-in four, then those teams registered, by id."""
    return (*BUILTIN, *(_ADDED[i] for i in sorted(_ADDED)))


def criterion_labels() -> dict[int, str]:
    """Every criterion's label by id, in the order of `criteria()`: what reports and calibration list."""
    return {c.id: c.label for c in criteria()}


def criterion(criterion_id: int) -> Criterion:
    """The criterion with this id; an unknown id is an error naming the known ones."""
    for known in criteria():
        if known.id == criterion_id:
            return known
    raise LookupError(f"no criterion {criterion_id}: known are {[c.id for c in criteria()]}")


def register_criterion(added: Criterion) -> None:
    """Add a team's criterion; its id, label and metric must be new (a second check for a criterion is refused)."""
    for known in criteria():
        clash = [what for what in ("id", "label", "metric") if getattr(known, what) == getattr(added, what)]
        if clash:
            raise ValueError(f"criterion {known.id} ({known.label!r}) already has that {' and '.join(clash)}")
    _ADDED[added.id] = added


def unregister_criterion(criterion_id: int) -> None:
    """Remove a criterion a team registered; the built-in four cannot be removed."""
    if criterion_id not in _ADDED:
        raise LookupError(f"criterion {criterion_id} was not registered by a team")
    del _ADDED[criterion_id]


Dimension = Literal["diagnosis", "trajectory", "claims"]
"""A run's scored dimensions besides the criteria; each is independent of the verdict."""


@dataclass(frozen=True)
class DimensionCheck:
    """The check of one dimension: one function over the parsed run, returning that dimension's typed result."""

    dimension: Dimension
    name: str
    reads: tuple[str, ...]
    """The `ParsedRun` fields it reads."""
    run: Callable[[ParsedRun], Any]


DIMENSIONS: dict[Dimension, DimensionCheck] = {
    "diagnosis": DimensionCheck(
        "diagnosis", "key_facts", ("case", "diagnosis_text", "prose", "evidence.result"), diagnosis.evaluate
    ),
    "trajectory": DimensionCheck(
        "trajectory",
        "tool_calls_and_layers",
        ("evidence.audit", "audit_commands", "evidence.trace", "trace_commands", "case"),
        trajectory.evaluate,
    ),
    "claims": DimensionCheck(
        "claims",
        "cited_evidence_ran",
        ("sections", "evidence.result", "evidence.audit", "audit_commands", "evidence.trace", "trace_commands"),
        claims.evaluate,
    ),
}


def dimension_check(dimension: Dimension) -> DimensionCheck:
    """The check of one dimension; an unknown dimension is an error naming the known ones."""
    if dimension not in DIMENSIONS:
        raise LookupError(f"no dimension {dimension!r}: known are {list(DIMENSIONS)}")
    return DIMENSIONS[dimension]
