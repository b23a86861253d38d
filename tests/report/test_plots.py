"""The plots carry the numbers they show, and the HTML page is self-contained with every model in it."""

from __future__ import annotations

import base64
import dataclasses
import re
from datetime import timedelta
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.report.ci import by_model
from ghost_eval.report.plots import HTML_FILE, VERDICT_ORDER, criterion_heatmap, trend_lines, verdict_bars
from ghost_eval.report.timeline import TimedRun, scored_runs
from ghost_eval.report.trend import Summary, build_trend
from ghost_eval.store import Problem, Store
from tests.judge.helpers import demo_copy
from tests.report.test_ci import VERDICTS

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[TimedRun]:
    """The demo store's 30 hand-written runs, whose verdicts test_ci.VERDICTS lists."""
    problems: list[Problem] = []
    with Store(demo_copy(tmp_path_factory.mktemp("demo"))) as store:
        return scored_runs(store, load_case_set(None)[0], None, problems)


@pytest.fixture(scope="module")
def summaries(runs: list[TimedRun]) -> dict[str, Summary]:
    return by_model(runs)


def test_verdict_bars_stack_each_models_counts(summaries: dict[str, Summary]) -> None:
    ax = verdict_bars(summaries).axes[0]
    heights = {c.get_label(): [p.get_height() for p in c.patches] for c in ax.containers}
    models = [t.get_text() for t in ax.get_xticklabels()]
    assert models == list(VERDICTS)
    for i, model in enumerate(models):
        assert tuple(heights[v][i] for v in ("safe", "uncertain", "unsafe")) == VERDICTS[model]
    assert list(heights) == list(VERDICT_ORDER)


def test_heatmap_cells_are_the_firing_rates(summaries: dict[str, Summary]) -> None:
    ax = criterion_heatmap(summaries).axes[0]
    cells = ax.images[0].get_array()
    assert [t.get_text() for t in ax.get_yticklabels()] == list(VERDICTS)
    # haiku: criteria 3 and 4 fire on 3 of 10; gemini: 1 on 1, 2 on 1, 3 on 1, 4 on 3
    assert cells.tolist() == [[0.0, 0.0, 0.3, 0.3], [0.0, 0.0, 0.0, 0.1], [0.1, 0.1, 0.1, 0.3]]
    assert "3/10" in {t.get_text() for t in ax.texts}


def _lines(runs: list[TimedRun]) -> dict[str, list[float]]:
    ax = trend_lines(build_trend(runs, "demo", "week")).axes[0]
    assert len(ax.collections) == len(ax.get_lines())  # one interval band per line
    return {str(line.get_gid()): list(line.get_ydata()) for line in ax.get_lines()}


def test_a_week_of_other_cases_is_another_line_not_a_change(runs: list[TimedRun]) -> None:
    lines = _lines(runs)
    # the hand-written runs' first week holds cases a, d, e, f, g and the second j, m, q, s, v: haiku's safe rate
    # goes 0.8 -> 0.0 because the cases differ, and no line joins the two
    assert lines["claude-haiku-4-5-20251001 @ a3f9c2d1 · cases a, d, e, f, g"] == [0.8]
    assert lines["claude-haiku-4-5-20251001 @ a3f9c2d1 · cases j, m, q, s, v"] == [0.0]
    assert lines["claude-sonnet-4-6 @ a3f9c2d1 · cases j, m, q, s, v"] == [1.0]
    assert len(lines) == 6


def test_a_line_follows_one_set_of_cases_across_weeks(runs: list[TimedRun]) -> None:
    second_week = [r for r in runs if r.entry.model_id == "claude-haiku-4-5-20251001" and r.at.day >= 9]
    a_week_later = [dataclasses.replace(r, at=r.at + timedelta(days=7)) for r in second_week]
    lines = _lines(second_week + a_week_later)
    assert lines == {"claude-haiku-4-5-20251001 @ a3f9c2d1 · cases j, m, q, s, v": [0.0, 0.0]}


def test_addon_runs_are_named_by_their_addon(tmp_path: Path) -> None:
    with Store(demo_copy(tmp_path, derived=True)) as store:
        timed = scored_runs(store, load_case_set(None)[0], None, [])
    lines = _lines(timed)
    addon = "addon tc-netfilter-boundary (7b111e0e)"  # the demo store's addon runs record no prompt hash
    assert lines[f"gemini-2.5-flash @ {addon} · cases f, g"] == [0.0]
    assert lines[f"gemini-2.5-flash @ {addon} · cases j, m, q"] == pytest.approx([2 / 3])
    assert not [gid for gid in lines if " @ - " in gid or "@ -" in gid]
    trend = build_trend(timed, "demo", "week")
    assert {p.addon for p in trend.points} == {None, "tc-netfilter-boundary (7b111e0e)"}


def test_html_report_inlines_every_image_and_names_every_model(tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path), "--html"]) == 0
    html = (tmp_path / HTML_FILE).read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 3 and all(base64.b64decode(i).startswith(PNG) for i in images)
    assert re.findall(r'(?:src|href)="(?!data:)', html) == []  # nothing fetched from elsewhere
    assert all(model in html for model in VERDICTS)
    for name in ("verdicts_per_model", "criterion_heatmap", "safe_rate_trend"):
        assert (tmp_path / f"{name}.png").read_bytes().startswith(PNG)
