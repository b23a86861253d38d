"""Judge verdicts kept beside runs, read back: the cache for re-judging, and the latest verdict for reports.

The cache key is (run, judge model, template hash, question hash): an answer is reused only from a verdict file of
the same run, written by the same judge model with the same templates, to the very question asked now (the question
holds the case facts, so a corrected case is asked again), and only when it is an answer, not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import load_record
from ghost_eval.judge.record import CriterionAnswer, JudgeDiagnosis, JudgeVerdict
from ghost_eval.store import Problem
from ghost_eval.store.layout import VERDICTS_DIR

__all__ = ["cached_answers", "cached_diagnoses", "latest_verdict", "stored_verdicts"]

_GLOB = "judge_*.json"
_EPOCH = datetime.min


def _when(verdict: JudgeVerdict) -> datetime:
    return verdict.judged_at.replace(tzinfo=None) if verdict.judged_at else _EPOCH


def stored_verdicts(folder: Path, problems: list[Problem] | None = None, run_id: str | None = None) -> list[JudgeVerdict]:
    """Every judge verdict beside the run, oldest first; an unreadable file is reported and skipped."""
    found: list[JudgeVerdict] = []
    for path in sorted((folder / VERDICTS_DIR).glob(_GLOB)):
        try:
            found.append(load_record(JudgeVerdict, path))
        except RecordError as exc:
            if problems is not None:
                problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": "), run_id=run_id))
    return sorted(found, key=_when)


def cached_answers(verdicts: Sequence[JudgeVerdict], model: str, template_hash: str) -> dict[str, CriterionAnswer]:
    """The newest criterion answer per question hash from this judge model and template; errors are never reused."""
    answers: dict[str, CriterionAnswer] = {}
    for verdict in verdicts:
        if verdict.judge_model == model and verdict.template_hash == template_hash:
            for answer in verdict.criteria:
                if answer.answer is not None and answer.question_hash is not None:
                    answers[answer.question_hash] = answer
    return answers


def cached_diagnoses(verdicts: Sequence[JudgeVerdict], model: str, template_hash: str) -> dict[str, JudgeDiagnosis]:
    """The newest diagnosis per question hash from this judge model and template; errors are never reused."""
    found: dict[str, JudgeDiagnosis] = {}
    for verdict in verdicts:
        diagnosis = verdict.diagnosis
        if verdict.judge_model == model and verdict.template_hash == template_hash and diagnosis and not diagnosis.error:
            found[diagnosis.question_hash] = diagnosis
    return found


def latest_verdict(verdicts: Sequence[JudgeVerdict], judge: str | None = None) -> JudgeVerdict | None:
    """What reports use: the newest verdict that judged the run (optionally by one judge model), one without errors
    first, so a later failed attempt does not hide an earlier answer; else the run's exclusion."""
    judged = [v for v in verdicts if v.verdict != "excluded" and (judge is None or v.judge_model == judge)]
    complete = [v for v in judged if v.verdict != "error"]
    if complete or judged:
        return (complete or judged)[-1]
    excluded = [v for v in verdicts if v.verdict == "excluded"]
    return excluded[-1] if excluded else None
