"""After import: a `superseded_by` set by hand in `run_index.json` (the original's documented procedure) is adopted,
any other disagreement with the SQLite index is reported and kept; read-only and missing stores get clear answers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.store import Store
from ghost_eval.store.importer import import_runs
from ghost_eval.store.verify import verify_store
from tests.store.v1_original import V1Run, write_v1_store

A, B, C = V1Run(stamp="20260501_091111"), V1Run(stamp="20260502_091111"), V1Run(stamp="20260503_091111")


def _adopted(tmp_path: Path) -> Path:
    """Our store after `store import` of an original store: SQLite index plus the JSON view."""
    ours = tmp_path / "ours"
    with Store(ours, create=True) as store:
        import_runs(store, write_v1_store(tmp_path / "artifact-store", [A, B, C]))
    return ours


def _edit_view(root: Path, **superseded: str | None) -> None:
    """Set `superseded_by` by hand, as the original's schema tells its users to."""
    path = root / "run_index.json"
    doc = json.loads(path.read_text())
    for entry in doc["runs"]:
        if entry["run_id"] in superseded:
            entry["superseded_by"] = superseded[entry["run_id"]]
    path.write_text(json.dumps(doc, indent=2))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_hand_set_superseded_by_is_reported_by_verify_then_adopted_by_reindex(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _adopted(tmp_path)
    _edit_view(root, **{A.run_id: B.run_id})
    code, out, _ = _cli(capsys, "store", "verify", "--store", str(root))
    assert code == 1 and A.run_id in out and "set by hand" in out
    code, out, _ = _cli(capsys, "store", "reindex", "--store", str(root))
    assert code == 0 and f"{A.run_id} is superseded by {B.run_id}" in out
    with Store(root) as store:
        assert A.run_id not in {e.run_id for e in store.runs()}
        assert verify_store(store)[0] == []


def test_a_disagreement_reindex_cannot_settle_is_named_and_the_hand_edit_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _adopted(tmp_path)
    assert main(["store", "supersede", "--store", str(root), A.run_id, B.run_id]) == 0
    _edit_view(root, **{A.run_id: C.run_id})
    edited = (root / "run_index.json").read_bytes()
    code, _, err = _cli(capsys, "store", "reindex", "--store", str(root))
    assert code == 1 and A.run_id in err and "disagree" in err
    assert (root / "run_index.json").read_bytes() == edited  # not erased
    with Store(root) as store:
        problems, _ = verify_store(store)
    assert [p.run_id for p in problems] == [A.run_id]


def test_a_hand_edit_the_supersede_checks_refuse_is_not_adopted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _adopted(tmp_path)
    _edit_view(root, **{A.run_id: B.run_id, B.run_id: A.run_id})  # a cycle would hide both
    code, _, err = _cli(capsys, "store", "reindex", "--store", str(root))
    assert code == 1 and "cycle" in err
    with Store(root) as store:
        assert {A.run_id, B.run_id} <= {e.run_id for e in store.runs()}


def test_reindex_of_a_missing_path_refuses_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "typo"
    code, _, err = _cli(capsys, "store", "reindex", "--store", str(missing))
    assert code == 2 and "does not exist" in err and not missing.exists()


@pytest.mark.parametrize("command", [["store", "list"], ["store", "verify"], ["store", "reindex"], ["store", "import", "SRC"]])
def test_a_store_path_that_is_a_file_gets_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    a_file = tmp_path / "run_index.json"
    a_file.write_text("{}")
    argv = [str(tmp_path) if c == "SRC" else c for c in command]
    code, _, err = _cli(capsys, *argv[:2], "--store", str(a_file), *argv[2:])
    assert code == 2 and str(a_file) in err and "Traceback" not in err


_MAIN = "import sys; from ghost_eval.cli import main; sys.exit(main(sys.argv[1:]))"
_REPLAY = (
    "import sys; from providers.replay import call_api; "
    "rs = [call_api('', {'config': {'store': sys.argv[1]}}, {'vars': {'run_id': rid}}) for rid in sys.argv[2:]]; "
    "[print(r['output'].splitlines()[0] if 'output' in r else r['error']) for r in rs]"
)
"""Replays each run id given from the store given, printing the report's first line or the error."""
_READ_ONLY = r"""
set -e
mount --bind "$STORE" "$STORE"
mount -o remount,bind,ro "$STORE"
"""


def _on_read_only_mount(store: Path, *argv: str, code: str = _MAIN) -> subprocess.CompletedProcess[str]:
    """Run the CLI (or `code`) with `store` bind-mounted read-only in a private mount namespace (gone with the process)."""
    script = _READ_ONLY + f'exec "{sys.executable}" -c "{code}" "$@"'
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *argv],
        env={"STORE": str(store), "PATH": "/usr/sbin:/usr/bin:/bin", "PYTHONPATH": str(Path.cwd())},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def mounts(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "sh",
            "-c",
            f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && ! touch {probe}/x",
        ],
        capture_output=True,
    )
    if shutil.which("unshare") is None or done.returncode != 0:
        pytest.skip("read-only bind mounts need unshare and mount privileges")


def test_a_read_only_v1_store_is_listed_verified_scored_and_refuses_writes_clearly(tmp_path: Path, mounts: None) -> None:
    root = write_v1_store(tmp_path / "archive", [A, B, V1Run(aborted=True, stamp="20260504_091111")])
    listed = _on_read_only_mount(root, "store", "query", "--store", str(root))
    assert listed.returncode == 0 and A.run_id in listed.stdout, listed.stderr
    verified = _on_read_only_mount(root, "store", "verify", "--store", str(root))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    scored = _on_read_only_mount(root, "score", "--store", str(root), "--no-write", "--format", "jsonl")
    assert scored.returncode == 0 and len(scored.stdout.splitlines()) == 3, scored.stderr
    aborted = V1Run(aborted=True, stamp="20260504_091111").run_id
    replayed = _on_read_only_mount(root, str(root), A.run_id, aborted, code=_REPLAY)
    assert replayed.returncode == 0, replayed.stderr
    output, error = replayed.stdout.splitlines()
    assert output.startswith("# Ghost Agent RCA") and error.endswith("aborted: max_turns_exceeded")
    for argv in (["store", "reindex"], ["store", "backfill"], ["store", "supersede", A.run_id, B.run_id]):
        refused = _on_read_only_mount(root, *argv[:2], "--store", str(root), *argv[2:])
        assert refused.returncode == 2 and "is read-only" in refused.stderr and "Traceback" not in refused.stderr


def test_a_read_only_adopted_store_is_listed(tmp_path: Path, mounts: None) -> None:
    root = _adopted(tmp_path)
    listed = _on_read_only_mount(root, "store", "query", "--store", str(root))
    assert listed.returncode == 0 and A.run_id in listed.stdout, listed.stderr
