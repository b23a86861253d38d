from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from ghost_eval.base.errors import StoreError, UnsafePathError
from ghost_eval.run.identity import HashKind
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.layout import resolve_inside
from ghost_eval.store.verify import verify_store
from tests.conftest import tree_digest, v1_run, write_index


def test_v1_store_reads_as_written(v1_store: Path) -> None:
    store = Store(v1_store)
    runs = store.runs()
    assert [r.model_id for r in runs] == ["gemini-2.5-flash", "claude-haiku-4-5-20251001"]
    assert all(r.run_id != "use_case_m_claude-haiku-4-5-20251001_20260312_141503" for r in runs)
    record = store.read(runs[1])
    assert record.metadata is not None
    assert record.metadata.model_id == "claude-haiku-4-5-20251001"  # v1 `model`
    assert record.metadata.agent_commit == "7f555a1"  # v1 `ghost_agent_commit`
    assert record.metadata.hash_kind is HashKind.AGENT_SOURCE
    assert record.report and "f2b-sshd" in record.report
    assert record.audit[0].command == "sudo iptables -L f2b-sshd -n -v"
    assert record.problems == []
    assert not record.written_by_us


def test_a_read_for_scoring_keeps_the_prompt_which_says_a_runs_phase(v1_store: Path) -> None:
    store = Store(v1_store)
    record = store.read(store.runs()[1], scoring_only=True)
    assert record.metadata is None and record.prompt and "refused" in record.prompt


def test_superseded_runs_only_when_asked(v1_store: Path) -> None:
    store = Store(v1_store)
    assert len(store.runs(RunFilter(include_superseded=True))) == 3
    assert len(store.runs(RunFilter(use_case="m", model="claude-haiku-4-5-20251001"))) == 1
    assert len(store.runs(RunFilter(use_case="use_case_m"))) == 2


def test_run_without_metadata_is_reported_and_still_listed(tmp_path: Path) -> None:
    e = v1_run(tmp_path, metadata=False)
    write_index(tmp_path, [e])
    store = Store(tmp_path)
    record = store.read(store.runs()[0])
    assert record.metadata is None
    assert any("no metadata.json" in p.message and p.path.endswith("metadata.json") for p in record.problems)
    assert record.report is not None


def test_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="store not found"):
        Store(tmp_path / "nope")


@pytest.mark.parametrize("bad", ["../outside", "/etc", "a/../../x"])
def test_paths_never_escape(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UnsafePathError):
        resolve_inside(tmp_path, bad)


def test_symlink_escape_refused(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    os.symlink(tmp_path, tmp_path / "store" / "link")
    with pytest.raises(UnsafePathError):
        resolve_inside(tmp_path / "store", "link/other")


def _damaged_store(root: Path) -> dict[str, str]:
    """One store with every kind of bad input the issue lists; returns run ids by damage."""
    good = v1_run(root, when=datetime(2026, 3, 1, 10, 0, 0))
    truncated = v1_run(root, when=datetime(2026, 3, 1, 10, 0, 1))
    (root / truncated["path"] / "metadata.json").write_text('{"run_id": "use_case_m_claude')
    no_report = v1_run(root, when=datetime(2026, 3, 1, 10, 0, 2), report=None)
    wrong_type = v1_run(root, when=datetime(2026, 3, 1, 10, 0, 3))
    (root / wrong_type["path"] / "metadata.json").write_text(json.dumps({"run_id": "x", "temperature": "hot"}))
    garbage = v1_run(root, when=datetime(2026, 3, 1, 10, 0, 4))
    audit = next((root / garbage["path"]).glob("shell_audit_*.jsonl"))
    audit.write_text(audit.read_text() + "this is not json\n")
    empty = v1_run(root, when=datetime(2026, 3, 1, 10, 0, 5), report="   \n")
    escape = dict(good, run_id="use_case_m_evil_20260301_100006", path="../../etc")
    nothing = dict(good, run_id="use_case_m_ghost_20260301_100007", path="use_case_m/ghost/missing")
    duplicate = dict(good)
    v1_run(root, when=datetime(2026, 3, 1, 10, 0, 8))  # on disk, not indexed
    write_index(root, [good, truncated, no_report, wrong_type, garbage, empty, escape, nothing, duplicate])
    return {
        "good": good["run_id"],
        "truncated": truncated["run_id"],
        "no_report": no_report["run_id"],
        "wrong_type": wrong_type["run_id"],
        "garbage": garbage["run_id"],
        "empty": empty["run_id"],
    }


def test_bad_input_named_valid_runs_kept_nothing_changed(tmp_path: Path) -> None:
    ids = _damaged_store(tmp_path)
    before = tree_digest(tmp_path)
    store = Store(tmp_path)
    listed = {e.run_id for e in store.runs()}
    assert set(ids.values()) <= listed
    assert "use_case_m_evil_20260301_100006" not in listed
    problems, _ = verify_store(store)
    text = "\n".join(str(p) for p in problems)
    expect = [
        ("metadata.json", "not valid JSON"),
        ("ghost_report_<sid>.md", "report is missing"),
        ("metadata.json", "field 'temperature'"),
        ("shell_audit_", "line 2: not valid JSON"),
        ("ghost_report_", "report is empty"),
        ("run_index.json: runs[6]", "outside the store"),
        ("missing", "does not exist"),
        ("run_index.json: runs[8]", "duplicate entry"),
        ("100008", "on disk but not in the index"),
    ]
    for path_part, message in expect:
        assert any(path_part in p.path and message in p.message for p in problems) or any(
            path_part in line and message in line for line in text.splitlines()
        ), f"no problem naming {path_part!r} with {message!r} in:\n{text}"
    # the good run still reads cleanly, and the garbage line did not hide the valid audit line
    assert store.read(store.get(ids["good"])).problems == []
    assert store.read(store.get(ids["garbage"])).audit[0].command.startswith("sudo iptables")
    assert tree_digest(tmp_path) == before


def test_truncated_index_is_named(tmp_path: Path) -> None:
    (tmp_path / "run_index.json").write_text('{"schema_version": "1", "runs": [')
    store = Store(tmp_path)
    assert store.runs() == []
    assert "run_index.json" in store.problems[0].path and "not valid JSON" in store.problems[0].message
