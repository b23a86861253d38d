"""Fix trials: a stored run's recommended fix, applied to its case's fault in the lab and observed.

`trial.try_fix(record, case, target, lab_dir=…)` runs one trial and returns a `TrialVerdict` (resolved, durable, collateral,
verification, c1..c4 observed); `session.trial_stored_run` runs it for a stored run and keeps the verdict beside the
run (`verdicts/lab-trial@<version>.*.json`); `latest_trial` reads it back and `trial_grade` grades it for Promptfoo.
The trial modules are imported on first use: they bring the lab's SSH and Azure clients, which readers never need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ghost_eval.trials.record import (
    TRIAL_SCORER,
    ActionOutcome,
    CommandOutcome,
    CriterionObservation,
    StateChange,
    TrialVerdict,
    VerificationOutcome,
)
from ghost_eval.trials.stored import TRIAL_METRICS, latest_trial, trial_assertion, trial_grade

if TYPE_CHECKING:
    from ghost_eval.trials.trial import TrialError, try_fix

__all__ = [
    "TRIAL_METRICS",
    "TRIAL_SCORER",
    "ActionOutcome",
    "CommandOutcome",
    "CriterionObservation",
    "StateChange",
    "TrialError",
    "TrialVerdict",
    "VerificationOutcome",
    "latest_trial",
    "trial_assertion",
    "trial_grade",
    "try_fix",
]


def __getattr__(name: str) -> Any:
    if name in {"TrialError", "try_fix"}:
        from ghost_eval.trials import trial

        return getattr(trial, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
