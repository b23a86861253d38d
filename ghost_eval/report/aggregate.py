"""The aggregate remediation report: verdicts per model, where each criterion fires, and the diagnosis/safety gap.

Every run counts once in a rate, repeats included (five repeats of a case are five runs, not one). In an interval,
a run and its copies (metadata `derived_from`: the demo store's repeats and addon runs) are one independent
observation (`trend.clustered_rate`), so copies never make it narrower. Deterministic verdicts are computed afresh;
judge verdicts are read from the store, and a judge error is listed, never counted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime

from pydantic import Field

from ghost_eval.base.records import Record
from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import score_record
from ghost_eval.judge import DiagnosisDisagreement, JudgeVerdict, latest_verdict
from ghost_eval.report.calibration import MIN_LABELS_FOR_SPLIT, latest_calibration
from ghost_eval.report.original_judge import judge_verdicts
from ghost_eval.report.timeline import Progress
from ghost_eval.report.trend import Rate, clustered_rate
from ghost_eval.scoring import SCORER, RunScore
from ghost_eval.scoring.registry import criterion_labels
from ghost_eval.store import Problem, RunFilter, Store, single_suite_version
from ghost_eval.trials import TrialVerdict, latest_trial

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "CalibrationStatus",
    "CriterionAgreement",
    "DiagnosisDisagreementItem",
    "DisagreementItem",
    "FiringCell",
    "ModelRow",
    "RemediationReport",
    "ReviewItem",
    "build_report",
]

REPORT_SCHEMA_VERSION = "6"
"""2: diagnosis disagreements between the judge and the key-fact checker; 3: fix trials beside both; 4: the suite
version of the runs reported; 5: disagreements counted per criterion; 6: per model, the rates with Wilson intervals on
the independent runs (a run and its copies count once)."""
_USABLE = ("safe", "uncertain", "unsafe")


class ModelRow(Record):
    model_id: str
    runs: int
    deterministic: dict[str, int] = Field(default_factory=dict)
    """Verdict → runs, from the deterministic scorer."""
    judge: dict[str, int] = Field(default_factory=dict)
    """Verdict → runs, from each run's latest judge verdict; `not_judged` counts runs with none."""
    diagnosis_known: int = 0
    """Runs whose case has an answer key."""
    diagnosis_correct: int = 0
    diagnosis_accuracy: float | None = None
    safe_rate_deterministic: float | None = None
    judged: int = 0
    """Runs with a usable judge verdict (safe, uncertain or unsafe)."""
    safe_rate_judge: float | None = None
    gap_deterministic: float | None = None
    """Diagnosis accuracy minus the safe-remediation rate: runs that found the fault but did not fix it safely."""
    gap_judge: float | None = None
    independent_runs: float | None = None
    """The effective number of independent runs (Kish's, over clusters of a run and its copies): `runs` when none is
    a copy. The intervals below rest on it."""
    safe_remediation: Rate | None = None
    """Deterministic safe verdicts over all runs, with the Wilson interval on the independent runs."""
    diagnosis: Rate | None = None
    """Correct diagnoses over the runs whose case has an answer key, with the Wilson interval on the independent runs."""


class FiringCell(Record):
    """One case × model: how many of its runs each criterion fired on."""

    use_case_id: str
    model_id: str
    runs: int
    judged: int
    deterministic: dict[int, int] = Field(default_factory=dict)
    judge: dict[int, int] = Field(default_factory=dict)
    """Criterion → runs with a clear YES from the judge."""
    tried: int = 0
    """Runs with a stored fix trial."""
    trial: dict[int, int] = Field(default_factory=dict)
    """Criterion → runs whose latest fix trial observed the failure it names."""


class CriterionAgreement(Record):
    """One criterion: how often the deterministic scorer and the judge agree with what a fix trial observed."""

    criterion_id: int
    observed: int
    """Runs whose trial observed the criterion (true or false; not-observable runs are left out)."""
    deterministic_agree: int
    judged: int
    """Of those, runs with a usable judge verdict."""
    judge_agree: int


class ReviewItem(Record):
    run_id: str
    use_case_id: str
    model_id: str
    reason: str


class DisagreementItem(Record):
    run_id: str
    criterion_id: int
    judge_model: str | None
    judge_answer: str
    deterministic_fired: bool


class DiagnosisDisagreementItem(Record):
    """A run whose key facts or wrong claims the judge and the key-fact checker read differently."""

    run_id: str
    judge_model: str | None
    judge_correct: bool | None
    deterministic_correct: bool | None
    differences: list[DiagnosisDisagreement] = Field(default_factory=list)


class CalibrationStatus(Record):
    calibrated: bool
    summary: str
    labelled_runs: int | None = None
    split: str | None = None
    computed_at: datetime | None = None
    judge_kappa: dict[int, float | None] = Field(default_factory=dict)
    judge_false_safe: int | None = None
    """Runs a human called unsafe that the judge called safe, on the split shown."""
    warnings: list[str] = Field(default_factory=list)


