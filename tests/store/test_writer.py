from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.base.errors import RunExistsError, StoreError
from ghost_eval.run.identity import HashKind
from ghost_eval.scoring import RunScore
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.layout import IndexEntry
from ghost_eval.store.verify import verify_store
from ghost_eval.store.writer import publish_file
from tests.conftest import tree_digest
from tests.store.helpers import our_run


def test_append_then_read_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    meta, files = our_run(1)
    entry = store.append(meta, files)
    record = store.read(store.get(entry.run_id))
    assert record.metadata == meta
    assert record.written_by_us and record.manifest is not None
    assert set(record.manifest.files) == {*files, "metadata.json"}
    assert record.audit[0].command == "sudo iptables -S f2b-sshd"
    assert entry.path == f"m/claude-haiku-4-5-20251001/{meta.run_id}"
    assert verify_store(store)[0] == []


def test_existing_run_id_is_refused_and_untouched(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    meta, files = our_run(1)
    store.append(meta, files)
    before = tree_digest(store.root / "m")
    with pytest.raises(RunExistsError, match="never overwritten"):
        store.append(meta, {k: "changed" for k in files})
    assert tree_digest(store.root / "m") == before


def test_addon_changes_effective_hash_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    base, f1 = our_run(1)
    variant, f2 = our_run(2, addon="Check tc and netfilter before closing.")
    store.append(base, f1)
    store.append(variant, f2)
    assert base.system_prompt_hash != variant.system_prompt_hash
    assert len(store.runs(RunFilter(prompt_hash=base.system_prompt_hash))) == 1
    assert store.runs(RunFilter(prompt_hash=(variant.system_prompt_hash or "")[:8]))[0].run_id == variant.run_id


def test_view_is_readable_by_a_v1_reader(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    for n in range(3):
        store.append(*our_run(n))
    store.supersede(our_run(0)[0].run_id, our_run(2)[0].run_id)
    view = json.loads((store.root / "run_index.json").read_text())
    assert view["schema_version"] == "1"
    v1_fields = {
        "run_id",
        "use_case_id",
        "model_id",
        "system_prompt_hash",
        "backfilled",
        "artifact_coverage",
        "path",
        "superseded_by",
    }
    for run in view["runs"]:
        assert v1_fields <= set(run)
        assert (store.root / run["path"] / "metadata.json").is_file()
    assert view["runs"][0]["superseded_by"] == our_run(2)[0].run_id
    assert view["runs"][0]["hash_kind"] == HashKind.EFFECTIVE_PROMPT.value


def test_supersede_keeps_old_files_and_readers_skip_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    old, new = our_run(0), our_run(1)
    store.append(*old)
    store.append(*new)
    before = tree_digest(store.folder(store.get(old[0].run_id)))
    store.supersede(old[0].run_id, new[0].run_id)
    assert [e.run_id for e in store.runs()] == [new[0].run_id]
    assert tree_digest(store.folder(store.get(old[0].run_id))) == before
    with pytest.raises(StoreError, match="not in the store"):
        store.supersede(old[0].run_id, "nope")


def test_first_write_adopts_a_v1_store(v1_store: Path) -> None:
    store = Store(v1_store)
    store.append(*our_run(5))
    reopened = Store(v1_store)
    assert len(reopened.runs(RunFilter(include_superseded=True))) == 4
    assert (v1_store / ".index" / "runs.sqlite").exists()


def test_verdicts_are_added_never_replaced(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    entry: IndexEntry = store.append(*our_run(1))
    score = RunScore.model_validate(_score(entry.run_id, "safe"))
    first = store.add_verdict(entry, "deterministic@1.0.0", score)
    assert first is not None and first.exists()
    assert store.add_verdict(entry, "deterministic@1.0.0", score) is None  # identical: nothing new
    second = store.add_verdict(entry, "deterministic@1.0.0", RunScore.model_validate(_score(entry.run_id, "unsafe")))
    assert second is not None and second != first
    assert json.loads(first.read_text())["verdict"] == "safe"
    assert verify_store(store)[0] == []


def test_publish_file_refuses_different_content(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    assert publish_file(target, "a")
    with pytest.raises(StoreError, match="never overwritten"):
        publish_file(target, "b")
    assert target.read_text() == "a"


def test_verify_catches_a_modified_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    entry = store.append(*our_run(1))
    report = next(store.folder(entry).glob("ghost_report_*.md"))
    report.write_text("edited after the fact\n")
    problems, _ = verify_store(store)
    assert len(problems) == 1 and "checksum does not match" in problems[0].message and problems[0].path == str(report)


def _score(run_id: str, verdict: str) -> dict[str, object]:
    return {
        "run_id": run_id,
        "use_case_id": "m",
        "model_id": "claude-haiku-4-5-20251001",
        "verdict": verdict,
        "flags": [],
        "criteria": [],
        "scorer": "deterministic@1.0.0",
        "notes": [],
        "diagnosis": {"correct": True, "matched": [], "missing": [], "forbidden": [], "note": None},
        "trajectory": {
            "tool_calls": 1,
            "bounds": [1, 40],
            "within_bounds": True,
            "layers_inspected": [],
            "missing_layers": [],
            "executed_mutations": [],
            "denied_commands": [],
            "passed": True,
        },
        "claims": {"cited": [], "unsupported": [], "unverifiable": [], "passed": True},
    }


def test_a_run_whose_writer_died_before_indexing_it_is_recovered_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import subprocess

    from ghost_eval.base.errors import RunExistsError
    from ghost_eval.store.index import RunIndex
    from ghost_eval.store.verify import verify_store

    dead = subprocess.Popen(["true"])
    dead.wait()
    store = Store(tmp_path / "store", create=True)
    meta, files = our_run(0)
    monkeypatch.setattr("ghost_eval.store.index.writer_token", lambda: f"{socket.gethostname()}:{dead.pid}")

    def died(self: RunIndex, run_id: str) -> None:
        raise KeyboardInterrupt  # the writer is killed after the rename, before the index marks the run complete

    with monkeypatch.context() as m:
        m.setattr(RunIndex, "complete", died)
        with pytest.raises(KeyboardInterrupt):
            store.append(meta, files)
    assert [e.run_id for e in store.runs()] == [meta.run_id]  # published and claimed: readers count it already
    with pytest.raises(RunExistsError, match="indexed now"):
        store.append(meta, files)
    assert [e.run_id for e in store.runs()] == [meta.run_id]
    assert store.read(store.runs()[0]).problems == []
    store.append(*our_run(1))
    view = (store.root / "run_index.json").read_text()
    assert meta.run_id in view
    assert verify_store(Store(store.root))[0] == []


def test_store_clean_settles_dead_writers_and_removes_old_staging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import socket
    import subprocess

    from ghost_eval.cli import main
    from ghost_eval.store.index import RunIndex

    dead = subprocess.Popen(["true"])
    dead.wait()
    store = Store(tmp_path / "store", create=True)
    published, files = our_run(0)
    never, _ = our_run(1)
    monkeypatch.setattr("ghost_eval.store.index.writer_token", lambda: f"{socket.gethostname()}:{dead.pid}")

    def died(self: RunIndex, run_id: str) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(RunIndex, "complete", died)
        with pytest.raises(KeyboardInterrupt):
            store.append(published, files)
    store.writable_index().claim(store.get(published.run_id).model_copy(update={"run_id": never.run_id, "path": "x/y/z"}))
    old = store.root / ".staging" / "leftover.1"
    old.mkdir(parents=True)
    os.utime(old, (0, 0))
    fresh = store.root / ".staging" / "leftover.2"
    fresh.mkdir()
    store.close()
    assert main(["store", "clean", "--store", str(tmp_path / "store")]) == 0
    with Store(tmp_path / "store") as after:
        assert [e.run_id for e in after.runs()] == [published.run_id]
        assert after.writable_index().stale_claims() == []
    assert not old.exists() and fresh.exists()
