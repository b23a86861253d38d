"""`run_index.json` is current after every append and exists from a store's creation, read as the original reads it."""

from __future__ import annotations

import json
from pathlib import Path

from ghost_eval.store import Store
from ghost_eval.store.writer import publish_run
from tests.store.helpers import our_run


def _v1_ids(root: Path) -> list[str]:
    """What the original scripts do: load the whole file and walk `runs`."""
    index = json.loads((root / "run_index.json").read_text())
    assert index["schema_version"] == "1"
    return [r["run_id"] for r in index["runs"]]


def test_a_new_store_has_an_empty_view(tmp_path: Path) -> None:
    Store(tmp_path / "s", create=True).close()
    assert _v1_ids(tmp_path / "s") == []


def test_every_append_is_in_the_view_at_once(tmp_path: Path) -> None:
    with Store(tmp_path / "s", create=True) as store:
        ids = []
        for n in range(3):
            ids.append(store.append(*our_run(n)).run_id)
            assert _v1_ids(store.root) == ids
    assert not list((tmp_path / "s").glob(".run_index.json.*"))  # no temp file left behind


def test_two_writers_and_a_writer_that_died_before_its_view_update(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with Store(root, create=True) as a, Store(root) as b:
        first = a.append(*our_run(0)).run_id
        second = b.append(*our_run(1)).run_id
        meta, files = our_run(2)
        dead = a.append(meta, files)  # published and in the view; now one that never updated the view:
        meta3, files3 = our_run(3)
        lost = dead.model_copy(update={"run_id": meta3.run_id, "path": dead.path.replace(meta.run_id, meta3.run_id)})
        publish_run(root, a._writable(), lost, files3)
        assert meta3.run_id not in _v1_ids(root)
        last = b.append(*our_run(4)).run_id
    assert _v1_ids(root) == [first, second, dead.run_id, meta3.run_id, last]


def test_a_view_edited_by_hand_is_kept_and_extended(tmp_path: Path) -> None:
    """The original's procedure: edit `superseded_by` in the file, saved as its scripts save it (indent 2)."""
    root = tmp_path / "s"
    with Store(root, create=True) as store:
        old = store.append(*our_run(0)).run_id
        new = store.append(*our_run(1)).run_id
        index = json.loads((root / "run_index.json").read_text())
        index["runs"][0]["superseded_by"] = new
        index["note"] = "kept"
        (root / "run_index.json").write_text(json.dumps(index, indent=2))
        third = store.append(*our_run(2)).run_id
        fourth = store.append(*our_run(3)).run_id
    index = json.loads((root / "run_index.json").read_text())
    assert [r["run_id"] for r in index["runs"]] == [old, new, third, fourth]
    assert index["runs"][0]["superseded_by"] == new and index["note"] == "kept"


def test_concurrent_writers_and_a_killed_one_leave_every_run_in_the_view_once(tmp_path: Path) -> None:
    import signal

    from tests.store.test_crash_concurrency import _worker

    root = tmp_path / "s"
    Store(root, create=True).close()
    procs = [_worker(root, f"model{i}", 40) for i in range(4)]
    killed = _worker(root, "killed-model", 100000)
    assert killed.stdout is not None
    for _ in range(5):
        assert killed.stdout.readline().startswith(b"appended")
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    for p in procs:
        _out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    with Store(root) as store:
        store.append(*our_run(0, model="after-the-crash"))
        listed = [e.run_id for e in store.runs()]
    in_view = _v1_ids(root)
    assert len(in_view) == len(set(in_view)) and set(in_view) <= set(listed)
    # the one run the killed writer may have renamed in without marking it complete is the reader's and verify's
    assert len(set(listed) - set(in_view)) <= 1
    assert len(listed) >= 4 * 40 + 5 + 1
