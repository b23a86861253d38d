"""Calibration: how often the judge and the deterministic scorer agree with human labels, and how they miss.

Per criterion, for the run verdict and for diagnosis: agreement, Cohen's kappa, the confusion matrix and the
false-safe count (a human says it fires / the run is unsafe, the scorer says it does not / the run is safe: the
costliest error). With fewer than 80 labels every number is computed on the runs the judge prompt was tuned on,
which leaks; from 80 on, a seeded, stable share of the runs is held out and reported apart.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import Record, dump_json, load_record
from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import score_record
from ghost_eval.judge import JudgeVerdict, latest_verdict
from ghost_eval.report.labels import Label
from ghost_eval.report.original_judge import judge_verdicts
from ghost_eval.scoring import SCORER, RunScore
from ghost_eval.scoring.registry import criterion_labels
from ghost_eval.store import Problem, Store
from ghost_eval.store.writer import publish_file

__all__ = [
    "CALIBRATION_DIR",
    "CALIBRATION_SCHEMA_VERSION",
    "HOLDOUT_FRACTION",
    "MIN_LABELS_FOR_SPLIT",
    "AgreementStats",
    "CalibrationResult",
    "ScorerCalibration",
    "SplitCalibration",
    "agreement_stats",
    "calibrate",
    "cohen_kappa",
    "is_held_out",
    "latest_calibration",
    "save_calibration",
]

CALIBRATION_SCHEMA_VERSION = "1"
CALIBRATION_DIR = "calibration"
"""Folder in the store root where calibration results are kept, one new file per `ghost-eval calibrate`."""
MIN_LABELS_FOR_SPLIT = 80
HOLDOUT_FRACTION = 0.3


class AgreementStats(Record):
    """A scorer against the human labels on one question."""

    n: int
    agreement: float | None = None
    kappa: float | None = None
    """Cohen's kappa; None when undefined (no pairs, or both sides always gave the same single label)."""
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Human label → scorer label → count."""
    false_safe: int = 0


class ScorerCalibration(Record):
    scorer: str
    criteria: dict[int, AgreementStats] = Field(default_factory=dict)
    verdict: AgreementStats
    diagnosis: AgreementStats | None = None
    """Only the deterministic scorer checks the diagnosis (the case's answer key)."""
    not_scored: int = 0
    """Labelled runs this scorer has no usable verdict for (not judged, excluded, or a judge error)."""


class SplitCalibration(Record):
    name: str
    """`all` (fewer labels than the split needs), or `held_out` and `tuning`."""
    runs: int
    deterministic: ScorerCalibration
    judge: ScorerCalibration


class CalibrationResult(Record):
    """What `ghost-eval calibrate` found; kept in the store so reports can state the judge's calibration."""

    schema_version: str = CALIBRATION_SCHEMA_VERSION
    labels_file: str
    labelled_runs: int
    """Labelled runs found in the store (one label per run: the last one written)."""
    unknown_runs: list[str] = Field(default_factory=list)
    """Labelled run ids the store does not have."""
    judge_model: str | None = None
    """Only this judge's verdicts were compared; None means each run's latest judge verdict."""
    seed: int
    holdout_fraction: float
    splits: list[SplitCalibration] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    computed_at: datetime

    @property
    def headline(self) -> SplitCalibration | None:
        """The split whose numbers can be trusted most: the held-out one when there is one."""
        return next((s for s in self.splits if s.name == "held_out"), self.splits[0] if self.splits else None)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """(p_o - p_e) / (1 - p_e) over the union of both sides' categories."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[c] * second[c] for c in set(first) | set(second)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def agreement_stats(pairs: Sequence[tuple[str, str]], human_bad: str, scorer_safe: str) -> AgreementStats:
    """Stats over (human, scorer) pairs; a false safe is `human_bad` answered by `scorer_safe`."""
    confusion: dict[str, dict[str, int]] = {}
    for human, scorer in pairs:
        row = confusion.setdefault(human, {})
        row[scorer] = row.get(scorer, 0) + 1
    n = len(pairs)
    return AgreementStats(
        n=n,
        agreement=sum(a == b for a, b in pairs) / n if n else None,
        kappa=cohen_kappa(pairs),
        confusion=confusion,
        false_safe=sum(1 for a, b in pairs if a == human_bad and b == scorer_safe),
    )


def is_held_out(run_id: str, seed: int, fraction: float = HOLDOUT_FRACTION) -> bool:
    """Stable per run: adding labels never moves an already labelled run between the splits."""
    digest = hashlib.sha256(f"{seed}:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def _judge_answer(verdict: JudgeVerdict, criterion: int) -> str | None:
    """The answer as the verdict used it: a hedged YES or NO counts as UNKNOWN; an error is no answer."""
    answer = verdict.answer(criterion)
    if answer is None or answer.answer is None:
        return None
    return "UNKNOWN" if answer.hedged else answer.answer


def _scorer_calibration(
    name: str,
    labels: Sequence[Label],
    criteria: Mapping[str, Mapping[int, str]],
    verdicts: Mapping[str, str],
    diagnosis: Mapping[str, bool] | None,
) -> ScorerCalibration:
    per_criterion = {
        c: agreement_stats(
            [
                (lab.criteria[c], criteria[lab.run_id][c])
                for lab in labels
                if c in lab.criteria and lab.run_id in criteria and c in criteria[lab.run_id]
            ],
            "YES",
            "NO",
        )
        for c in criterion_labels()
    }
    verdict = agreement_stats(
        [(lab.verdict, verdicts[lab.run_id]) for lab in labels if lab.verdict and lab.run_id in verdicts], "unsafe", "safe"
    )
    diag = None
    if diagnosis is not None:
        word = {True: "correct", False: "wrong"}
        diag = agreement_stats(
            [
                (word[lab.diagnosis_correct], word[diagnosis[lab.run_id]])
                for lab in labels
                if lab.diagnosis_correct is not None and lab.run_id in diagnosis
            ],
            "wrong",
            "correct",
        )
    return ScorerCalibration(
        scorer=name,
        criteria=per_criterion,
        verdict=verdict,
        diagnosis=diag,
        not_scored=sum(1 for lab in labels if lab.run_id not in verdicts),
    )


def _split(
    name: str, labels: Sequence[Label], scores: Mapping[str, RunScore], judged: Mapping[str, JudgeVerdict], judge_name: str
) -> SplitCalibration:
    det_criteria = {rid: {c.criterion_id: "YES" if c.fired else "NO" for c in s.criteria} for rid, s in scores.items()}
    det_diagnosis = {rid: s.diagnosis.correct for rid, s in scores.items() if s.diagnosis.correct is not None}
    asked = criterion_labels()
    judge_criteria = {rid: {c: a for c in asked if (a := _judge_answer(v, c)) is not None} for rid, v in judged.items()}
    return SplitCalibration(
        name=name,
        runs=len(labels),
        deterministic=_scorer_calibration(SCORER, labels, det_criteria, {r: s.verdict for r, s in scores.items()}, det_diagnosis),
        judge=_scorer_calibration(judge_name, labels, judge_criteria, {r: v.verdict for r, v in judged.items()}, None),
    )


def calibrate(
    store: Store,
    cases: dict[str, Case],
    labels: Mapping[str, Label],
    labels_file: str,
    *,
    judge: str | None = None,
    seed: int = 0,
    holdout: float = HOLDOUT_FRACTION,
    problems: list[Problem] | None = None,
) -> CalibrationResult:
    """Compare the stored runs' scores with the labels (run id → label)."""
    found: list[Label] = []
    scores: dict[str, RunScore] = {}
    judged: dict[str, JudgeVerdict] = {}
    unknown: list[str] = []
    for run_id, label in labels.items():
        if not store.has(run_id):
            unknown.append(run_id)
            continue
        record = store.read(store.get(run_id))
        if problems is not None:
            problems.extend(record.problems)
        if not record.readable:
            unknown.append(run_id)
            continue
        found.append(label)
        scores[run_id] = score_record(record, cases)
        verdict = latest_verdict(judge_verdicts(record.folder, problems, run_id), judge)
        if verdict is not None and verdict.verdict not in ("excluded", "error"):
            judged[run_id] = verdict
    judge_name = f"judge:{judge}" if judge else "judge (latest verdict per run)"
    warnings: list[str] = []
    if unknown:
        warnings.append(f"{len(unknown)} labelled runs are not in this store and were skipped")
    if len(found) < MIN_LABELS_FOR_SPLIT:
        warnings.append(
            f"only {len(found)} labelled runs (fewer than {MIN_LABELS_FOR_SPLIT}): the numbers are computed on the same runs "
            "the judge is calibrated on, which leaks and makes them optimistic; label more runs (`ghost-eval label`) "
            "to get a held-out split"
        )
        splits = [_split("all", found, scores, judged, judge_name)]
    else:
        held = [lab for lab in found if is_held_out(lab.run_id, seed, holdout)]
        tuning = [lab for lab in found if not is_held_out(lab.run_id, seed, holdout)]
        splits = [_split("held_out", held, scores, judged, judge_name), _split("tuning", tuning, scores, judged, judge_name)]
    return CalibrationResult(
        labels_file=labels_file,
        labelled_runs=len(found),
        unknown_runs=unknown,
        judge_model=judge,
        seed=seed,
        holdout_fraction=holdout,
        splits=splits,
        warnings=warnings,
        computed_at=datetime.now(UTC),
    )


def save_calibration(store: Store, result: CalibrationResult) -> Path | None:
    """Keep the result in the store's calibration folder (a new file each time; identical results are kept once)."""
    body = dump_json(result)
    stamp = result.computed_at.strftime("%Y%m%dT%H%M%S")
    digest = hashlib.sha256(body.encode()).hexdigest()[:12]
    path = store.root / CALIBRATION_DIR / f"calibration.{stamp}.{digest}.json"
    return path if publish_file(path, body) else None


def latest_calibration(store: Store, problems: list[Problem] | None = None) -> CalibrationResult | None:
    """The newest calibration kept in the store, or None when the judge was never calibrated there."""
    newest: CalibrationResult | None = None
    for path in sorted((store.root / CALIBRATION_DIR).glob("calibration.*.json")):
        try:
            result = load_record(CalibrationResult, path)
        except RecordError as exc:
            if problems is not None:
                problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": ")))
            continue
        if newest is None or result.computed_at >= newest.computed_at:
            newest = result
    return newest
