"""A suite's exit code: failed checks are a finished eval, error rows are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.report.eval_status import eval_status, main


def _output(tmp_path: Path, reasons: list[int]) -> Path:
    rows = [
        {"success": reason == 0, "failureReason": reason, "error": "no stored run for m × gemini" if reason == 2 else None}
        for reason in reasons
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "e", "results": {"results": rows, "stats": {}}}))
    return path


def test_failed_checks_finish_the_eval_and_error_rows_fail_the_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(_output(tmp_path, [0, 1, 1]))]) == 0
    assert "3 rows: 1 passed, 2 failed their checks, 0 errors" in capsys.readouterr().out
    assert main([str(_output(tmp_path, [2, 2, 1]))]) == 1
    captured = capsys.readouterr()
    assert "2 errors" in captured.out and "no stored run for m × gemini" in captured.err


def test_a_file_that_is_not_an_eval_output_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"results": 3}')
    assert main([str(bad)]) == 2
    assert f"{bad}: no results.results list" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not a readable Promptfoo output"):
        eval_status(tmp_path / "missing.json")


def test_the_report_after_an_eval_covers_exactly_the_eval_rows_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One selection, one set of numbers: `report --from-eval` counts the runs the eval's rows answered with, not the
    store's repeats and addon runs."""
    from ghost_eval.cli import main as cli
    from ghost_eval.store import Store, default_store_path

    picked = [e.run_id for e in Store(default_store_path()).runs()][:2]
    rows = [{"success": True, "failureReason": 0, "response": {"metadata": {"run_id": run_id}}} for run_id in picked]
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"results": {"results": rows}}))
    assert cli(["report", "--out", str(tmp_path), "--from-eval", str(path)]) == 0
    assert capsys.readouterr().out.startswith("2 runs, ")
    assert cli(["report", "--out", str(tmp_path), "--from-eval", str(tmp_path / "nope.json")]) == 2
