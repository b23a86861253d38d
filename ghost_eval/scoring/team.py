"""Teams' own checks as entries of the scorer's: name, version, what they read, the function, where it came from.

`ghost_eval.evaluation.extensions` loads them; `score_run` runs those it is given after the built-in criteria, and
their outcomes never change the built-in verdict. Import-light: the verdict cache and the loaders read these entries
without loading a check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ghost_eval.cases.case import Case
    from ghost_eval.scoring.model import CheckOutcome, RunEvidence

__all__ = ["TeamCheck", "TeamCheckFunction", "team_checks_signature"]

TeamCheckFunction = Callable[["RunEvidence", "Case | None"], "bool | CheckOutcome"]
"""A team's check: the run's evidence and its case (None when unknown) in, pass/fail or a `CheckOutcome` out."""


@dataclass(frozen=True)
class TeamCheck:
    """A team's check: name, version, what it reads, the function, and where it came from. It decides no criterion
    and never changes the built-in verdict; it is its own metric."""

    name: str
    version: str
    """The function's `version` attribute when it has one, else a hash of its source (see `ghost_eval.evaluation.extensions`):
    a verdict with this check's outcome is reused only while the version is unchanged."""
    reads: tuple[str, ...]
    """The `RunEvidence` fields it reads (its `reads` attribute), or `("evidence", "case")`: all of them."""
    source: str
    """Its entry point and distribution, or its import path."""
    run: TeamCheckFunction


def team_checks_signature(checks: Iterable[tuple[str, str]]) -> str:
    """`name@version` of every team check, by name: which team checks a stored verdict holds outcomes of."""
    return ",".join(f"{name}@{version}" for name, version in sorted(checks))
