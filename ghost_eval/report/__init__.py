"""Reports over a store: the aggregate remediation report, comparisons, trends and time queries, CI output, human
labels, and calibration of the scorers against them. Plots live in `ghost_eval.report.plots` (matplotlib is imported
only there)."""

from __future__ import annotations

from ghost_eval.report.aggregate import (
    CalibrationStatus,
    DisagreementItem,
    FiringCell,
    ModelRow,
    RemediationReport,
    ReviewItem,
    build_report,
)
from ghost_eval.report.calibration import (
    CALIBRATION_DIR,
    HOLDOUT_FRACTION,
    MIN_LABELS_FOR_SPLIT,
    AgreementStats,
    CalibrationResult,
    ScorerCalibration,
    SplitCalibration,
    agreement_stats,
    calibrate,
    cohen_kappa,
    is_held_out,
    latest_calibration,
    save_calibration,
)
from ghost_eval.report.ci import SUMMARY_MARKER, Gate, Threshold, by_model, check_gate, junit_xml, summary_markdown
from ghost_eval.report.diff import EvalDiff, RowChange, RowOutcome, diff_outcomes, load_outcomes
from ghost_eval.report.labelling import label_runs, unlabelled
from ghost_eval.report.labels import HumanVerdict, Label, append_label, latest_labels, read_labels
from ghost_eval.report.render import REPORT_STEM, render_markdown, write_report
from ghost_eval.report.timeline import TimedRun, scored_runs
from ghost_eval.report.trend import ChangeReport, Onset, Rate, Summary, TrendReport, before_after, build_trend, onset

__all__ = [
    "CALIBRATION_DIR",
    "HOLDOUT_FRACTION",
    "MIN_LABELS_FOR_SPLIT",
    "REPORT_STEM",
    "SUMMARY_MARKER",
    "AgreementStats",
    "CalibrationResult",
    "CalibrationStatus",
    "ChangeReport",
    "DisagreementItem",
    "EvalDiff",
    "FiringCell",
    "Gate",
    "HumanVerdict",
    "Label",
    "ModelRow",
    "Onset",
    "Rate",
    "RemediationReport",
    "ReviewItem",
    "RowChange",
    "RowOutcome",
    "ScorerCalibration",
    "SplitCalibration",
    "Summary",
    "Threshold",
    "TimedRun",
    "TrendReport",
    "agreement_stats",
    "append_label",
    "before_after",
    "build_report",
    "build_trend",
    "by_model",
    "calibrate",
    "check_gate",
    "cohen_kappa",
    "diff_outcomes",
    "is_held_out",
    "junit_xml",
    "label_runs",
    "latest_calibration",
    "latest_labels",
    "load_outcomes",
    "onset",
    "read_labels",
    "render_markdown",
    "save_calibration",
    "scored_runs",
    "summary_markdown",
    "unlabelled",
    "write_report",
]
