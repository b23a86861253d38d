"""`store import` of the original's stores and run trees: every run imported, or named with the reason it was not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.importer import import_runs, reindex
from ghost_eval.store.layout import INDEX_FILE, SQLITE_FILE
from ghost_eval.store.verify import verify_store
from tests.store.helpers import our_run
from tests.store.v1_original import V1Run, write_eval_runs_dir, write_v1_store

OLD, NEW = V1Run(stamp="20260501_091111"), V1Run(stamp="20260502_101500")
ABORTED = V1Run(model="gemini-2.5-flash", stamp="20260501_090931", aborted=True, provider="gemini")


def _import(tmp_path: Path, source: Path) -> tuple[Store, object]:
    store = Store(tmp_path / "ours", create=True)
    return store, import_runs(store, source)


def test_superseded_by_is_kept_so_the_old_run_never_counts_again(tmp_path: Path) -> None:
    source = write_v1_store(tmp_path / "artifact-store", [OLD, NEW], superseded={OLD.run_id: NEW.run_id})
    store, report = _import(tmp_path, source)
    assert report.problems == [] and sorted(report.imported) == sorted([OLD.run_id, NEW.run_id])
    assert report.superseded == [(OLD.run_id, NEW.run_id)]
    assert [e.run_id for e in store.runs()] == [NEW.run_id]
    view = {r["run_id"]: r["superseded_by"] for r in json.loads((store.root / "run_index.json").read_text())["runs"]}
    assert view == {OLD.run_id: NEW.run_id, NEW.run_id: None}


def test_an_aborted_run_without_a_report_is_imported_as_aborted(tmp_path: Path) -> None:
    source = write_v1_store(tmp_path / "artifact-store", [OLD, ABORTED])
    store, report = _import(tmp_path, source)
    assert report.problems == [] and ABORTED.run_id in report.imported
    record = store.read(store.get(ABORTED.run_id))
    assert record.aborted == "aborted: max_turns_exceeded"
    assert record.report is None and record.problems == []
    problems, _ = verify_store(store)
    assert problems == []


def test_the_runners_eval_runs_layout_with_audit_folders_is_accepted(tmp_path: Path) -> None:
    runs = tmp_path / "eval" / "runs"
    folder = write_eval_runs_dir(runs, "baseline", OLD, orphan_sid="ghost_20260501_090000")
    write_eval_runs_dir(runs, "baseline", ABORTED)
    store, report = _import(tmp_path, runs)
    assert report.problems == [] and sorted(report.imported) == sorted([OLD.run_id, ABORTED.run_id])
    assert any("ghost_20260501_090000" in n and "not imported" in n for n in report.notes)  # an earlier attempt
    stored = store.folder(store.get(OLD.run_id))
    assert (stored / f"ghost_report_{OLD.sid}.md").read_bytes() == (folder / "audit" / f"ghost_report_{OLD.sid}.md").read_bytes()
    assert (stored / "metadata.json").read_bytes() == (folder / "metadata.json").read_bytes()
    assert not list(stored.glob("*090000*"))
    assert store.get(OLD.run_id).artifact_coverage.value == "full"


def test_every_entry_not_imported_is_named_with_why(tmp_path: Path) -> None:
    lost = V1Run(stamp="20260503_120000")
    unknown = "use_case_m_claude-haiku-4-5-20251001_20260509_000000"
    source = write_v1_store(tmp_path / "artifact-store", [OLD, NEW, lost], superseded={NEW.run_id: unknown})
    for p in (source / lost.use_case / lost.model / lost.run_id).iterdir():
        p.unlink()
    (source / lost.use_case / lost.model / lost.run_id).rmdir()
    _, report = _import(tmp_path, source)
    messages = [str(p) for p in report.problems]
    assert sorted(report.imported) == sorted([OLD.run_id, NEW.run_id])
    assert any(lost.run_id in m and "no run folder" in m for m in messages)
    assert any(NEW.run_id in m and "supersession not recorded" in m for m in messages)
    assert len(messages) == 2


def test_the_cli_says_problems_0_only_when_nothing_was_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_v1_store(tmp_path / "artifact-store", [OLD, NEW, ABORTED], superseded={OLD.run_id: NEW.run_id})
    code = main(["store", "import", "--store", str(tmp_path / "ours"), str(source)])
    out = capsys.readouterr().out
    assert code == 0 and "imported 3" in out and "superseded 1" in out and "problems 0" in out
    with Store(tmp_path / "ours") as store:
        assert {e.run_id for e in store.runs(RunFilter(include_superseded=True))} == {OLD.run_id, NEW.run_id, ABORTED.run_id}


def test_a_runner_folder_without_metadata_gets_the_id_the_original_backfill_would_give(tmp_path: Path) -> None:
    runs = tmp_path / "eval" / "runs"
    folder = write_eval_runs_dir(runs, "phase1", OLD)
    (folder / "metadata.json").unlink()  # before backfill_metadata.py ran
    store, report = _import(tmp_path, runs)
    assert report.problems == [] and report.imported == [OLD.run_id]
    assert store.get(OLD.run_id).path == f"{OLD.use_case}/{OLD.model}/{OLD.run_id}"


def test_reindex_rebuilds_every_field_of_an_entry_from_the_run_folder(tmp_path: Path) -> None:
    """An index lost and rebuilt from the folders gives back the same entries, environment and suite version included
    (a lab run would otherwise be scored against the Azure facts and pooled with Azure runs)."""

    root = tmp_path / "store"
    with Store(root, create=True) as store:
        meta, files = our_run(0)
        store.append(meta.model_copy(update={"environment": "lab", "suite_version": "baseline@3"}), files)
        before = [e.model_dump() for e in store.runs()]
    (root / SQLITE_FILE).unlink()
    (root / INDEX_FILE).unlink()
    with Store(root) as store:
        assert [p.message for p in reindex(store).problems if "rebuilds the index" not in p.message] == []
    assert (root / SQLITE_FILE).is_file()
    with Store(root) as store:
        after = [e.model_dump() for e in store.runs()]
    assert after == before and after[0]["environment"] == "lab" and after[0]["suite_version"] == "baseline@3"
