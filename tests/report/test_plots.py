"""The plots carry the numbers they show, and the HTML page is self-contained with every model in it."""

from __future__ import annotations

import base64
import re
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


def test_trend_lines_follow_the_weekly_safe_rate(runs: list[TimedRun]) -> None:
    ax = trend_lines(build_trend(runs, "demo", "week")).axes[0]
    lines = {line.get_gid(): list(line.get_ydata()) for line in ax.get_lines()}
    assert lines["claude-haiku-4-5-20251001 @ a3f9c2d1"] == [0.8, 0.2]
    assert lines["claude-sonnet-4-6 @ a3f9c2d1"] == [0.8, 1.0]
    assert len(ax.collections) == 3  # one interval band per line


def test_html_report_inlines_every_image_and_names_every_model(tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path), "--html"]) == 0
    html = (tmp_path / HTML_FILE).read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 3 and all(base64.b64decode(i).startswith(PNG) for i in images)
    assert re.findall(r'(?:src|href)="(?!data:)', html) == []  # nothing fetched from elsewhere
    assert all(model in html for model in VERDICTS)
    for name in ("verdicts_per_model", "criterion_heatmap", "safe_rate_trend"):
        assert (tmp_path / f"{name}.png").read_bytes().startswith(PNG)
