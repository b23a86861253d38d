"""`ghost-eval diff` over store selections and Promptfoo outputs, on the bundled demo store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.base.errors import RecordError
from ghost_eval.cli import main
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.report.diff import diff_outcomes, load_outcomes
from ghost_eval.store import Problem
from tests.judge.helpers import demo_copy
from tests.report.helpers import HAIKU_Q, SONNET_M, changed_copy


def _diff_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    assert main(["diff", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_store_diff_lists_exactly_the_changed_rows_with_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = demo_copy(tmp_path / "a"), changed_copy(tmp_path / "b")
    diff = _diff_json(capsys, f"store:{before}", f"store:{after}")
    assert (diff["rows_a"], diff["rows_b"], diff["unchanged"]) == (30, 30, 28)
    by_key = {c["key"]: c for c in diff["changes"]}
    assert set(by_key) == {"m · claude-sonnet-4-6 · r0", "q · claude-haiku-4-5-20251001 · r0"}
    m = by_key["m · claude-sonnet-4-6 · r0"]
    assert m["a"]["run_id"] == m["b"]["run_id"] == SONNET_M
    assert m["changed"] == ["verdict", "criteria"]
    assert (m["a"]["verdict"], m["b"]["verdict"], m["b"]["flagged"]) == ("safe", "unsafe", [2, 4])
    assert m["summary"] == "verdict safe → unsafe; criteria +2 +4"
    assert any(e.startswith("B, criterion 2 fires: ") and len(e) > 40 for e in m["evidence"])
    q = by_key["q · claude-haiku-4-5-20251001 · r0"]
    assert q["a"]["run_id"] == HAIKU_Q and q["changed"] == ["verdict", "diagnosis"]
    assert q["summary"] == "verdict uncertain → safe; diagnosis wrong → correct"
    assert q["evidence"] and all(e.startswith("A: ") for e in q["evidence"])


def test_the_table_names_the_changed_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = demo_copy(tmp_path / "a"), changed_copy(tmp_path / "b")
    assert main(["diff", f"store:{before}", f"store:{after}"]) == 0
    text = capsys.readouterr().out
    assert "2 rows changed, 28 unchanged; only in A: 0, only in B: 0" in text
    assert "verdict safe → unsafe; criteria +2 +4" in text and SONNET_M in text


def test_same_store_has_no_changes_and_filters_select_rows(tmp_path: Path) -> None:
    cases = load_case_set(None)[0]
    problems: list[Problem] = []
    store = demo_copy(tmp_path)
    whole = load_outcomes(f"store:{store}", cases, problems)
    early = load_outcomes(f"store:{store}?model=gemini-2.5-flash&until=2026-03-06", cases, problems)
    assert not problems
    assert [r.key for r in early] == [f"{c} · gemini-2.5-flash · r0" for c in "adef"]
    diff = diff_outcomes("all", whole, "early", early)
    assert diff.changes == [] and diff.unchanged == 4 and len(diff.only_a) == 26 and diff.only_b == []
    # the demo store's runs record no suite version
    assert len(load_outcomes(f"store:{store}?suite_version=unknown", cases, problems)) == 30
    assert load_outcomes(f"store:{store}?suite_version=abc", cases, problems) == []


def test_a_bad_eval_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = load_case_set(None)[0]
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"results": {"results": [{"provider": {"label": "m"}, "testCase": {"vars": {}}}]}}))
    with pytest.raises(RecordError, match=r"x.json: results\[0\]: field 'vars'"):
        load_outcomes(str(bad), cases, [])
    with pytest.raises(RecordError, match="field 'prompt_hash': a prompt hash prefix needs at least 6"):
        load_outcomes(f"store:{tmp_path}?prompt_hash=a3f", cases, [])
    with pytest.raises(RecordError, match="unknown filter"):
        load_outcomes(f"store:{tmp_path}?modle=x", cases, [])
    assert main(["diff", "store:?label=nothing-has-this", "store:"]) == 0
    assert "note: A (store:?label=nothing-has-this) has no rows" in capsys.readouterr().err
    assert main(["diff", "eval-nope", str(bad), "--promptfoo-db", str(tmp_path / "none.db")]) == 2
    assert "no Promptfoo database" in capsys.readouterr().err


def test_a_case_row_reads_the_same_in_every_suite() -> None:
    """Diff keys and the viewer's comparison rely on a case's row description being the same wherever it appears."""
    from ghost_eval.promptfoo.adapters import suite_tests

    described: dict[str, set[str]] = {}
    for suite in ("baseline", "sentinel", "variant:tc-netfilter-boundary"):
        for row in suite_tests(suite):
            described.setdefault(row["vars"]["use_case"], set()).add(row["description"])
    assert {"m", "f", "q"} <= described.keys()
    assert all(len(d) == 1 and next(iter(d)).startswith(f"{case}: ") for case, d in described.items())
