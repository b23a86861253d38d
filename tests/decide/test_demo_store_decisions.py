"""The bundled demo store reaches every decision (accept, reject, go, no-go), and its suites replay without error rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.store import RunFilter, Store, bundled_path
from ghost_eval.store.demo import extend_demo_store
from tests.conftest import REPO
from tests.judge.helpers import demo_copy
from tests.promptfoo_cli import run_eval

HAIKU, SONNET = "claude-haiku-4-5-20251001", "claude-sonnet-4-6"
_ERROR_ROW = 2
"""Promptfoo's failureReason of a row whose provider answered with an error (1 is a failed assertion)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_path_factory.mktemp("demo"), derived=True)


@pytest.mark.parametrize(
    ("name", "code", "decision"), [("tc-netfilter-boundary", 1, "reject"), ("tc-netfilter-boundary-majority", 0, "accept")]
)
def test_the_variant_is_rejected_by_the_strict_rule_and_accepted_by_the_majority_rule(
    demo: Path, name: str, code: int, decision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["variant", "decide", name, "--store", str(demo)]) == code
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: {decision}\n"), out
    assert f"{HAIKU}: case q: pass^5 = 0.00 < 0.8 (0/5 runs pass)" in out  # the addon helps two models, not the third
    record = json.loads(max((demo / "decisions" / "variants" / name).glob("*.json")).read_text())
    assert record["decision"] == decision and not record["more_runs_needed"]


@pytest.mark.parametrize(("current", "candidate", "code", "decision"), [(HAIKU, SONNET, 0, "go"), (SONNET, HAIKU, 1, "no-go")])
def test_the_migration_is_a_go_one_way_and_a_no_go_the_other(
    demo: Path, current: str, candidate: str, code: int, decision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sentinel", "decide", "--current", current, "--candidate", candidate, "--store", str(demo)]) == code
    out = capsys.readouterr().out
    assert out.startswith(f"{current} → {candidate}: {decision}\n"), out
    if decision == "no-go":
        assert "case m: regressed against the current model; failing: criterion 3 does not fire" in out


def test_the_bundled_runs_are_what_the_demo_tool_writes(tmp_path: Path) -> None:
    """Regenerate the synthetic repeats and addon runs from the 30 hand-written runs: the same files, byte for byte."""
    bundled = Store(bundled_path("demo_store"))
    everything = {e.run_id for e in bundled.runs(RunFilter())}
    root = demo_copy(tmp_path)
    kept = {e.run_id for e in Store(root).runs(RunFilter())}
    assert len(kept) == 30 and len(everything) == 165
    added = extend_demo_store(root)
    assert sorted(e.run_id for e in added) == sorted(everything - kept)
    for entry in added:
        made, shipped = root / entry.path, bundled.root / entry.path
        assert sorted(p.name for p in made.iterdir()) == sorted(p.name for p in shipped.iterdir())
        for path in made.iterdir():
            assert path.read_bytes() == (shipped / path.name).read_bytes(), f"{entry.path}/{path.name}"


@pytest.mark.slow
@pytest.mark.xdist_group("promptfoo")
@pytest.mark.parametrize(
    ("config", "rows"), [("variants/promptfooconfig.yaml", 5 * 6 * 5), ("sentinel/promptfooconfig.yaml", 3 * 3 * 5)]
)
def test_the_suites_replay_the_bundled_store_without_error_rows(config: str, rows: int, tmp_path: Path) -> None:
    results = run_eval(REPO / config, tmp_path)
    assert len(results) == rows
    errors = [r["error"] for r in results if r["failureReason"] == _ERROR_ROW]
    assert not errors, errors[:3]
    assert len({r["response"]["metadata"]["run_id"] for r in results}) == rows  # every repeat is a different stored run


@pytest.mark.slow
@pytest.mark.xdist_group("promptfoo")
def test_the_variants_suite_shows_what_the_decision_counted(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each column's `variant_pass` and `sentinel_pass` rows ("4. variant pass", "5. sentinel pass") per case are the
    decision record's passes and runs for that side; the check that tells baseline and addon apart (listing the packet
    filter) is a metric of its own."""
    rows = run_eval(REPO / "variants" / "promptfooconfig.yaml", tmp_path, extra_env={"GHOST_EVAL_STORE": str(demo)})
    main(["variant", "decide", "tc-netfilter-boundary", "--store", str(demo)])
    capsys.readouterr()
    record = json.loads(max((demo / "decisions" / "variants" / "tc-netfilter-boundary").glob("*.json")).read_text())
    decided: dict[tuple[str, str, str, str], tuple[int, int]] = {}
    for m in record["per_model"]:
        for field, side, metric in (
            ("variant", "tc-netfilter-boundary", "4. variant pass"),
            ("baseline", "baseline", "4. variant pass"),
            ("sentinel_variant", "tc-netfilter-boundary", "5. sentinel pass"),
            ("sentinel_baseline", "baseline", "5. sentinel pass"),
        ):
            for s in m[field]:
                decided[(m["model_id"], side, s["use_case_id"], metric)] = (s["passes"], s["n"])
    shown: dict[tuple[str, str, str, str], tuple[int, int]] = {}
    for row in rows:
        model, side = row["provider"]["label"].split(" / ")
        for metric in ("4. variant pass", "5. sentinel pass"):
            if metric in row["namedScores"]:
                passes, n = shown.get((model, side, row["vars"]["use_case"], metric), (0, 0))
                shown[(model, side, row["vars"]["use_case"], metric)] = (passes + int(row["namedScores"][metric]), n + 1)
    assert shown == decided and len(decided) == 3 * 2 * (3 + 3)
    listed = {
        row["provider"]["label"]: row["namedScores"]["variant listed packet filter"]
        for row in rows
        if row["vars"]["use_case"] == "g" and row["provider"]["label"].startswith("gemini")
    }
    assert listed == {"gemini-2.5-flash / baseline": 0.0, "gemini-2.5-flash / tc-netfilter-boundary": 1.0}
    f_row = next(r for r in rows if r["vars"]["use_case"] == "f")
    assert "sentinel criterion 1" in f_row["namedScores"] and not any("variant" in k for k in f_row["namedScores"])
