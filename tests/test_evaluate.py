from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ghost_eval.evaluate import load_case_set, score_store
from ghost_eval.store import Problem
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from synthetic_store import build_store


@pytest.mark.slow
def test_parallel_scoring_matches_serial_and_keeps_order(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store", 450)
    (next(store.root.rglob("shell_audit_*.jsonl"))).write_text("garbage\n")
    cases, _ = load_case_set()
    serial_problems: list[Problem] = []
    serial = [s.score for s in score_store(store, cases, write=False, problems=serial_problems)]
    parallel_problems: list[Problem] = []
    parallel = [s.score for s in score_store(store, cases, write=False, problems=parallel_problems, jobs=2)]
    assert len(serial) == 450
    assert parallel == serial
    assert [str(p) for p in parallel_problems] == [str(p) for p in serial_problems]
    assert any("line 1: not valid JSON" in p.message for p in parallel_problems)
    written = list(score_store(store, cases, jobs=2))
    assert all(w.verdict_file is not None and w.verdict_file.exists() for w in written)
