"""Nothing wrong goes unnamed: wrong field types, refused index entries, folders that leave the store, symlinks."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from ghost_eval.base.errors import StoreError, UnsafePathError
from ghost_eval.store import Store
from ghost_eval.store.importer import import_runs, reindex
from ghost_eval.store.layout import SQLITE_FILE
from ghost_eval.store.verify import verify_store
from tests.conftest import tree_digest, v1_run, write_index
from tests.store.helpers import folder_of, move_outside, our_store, set_rows


def _when(second: int) -> datetime:
    return datetime(2026, 3, 1, 10, 0, second)


def _named(problems: list[str], *parts: str) -> bool:
    return any(all(part in p for part in parts) for p in problems)


# -- 1. wrong field types in a run's files -------------------------------------------------------------


def test_wrong_field_types_in_run_files_name_file_and_field(tmp_path: Path) -> None:
    good = v1_run(tmp_path, when=_when(0))
    damaged = {
        "run_summary.json": ({"tool_calls": "six"}, "field 'tool_calls'"),
        "investigation_result.json": ({"root_cause": "x", "recommended_actions": "restart sshd"}, "field 'recommended_actions'"),
        "metadata.json": ({"run_id": 20260301, "model": "m"}, "field 'run_id'"),
    }
    entries = [good]
    for second, (name, (content, _)) in enumerate(damaged.items(), start=1):
        entry = v1_run(tmp_path, when=_when(second))
        (tmp_path / entry["path"] / name).write_text(json.dumps(content))
        entries.append(entry)
    write_index(tmp_path, entries)
    problems, _ = verify_store(Store(tmp_path))
    for (name, (_, field)), entry in zip(damaged.items(), entries[1:], strict=True):
        mine = [str(p) for p in problems if p.run_id == entry["run_id"]]
        assert len(mine) == 1 and mine[0].startswith(f"{tmp_path / entry['path'] / name}: {field}: "), mine
    assert [p for p in problems if p.run_id == good["run_id"]] == []


@pytest.mark.parametrize("name", ["metadata.json", "run_summary.json", "investigation_result.json", "manifest.json"])
def test_undecodable_run_file_is_named_and_the_rest_still_verifies(tmp_path: Path, name: str) -> None:
    good, bad = v1_run(tmp_path, when=_when(0)), v1_run(tmp_path, when=_when(1))
    (tmp_path / bad["path"] / name).write_bytes(b'{"run_id": "\xff\xfe"}')
    write_index(tmp_path, [good, bad])
    problems, _ = verify_store(Store(tmp_path))
    assert [str(p) for p in problems] == [f"{tmp_path / bad['path'] / name}: is not valid UTF-8 (byte 12)"]


# -- 2. refused index entries: named with their run id and file ---------------------------------------


def test_refused_v1_entries_are_named_with_run_id_and_file(tmp_path: Path) -> None:
    good = v1_run(tmp_path, when=_when(0))
    write_index(
        tmp_path,
        [
            good,
            dict(good, run_id="R_escape", path="../../etc"),
            dict(good, run_id="R_absolute", path="/etc"),
            dict(good, run_id="R_root", path="."),
            dict(good, run_id="R_nul", path="a\x00b"),
            dict(good, run_id="R_malformed", path=5),
            {"run_id": "R_no_path", "use_case_id": "use_case_m", "model_id": "x"},
            dict(good),
        ],
    )
    store = Store(tmp_path)
    assert [e.run_id for e in store.runs()] == [good["run_id"]]
    index = str(tmp_path / "run_index.json")
    expect = {
        "R_escape": (1, "outside the store"),
        "R_absolute": (2, "not relative to the store"),
        "R_root": (3, "is the store itself"),
        "R_nul": (4, "NUL byte"),
        "R_malformed": (5, "field 'path'"),
        "R_no_path": (6, "field 'path'"),
        good["run_id"]: (7, "duplicate entry"),
    }
    lines = [str(p) for p in verify_store(store)[0]]
    for rid, (i, reason) in expect.items():
        assert _named(lines, f"{index}: runs[{i}]: run {rid}: ", reason, "entry ignored"), lines
        assert any(p.run_id == rid for p in store.problems)


def test_refused_sqlite_rows_are_named_and_the_rest_still_listed(tmp_path: Path) -> None:
    ids = our_store(tmp_path, 5)
    set_rows(tmp_path, "path", {ids[1]: "../../etc", ids[2]: "/etc"})
    set_rows(tmp_path, "artifact_coverage", {ids[3]: "most of it"})
    set_rows(tmp_path, "extra", {ids[4]: "{not json"})
    store = Store(tmp_path)
    assert [e.run_id for e in store.runs()] == [ids[0]]
    lines = [str(p) for p in store.problems]
    db = str(tmp_path / SQLITE_FILE)
    for rid, reason in [
        (ids[1], "outside the store"),
        (ids[2], "not relative to the store"),
        (ids[3], "field 'artifact_coverage'"),
        (ids[4], "field 'extra'"),
    ]:
        assert _named(lines, f"{db}: run {rid}: ", reason, "entry ignored"), lines
    assert _named([str(p) for p in verify_store(Store(tmp_path))[0]], db, ids[3], "artifact_coverage")
    reindexed = reindex(Store(tmp_path))  # their folders are on disk: not indexed again, named instead
    assert reindexed.imported == [] and {p.run_id for p in reindexed.problems} == set(ids[1:])
    with pytest.raises(StoreError, match=f"run {ids[1]} is refused by the index: .*outside the store"):
        store.get(ids[1])


# -- 3. run folders that leave the store are never read --------------------------------------------------


def test_symlinked_run_folder_outside_the_store_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = our_store(root, 2)
    outside = tmp_path / "outside" / ids[1]
    move_outside(root, ids[1], outside)
    before = tree_digest(outside)
    store = Store(root)
    record = store.read(store.get(ids[1]))
    assert not record.readable and record.report is None and record.manifest is None
    assert [p.message for p in record.problems] == [
        f"run {ids[1]}: path '{store.get(ids[1]).path}' points outside the store once symlinks are followed; not read"
    ]
    problems, _ = verify_store(store)
    assert [p.run_id for p in problems] == [ids[1]]
    assert tree_digest(outside) == before


def test_symlinked_run_folder_outside_a_v1_store_is_refused_when_it_opens(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    good, away = v1_run(root, when=_when(0)), v1_run(root, when=_when(1))
    write_index(root, [good, away])
    move_outside(root, away["run_id"], tmp_path / "outside" / away["run_id"])
    store = Store(root)
    assert [e.run_id for e in store.runs()] == [good["run_id"]]
    assert _named([str(p) for p in store.problems], "run_index.json: runs[1]", f"run {away['run_id']}", "outside the store")


# -- 4. symlinks inside a run folder are refused, never followed ----------------------------------------


def test_symlinks_inside_a_run_folder_are_refused_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = our_store(root, 2)
    secret = tmp_path / "secret.md"
    secret.write_text("# Report\nSECRET\n")
    folder, other = folder_of(root, ids[1]), folder_of(root, ids[0])
    report = next(folder.glob("ghost_report_*.md"))
    report.unlink()
    os.symlink(secret, report)  # a listed file replaced by a link outside
    (folder / "PROMPT.txt").unlink()
    os.symlink(other / "PROMPT.txt", folder / "PROMPT.txt")  # a link to another run's file, same content
    store = Store(root)
    record = store.read(store.get(ids[1]))
    assert record.report is None and record.prompt is None
    refused = {p.path for p in record.problems if p.message == "is a symbolic link; refused, not followed"}
    assert refused == {str(report), str(folder / "PROMPT.txt")}
    problems, _ = verify_store(store)
    refused_by_verify = {p.path for p in problems if "symbolic link" in p.message}
    assert refused_by_verify == refused
    assert not any("checksum" in p.message for p in problems)  # nothing was hashed through a link
    assert [p for p in problems if p.run_id == ids[0]] == []


def test_metadata_symlink_is_not_read_even_for_identity(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = our_store(root, 2)
    folder, other = folder_of(root, ids[1]), folder_of(root, ids[0])
    (folder / "metadata.json").unlink()
    os.symlink(other / "metadata.json", folder / "metadata.json")
    store = Store(root)
    assert store.read_metadata(store.get(ids[1])) is None
    assert store.read(store.get(ids[1])).metadata is None


def test_manifest_names_that_leave_the_folder_are_not_read(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = our_store(root, 1)
    folder = folder_of(root, ids[0])
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["../../../../secret"] = "0" * 64
    (folder / "manifest.json").chmod(0o644)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "secret").write_text("SECRET")
    problems, _ = verify_store(Store(root))
    assert [(p.path, p.message) for p in problems] == [
        (str(folder / "manifest.json"), "field 'files': '../../../../secret' is not a file name in the run folder; not read")
    ]


def test_a_symlinked_verdicts_folder_is_never_written_through(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = our_store(root, 1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, folder_of(root, ids[0]) / "verdicts")
    store = Store(root)
    with pytest.raises(UnsafePathError, match="verdicts: is a symbolic link; refused, not followed"):
        store.add_verdict(store.get(ids[0]), "deterministic", store.get(ids[0]))
    assert list(elsewhere.iterdir()) == []


def test_import_leaves_out_a_run_folder_holding_a_symlink(tmp_path: Path) -> None:
    source = tmp_path / "original"
    good, linked = v1_run(source, when=_when(0), nested=False), v1_run(source, when=_when(1), nested=False)
    prompt = source / linked["run_id"] / "PROMPT.txt"
    prompt.unlink()
    os.symlink("/etc/passwd", prompt)
    report = import_runs(Store(tmp_path / "store", create=True), source)
    assert report.imported == [good["run_id"]]
    assert [str(p) for p in report.problems] == [
        f"{prompt}: is a symbolic link; refused, not followed (the run folder is left out)"
    ]
