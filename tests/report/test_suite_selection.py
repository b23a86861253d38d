"""One selection, one set of numbers: the report's filters reproduce each suite's rows, and copies of a run are one
independent observation in an interval."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from ghost_eval.cli import _parser
from ghost_eval.cli._common import run_filter
from ghost_eval.decide import wilson_interval
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.promptfoo.adapters import replay_response, suite_tests
from ghost_eval.report import build_report
from ghost_eval.report.selection import addon_ids, first_runs
from ghost_eval.report.trend import clustered_rate, rate
from ghost_eval.store import RunFilter, Store
from tests.conftest import REPO
from tests.judge.helpers import demo_copy

ADDON = "variants/addons/tc-netfilter-boundary.txt"
SELECTIONS = {
    "promptfooconfig.yaml": "--addon none --first 1",
    "sentinel/promptfooconfig.yaml": "--use-case f,m,q --addon none --first 5",
    "variants/promptfooconfig.yaml": f"--use-case f,g,j,m,q --addon none --addon {ADDON} --first 5",
    "consequences/promptfooconfig.yaml": "--addon none --first 1",
}
"""Each suite's selection as `ghost-eval report` filters, as the README's table says."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_path_factory.mktemp("demo"), derived=True)


def _served(config_path: Path, store: Path) -> set[str]:
    """The run ids the replay provider answers the suite's rows with (every provider, row and repeat)."""
    config: dict[str, Any] = yaml.safe_load(config_path.read_text())
    generator = config["tests"]["config"]
    rows = suite_tests(generator["suite"], None, REPO)
    repeats = (config.get("evaluateOptions") or {}).get("repeat", 1)
    served = set()
    for provider in config["providers"]:
        for row in rows:
            for repeat in range(repeats):
                settings = {**provider["config"], "store": str(store), "basePath": str(config_path.parent)}
                response = replay_response(settings, {"vars": row["vars"], "test": row, "repeatIndex": repeat})
                assert "error" not in response, response
                served.add(response["metadata"]["run_id"])
    return served


@pytest.mark.parametrize("config", sorted(SELECTIONS))
def test_the_report_filters_select_exactly_the_runs_a_suite_replays(config: str, demo: Path) -> None:
    argv = ["report", *SELECTIONS[config].split(), "--store", str(demo)]
    args = _parser(argv).parse_args(argv)
    addons = addon_ids([str(REPO / a) if a.endswith(".txt") else a for a in args.addon])
    with Store(demo) as store:
        selected = first_runs(store, run_filter(args), addons, args.first)
    assert selected == _served(REPO / config, demo)
    assert f"`{SELECTIONS[config]}`" in (REPO / "README.md").read_text(), "the README names this suite's filter"


def test_copies_of_a_run_do_not_narrow_the_interval() -> None:
    independent = [(f"run{i}", i < 9) for i in range(10)]
    with_copies = independent + [(f"run{i}", i < 9) for i in range(10) for _ in range(4)]
    alone, copied = clustered_rate(independent), clustered_rate(with_copies)
    assert (copied.k, copied.n, copied.rate) == (45, 50, 0.9)
    assert copied.independent == pytest.approx(10) and (copied.low, copied.high) == pytest.approx((alone.low, alone.high))
    naive = rate(45, 50)
    assert naive.low is not None and copied.low is not None and copied.low < naive.low - 0.1  # counted as 50, too narrow


def test_unequal_clusters_weigh_by_kish_effective_n() -> None:
    runs = [("a", True)] * 5 + [("b", False)]
    r = clustered_rate(runs)
    assert r.independent == pytest.approx(36 / 26) and r.rate == pytest.approx(5 / 6)
    assert (r.low, r.high) == pytest.approx(wilson_interval(5 / 6 * 36 / 26, 36 / 26))


def test_the_report_counts_the_demo_stores_derived_runs_with_their_source(demo: Path) -> None:
    """Sonnet's f runs: one hand-written run, four repeats and five addon runs copied from it are one observation."""
    cases, _ = load_case_set(None)
    with Store(demo) as store:
        runs = store.runs(RunFilter(use_case="f", model="claude-sonnet-4-6"))
        assert len(runs) == 10 and sum(1 for e in runs if store.read_metadata(e).derived_from) == 9  # type: ignore[union-attr]
        report = build_report(store, cases, RunFilter(use_case="f", model="claude-sonnet-4-6"))
    (row,) = report.models
    assert row.runs == 10 and row.independent_runs == pytest.approx(1)
    assert row.safe_remediation is not None and row.safe_remediation.rate == 1.0
    assert (row.safe_remediation.low, row.safe_remediation.high) == pytest.approx(wilson_interval(1, 1))
    assert not math.isclose(row.safe_remediation.low or 0, wilson_interval(10, 10)[0])
