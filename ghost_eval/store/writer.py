"""Append-only writes: a run is staged, checksummed, then published by one rename; nothing is ever replaced."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

from ghost_eval.artifacts import Manifest
from ghost_eval.errors import RunExistsError, StoreError
from ghost_eval.records import dump_json
from ghost_eval.store.index import RunIndex
from ghost_eval.store.layout import INDEX_FILE, MANIFEST_FILE, STAGING_DIR, IndexEntry, check_component, resolve_inside

__all__ = ["publish_file", "publish_run", "write_view"]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _as_bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


def publish_file(path: Path, content: str | bytes) -> bool:
    """Create `path` atomically without ever replacing it.

    Returns False when an identical file is already there (so re-scoring is idempotent) and
    raises when a different one is: stored data is never overwritten.
    """
    data = _as_bytes(content)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    _write_synced(tmp, data)
    try:
        os.link(tmp, path)  # link(2) fails if the name exists: an atomic create-if-absent
    except FileExistsError:
        if path.is_symlink():
            raise StoreError(f"{path}: is a symbolic link; refused, not followed") from None
        if path.read_bytes() == data:
            return False
        raise StoreError(f"{path}: exists with different content; stored files are never overwritten") from None
    finally:
        tmp.unlink()
    _fsync_dir(path.parent)
    return True


def publish_run(root: Path, index: RunIndex, entry: IndexEntry, files: Mapping[str, str | bytes]) -> Path:
    """Stage every file with its checksum, claim the run id, then make the folder appear in one rename."""
    for name in files:
        check_component(name, "artifact file name")
        if name == MANIFEST_FILE:
            raise StoreError(f"{MANIFEST_FILE} is written by the store itself")
    final = resolve_inside(root, entry.path)
    staging = root / STAGING_DIR / f"{entry.run_id}.{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    try:
        digests: dict[str, str] = {}
        for name, content in sorted(files.items()):
            data = _as_bytes(content)
            _write_synced(staging / name, data)
            digests[name] = hashlib.sha256(data).hexdigest()
        _write_synced(staging / MANIFEST_FILE, dump_json(Manifest(files=digests)).encode())
        _fsync_dir(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    claimed = False
    try:
        index.claim(entry)
        claimed = True
        if final.exists():
            raise RunExistsError(f"{final}: a run folder is already there (not in the index: run `ghost-eval store reindex`)")
        final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staging, final)
        _fsync_dir(final.parent)
    except BaseException:
        if claimed:
            index.release(entry.run_id)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    index.complete(entry.run_id)
    return final


def write_view(root: Path, index: RunIndex) -> Path:
    """Rewrite the v1 JSON view atomically; serialised with writers so it is never older than a concurrent one."""
    target = root / INDEX_FILE
    tmp = root / f".{INDEX_FILE}.{uuid.uuid4().hex}.tmp"
    with index.transaction():
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(index.view(), fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    _fsync_dir(root)
    return target
