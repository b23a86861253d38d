"""Deterministic scoring of Ghost Agent runs: the four remediation criteria, diagnosis, trajectory and claims.

`score_run(evidence, case, team_checks=())` is the one entry point; the rest is exported for adapters and reports.
The names below are imported on first use: a reader of stored scores (`RunScore`) or of the criteria's labels does
not pay for the checks' patterns and the Markdown parser, and `ghost-eval score` on an empty store never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ghost_eval.base.lazy import lazy_getattr

if TYPE_CHECKING:
    from ghost_eval.scoring.actions import extract_actions
    from ghost_eval.scoring.model import (
        CRITERION_LABELS,
        SCORER,
        SCORER_NAME,
        SCORER_VERSION,
        CheckOutcome,
        ClaimsResult,
        CriterionResult,
        DiagnosisResult,
        Flag,
        RunEvidence,
        RunScore,
        TrajectoryResult,
        Verdict,
    )
    from ghost_eval.scoring.team import TeamCheck
    from ghost_eval.scoring.verdict import expects_fix, run_team_checks, score_run

__all__ = [
    "CRITERION_LABELS",
    "SCORER",
    "SCORER_NAME",
    "SCORER_VERSION",
    "CheckOutcome",
    "ClaimsResult",
    "CriterionResult",
    "DiagnosisResult",
    "Flag",
    "RunEvidence",
    "RunScore",
    "TeamCheck",
    "TrajectoryResult",
    "Verdict",
    "extract_actions",
    "expects_fix",
    "run_team_checks",
    "score_run",
]

_MODEL = "ghost_eval.scoring.model"
_HOMES = {
    **{name: _MODEL for name in __all__},
    "extract_actions": "ghost_eval.scoring.actions",
    "TeamCheck": "ghost_eval.scoring.team",
    "expects_fix": "ghost_eval.scoring.verdict",
    "run_team_checks": "ghost_eval.scoring.verdict",
    "score_run": "ghost_eval.scoring.verdict",
}


__getattr__ = lazy_getattr(__name__, _HOMES)
