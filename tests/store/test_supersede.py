"""`store supersede` only records a re-run of the same case on the same model, and never a cycle that hides runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.importer import import_runs
from ghost_eval.store.verify import verify_store
from tests.store.v1_original import V1Run, write_v1_store

A, B, C = V1Run(stamp="20260501_091111"), V1Run(stamp="20260502_091111"), V1Run(stamp="20260503_091111")
OTHER_MODEL = V1Run(model="gemini-2.5-flash", stamp="20260501_091111")
OTHER_CASE = V1Run(use_case="use_case_f", stamp="20260501_091111")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    source = write_v1_store(tmp_path / "artifact-store", [A, B, C, OTHER_MODEL, OTHER_CASE])
    import_runs(Store(tmp_path / "ours", create=True), source)
    return tmp_path / "ours"


def _supersede(store: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> tuple[int, str]:
    code = main(["store", "supersede", "--store", str(store), old, new])
    return code, capsys.readouterr().err


def _visible(store: Path) -> set[str]:
    with Store(store) as s:
        return {e.run_id for e in s.runs()}


@pytest.mark.parametrize(("other", "why"), [(OTHER_MODEL, "same model"), (OTHER_CASE, "same case")])
def test_a_replacement_from_another_case_or_model_is_refused(
    store: Path, capsys: pytest.CaptureFixture[str], other: V1Run, why: str
) -> None:
    code, err = _supersede(store, capsys, A.run_id, other.run_id)
    assert code != 0 and why in err and "Traceback" not in err
    assert A.run_id in _visible(store)


def test_a_cycle_is_refused_and_hides_nothing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _supersede(store, capsys, A.run_id, B.run_id)[0] == 0
    assert _supersede(store, capsys, B.run_id, C.run_id)[0] == 0
    code, err = _supersede(store, capsys, C.run_id, A.run_id)
    assert code != 0 and "cycle" in err
    assert C.run_id in _visible(store)
    with Store(store) as s:
        assert {e.run_id for e in s.runs(RunFilter(include_superseded=True))} >= {A.run_id, B.run_id, C.run_id}


def test_verify_names_a_cycle_and_a_cross_model_supersession_set_by_hand_in_a_v1_index(tmp_path: Path) -> None:
    """The original's index is edited by hand and never checked: what it hides is named, and honoured once adopted."""
    source = write_v1_store(
        tmp_path / "artifact-store",
        [A, B, C, OTHER_MODEL],
        superseded={A.run_id: B.run_id, B.run_id: A.run_id, OTHER_MODEL.run_id: C.run_id},
    )
    with Store(source) as store:
        problems, _ = verify_store(store)
        messages = {p.run_id: p.message for p in problems}
        assert "supersession cycle" in messages[A.run_id] and "supersession cycle" in messages[B.run_id]
        assert "same model" in messages[OTHER_MODEL.run_id]
        assert [e.run_id for e in store.runs()] == [C.run_id]


def test_a_hand_set_superseded_by_in_a_v1_index_is_honoured_after_adoption(tmp_path: Path) -> None:
    source = write_v1_store(tmp_path / "artifact-store", [A, B, C], superseded={A.run_id: B.run_id})
    assert main(["store", "supersede", "--store", str(source), B.run_id, C.run_id]) == 0  # the first write adopts
    assert (source / ".index" / "runs.sqlite").exists()
    with Store(source) as store:
        assert [e.run_id for e in store.runs()] == [C.run_id]
        assert verify_store(store)[0] == []


def test_undo_makes_the_run_count_again_and_the_log_keeps_both_events(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert _supersede(store, capsys, A.run_id, B.run_id)[0] == 0
    assert A.run_id not in _visible(store)
    assert main(["store", "supersede", "--store", str(store), "--undo", A.run_id]) == 0
    assert A.run_id in _visible(store)
    view = json.loads((store / "run_index.json").read_text())
    assert next(r for r in view["runs"] if r["run_id"] == A.run_id)["superseded_by"] is None
    log = [json.loads(line) for line in (store / ".index" / "supersessions.jsonl").read_text().splitlines()]
    assert [(e["action"], e["old"], e["new"]) for e in log] == [("supersede", A.run_id, B.run_id), ("undo", A.run_id, B.run_id)]
    code = main(["store", "supersede", "--store", str(store), "--undo", A.run_id])
    assert code != 0 and "nothing to undo" in capsys.readouterr().err
