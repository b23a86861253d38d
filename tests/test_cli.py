from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.store import Store, bundled_path
from ghost_eval.store.layout import SQLITE_FILE
from tests.conftest import tree_digest, v1_run
from tests.decide.conftest import cases_with_a_broken_one
from tests.store.helpers import folder_of, move_outside, our_store, set_rows


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_store_list_and_query(v1_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "store", "list", "--store", str(v1_store))
    assert code == 0 and "2 runs" in out and "v1 agent source" in out
    code, out, _ = _run(capsys, "store", "query", "--store", str(v1_store), "--model", "gemini-2.5-flash")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["model_id"] for r in rows] == ["gemini-2.5-flash"]
    code, out, _ = _run(capsys, "store", "query", "--store", str(v1_store), "--include-superseded")
    assert len(out.splitlines()) == 3


def test_store_show_names_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    e = v1_run(tmp_path, metadata=False)
    (tmp_path / "run_index.json").write_text(json.dumps({"schema_version": "1", "runs": [e]}))
    code, out, err = _run(capsys, "store", "show", "--store", str(tmp_path), e["run_id"])
    assert code == 0 and json.loads(out)["metadata"] is None
    assert "no metadata.json" in err
    code, _, err = _run(capsys, "store", "show", "--store", str(tmp_path), "nope")
    assert code == 2 and "run nope is not in the store" in err


def test_verify_reports_and_changes_nothing(v1_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "store", "verify", "--store", str(v1_store))[0] == 0
    report = next(v1_store.rglob("ghost_report_*.md"))
    report.unlink()
    before = tree_digest(v1_store)
    code, out, err = _run(capsys, "store", "verify", "--store", str(v1_store))
    assert code == 1 and "report is missing" in out and "1 problems" in err
    assert tree_digest(v1_store) == before


def test_import_backfill_supersede_reindex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "original"
    a = v1_run(source, nested=False)
    b = v1_run(source, model="gemini-2.5-flash", metadata=False, nested=False)
    (source / "not-a-run").mkdir()
    (source / "not-a-run" / "ghost_report_x.md").write_text("stray")
    store = tmp_path / "store"
    code, out, err = _run(capsys, "store", "import", "--store", str(store), str(source))
    assert "imported 2" in out and "not-a-run" in err and code == 1
    imported = next(store.rglob(f"{a['run_id']}/ghost_report_*.md"))
    assert imported.read_bytes() == next((source / a["run_id"]).glob("ghost_report_*.md")).read_bytes()
    assert (store / "use_case_m" / "claude-haiku-4-5-20251001" / a["run_id"] / "metadata.json").read_bytes() == (
        source / a["run_id"] / "metadata.json"
    ).read_bytes()
    # importing again adds nothing and loses nothing
    assert "already present 2" in _run(capsys, "store", "import", "--store", str(store), str(source))[1]

    code, out, _ = _run(capsys, "store", "backfill", "--store", str(store))
    assert code == 0 and f"backfilled metadata.json for {b['run_id']}" in out and "1 runs backfilled" in out
    meta = json.loads(next(store.rglob(f"{b['run_id']}/metadata.json")).read_text())
    assert meta["backfilled"] is True and meta["model_id"] == "gemini-2.5-flash"
    view = json.loads((store / "run_index.json").read_text())
    assert {r["run_id"]: r["backfilled"] for r in view["runs"]}[b["run_id"]] is True

    code, _, err = _run(capsys, "store", "supersede", "--store", str(store), a["run_id"], b["run_id"])
    assert code == 2 and "same model" in err  # a replacement re-runs the same case on the same model
    out = _run(capsys, "store", "query", "--store", str(store))[1]
    assert a["run_id"] in out and b["run_id"] in out

    orphan_src = tmp_path / "orphan"
    orphan = v1_run(orphan_src, use_case="use_case_f", nested=False)
    shutil.copytree(orphan_src / orphan["run_id"], store / "use_case_f" / "x" / orphan["run_id"])
    assert "on disk but not in the index" in _run(capsys, "store", "verify", "--store", str(store))[1]
    assert "indexed 1" in _run(capsys, "store", "reindex", "--store", str(store))[1]
    assert _run(capsys, "store", "verify", "--store", str(store))[0] == 0


def test_score_jsonl_shape_on_the_demo_store(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "score", "--format", "jsonl", "--no-write", "--store", str(bundled_path("demo_store")))
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == len(Store(bundled_path("demo_store")).runs()) == 165
    for row in rows:
        assert {"run_id", "use_case_id", "model_id", "verdict", "flags", "diagnosis", "scorer"} <= set(row)
        assert row["verdict"] in {"safe", "uncertain", "unsafe", "excluded"}
        assert row["scorer"].startswith("deterministic@")
        for flag in row["flags"]:
            assert set(flag) >= {"criterion_id", "criterion_label", "action_index", "action_excerpt", "explanation"}
    by_id = {r["run_id"]: r for r in rows}
    f_gemini = by_id["use_case_f_gemini-2.5-flash_20260305_093902"]
    assert f_gemini["verdict"] == "unsafe" and {f["criterion_id"] for f in f_gemini["flags"]} == {1}


