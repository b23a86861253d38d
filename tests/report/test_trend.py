"""Trends and time queries on the demo store, with a second prompt version from 2026-03-09 on for haiku."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.decide import wilson_interval
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.report.timeline import TimedRun, scored_runs
from ghost_eval.report.trend import before_after, build_trend, onset
from ghost_eval.store import Problem, Store
from tests.report.helpers import HAIKU_J, NEW_HASH, two_prompt_copy

HAIKU = "claude-haiku-4-5-20251001"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return two_prompt_copy(tmp_path_factory.mktemp("trend"))


@pytest.fixture(scope="module")
def runs(store: Path) -> list[TimedRun]:
    problems: list[Problem] = []
    with Store(store) as s:
        timed = scored_runs(s, load_case_set(None)[0], None, problems)
    assert not problems
    return timed


def test_trend_points_per_model_prompt_hash_and_week(runs: list[TimedRun]) -> None:
    trend = build_trend(runs, "demo", "week")
    haiku = [(p.prompt_hash, p.period_start, p.summary) for p in trend.points if p.model_id == HAIKU]
    assert [(h, d) for h, d, _ in haiku] == [("a3f9c2d1", date(2026, 3, 2)), (NEW_HASH, date(2026, 3, 9))]
    first, second = haiku[0][2], haiku[1][2]
    assert (first.safe.k, first.safe.n, second.safe.k, second.safe.n) == (4, 5, 0, 5)  # case q's fix leaves the netem
    assert (second.safe.low, second.safe.high) == wilson_interval(0, 5)
    assert (second.fired[3].k, second.fired[4].k, first.fired[4].k) == (3, 2, 1)
    assert (first.diagnosis.k, second.diagnosis.k) == (5, 4)  # haiku's case-q diagnosis is wrong
    assert second.gap == pytest.approx(4 / 5 - 0 / 5)
    assert sum(p.summary.runs for p in trend.points) == 30
    assert {p.prompt_hash for p in trend.points if p.model_id != HAIKU} == {"a3f9c2d1"}
    assert {p.hash_kind for p in trend.points} == {"agent_source_sha256"}  # v1 runs: a hash of the agent's source


def test_onset_names_the_first_run_and_the_prompt_change(runs: list[TimedRun]) -> None:
    found = onset(runs, HAIKU, 3)
    assert (found.first_run, found.prompt_hash, found.prompt_changed, found.runs_before) == (HAIKU_J, NEW_HASH, True, 5)
    assert found.since is not None and (found.since.k, found.since.n) == (3, 5)
    assert onset(runs, "claude-sonnet-4-6", 3).first_run is None
    assert onset(runs, HAIKU, 4).prompt_changed is None  # it fired on haiku's very first run


def test_before_and_after_a_run_or_a_date(runs: list[TimedRun]) -> None:
    at_run = before_after(runs, HAIKU, HAIKU_J)
    assert (at_run.before.safe.k, at_run.before.runs, at_run.after.safe.k, at_run.after.runs) == (4, 5, 0, 5)
    assert (at_run.prompt_hashes_before, at_run.prompt_hashes_after) == (["a3f9c2d1"], [NEW_HASH])
    assert at_run.before.verdicts == {"safe": 4, "unsafe": 1}
    by_date = before_after(runs, HAIKU, at_run.at.replace(hour=0, minute=0, second=0))
    assert by_date.model_dump(exclude={"at", "pivot_run"}) == at_run.model_dump(exclude={"at", "pivot_run"})


def test_query_commands(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "prompt", NEW_HASH[:8], "--store", str(store), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(rows) == 5 and {r["model_id"] for r in rows} == {HAIKU} and rows[0]["run_id"] == HAIKU_J
    assert main(["query", "onset", "--model", HAIKU, "--criterion", "3", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert HAIKU_J in text and "the prompt hash changed with this run" in text and "5 earlier runs" in text
    assert main(["query", "change", "--model", HAIKU, "--at", "2026-03-09", "--store", str(store), "--json"]) == 0
    change = json.loads(capsys.readouterr().out)
    assert (change["before"]["safe"]["k"], change["after"]["safe"]["k"]) == (4, 0)
    assert main(["query", "change", "--model", HAIKU, "--at", "no-such-run", "--store", str(store)]) == 2
    assert "no-such-run" in capsys.readouterr().err


def test_report_trend_writes_its_record(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--store", str(store), "--out", str(tmp_path), "--trend"]) == 0
    text = capsys.readouterr().out
    assert "remediation_trend.json" in text and NEW_HASH[:12] in text
    assert "│ claude-sonnet-4-6         │ 10   │ 90% [60%–98%] of 10 │" in text  # the per-model rates
    saved = json.loads((tmp_path / "remediation_trend.json").read_text())
    assert saved["period"] == "week" and len(saved["points"]) == 6  # 3 models × 2 weeks (haiku changed its prompt with the week)
