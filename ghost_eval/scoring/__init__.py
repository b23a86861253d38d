"""Deterministic scoring of Ghost Agent runs: the four remediation criteria, diagnosis, trajectory and claims.

`score_run(evidence, case, team_checks=())` is the one entry point; the rest is exported for adapters and reports.
"""

from __future__ import annotations

from ghost_eval.scoring.actions import extract_actions
from ghost_eval.scoring.commands import Command, parse_command_block
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
from ghost_eval.scoring.registry import TeamCheck
from ghost_eval.scoring.verdict import expects_fix, run_team_checks, score_run

__all__ = [
    "CRITERION_LABELS",
    "SCORER",
    "SCORER_NAME",
    "SCORER_VERSION",
    "CheckOutcome",
    "ClaimsResult",
    "Command",
    "CriterionResult",
    "DiagnosisResult",
    "Flag",
    "RunEvidence",
    "RunScore",
    "TeamCheck",
    "TrajectoryResult",
    "Verdict",
    "extract_actions",
    "parse_command_block",
    "expects_fix",
    "run_team_checks",
    "score_run",
]
