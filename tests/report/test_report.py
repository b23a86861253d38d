"""`ghost-eval report` on the demo store: verdict counts, firing map, the gap, exclusions, errors, repeats."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ghost_eval.cases.case import Case
from ghost_eval.cli import main
from ghost_eval.evaluation.evaluate import load_case_set, score_record
from ghost_eval.judge import (
    Anchor,
    Answer,
    CriterionAnswer,
    Disagreement,
    JudgeVerdict,
    JudgeVerdictValue,
    excluded_verdict,
    template_hash,
)
from ghost_eval.report import Label, RemediationReport, build_report, calibrate, render_markdown, save_calibration
from ghost_eval.run.identity import RunMetadata
from ghost_eval.scoring import Flag, RunEvidence
from ghost_eval.store import Store
from tests.judge.helpers import demo_copy

GEMINI = "gemini-2.5-flash"


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return load_case_set()[0]


def _verdict(run_id: str, verdict: JudgeVerdictValue, answers: list[Answer | None], when: int, **extra: object) -> JudgeVerdict:
    criteria = [
        CriterionAnswer(criterion_id=c, criterion_label="x", answer=a, reason="r", error=None if a else "boom")
        for c, a in enumerate(answers, start=1)
    ]
    return JudgeVerdict.model_validate(
        {
            "run_id": run_id,
            "use_case_id": "x",
            "model_id": GEMINI,
            "verdict": verdict,
            "judge_model": "claude-sonnet-4-6",
            "template_hash": template_hash(),
            "scorer": "judge:claude-sonnet-4-6@x",
            "criteria": criteria,
            "errors": [f"criterion {c.criterion_id}: boom" for c in criteria if c.error],
            "judged_at": datetime(2026, 4, 1, 10, when, tzinfo=UTC),
            **extra,
        }
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """The demo store with a repeat of a/gemini and judge verdicts of every kind."""
    root = demo_copy(tmp_path)
    opened = Store(root)
    ids = {(e.use_case_id, e.model_id): e for e in opened.runs()}
    a, d, f, m_haiku = (
        ids[("use_case_a", GEMINI)],
        ids[("use_case_d", GEMINI)],
        ids[("use_case_f", GEMINI)],
        ids[("use_case_m", "claude-haiku-4-5-20251001")],
    )
    original = opened.read(a)
    repeat_id = "use_case_a_gemini-2.5-flash_20260402_101512"
    opened.append(
        RunMetadata(run_id=repeat_id, use_case_id="use_case_a", model_id=GEMINI, repeat_index=1),
        {
            "ghost_report_ghost_20260402_101512.md": original.report or "",
            "shell_audit_ghost_20260402_101512.jsonl": "".join(e.model_dump_json() + "\n" for e in original.audit),
        },
    )
    opened.add_verdict(a, "judge:x", _verdict(a.run_id, "error", [None, "NO", "NO", "NO"], 0))
    opened.add_verdict(a, "judge:x", _verdict(a.run_id, "safe", ["NO", "NO", "NO", "NO"], 5))
    opened.add_verdict(d, "judge:x", _verdict(d.run_id, "error", ["NO", "NO", None, "NO"], 5))
    flag = Flag(criterion_id=1, criterion_label="x", action_index=1, action_excerpt="--service-endpoints", explanation="r")
    disagreement = Disagreement(
        criterion_id=4, judge_answer="YES", deterministic_fired=False, judge_reason="r", deterministic_detail="verifies"
    )
    opened.add_verdict(
        f,
        "judge:x",
        _verdict(
            f.run_id,
            "unsafe",
            ["YES", "NO", "NO", "YES"],
            5,
            flags=[flag],
            anchor=Anchor(scorer="deterministic@x", verdict="unsafe", fired=[1], disagreements=[disagreement]),
        ),
    )
    evidence = RunEvidence(run_id=m_haiku.run_id, use_case_id="use_case_m", model_id=m_haiku.model_id, audit_complete=False)
    opened.add_verdict(m_haiku, "judge:excluded", excluded_verdict(evidence, "same family as every judge"))
    return opened


def test_report_counts(store: Store, cases: dict[str, Case]) -> None:
    report = build_report(store, cases)
    scores = [score_record(store.read(e), cases) for e in store.runs()]
    assert report.runs == 31 == len(scores) and report.cells == 30 and report.cells_with_repeats == 1
    rows = {m.model_id: m for m in report.models}
    for model, row in rows.items():
        mine = [s for s in scores if s.model_id == model]
        assert row.runs == len(mine) and row.deterministic == dict(Counter(s.verdict for s in mine))
        known = [s for s in mine if s.diagnosis.correct is not None]
        accuracy = sum(1 for s in known if s.diagnosis.correct) / len(known)
        safe = sum(1 for s in mine if s.verdict == "safe") / len(mine)
        assert row.diagnosis_accuracy == pytest.approx(accuracy) and row.gap_deterministic == pytest.approx(accuracy - safe)
    gemini = rows[GEMINI]
    assert gemini.runs == 11 and gemini.judge == {"safe": 1, "unsafe": 1, "error": 1, "not_judged": 8}
    assert gemini.judged == 2 and gemini.safe_rate_judge == 0.5
    assert gemini.diagnosis_accuracy is not None and gemini.gap_judge == pytest.approx(gemini.diagnosis_accuracy - 0.5)
    assert rows["claude-haiku-4-5-20251001"].judge == {"excluded": 1, "not_judged": 9}
    cell = next(c for c in report.firing if (c.use_case_id, c.model_id) == ("use_case_a", GEMINI))
    assert cell.runs == 2 and cell.judged == 1 and cell.judge == {}
    f_cell = next(c for c in report.firing if (c.use_case_id, c.model_id) == ("use_case_f", GEMINI))
    assert f_cell.judge == {1: 1} and f_cell.deterministic.get(1) == 1
    assert [i.model_id for i in report.excluded] == ["claude-haiku-4-5-20251001"]
    assert report.excluded[0].reason == "same family as every judge"
    assert [i.use_case_id for i in report.judge_errors] == ["use_case_d"] and "criterion 3: boom" in report.judge_errors[0].reason
    assert [(d.criterion_id, d.judge_answer) for d in report.disagreements] == [(4, "YES")]
    assert not report.calibration.calibrated and "not calibrated" in report.calibration.summary


def test_markdown_and_json(store: Store, cases: dict[str, Case], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = render_markdown(build_report(store, cases))
    for heading in (
        "## Judge calibration",
        "## Verdicts per model",
        "## Diagnosis accuracy vs safe remediation",
        "## Where each criterion fires",
        "## Excluded runs, for human review",
        "## Judge errors",
        "## Judge and deterministic scorer disagree",
    ):
        assert heading in md
    assert "1 cells have repeats, and every repeat counts as a run" in md
    (f_row,) = [line for line in md.splitlines() if line.startswith("| use_case_f |")]
    assert f_row.endswith("<br>judge 1 (1/1)<br>trial not tried |") and f_row.count("judge not judged") == 2
    assert "`use_case_m_claude-haiku-4-5-20251001_20260312_141503`: same family as every judge" in md
    out = tmp_path / "out"
    assert main(["report", "--store", str(store.root), "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    written = RemediationReport.model_validate(json.loads((out / "remediation_verdicts.json").read_text()))
    assert written.runs == 31 and (out / "remediation_verdicts.md").read_text().startswith("# Remediation verdicts")


def test_calibration_status_is_reported(store: Store, cases: dict[str, Case]) -> None:
    labels = {e.run_id: Label(run_id=e.run_id, labeller="t", criteria={1: "NO"}, verdict="safe") for e in store.runs()}
    save_calibration(store, calibrate(store, cases, labels, "labels.jsonl"))
    status = build_report(store, cases).calibration
    assert status.calibrated and status.labelled_runs == 31 and status.split == "all"
    assert "too few labels for a held-out split" in status.summary and set(status.judge_kappa) == {1, 2, 3, 4}
    assert status.judge_false_safe == 0
