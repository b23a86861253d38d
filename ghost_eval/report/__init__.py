"""Reports over a store: the aggregate remediation report, human labels, and calibration of the scorers against them."""

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
from ghost_eval.report.labelling import label_runs, unlabelled
from ghost_eval.report.labels import HumanVerdict, Label, append_label, latest_labels, read_labels
from ghost_eval.report.render import REPORT_STEM, render_markdown, write_report

__all__ = [
    "CALIBRATION_DIR",
    "HOLDOUT_FRACTION",
    "MIN_LABELS_FOR_SPLIT",
    "REPORT_STEM",
    "AgreementStats",
    "CalibrationResult",
    "CalibrationStatus",
    "DisagreementItem",
    "FiringCell",
    "HumanVerdict",
    "Label",
    "ModelRow",
    "RemediationReport",
    "ReviewItem",
    "ScorerCalibration",
    "SplitCalibration",
    "agreement_stats",
    "append_label",
    "build_report",
    "calibrate",
    "cohen_kappa",
    "is_held_out",
    "label_runs",
    "latest_calibration",
    "latest_labels",
    "read_labels",
    "render_markdown",
    "save_calibration",
    "unlabelled",
    "write_report",
]
