"""Calibration maths against hand-computed tables, the leakage warning, the held-out split, the stored result."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import load_case_set, score_record
from ghost_eval.judge import Answer, CriterionAnswer, JudgeVerdict, JudgeVerdictValue, template_hash
from ghost_eval.report import (
    Label,
    agreement_stats,
    calibrate,
    cohen_kappa,
    is_held_out,
    latest_calibration,
    save_calibration,
)
from ghost_eval.store import Store
from tests.conftest import v1_run, write_index
from tests.judge.helpers import demo_copy


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return load_case_set()[0]


def _pairs(table: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, n in table.items() for _ in range(n)]


def test_kappa_on_a_two_by_two_table() -> None:
    # human YES/NO 5/5, scorer YES/NO 6/4: p_o = 7/10, p_e = .5*.6 + .5*.4 = .5, kappa = (.7-.5)/(1-.5) = .4
    pairs = _pairs({("YES", "YES"): 4, ("YES", "NO"): 1, ("NO", "YES"): 2, ("NO", "NO"): 3})
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    stats = agreement_stats(pairs, "YES", "NO")
    assert stats.n == 10 and stats.agreement == pytest.approx(0.7) and stats.false_safe == 1
    assert stats.confusion == {"YES": {"YES": 4, "NO": 1}, "NO": {"YES": 2, "NO": 3}}


def test_kappa_counts_unknown_as_its_own_answer() -> None:
    # p_o = 3/6; human Y3 N3, judge Y2 U1 N3: p_e = (3*2 + 3*3)/36 = 15/36; kappa = (1/2 - 15/36)/(21/36) = 1/7
    pairs = [("YES", "YES"), ("YES", "UNKNOWN"), ("YES", "NO"), ("NO", "NO"), ("NO", "NO"), ("NO", "YES")]
    assert cohen_kappa(pairs) == pytest.approx(1 / 7)
    assert agreement_stats(pairs, "YES", "NO").false_safe == 1  # UNKNOWN is not a false safe


def test_kappa_edge_cases() -> None:
    assert cohen_kappa([]) is None
    assert cohen_kappa([("NO", "NO")] * 5) is None  # both always say the same single label: undefined
    assert cohen_kappa([("YES", "NO"), ("NO", "YES")]) == pytest.approx(-1.0)
    assert agreement_stats([], "YES", "NO").agreement is None


def test_held_out_is_seeded_stable_and_near_the_fraction() -> None:
    ids = [f"run_{i}" for i in range(2000)]
    held = [r for r in ids if is_held_out(r, seed=3)]
    assert 0.27 < len(held) / len(ids) < 0.33
    assert held == [r for r in ids if is_held_out(r, seed=3)]
    assert held != [r for r in ids if is_held_out(r, seed=4)]


def _verdict(run_id: str, model: str, answers: dict[int, Answer], verdict: JudgeVerdictValue) -> JudgeVerdict:
    return JudgeVerdict(
        run_id=run_id,
        use_case_id="x",
        model_id=model,
        verdict=verdict,
        judge_model="claude-sonnet-4-6",
        template_hash=template_hash(),
        scorer="judge:claude-sonnet-4-6@x",
        judged_at=datetime(2026, 1, 1),
        criteria=[CriterionAnswer(criterion_id=c, criterion_label="x", answer=a, reason="r") for c, a in answers.items()],
    )


def test_calibrate_on_the_demo_store(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = demo_copy(tmp_path)
    with Store(root) as store:
        entries = {e.run_id: e for e in store.runs()}
        scores = {rid: score_record(store.read(e), cases) for rid, e in entries.items()}
        f_gemini = next(r for r in scores if r.startswith("use_case_f_gemini"))
        a_gemini = next(r for r in scores if r.startswith("use_case_a_gemini"))
        all_no: dict[int, Answer] = {1: "NO", 2: "NO", 3: "NO", 4: "NO"}
        for rid in (f_gemini, a_gemini):
            store.add_verdict(entries[rid], "judge:x", _verdict(rid, "gemini-2.5-flash", all_no, "safe"))
        # a human says criterion 1 fires only on f/gemini, and that run is unsafe; every other run is safe
        labels = {
            rid: Label(
                run_id=rid,
                labeller="t",
                criteria={1: "YES" if rid == f_gemini else "NO"},
                verdict="unsafe" if rid == f_gemini else "safe",
                diagnosis_correct=True,
            )
            for rid in scores
        }
        labels["not_in_store"] = Label(run_id="not_in_store", labeller="t", criteria={1: "NO"})
        result = calibrate(store, cases, labels, "labels.jsonl")
    assert result.labelled_runs == 30 and result.unknown_runs == ["not_in_store"]
    assert any("fewer than 80" in w and "leaks" in w for w in result.warnings)
    (split,) = result.splits
    assert split.name == "all" and split.runs == 30
    det = split.deterministic
    c1_fired = {r for r, s in scores.items() if any(c.fired for c in s.criteria if c.criterion_id == 1)}
    assert f_gemini in c1_fired
    assert det.criteria[1].confusion == {"YES": {"YES": 1}, "NO": {"NO": 29}}  # f/gemini is the only criterion 1 run
    assert det.criteria[1].false_safe == 0 and det.criteria[2].n == 0  # nobody labelled criterion 2
    det_safe = sum(1 for s in scores.values() if s.verdict == "safe")
    assert det.verdict.confusion["safe"].get("safe", 0) == det_safe - (scores[f_gemini].verdict == "safe")
    assert det.diagnosis is not None and det.diagnosis.n == 30
    assert det.diagnosis.agreement == pytest.approx(sum(1 for s in scores.values() if s.diagnosis.correct) / 30)
    judge = split.judge
    assert judge.not_scored == 28 and judge.criteria[1].n == 2 and judge.criteria[1].false_safe == 1
    assert judge.verdict.false_safe == 1 and judge.diagnosis is None


def test_enough_labels_hold_out_a_split_and_the_result_is_kept(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = tmp_path / "store"
    root.mkdir()
    start = datetime(2026, 3, 12, 9, 0, 0)
    write_index(root, [v1_run(root, when=start + timedelta(minutes=i)) for i in range(84)])
    with Store(root) as store:
        labels = {e.run_id: Label(run_id=e.run_id, labeller="t", criteria={2: "NO"}, verdict="safe") for e in store.runs()}
        result = calibrate(store, cases, labels, "labels.jsonl", seed=5)
        assert not any("fewer than 80" in w for w in result.warnings)
        held, tuning = result.splits
        assert (held.name, tuning.name) == ("held_out", "tuning") and held.runs + tuning.runs == 84
        assert held.runs == sum(1 for rid in labels if is_held_out(rid, 5)) and result.headline is held
        assert held.deterministic.criteria[2].confusion == {"NO": {"NO": held.runs}}
        kept = save_calibration(store, result)
        assert kept is not None and kept.parent.name == "calibration"
        assert latest_calibration(store) == result
