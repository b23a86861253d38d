from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.synthetic_store import build_store
from ghost_eval.evaluation.evaluate import load_case_set, score_store
from ghost_eval.scoring import RunScore
from ghost_eval.store import Problem
from tests.conftest import REPO


@pytest.mark.slow
def test_parallel_scoring_matches_serial_and_keeps_order(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store", 450)
    (next(store.root.rglob("shell_audit_*.jsonl"))).write_text("garbage\n")
    cases, _ = load_case_set()
    serial_problems: list[Problem] = []
    serial_rows = list(score_store(store, cases, write=False, problems=serial_problems))
    serial = [s.score for s in serial_rows]
    parallel_problems: list[Problem] = []
    parallel_rows = list(score_store(store, cases, write=False, problems=parallel_problems, jobs=2))
    parallel = [s.score for s in parallel_rows]
    assert len(serial) == 450
    assert parallel == serial
    # a scoring process hands back JSON, the serial path the record: each reads as the other
    assert [s.json for s in parallel_rows] == [s.model_dump_json() for s in serial]
    assert [str(p) for p in parallel_problems] == [str(p) for p in serial_problems]
    assert any("line 1: not valid JSON" in p.message for p in parallel_problems)
    written = list(score_store(store, cases, jobs=2))
    assert all(w.verdict_file is not None and w.verdict_file.exists() for w in written)


def _tamper(store_root: Path, run_id: str) -> None:
    """Rewrite a run's stored verdict to say `excluded`: only a reused verdict can say that for these runs."""
    for path in store_root.rglob(f"{run_id}/verdicts/deterministic*.json"):
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "verdict": "excluded"}))


def test_unchanged_runs_reuse_their_verdict_and_a_changed_case_or_run_is_rescored(tmp_path: Path) -> None:
    cases_dir = tmp_path / "cases"
    shutil.copytree(REPO / "cases", cases_dir)
    store = build_store(tmp_path / "store", 60)
    cases, _ = load_case_set(cases_dir)
    first = {s.entry.run_id: s for s in score_store(store, cases)}
    assert all(s.score.case_hash and s.score.run_digest for s in first.values())
    by_case = {s.entry.use_case_id: rid for rid, s in first.items()}
    m_run, f_run = by_case["use_case_m"], by_case["use_case_f"]
    _tamper(store.root, m_run)
    _tamper(store.root, f_run)

    again = {s.entry.run_id: s for s in score_store(store, cases, jobs=1)}
    assert again[m_run].score.verdict == again[f_run].score.verdict == "excluded"  # read, not recomputed
    assert all(s.verdict_file is None for s in again.values())
    assert {rid: s.score for rid, s in again.items() if rid not in (m_run, f_run)} == {
        rid: s.score for rid, s in first.items() if rid not in (m_run, f_run)
    }

    case_file = cases_dir / "m.yaml"
    case_file.write_text(case_file.read_text().replace("\ntitle: ", "\ntitle: (edited) ", 1))
    edited, _ = load_case_set(cases_dir)
    report = next((store.root / first[f_run].entry.path).glob("ghost_report_*.md"))
    report.write_text(report.read_text() + "\n")
    rescored = {s.entry.run_id: s for s in score_store(store, edited, jobs=1)}
    assert rescored[m_run].score == first[m_run].score.model_copy(update={"case_hash": rescored[m_run].score.case_hash})
    assert rescored[m_run].score.case_hash != first[m_run].score.case_hash
    assert rescored[f_run].score.verdict == first[f_run].score.verdict
    assert rescored[f_run].score.run_digest != first[f_run].score.run_digest
    untouched = [rid for rid, s in first.items() if s.entry.use_case_id not in ("use_case_m", "use_case_f")]
    assert untouched and all(rescored[rid].verdict_file is None for rid in untouched)


def test_a_verdict_of_schema_2_is_read_and_never_reused(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store", 3)
    cases, _ = load_case_set()
    first = [s.score for s in score_store(store, cases)]
    old = first[0].model_dump(mode="json", exclude={"case_hash", "run_digest"}) | {"schema_version": "2"}
    assert RunScore.model_validate(old).case_hash is None
    for path in store.root.rglob("verdicts/deterministic*.json"):
        data = json.loads(path.read_text())
        path.write_text(
            json.dumps({k: v for k, v in data.items() if k not in ("case_hash", "run_digest")} | {"verdict": "excluded"})
        )
    assert [s.score for s in score_store(store, cases, write=False)] == first