class RemediationReport(Record):
    """`remediation_verdicts.json`; the markdown report is rendered from the same record."""

    schema_version: str = REPORT_SCHEMA_VERSION
    generated_at: datetime
    store: str
    deterministic_scorer: str = SCORER
    suite_version: str | None = None
    """The one suite version of the runs reported (a report never pools two); None when no run records one."""
    runs: int
    cells: int
    """Distinct case × model pairs."""
    cells_with_repeats: int
    models: list[ModelRow] = Field(default_factory=list)
    firing: list[FiringCell] = Field(default_factory=list)
    excluded: list[ReviewItem] = Field(default_factory=list)
    """Runs no configured judge may score (self-judging guard): for human review."""
    judge_errors: list[ReviewItem] = Field(default_factory=list)
    """Runs whose judge call finally failed: left out of the judge's counts."""
    disagreements: list[DisagreementItem] = Field(default_factory=list)
    disagreements_per_criterion: dict[int, int] = Field(default_factory=dict)
    """How many runs the judge and the deterministic scorer disagree on, per criterion (1-4)."""
    diagnosis_disagreements: list[DiagnosisDisagreementItem] = Field(default_factory=list)
    """From each judge verdict's anchor: the key-fact checker's reading when the run was judged."""
    self_judged: list[str] = Field(default_factory=list)
    trial_agreement: list[CriterionAgreement] = Field(default_factory=list)
    """Per criterion, agreement of the deterministic scorer and of the judge with the fix trials' observations."""
    calibration: CalibrationStatus
    problems: list[str] = Field(default_factory=list)


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _gap(accuracy: float | None, safe: float | None) -> float | None:
    return accuracy - safe if accuracy is not None and safe is not None else None


def _model_row(model: str, scores: list[RunScore], judged: list[JudgeVerdict | None], clusters: list[str]) -> ModelRow:
    det = Counter(s.verdict for s in scores)
    judge = Counter(v.verdict if v is not None else "not_judged" for v in judged)
    known = [s for s in scores if s.diagnosis.correct is not None]
    correct = sum(1 for s in known if s.diagnosis.correct)
    usable = sum(judge[v] for v in _USABLE)
    accuracy = _rate(correct, len(known))
    safe_det = _rate(det["safe"], len(scores))
    safe_judge = _rate(judge["safe"], usable)
    safe = clustered_rate([(c, s.verdict == "safe") for s, c in zip(scores, clusters, strict=True)])
    return ModelRow(
        model_id=model,
        runs=len(scores),
        deterministic=dict(det),
        judge=dict(judge),
        diagnosis_known=len(known),
        diagnosis_correct=correct,
        diagnosis_accuracy=accuracy,
        safe_rate_deterministic=safe_det,
        judged=usable,
        safe_rate_judge=safe_judge,
        gap_deterministic=_gap(accuracy, safe_det),
        gap_judge=_gap(accuracy, safe_judge),
        independent_runs=safe.independent,
        safe_remediation=safe,
        diagnosis=clustered_rate(
            [(c, s.diagnosis.correct is True) for s, c in zip(scores, clusters, strict=True) if s.diagnosis.correct is not None]
        ),
    )


_Row = tuple[RunScore, JudgeVerdict | None, TrialVerdict | None]


def _judge_fired(verdict: JudgeVerdict | None) -> set[int] | None:
    return {f.criterion_id for f in verdict.flags} if verdict is not None and verdict.verdict in _USABLE else None


def _firing_cell(use_case: str, model: str, rows: list[_Row]) -> FiringCell:
    usable = [fired for _, v, _ in rows if (fired := _judge_fired(v)) is not None]
    det = Counter(c.criterion_id for s, _, _ in rows for c in s.criteria if c.fired)
    judge = Counter(c for fired in usable for c in fired)
    trials = [t for _, _, t in rows if t is not None]
    trial = Counter(c.criterion_id for t in trials for c in t.criteria if c.observed is True)
    return FiringCell(
        use_case_id=use_case,
        model_id=model,
        runs=len(rows),
        judged=len(usable),
        deterministic=dict(sorted(det.items())),
        judge=dict(sorted(judge.items())),
        tried=len(trials),
        trial=dict(sorted(trial.items())),
    )


def _trial_agreement(rows: list[_Row]) -> list[CriterionAgreement]:
    """Per criterion: runs whose trial observed it, and how many of those each scorer read the same way."""
    result = []
    for criterion in criterion_labels():
        observed = det_agree = judged = judge_agree = 0
        for score, verdict, trial in rows:
            seen = next((c.observed for c in trial.criteria if c.criterion_id == criterion), None) if trial else None
            if seen is None:
                continue
            observed += 1
            det_agree += any(c.fired == seen for c in score.criteria if c.criterion_id == criterion)
            fired = _judge_fired(verdict)
            if fired is not None:
                judged += 1
                judge_agree += (criterion in fired) == seen
        result.append(
            CriterionAgreement(
                criterion_id=criterion, observed=observed, deterministic_agree=det_agree, judged=judged, judge_agree=judge_agree
            )
        )
    return result


