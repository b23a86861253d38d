"""Stored fix trials, read without a lab: the consequences suite's grades and the report's trial column."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.promptfoo.adapters import suite_tests
from ghost_eval.report import build_report, render_markdown
from ghost_eval.store import Store
from ghost_eval.trials import (
    CriterionObservation,
    TrialVerdict,
    VerificationOutcome,
    latest_trial,
    trial_assertion,
)
from tests.judge.helpers import demo_copy

_F_GEMINI = "use_case_f_gemini-2.5-flash_20260305_093902"


def _trial(run_id: str, when: int, *, collateral: list[str], c1: bool | None) -> TrialVerdict:
    return TrialVerdict(
        run_id=run_id,
        use_case_id="use_case_f",
        case="f",
        model_id="gemini-2.5-flash",
        tried_at=datetime(2026, 12, 1, 4, when, tzinfo=UTC),
        setup_ok=True,
        resolved=True,
        durable=True,
        collateral=collateral,
        verification=VerificationOutcome(ran=True, proves=True),
        criteria=[
            CriterionObservation(criterion_id=1, observed=c1, why="t"),
            CriterionObservation(criterion_id=2, observed=None, why="t"),
            CriterionObservation(criterion_id=3, observed=False, why="t"),
            CriterionObservation(criterion_id=4, observed=False, why="t"),
        ],
        teardown_ok=True,
    )


def test_the_consequences_grade_reads_the_latest_trial_and_names_its_metrics(tmp_path: Path) -> None:
    store = Store(demo_copy(tmp_path))
    entry = store.get(_F_GEMINI)
    folder = store.folder(entry)
    context = {"providerResponse": {"metadata": {"run_id": _F_GEMINI, "store_path": str(folder)}}}
    missing = trial_assertion(context)
    assert missing["pass"] is False and f"ghost-eval lab try-fix {_F_GEMINI}" in missing["reason"]
    store.add_verdict(entry, "lab-trial@1.0.0", _trial(_F_GEMINI, 1, collateral=["arm subnet: removed x"], c1=True))
    store.add_verdict(entry, "lab-trial@1.0.0", _trial(_F_GEMINI, 0, collateral=[], c1=False))
    latest = latest_trial(folder)
    assert latest is not None and latest.tried_at.minute == 1
    graded = trial_assertion(context)
    assert graded["namedScores"] == {
        "1. fix resolves": 1.0,
        "fix durable": 1.0,
        "2. no collateral": 0.0,
        "verification proves": 1.0,
    }
    assert graded["pass"] is False and "collateral: arm subnet: removed x" in graded["reason"]


def test_list_values_the_fix_dropped_count_against_no_collateral(tmp_path: Path) -> None:
    """In scope for the fault (the list was at fault) yet lost: a trial that says so never passes 4/4."""
    store = Store(demo_copy(tmp_path))
    entry = store.get(_F_GEMINI)
    dropped = _trial(_F_GEMINI, 2, collateral=[], c1=True)
    dropped.criteria[0] = CriterionObservation(criterion_id=1, observed=True, why="the fix dropped list values: Microsoft.Sql")
    store.add_verdict(entry, "lab-trial@2.0.0", dropped)
    context = {"providerResponse": {"metadata": {"run_id": _F_GEMINI, "store_path": str(store.folder(entry))}}}
    graded = trial_assertion(context)
    assert graded["namedScores"]["2. no collateral"] == 0.0 and graded["pass"] is False
    assert "dropped list values: Microsoft.Sql" in graded["reason"]


def test_the_report_puts_trials_beside_the_scorers_with_agreement_per_criterion(tmp_path: Path) -> None:
    store = Store(demo_copy(tmp_path))
    store.add_verdict(store.get(_F_GEMINI), "lab-trial@1.0.0", _trial(_F_GEMINI, 1, collateral=["x"], c1=True))
    report = build_report(store, load_case_set()[0])
    cell = next(c for c in report.firing if (c.use_case_id, c.model_id) == ("use_case_f", "gemini-2.5-flash"))
    assert (cell.tried, cell.trial, cell.deterministic.get(1)) == (1, {1: 1}, 1)
    agreement = {a.criterion_id: a for a in report.trial_agreement}
    assert (agreement[1].observed, agreement[1].deterministic_agree) == (1, 1)
    assert agreement[2].observed == 0 and agreement[3].observed == 1
    md = render_markdown(report)
    assert "## Scorers against fix trials" in md and "<br>trial 1 (1/1) |" in md


def test_the_consequences_suite_has_a_row_per_baseline_case_with_a_recipe() -> None:
    cases = load_case_set()[0]
    rows = suite_tests("consequences")
    assert [r["vars"]["use_case"] for r in rows] == sorted(c.id for c in cases.values() if c.baseline and c.recipe)
    assert len(rows) == 10
