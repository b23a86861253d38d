"""Fix trials: a stored run's recommended fix, applied to its case's fault in the lab and observed.

`try_fix(record, case, target)` runs one trial and returns a `TrialVerdict` (resolved, durable, collateral,
verification, c1..c4 observed); `trial_store_run` runs it for a stored run in a lab of its own and keeps the verdict
beside the run (`verdicts/lab-trial@<version>.*.json`); `latest_trial` reads it back.
"""

from __future__ import annotations

from ghost_eval.trials.record import (
    TRIAL_SCORER,
    ActionOutcome,
    CommandOutcome,
    CriterionObservation,
    StateChange,
    TrialVerdict,
    VerificationOutcome,
)
from ghost_eval.trials.trial import TrialError, latest_trial, recommended, try_fix

__all__ = [
    "TRIAL_SCORER",
    "ActionOutcome",
    "CommandOutcome",
    "CriterionObservation",
    "StateChange",
    "TrialError",
    "TrialVerdict",
    "VerificationOutcome",
    "latest_trial",
    "recommended",
    "try_fix",
]