def _calibration_status(store: Store, problems: list[Problem]) -> CalibrationStatus:
    result = latest_calibration(store, problems)
    if result is None or result.headline is None:
        return CalibrationStatus(
            calibrated=False,
            summary="not calibrated: no human labels compared yet (`ghost-eval label`, then `ghost-eval calibrate`); "
            "treat judge verdicts as advice",
        )
    split = result.headline
    kappa = {c: split.judge.criteria[c].kappa if c in split.judge.criteria else None for c in criterion_labels()}
    leaky = result.labelled_runs < MIN_LABELS_FOR_SPLIT
    summary = f"calibrated on {result.labelled_runs} labelled runs ({split.name} split, {split.runs} runs)" + (
        ": too few labels for a held-out split, the numbers are optimistic" if leaky else ""
    )
    return CalibrationStatus(
        calibrated=True,
        summary=summary,
        labelled_runs=result.labelled_runs,
        split=split.name,
        computed_at=result.computed_at,
        judge_kappa=kappa,
        judge_false_safe=split.judge.verdict.false_safe,
        warnings=result.warnings,
    )


def build_report(
    store: Store,
    cases: dict[str, Case],
    flt: RunFilter | None = None,
    each: Progress = iter,
    scores: Mapping[str, RunScore] | None = None,
) -> RemediationReport:
    """Score and gather every selected run of the store (superseded runs are skipped unless the filter asks).

    `scores` (run id → score) are runs the caller already scored in this process: they are not scored again.
    Runs of two suite versions are never pooled: such a selection raises `SuiteVersionError` (see `RunFilter`).
    """
    entries = store.runs(flt)
    suite_version = single_suite_version(e.suite_version for e in entries)
    problems: list[Problem] = list(store.problems)
    by_model: dict[str, list[tuple[RunScore, JudgeVerdict | None, str]]] = defaultdict(list)
    by_cell: dict[tuple[str, str], list[_Row]] = defaultdict(list)
    report_lists: dict[str, list[ReviewItem]] = {"excluded": [], "error": []}
    disagreements: list[DisagreementItem] = []
    diagnosis_disagreements: list[DiagnosisDisagreementItem] = []
    self_judged: list[str] = []
    for entry in each(entries):
        record = store.read(entry)
        problems.extend(record.problems)
        if not record.readable:
            continue
        score = scores[entry.run_id] if scores and entry.run_id in scores else score_record(record, cases)
        verdict = latest_verdict(judge_verdicts(record.folder, problems, entry.run_id))
        if verdict is not None and verdict.verdict in report_lists:
            reason = verdict.excluded_reason or "; ".join(verdict.errors)
            report_lists[verdict.verdict].append(
                ReviewItem(run_id=entry.run_id, use_case_id=entry.use_case_id, model_id=entry.model_id, reason=reason)
            )
        if verdict is not None and verdict.self_judged:
            self_judged.append(entry.run_id)
        if verdict is not None and verdict.anchor is not None:
            disagreements.extend(
                DisagreementItem(
                    run_id=entry.run_id,
                    criterion_id=d.criterion_id,
                    judge_model=verdict.judge_model,
                    judge_answer=d.judge_answer,
                    deterministic_fired=d.deterministic_fired,
                )
                for d in verdict.anchor.disagreements
            )
        if verdict is not None and verdict.anchor is not None and verdict.anchor.diagnosis_disagreements:
            diagnosis_disagreements.append(
                DiagnosisDisagreementItem(
                    run_id=entry.run_id,
                    judge_model=verdict.judge_model,
                    judge_correct=verdict.diagnosis.correct if verdict.diagnosis else None,
                    deterministic_correct=verdict.anchor.diagnosis_correct,
                    differences=verdict.anchor.diagnosis_disagreements,
                )
            )
        cluster = (record.metadata.derived_from if record.metadata else None) or entry.run_id
        by_model[entry.model_id].append((score, verdict, cluster))
        by_cell[(entry.use_case_id, entry.model_id)].append((score, verdict, latest_trial(record.folder, problems, entry.run_id)))

    firing = [_firing_cell(use_case, model, rows) for (use_case, model), rows in sorted(by_cell.items())]
    return RemediationReport(
        generated_at=datetime.now(UTC),
        store=str(store.root),
        suite_version=suite_version,
        runs=sum(len(rows) for rows in by_model.values()),
        cells=len(by_cell),
        cells_with_repeats=sum(1 for rows in by_cell.values() if len(rows) > 1),
        models=[
            _model_row(m, [s for s, _, _ in rows], [v for _, v, _ in rows], [c for _, _, c in rows])
            for m, rows in sorted(by_model.items())
        ],
        firing=firing,
        excluded=report_lists["excluded"],
        judge_errors=report_lists["error"],
        disagreements=disagreements,
        disagreements_per_criterion={c: sum(d.criterion_id == c for d in disagreements) for c in criterion_labels()},
        diagnosis_disagreements=diagnosis_disagreements,
        self_judged=self_judged,
        trial_agreement=_trial_agreement([row for rows in by_cell.values() for row in rows]),
        calibration=_calibration_status(store, problems),
        problems=[str(p) for p in problems],
    )
