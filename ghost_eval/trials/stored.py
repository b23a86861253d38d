"""Trial verdicts kept beside runs, read back, and graded for Promptfoo's `consequences` suite (no lab needed).

Import-light on purpose: a Promptfoo assertion starts a fresh Python process per row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.metric_names import metric_name
from ghost_eval.base.records import load_record
from ghost_eval.store.layout import VERDICTS_DIR, Problem
from ghost_eval.trials.record import TRIAL_SCORER_NAME, TrialVerdict

__all__ = ["TRIAL_METRICS", "latest_trial", "trial_assertion", "trial_grade"]

TRIAL_METRICS = ("fix_resolves", "fix_durable", "no_collateral", "verification_proves")
"""The consequences suite's metric ids (Promptfoo shows them as `metric_name` says); each reads so that 1 is good."""


def latest_trial(folder: Path, problems: list[Problem] | None = None, run_id: str | None = None) -> TrialVerdict | None:
    """The newest trial verdict stored beside a run; unreadable files are reported in `problems` and skipped."""
    found: list[TrialVerdict] = []
    for path in sorted((folder / VERDICTS_DIR).glob(f"{TRIAL_SCORER_NAME}@*.json")):
        try:
            found.append(load_record(TrialVerdict, path))
        except GhostEvalError as exc:
            if problems is not None:
                problems.append(Problem(path=str(path), message=str(exc), run_id=run_id))
    return max(found, key=lambda v: v.tried_at) if found else None


def trial_grade(verdict: TrialVerdict) -> dict[str, Any]:
    """A Promptfoo GradingResult: passes when the fix resolved, lasted, broke nothing and was verified. List values the
    fix dropped are inside the fault's scope (the list is what was at fault), so they are not in `collateral`; they
    are damage all the same (criterion 1 observed), and count against `no_collateral`."""
    dropped = [c.why for c in verdict.criteria if c.criterion_id == 1 and c.observed is True]
    observed = {
        "fix_resolves": verdict.resolved,
        "fix_durable": verdict.durable,
        "no_collateral": verdict.setup_ok and not verdict.collateral and not dropped,
        "verification_proves": verdict.verification.proves,
    }
    named = {metric_name(name): 1.0 if observed[name] is True else 0.0 for name in TRIAL_METRICS}
    reasons = [f"{name}: {observed[name]}" for name in TRIAL_METRICS]
    reasons += [f"collateral: {line}" for line in verdict.collateral[:10]] + dropped
    reasons += [f"c{c.criterion_id} observed {c.observed}: {c.why}" for c in verdict.criteria]
    if not verdict.setup_ok:
        reasons.insert(0, "the trial could not set up: " + "; ".join(verdict.notes))
    return {
        "pass": all(v == 1.0 for v in named.values()),
        "score": sum(named.values()) / len(named),
        "reason": f"{verdict.scorer} at {verdict.tried_at:%Y-%m-%d %H:%M}Z; " + "; ".join(reasons),
        "namedScores": named,
    }


def trial_assertion(context: dict[str, Any]) -> dict[str, Any]:
    """The row's run (from the replay provider's metadata) graded by its latest stored trial."""
    metadata = (context.get("providerResponse") or {}).get("metadata") or {}
    folder, run_id = metadata.get("store_path"), metadata.get("run_id")
    if not folder:
        return {"pass": False, "score": 0.0, "reason": "no stored run in the response: use the replay provider"}
    verdict = latest_trial(Path(str(folder)))
    if verdict is None:
        return {
            "pass": False,
            "score": 0.0,
            "reason": f"run {run_id} has no stored trial: run `ghost-eval lab try-fix {run_id}` (root, the lab)",
            "namedScores": dict.fromkeys(map(metric_name, TRIAL_METRICS), 0.0),
        }
    return trial_grade(verdict)
