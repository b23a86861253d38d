"""The shared store on Azure Blob Storage (against Azurite): append-only under races and crashes, an index that
concurrent writers extend without loss, a lease that expires, and sync to and from a local store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from azure.core.exceptions import ResourceNotFoundError

from ghost_eval.base.errors import RunExistsError, StoreError
from ghost_eval.cli import main
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.blob import CONNECTION_ENV, INDEX_BLOB, MIRROR_ENV, BlobStore
from tests.conftest import REPO
from tests.store.azurite import azurite
from tests.store.helpers import our_run, our_store

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("azurite")]
__all__ = ["azurite"]  # the fixture, imported for pytest
WORKER = Path(__file__).with_name("blob_worker.py")


@pytest.fixture
def shared(azurite: str) -> BlobStore:
    """A fresh container per test."""
    return BlobStore.open(f"azblob://t{uuid.uuid4().hex[:16]}", azurite)


def _worker(conn: str, store: BlobStore, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, str(WORKER), conn, store.container.container_name, *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(condition: object, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _blob_names(store: BlobStore, prefix: str = "") -> list[str]:
    try:
        return [b.name for b in store.container.list_blobs(name_starts_with=prefix)]
    except ResourceNotFoundError:  # the writer has not created the container yet
        return []


def test_a_run_round_trips_and_its_id_is_never_written_twice(shared: BlobStore) -> None:
    meta, files = our_run(0)
    entry = shared.append(meta, files)
    assert [e.run_id for e in shared.runs()] == [meta.run_id]
    stored, _ = shared.read_files(entry)
    assert {k: v.decode() for k, v in stored.items() if k != "metadata.json"} == files
    with pytest.raises(RunExistsError, match="already claimed"):
        shared.append(meta, {**files, "PROMPT.txt": "other\n"})
    assert shared.read_files(entry)[0]["PROMPT.txt"] == b"ssh refused\n"
    assert len(shared.runs()) == 1 and shared.problems == []


def test_two_writers_racing_for_one_run_id_one_wins_whole(azurite: str, shared: BlobStore, tmp_path: Path) -> None:
    go = tmp_path / "go"
    writers = [_worker(azurite, shared, "race", str(go), f"writer {i}\n") for i in range(2)]
    time.sleep(0)  # both are started before the go file exists
    go.touch()
    codes = sorted(w.wait(timeout=120) for w in writers)
    assert codes == [0, 3], [w.stderr.read() if w.stderr else "" for w in writers]
    (entry,) = shared.runs()
    files, _ = shared.read_files(entry)  # consistent with its manifest: one writer's files, not a mix
    assert files["PROMPT.txt"] in (b"writer 0\n", b"writer 1\n")


def test_concurrent_writers_lose_no_index_entry(azurite: str, shared: BlobStore) -> None:
    models = [f"model-{i}" for i in range(4)]
    writers = [_worker(azurite, shared, "append", m, "8") for m in models]
    assert [w.wait(timeout=300) for w in writers] == [0] * 4, [w.stderr.read() if w.stderr else "" for w in writers]
    entries = shared.runs()
    assert len(entries) == 32 and len({e.run_id for e in entries}) == 32 and shared.problems == []
    assert {e.model_id for e in entries} == set(models)


def test_a_writer_killed_mid_upload_leaves_nothing_visible(azurite: str, shared: BlobStore, tmp_path: Path) -> None:
    meta, _ = our_run(0)
    writer = _worker(azurite, shared, "slow", "400")
    _wait_for(lambda: len(_blob_names(shared, "runs/")) >= 3, "the writer's first files")
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert not any(n.endswith("manifest.json") for n in _blob_names(shared, "runs/")), "killed too late: it finished"
    assert shared.runs() == []
    assert shared.reindex() == []  # no manifest: an incomplete upload is never indexed
    with pytest.raises(RunExistsError):  # the id stays claimed: nothing of the dead writer is overwritten
        shared.append(meta, {"PROMPT.txt": "again\n"})
    report = shared.mirror_into(Store(tmp_path / "local", create=True))
    assert report.copied == [] and report.problems == []


def test_a_complete_run_whose_writer_died_before_indexing_is_recovered(azurite: str, shared: BlobStore, tmp_path: Path) -> None:
    """What a writer killed between its manifest and its index append leaves: claim, files, manifest; no entry."""
    source = BlobStore.open(f"azblob://s{uuid.uuid4().hex[:16]}", azurite)
    meta, files = our_run(0)
    source.append(meta, files)
    shared.container.create_container()
    for name in _blob_names(source):
        if name != INDEX_BLOB:
            shared.container.upload_blob(name, source.container.download_blob(name).readall())
    assert shared.runs() == []
    assert shared.reindex() == [meta.run_id]
    assert [e.run_id for e in shared.runs()] == [meta.run_id] and shared.reindex() == []
    local = Store(tmp_path / "local", create=True)
    assert shared.mirror_into(local).copied == [meta.run_id]
    report = next(v for k, v in files.items() if k.startswith("ghost_report"))
    assert local.read(local.get(meta.run_id)).report == report


def test_a_dead_reindexers_lease_expires_and_the_next_one_proceeds(azurite: str, shared: BlobStore) -> None:
    holder = _worker(azurite, shared, "lease")
    assert holder.stdout is not None and holder.stdout.readline().strip() == "leased"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with pytest.raises(StoreError, match="another reindex holds the lease"):
        shared.reindex(wait_s=1)
    assert shared.reindex(wait_s=60) == []  # after the 15 s lease ran out


def test_sync_both_ways_and_the_readers_read_the_shared_store(
    azurite: str, shared: BlobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(CONNECTION_ENV, azurite)
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "mirrors"))
    ids = our_store(tmp_path / "a", 3)
    url = f"azblob://{shared.container.container_name}"
    assert main(["store", "sync", str(tmp_path / "a"), url]) == 0
    assert main(["store", "sync", str(tmp_path / "a"), url]) == 0
    assert "0 copied, 3 already there" in capsys.readouterr().out
    assert sorted(e.run_id for e in shared.runs()) == sorted(ids)
    assert main(["store", "sync", url, str(tmp_path / "b")]) == 0
    with Store(tmp_path / "b") as b:
        assert sorted(e.run_id for e in b.runs(RunFilter())) == sorted(ids)
    assert main(["store", "verify", "--store", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    assert main(["store", "query", "--store", url]) == 0
    assert sorted(json.loads(line)["run_id"] for line in capsys.readouterr().out.splitlines()) == sorted(ids)
    assert main(["score", "--store", url, "--no-write", "--format", "jsonl", "--jobs", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    assert main(["store", "backfill", "--store", url]) == 2  # a shared store is written by sync only


def test_a_blob_altered_behind_the_stores_back_is_named_and_not_copied(
    azurite: str, shared: BlobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(CONNECTION_ENV, azurite)
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "mirrors"))
    kept = shared.append(*our_run(0))
    altered = shared.append(*our_run(1))
    shared.container.upload_blob(f"runs/{altered.path}/PROMPT.txt", b"tampered\n", overwrite=True)  # not via the store
    shared.container.get_blob_client(INDEX_BLOB).append_block(b"{not json\n")
    url = f"azblob://{shared.container.container_name}"
    assert main(["store", "verify", "--store", url]) == 0  # the mirror holds only what passed its manifest
    err = capsys.readouterr().err
    assert f"runs/{altered.path}/PROMPT.txt: sha256 differs from the manifest" in err
    assert f"{INDEX_BLOB} line 3" in err
    with Store(tmp_path / "mirrors" / f"{shared.container.account_name}.{shared.container.container_name}") as mirror:
        assert [e.run_id for e in mirror.runs()] == [kept.run_id]
