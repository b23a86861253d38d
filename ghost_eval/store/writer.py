"""Append-only writes: a run is staged, checksummed, then published by one rename; nothing is ever replaced."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ghost_eval.base.errors import RecordError, RunExistsError, StoreError
from ghost_eval.base.records import dump_json, load_record
from ghost_eval.base.safe_read import INDEX_LIMIT, decode_json, read_head, read_limited
from ghost_eval.run.artifacts import Manifest
from ghost_eval.run.identity import RunMetadata
from ghost_eval.store.index import RunIndex, view_entry
from ghost_eval.store.layout import (
    INDEX_FILE,
    INDEX_SCHEMA_VERSION,
    MANIFEST_FILE,
    METADATA_FILE,
    STAGING_DIR,
    IndexEntry,
    check_component,
    resolve_inside,
)

__all__ = ["VIEW_MARK", "publish_file", "publish_run", "settle_claim", "update_view", "write_view"]

VIEW_MARK = "completed_through"
"""Last key of a view we wrote: the completion number of the newest run it holds (v1 readers ignore it)."""
_VIEW_HEAD = f'{{"schema_version": "{INDEX_SCHEMA_VERSION}", "runs": ['
_VIEW_TAIL = re.compile(rb'\n\], "' + VIEW_MARK.encode() + rb'": (\d+)\}\n\Z')
_TAIL_BYTES = 64


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


def publish_file(path: Path, content: str | bytes, *, keep_existing: bool = False) -> bool:
    """Create `path` atomically without ever replacing it.

    Returns False when an identical file is already there (so re-scoring is idempotent) and
    raises when a different one is: stored data is never overwritten. With `keep_existing`, any
    file already there is left as it is and False returned (a file others may have written first).
    """
    data = _as_bytes(content)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    _write_synced(tmp, data)
    try:
        os.link(tmp, path)  # link(2) fails if the name exists: an atomic create-if-absent
    except FileExistsError:
        if keep_existing:
            return False
        try:
            if read_head(path, len(data) + 1, follow=False) == (data, len(data)):
                return False
        except RecordError as exc:
            raise StoreError(f"{exc}; stored files are never overwritten") from None
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
            claimed = False
            if settle_claim(root, index, entry):
                raise RunExistsError(
                    f"run {entry.run_id} already exists in the store (its writer stopped before indexing it; indexed now)"
                )
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


def settle_claim(root: Path, index: RunIndex, claimed: IndexEntry) -> bool:
    """A claim whose writer died: index its run when the folder was published whole (True), else drop the claim."""
    index.release(claimed.run_id)
    final = resolve_inside(root, claimed.path)
    return final.is_dir() and _recover(index, final, claimed)


def _recover(index: RunIndex, final: Path, claimed: IndexEntry) -> bool:
    """Index a run a writer published but did not live to mark complete (its manifest proves the folder whole).

    Readers never saw it, yet its files are all there: indexing it is the one outcome that loses nothing.
    """
    try:
        meta = load_record(RunMetadata, final / METADATA_FILE)
        manifest = load_record(Manifest, final / MANIFEST_FILE)
    except RecordError:
        return False
    if meta.run_id != claimed.run_id or final.is_symlink() or not manifest.files:
        return False
    recovered = claimed.model_copy(
        update={
            "system_prompt_hash": meta.system_prompt_hash,
            "hash_kind": meta.hash_kind,
            "run_label": meta.run_label,
            "repeat_index": meta.repeat_index,
            "environment": meta.environment,
            "suite_version": meta.suite_version,
        }
    )
    index.claim(recovered)
    index.complete(recovered.run_id)  # a completion number, so the next view update lists it
    return True


def _lines(runs: Iterable[dict[str, Any]]) -> str:
    """Entries one per line, each line starting with a newline, so the next append adds `,` and more lines."""
    return ",".join("\n" + json.dumps(r, separators=(", ", ": ")) for r in runs)


def _replace_synced(root: Path, write: Any) -> Path:
    """Write a temp file beside `run_index.json` with `write(fh)`, fsync it, rename it over the view, fsync the folder."""
    target = root / INDEX_FILE
    tmp = root / f".{INDEX_FILE}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(root)
    return target


def _write_whole(root: Path, runs: list[dict[str, Any]], through: int, extra: dict[str, Any] | None = None) -> Path:
    head = _VIEW_HEAD
    if extra:  # top-level keys someone else added (the v1 document allows them): kept, before `runs`
        head = json.dumps({"schema_version": INDEX_SCHEMA_VERSION, **extra})[:-1] + ', "runs": ['
    body = f'{head}{_lines(runs)}\n], "{VIEW_MARK}": {through}}}\n'.encode()
    return _replace_synced(root, lambda fh: fh.write(body))


def write_view(root: Path, index: RunIndex) -> Path:
    """Rewrite the v1 JSON view from the index atomically; serialised with writers so it is never older than one."""
    with index.transaction():
        return _write_whole(root, index.view()["runs"], index.completed_through())


def _extend_in_place(root: Path, data: bytes, body_end: int, new: list[IndexEntry], done: int) -> Path:
    """Copy the view up to its closing bracket, add the new entries and a new mark: no entry is re-serialised."""
    sep = "" if data[body_end - 1 : body_end] == b"[" else ","
    addition = f'{sep}{_lines(view_entry(e) for e in new)}\n], "{VIEW_MARK}": {done}}}\n'.encode()
    return _replace_synced(root, lambda fh: (fh.write(memoryview(data)[:body_end]), fh.write(addition)))


def update_view(root: Path, index: RunIndex) -> Path:
    """Bring `run_index.json` up to date after appends, in time proportional to copying it, not to rebuilding it.

    A view we wrote ends with its completion mark: the runs completed since are added after the last
    entry. Any other view (the original tooling's, or one edited by hand) is read, the runs it lacks
    are added, and whatever it holds is kept as written. Serialised with other writers.
    """
    path = root / INDEX_FILE
    with index.transaction():
        done = index.completed_through()
        if not os.path.lexists(path):
            return _write_whole(root, index.view()["runs"], done)
        try:
            data = read_limited(path, INDEX_LIMIT, "the run index", follow=False)
        except RecordError as exc:
            raise StoreError(f"{exc}; it cannot be extended: `ghost-eval store reindex` rewrites it") from None
        tail = _VIEW_TAIL.search(data, max(0, len(data) - _TAIL_BYTES))
        if tail is not None and data.startswith(_VIEW_HEAD.encode()):
            through = int(tail.group(1))
            if through == done:
                return path
            return _extend_in_place(root, data, tail.start(), index.completed_since(through), done)
        try:
            doc = decode_json(data, path)
            runs = doc["runs"]
            known = {r["run_id"] for r in runs if isinstance(r, dict) and isinstance(r.get("run_id"), str)}
        except (RecordError, TypeError, KeyError) as exc:
            raise StoreError(f"{path}: cannot be extended ({exc}); `ghost-eval store reindex` rewrites it") from None
        runs.extend(r for r in index.view()["runs"] if r["run_id"] not in known)
        extra = {k: v for k, v in doc.items() if k not in ("schema_version", "runs", VIEW_MARK)}
        return _write_whole(root, runs, done, extra)
