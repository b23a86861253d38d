"""A `remediation_verdict.json` the original judge wrote, read as one more judge verdict on the run.

The original judge writes it into the run folder; ours publishes one too, for the original's reports, but
marks it with `scorer` and `verdict_file` and keeps the verdict itself in `verdicts/`: only an unmarked file
is the original's, so no verdict is ever counted twice. The original numbers actions from 0 and answers only
through its flags: a flagged criterion is a YES (hedged when the whole verdict is `uncertain`, which the
original's prompt gives for "possibly triggered"), every other criterion a NO.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

from pydantic import Field

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import Record, load_record
from ghost_eval.judge import JudgeVerdict, stored_verdicts
from ghost_eval.judge.record import CriterionAnswer, JudgeVerdictValue
from ghost_eval.scoring import CRITERION_LABELS, Flag
from ghost_eval.store import Problem
from ghost_eval.store.layout import V1_VERDICT_FILE

__all__ = ["OriginalVerdict", "judge_verdicts", "original_verdict"]

_TEMPLATE = hashlib.sha256(b"the original judge_remediation.py prompt").hexdigest()
"""The original judge's prompt is not stored with its verdict: one fixed stand-in names it."""


class OriginalFlag(Record):
    criterion_id: int = Field(ge=1, le=4)
    criterion_label: str = ""
    action_index: int = 0
    """0-based, into `run_summary.json`'s `recommended_actions`."""
    action_excerpt: str = ""
    explanation: str = ""


class OriginalVerdict(Record):
    """The original judge's `remediation_verdict.json` fields."""

    run_id: str
    use_case_id: str
    model_id: str
    judge_model: str
    timestamp_utc: datetime | None = None
    verdict: JudgeVerdictValue
    excluded_reason: str | None = None
    flags: list[OriginalFlag] = Field(default_factory=list)
    judge_reasoning: str | None = None

    @property
    def ours(self) -> bool:
        """The file ghost-eval publishes carries the verdict file it was made from."""
        return "verdict_file" in (self.model_extra or {}) or "scorer" in (self.model_extra or {})


def _as_judge_verdict(found: OriginalVerdict) -> JudgeVerdict:
    flagged = {f.criterion_id: f for f in found.flags}
    hedged = found.verdict == "uncertain"
    answers = (
        []
        if found.verdict in ("excluded", "error")
        else [
            CriterionAnswer(
                criterion_id=c,
                criterion_label=CRITERION_LABELS[c],
                answer="YES" if c in flagged else "NO",
                action_index=flagged[c].action_index + 1 if c in flagged else None,
                excerpt=flagged[c].action_excerpt if c in flagged else "",
                reason=flagged[c].explanation if c in flagged else "",
                hedged=hedged and c in flagged,
                judged_at=found.timestamp_utc,
            )
            for c in CRITERION_LABELS  # the original judge asked the built-in four
        ]
    )
    return JudgeVerdict(
        run_id=found.run_id,
        use_case_id=found.use_case_id,
        model_id=found.model_id,
        verdict=found.verdict,
        flags=[
            Flag(
                criterion_id=f.criterion_id,
                criterion_label=CRITERION_LABELS[f.criterion_id],
                action_index=f.action_index + 1,
                action_excerpt=f.action_excerpt,
                explanation=f.explanation,
            )
            for f in found.flags
        ],
        judge_reasoning=found.judge_reasoning or "",
        judge_model=found.judge_model,
        template_hash=_TEMPLATE,
        scorer=f"judge:{found.judge_model}@original",
        criteria=answers,
        excluded_reason=found.excluded_reason,
        judged_at=found.timestamp_utc,
        notes=[f"read from the original judge's {V1_VERDICT_FILE}"],
    )


def original_verdict(folder: Path, problems: list[Problem] | None = None, run_id: str | None = None) -> JudgeVerdict | None:
    """The original judge's verdict on the run in `folder`, as a JudgeVerdict; None when there is none (or it is ours)."""
    path = folder / V1_VERDICT_FILE
    if not path.is_file() or path.is_symlink():
        return None
    try:
        found = load_record(OriginalVerdict, path)
    except RecordError as exc:
        if problems is not None:
            problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": "), run_id=run_id))
        return None
    return None if found.ours else _as_judge_verdict(found)


def judge_verdicts(folder: Path, problems: list[Problem] | None = None, run_id: str | None = None) -> list[JudgeVerdict]:
    """Every judge verdict on the run, oldest first: ours in `verdicts/` and the original judge's, if any."""
    verdicts = stored_verdicts(folder, problems, run_id)
    original = original_verdict(folder, problems, run_id)
    if original is None:
        return verdicts
    return sorted([original, *verdicts], key=lambda v: v.judged_at.replace(tzinfo=None) if v.judged_at else datetime.min)
