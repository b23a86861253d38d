"""Runs of two suite versions are never pooled: reports and decisions over such a selection stop and name the
versions, `--suite-version V` selects one (`unknown`: runs that record none), and runs without one keep working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.store import Store
from tests.decide.conftest import ADDON, Clone, variant_dir
from tests.decide.test_decisions import _criteria

SONNET, GEMINI = "claude-sonnet-4-6", "gemini-2.5-flash"


def _refused(code: int, capsys: pytest.CaptureFixture[str], *named: str) -> None:
    err = capsys.readouterr().err
    assert code == 2 and "never pooled" in err and "--suite-version V" in err, err
    assert all(n in err for n in named), err


def test_report_refuses_two_suite_versions_and_selects_one(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone("m", "x-model", SONNET, n=2, suite_version="aaaa")
    clone("m", "x-model", GEMINI, n=1, suite_version="bbbb")
    clone("f", "x-model", SONNET, n=1)
    args = ["report", "--store", str(store.root), "--out", str(tmp_path / "out")]
    _refused(main(args), capsys, "aaaa (2 runs), bbbb (1 runs), and 1 runs without a suite version")
    assert not (tmp_path / "out" / "remediation_verdicts.json").exists()
    for version, runs in (("aaaa", 2), ("bbbb", 1), ("unknown", 1)):
        assert main([*args, "--suite-version", version]) == 0
        report = json.loads((tmp_path / "out" / "remediation_verdicts.json").read_text())
        assert report["runs"] == runs and report["suite_version"] == (None if version == "unknown" else version)
    md = (tmp_path / "out" / "remediation_verdicts.md").read_text()
    assert "suite version" not in md  # the last report was of runs that record none: nothing to say


def test_one_known_suite_version_pools_with_runs_that_record_none(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone("m", "x-model", SONNET, n=1, suite_version="aaaa")
    clone("m", "x-model", SONNET, n=1)
    assert main(["report", "--store", str(store.root), "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "remediation_verdicts.json").read_text())
    assert report["runs"] == 2 and report["suite_version"] == "aaaa"
    assert "suite version `aaaa`" in (tmp_path / "remediation_verdicts.md").read_text()


def test_variant_decide_refuses_two_suite_versions_and_selects_one(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = variant_dir(tmp_path, k=2)
    for model in ("x-model", "y-model", "z-model"):
        clone("m", model, SONNET, n=2, addon=ADDON, suite_version="good")
    clone("m", "z-model", GEMINI, n=2, addon=ADDON, suite_version="other")  # would sink z-model if pooled
    args = ["variant", "decide", "demo-variant", "--variants-dir", str(folder), "--store", str(store.root)]
    _refused(main(args), capsys, "good (6 runs), other (2 runs)")
    assert not (store.root / "decisions").exists()
    assert main([*args, "--suite-version", "good"]) == 0
    record = json.loads(max((store.root / "decisions" / "variants" / "demo-variant").glob("*.json")).read_text())
    assert record["decision"] == "accept" and record["suite_version"] == "good" and len(record["run_ids"]) == 6


def test_sentinel_decide_refuses_two_suite_versions_across_its_cases(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for model in ("cur", "cand"):
        clone("m", model, SONNET, n=3, suite_version="v-one")
        clone("f", model, SONNET, n=3, suite_version="v-two")  # each case alone is of one version; the decision is not
    args = ["sentinel", "decide", "--current", "cur", "--candidate", "cand", "--store", str(store.root)]
    args += ["--criteria", str(_criteria(tmp_path, ["m", "f"], 3))]
    _refused(main(args), capsys, "v-one (6 runs), v-two (6 runs)")
    assert main([*args, "--suite-version", "v-one"]) == 2  # f has no runs of this version: not enough runs
    record = json.loads(max((store.root / "decisions" / "sentinel" / "migrations").glob("*.json")).read_text())
    assert record["decision"] == "insufficient" and record["suite_version"] == "v-one"
    assert record["more_runs_needed"] == {"f/cand": 3, "f/cur": 3}


def test_store_list_shows_and_filters_the_suite_version(store: Store, clone: Clone, capsys: pytest.CaptureFixture[str]) -> None:
    clone("m", "x-model", SONNET, n=1, suite_version="aaaa")
    clone("m", "x-model", SONNET, n=2)
    base = ["store", "list", "--store", str(store.root)]
    assert main([*base, "--suite-version", "aaaa", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["suite_version"] for e in listed] == ["aaaa"]
    assert main([*base, "--suite-version", "unknown"]) == 0
    out = capsys.readouterr().out
    assert "2 runs" in out and "suite version" in out and "aaaa" not in out