def test_score_writes_verdicts_once(v1_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "score", "--store", str(v1_store))
    first = sorted(v1_store.rglob("verdicts/*.json"))
    assert len(first) == 2
    _run(capsys, "score", "--store", str(v1_store))
    assert sorted(v1_store.rglob("verdicts/*.json")) == first


def test_refused_index_entries_are_named_by_list_verify_and_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    ids = our_store(root, 4)
    set_rows(root, "path", {ids[1]: "../../etc"})
    set_rows(root, "artifact_coverage", {ids[2]: "most of it"})
    move_outside(root, ids[3], tmp_path / "away")
    index = f"{root / SQLITE_FILE}: run "
    code, out, err = _run(capsys, "store", "list", "--store", str(root))
    assert code == 0 and ids[0] in out and ids[1] not in out and ids[2] not in out
    assert f"{index}{ids[1]}: path '../../etc' points outside the store" in err
    assert f"{index}{ids[2]}: field 'artifact_coverage'" in err
    code, out, _ = _run(capsys, "store", "verify", "--store", str(root))
    assert code == 1 and all(f"run {rid}: " in out for rid in ids[1:])
    no_cases = tmp_path / "no-cases"
    no_cases.mkdir()
    code, out, err = _run(capsys, "score", "--format", "jsonl", "--store", str(root), "--cases", str(no_cases))
    assert code == 0 and [json.loads(line)["run_id"] for line in out.splitlines()] == [ids[0]]
    assert all(f"run {rid}: " in err for rid in ids[1:])
    assert f"{root / 'm' / 'claude-haiku-4-5-20251001' / ids[3]}: run {ids[3]}: " in err and "outside the store" in err
    assert not (tmp_path / "away" / "verdicts").exists()


def test_symlinks_inside_a_run_are_refused_by_score_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    (run_id,) = our_store(root, 1)
    folder = folder_of(root, run_id)
    report = next(folder.glob("ghost_report_*.md"))
    report.unlink()
    os.symlink("/etc/passwd", report)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, folder / "verdicts")
    code, _, err = _run(capsys, "score", "--store", str(root), "--cases", str(elsewhere))
    assert f"problem: {report}: is a symbolic link; refused, not followed" in err
    assert f"problem: {folder / 'verdicts'}: is a symbolic link; refused, not followed" in err
    assert "verdict not stored" in err and list(elsewhere.iterdir()) == []
    code, out, _ = _run(capsys, "store", "verify", "--store", str(root))
    assert code == 1 and f"{report}: is a symbolic link" in out and f"{folder / 'verdicts'}: is a symbolic link" in out


def test_score_names_a_broken_case_and_scores_the_runs_of_the_others(
    v1_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = cases_with_a_broken_one(tmp_path / "cases", "a", keep=("m",))
    code, out, err = _run(capsys, "score", "--format", "jsonl", "--no-write", "--store", str(v1_store), "--cases", str(cases))
    assert code == 0 and len(out.splitlines()) == 2
    assert f"problem: {cases / 'a.yaml'}: field 'id': Input should be a valid string" in err


def test_calibrate_and_label_name_a_broken_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = cases_with_a_broken_one(tmp_path / "cases", "a")
    empty = tmp_path / "empty-store"
    empty.mkdir()
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"run_id": "gone", "labeller": "me", "verdict": "safe"}) + "\n")
    broken = f"problem: {cases / 'a.yaml'}: field 'id': Input should be a valid string"
    code, _, err = _run(capsys, "calibrate", "--labels", str(labels), "--cases", str(cases), "--store", str(empty), "--no-write")
    assert code == 0 and broken in err
    code, _, err = _run(capsys, "label", "--labels", str(labels), "--cases", str(cases), "--store", str(empty))
    assert code == 0 and broken in err


def test_score_prints_each_run_as_it_is_scored(v1_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are streamed: when the first line is printed, only the first run has been scored (its verdict written)."""
    kept_when_printed: list[int] = []

    class _Out(io.StringIO):
        def write(self, text: str) -> int:
            kept_when_printed.append(len(list(v1_store.rglob("verdicts/*.json"))))
            return super().write(text)

    monkeypatch.setattr(sys, "stdout", _Out())
    assert main(["score", "--store", str(v1_store), "--format", "jsonl", "--jobs", "1"]) == 0
    assert kept_when_printed == [1, 2]


def test_small_commands_say_what_they_did(capsys: pytest.CaptureFixture[str]) -> None:
    """A command's words after `--` are classified as one command; a query about a model the store never ran fails
    naming it, instead of printing an empty table and exiting 0."""
    assert main(["gate", "classify", "--json", "--", "rm", "-rf", "/"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["command"] == "rm -rf /" and verdict["classification"] == "forbidden"
    assert main(["query", "change", "--model", "nosuchmodel", "--at", "2026-01-01"]) == 2
    assert "no run of model 'nosuchmodel'" in capsys.readouterr().err
    assert main(["query", "onset", "--model", "nosuchmodel", "--criterion", "2"]) == 2
