"""The names a Promptfoo row carries our scores under, owned by the provider side and read by the assertion side: a
module of constants, so the light assertion path (`promptfoo.grading`) reads them without loading the providers."""

from __future__ import annotations

__all__ = ["FAMILIES", "GRADES_KEY", "SCORE_KEY"]

SCORE_KEY = "ghost_eval_score"
"""Response metadata key holding the run's RunScore as JSON (when it fits)."""
GRADES_KEY = "ghost_eval_grades"
"""Response metadata key holding the Promptfoo GradingResult per check family and the scorer that wrote them, so an
assertion (javascript in process, or this module) can return them without scoring again."""
FAMILIES = ("remediation", "diagnosis", "trajectory")
