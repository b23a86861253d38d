"""A shared store on Azure Blob Storage, with the local store's append-only contract.

Layout in one container:

- `claims/<run_id>`: an empty blob created with `If-None-Match: *`; the one writer whose create succeeds owns
  the run id, every other gets `RunExistsError` (two CI runners racing for one id cannot both write it).
- `runs/<use_case>/<model>/<run_id>/<file>`: the run's files, each created with `If-None-Match: *`.
- `runs/…/manifest.json`: the sha256 of every file, written last: a run is complete when its manifest exists.
- `index/runs.jsonl`: an append blob, one index entry (a JSON line) per block. `Append Block` is atomic, so
  concurrent writers extend it without a lock and without losing entries (bench/shared_store_bench.py measures
  this against a lease-guarded manifest).

A writer killed mid-upload leaves a claim and some files but no manifest and no index entry: invisible to readers,
and `reindex` tells the two apart (a complete run whose writer died before its index append is indexed then).
Nothing is ever overwritten or deleted. Readers read through a local mirror (`mirror_into`) so every local
reader — list, query, show, verify, score, replay — works on the shared store unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.storage.blob import BlobClient, BlobLeaseClient, BlobServiceClient, ContainerClient
from pydantic import ValidationError
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

from ghost_eval.base.errors import RecordError, RunExistsError, StoreError
from ghost_eval.base.records import dump_json, parse_record
from ghost_eval.base.settings import DEFAULTS, env_name
from ghost_eval.cases.case import case_key
from ghost_eval.run.artifacts import Manifest
from ghost_eval.run.identity import RunMetadata
from ghost_eval.store.artifact_store import Store, index_entry
from ghost_eval.store.layout import (
    BLOB_SCHEME,
    MANIFEST_FILE,
    METADATA_FILE,
    Coverage,
    IndexEntry,
    Problem,
    check_component,
    check_relative,
)
from ghost_eval.store.query import RunFilter

__all__ = [
    "ACCOUNT_URL_ENV",
    "CONNECTION_ENV",
    "INDEX_BLOB",
    "MIRROR_ENV",
    "BlobStore",
    "SyncReport",
    "is_blob_store",
    "mirror_folder",
    "sync",
]

MIRROR_ENV = env_name("mirror")
CONNECTION_ENV = env_name("azure_storage_connection_string")
ACCOUNT_URL_ENV = env_name("azure_storage_account_url")
INDEX_BLOB = "index/runs.jsonl"
_RUNS = "runs/"
_CLAIMS = "claims/"
_REINDEX_LOCK = "locks/reindex"
REINDEX_LEASE_S = 15
"""Lease on the reindex lock (Blob Storage's shortest): how long a dead reindexer blocks the next one."""


def _acquire(lock: BlobClient, wait_s: float) -> BlobLeaseClient:
    """The reindex lease, retried while another holder's lease is live (until it is released or expires)."""
    retrying = Retrying(
        retry=retry_if_exception(lambda e: isinstance(e, HttpResponseError) and e.status_code == 409),
        wait=wait_fixed(0.5),
        stop=stop_after_delay(wait_s),
        reraise=True,
    )
    try:
        lease: BlobLeaseClient = retrying(lock.acquire_lease, lease_duration=REINDEX_LEASE_S)
    except HttpResponseError as exc:
        raise StoreError(f"{lock.url}: another reindex holds the lease ({exc.reason}); try again later") from None
    return lease


def mirror_folder(shared: BlobStore, base: Path = DEFAULTS.mirror) -> Path:
    """Where readers find the local mirror of a shared store under `base` ($GHOST_EVAL_MIRROR): one folder per
    account and container."""
    account = shared.container.account_name or "account"
    return base / f"{account}.{shared.container.container_name}"


def is_blob_store(spec: str | os.PathLike[str] | None) -> bool:
    return isinstance(spec, str) and spec.startswith(BLOB_SCHEME)


def _matches(entry: IndexEntry, flt: RunFilter) -> bool:
    """`RunFilter` over an entry in memory (the local store compiles the same filter to SQL)."""
    return (
        (flt.run_id is None or entry.run_id == flt.run_id)
        and (flt.run_ids is None or entry.run_id in flt.run_ids)
        and (flt.use_case is None or case_key(entry.use_case_id) in (flt.case_keys() or ()))
        and (flt.model is None or entry.model_id in (flt.models() or ()))
        and (flt.prompt_hash is None or (entry.system_prompt_hash or "").startswith(flt.prompt_hash))
        and (flt.run_label is None or entry.run_label == flt.run_label)
        and (flt.include_superseded or entry.superseded_by is None)
    )


@dataclass
class SyncReport:
    """What a sync copied, what the destination already had, and what it could not copy (named)."""

    copied: list[str] = field(default_factory=list)
    present: int = 0
    problems: list[Problem] = field(default_factory=list)


class BlobStore:
    """The shared store in one blob container (created on first write)."""

    def __init__(self, container: ContainerClient) -> None:
        self.container = container
        self.name = f"{BLOB_SCHEME}{container.container_name}"
        self.problems: list[Problem] = []

    @classmethod
    def open(cls, spec: str, connection_string: str | None = None, account_url: str | None = None) -> BlobStore:
        """`azblob://<container>`: a connection string ($AZURE_STORAGE_CONNECTION_STRING at the edge), else an account
        URL ($AZURE_STORAGE_ACCOUNT_URL) with DefaultAzureCredential."""
        name = spec.removeprefix(BLOB_SCHEME).strip("/")
        if not name:
            raise StoreError(f"{spec!r}: name the container, azblob://<container>")
        if connection_string:
            service = BlobServiceClient.from_connection_string(connection_string)
        elif account_url:
            from azure.identity import DefaultAzureCredential

            service = BlobServiceClient(account_url, credential=DefaultAzureCredential())
        else:
            raise StoreError(f"{spec}: set ${CONNECTION_ENV}, or ${ACCOUNT_URL_ENV} for DefaultAzureCredential")
        return cls(service.get_container_client(name))

    def _ensure_container(self) -> None:
        with contextlib.suppress(ResourceExistsError):
            self.container.create_container()

    # -- writing -------------------------------------------------------------------------------

    def _create(self, name: str, data: bytes) -> None:
        """Create a blob that must not exist (`If-None-Match: *`); an existing one is never replaced."""
        try:
            self.container.upload_blob(name, data, overwrite=False)
        except ResourceExistsError:
            raise RunExistsError(f"{self.name}/{name}: exists; stored blobs are never overwritten") from None

    def append(
        self, metadata: RunMetadata, files: Mapping[str, str | bytes], *, coverage: Coverage = Coverage.FULL
    ) -> IndexEntry:
        """Store a complete run (metadata.json written from `metadata` unless `files` has one); refuses an existing id."""
        payload = dict(files)
        payload.setdefault(METADATA_FILE, dump_json(metadata))
        return self._publish(index_entry(metadata, coverage), payload)

    def _publish(self, entry: IndexEntry, files: Mapping[str, str | bytes]) -> IndexEntry:
        """Claim the run id, upload every file, then the manifest, then the index entry; refuses an existing id."""
        for name in files:
            check_component(name, "artifact file name")
            if name == MANIFEST_FILE:
                raise StoreError(f"{MANIFEST_FILE} is written by the store itself")
        folder = check_relative(entry.path)
        self._ensure_container()
        try:
            self.container.upload_blob(f"{_CLAIMS}{entry.run_id}", b"", overwrite=False)
        except ResourceExistsError:
            raise RunExistsError(f"run {entry.run_id} is already claimed in {self.name}") from None
        digests = {}
        for name, content in sorted(files.items()):
            data = content.encode("utf-8") if isinstance(content, str) else content
            self._create(f"{_RUNS}{folder}/{name}", data)
            digests[name] = hashlib.sha256(data).hexdigest()
        self._create(f"{_RUNS}{folder}/{MANIFEST_FILE}", dump_json(Manifest(files=digests)).encode())
        self.adopt_many([entry])
        return entry

    def adopt_many(self, entries: list[IndexEntry]) -> None:
        """Append entries to the index in one block (at most 4 MiB): one atomic `Append Block`."""
        index = self.container.get_blob_client(INDEX_BLOB)
        with contextlib.suppress(ResourceExistsError, ResourceModifiedError):
            index.create_append_blob(match_condition=MatchConditions.IfMissing)
        body = "".join(entry.model_dump_json(exclude_none=True) + "\n" for entry in entries)
        index.append_block(body.encode())

    # -- reading -------------------------------------------------------------------------------

    def entries(self) -> list[IndexEntry]:
        """Every indexed run in append order; a damaged line or a repeated id is a problem, never a crash."""
        self.problems = []
        try:
            raw = self.container.download_blob(INDEX_BLOB).readall().decode("utf-8", errors="replace")
        except ResourceNotFoundError:
            return []
        seen: dict[str, IndexEntry] = {}
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{self.name}/{INDEX_BLOB} line {number}"
            try:
                entry = parse_record(IndexEntry, json.loads(line), where)
                check_relative(entry.path)
            except (ValueError, RecordError) as exc:
                self.problems.append(Problem(path=where, message=f"skipped: {exc}"))
                continue
            if entry.run_id in seen:
                self.problems.append(Problem(path=where, message=f"run {entry.run_id} is indexed twice", run_id=entry.run_id))
                continue
            seen[entry.run_id] = entry
        return list(seen.values())

    def runs(self, flt: RunFilter | None = None) -> list[IndexEntry]:
        flt = flt or RunFilter()
        return [e for e in self.entries() if _matches(e, flt)]

    def read_files(self, entry: IndexEntry) -> tuple[dict[str, bytes], Manifest]:
        """The run's files, checked against its manifest (a missing, extra or altered file raises, named)."""
        prefix = f"{_RUNS}{check_relative(entry.path)}/"
        files = {
            blob.name.removeprefix(prefix): self.container.download_blob(blob.name).readall()
            for blob in self.container.list_blobs(name_starts_with=prefix)
            if "/" not in blob.name.removeprefix(prefix)
        }
        where = f"{self.name}/{prefix}{MANIFEST_FILE}"
        if MANIFEST_FILE not in files:
            raise StoreError(f"{where}: missing; the run is incomplete")
        try:
            manifest = parse_record(Manifest, json.loads(files.pop(MANIFEST_FILE)), where)
        except ValueError as exc:
            raise StoreError(f"{where}: not valid JSON ({exc})") from None
        for name, digest in manifest.files.items():
            if name not in files:
                raise StoreError(f"{self.name}/{prefix}{name}: listed in the manifest, missing")
            if hashlib.sha256(files[name]).hexdigest() != digest:
                raise StoreError(f"{self.name}/{prefix}{name}: sha256 differs from the manifest")
        return {n: files[n] for n in manifest.files}, manifest

    def reindex(self, *, wait_s: float = REINDEX_LEASE_S + 15) -> list[str]:
        """Index complete runs whose writer died before its index append (claim and manifest, no entry).

        One reindexer at a time: it holds a lease on `locks/reindex` (two would both append the same lost entries).
        A reindexer that dies leaves its lease to expire after REINDEX_LEASE_S; the next one waits up to `wait_s`.
        """
        self._ensure_container()
        lock = self.container.get_blob_client(_REINDEX_LOCK)
        with contextlib.suppress(ResourceExistsError):
            lock.upload_blob(b"", overwrite=False)
        lease = _acquire(lock, wait_s)
        try:
            return self._reindex()
        finally:
            lease.release()

    def _reindex(self) -> list[str]:
        """Claims without an index entry whose folder has a manifest and metadata (one listing of the runs)."""
        indexed = {e.run_id for e in self.entries()}
        orphans = {b.name.removeprefix(_CLAIMS) for b in self.container.list_blobs(name_starts_with=_CLAIMS)} - indexed
        if not orphans:
            return []
        names = {b.name for b in self.container.list_blobs(name_starts_with=_RUNS)}
        found = []
        for name in sorted(names):
            folder = name.removeprefix(_RUNS).removesuffix(f"/{MANIFEST_FILE}")
            if folder == name.removeprefix(_RUNS) or folder.rsplit("/", 1)[-1] not in orphans:
                continue
            try:
                meta = RunMetadata.model_validate_json(self.container.download_blob(f"{_RUNS}{folder}/{METADATA_FILE}").readall())
            except (ResourceNotFoundError, ValidationError):
                continue  # complete but without readable metadata: left for a person (`store sync` reports it)
            found.append(index_entry(meta).model_copy(update={"path": folder}))
        if found:
            self.adopt_many(found)
        return [e.run_id for e in found]

    def mirror_into(self, local: Store) -> SyncReport:
        """Copy runs the local store lacks, each checked against its manifest (`store sync azblob://… DIR`)."""
        report = SyncReport()
        for entry in self.entries():
            if local.has(entry.run_id):
                report.present += 1
                continue
            try:
                files, _ = self.read_files(entry)
                _append_local(local, entry, files)
            except (StoreError, RecordError) as exc:
                report.problems.append(Problem(path=f"{self.name}/{_RUNS}{entry.path}", message=str(exc), run_id=entry.run_id))
                continue
            report.copied.append(entry.run_id)
        report.problems += self.problems
        return report

    def push_from(self, local: Store) -> SyncReport:
        """Copy local runs the shared store lacks (`store sync DIR azblob://…`)."""
        report = SyncReport()
        have = {e.run_id for e in self.entries()}
        for entry in local.runs(RunFilter(include_superseded=True)):
            if entry.run_id in have:
                report.present += 1
                continue
            folder = local.folder(entry)
            files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != MANIFEST_FILE}
            try:
                self._publish(entry, files)
            except RunExistsError as exc:  # another writer claimed it between our listing and our claim
                report.problems.append(Problem(path=str(folder), message=str(exc), run_id=entry.run_id))
                continue
            report.copied.append(entry.run_id)
        return report


def _append_local(local: Store, entry: IndexEntry, files: dict[str, bytes]) -> None:
    """Append a shared run to a local store byte for byte (its metadata.json is kept as stored, or absent)."""
    if METADATA_FILE in files:
        meta = parse_record(RunMetadata, json.loads(files[METADATA_FILE]), f"{entry.path}/{METADATA_FILE}")
    else:
        meta = RunMetadata(run_id=entry.run_id, use_case_id=entry.use_case_id, model_id=entry.model_id)
    meta = meta.model_copy(update={"use_case_id": entry.use_case_id, "model_id": entry.model_id})
    local.append(meta, files, coverage=entry.artifact_coverage, write_metadata=False)


def sync(source: str, destination: str, connection_string: str | None = None, account_url: str | None = None) -> SyncReport:
    """`ghost-eval store sync SRC DST`: one side a local store folder, the other `azblob://<container>` (opened with
    the credentials `BlobStore.open` takes)."""
    if is_blob_store(source) == is_blob_store(destination):
        raise StoreError("store sync copies between a local store folder and a shared azblob://<container>, one each")
    if is_blob_store(source):
        shared = BlobStore.open(source, connection_string, account_url)
        with Store(Path(destination), create=True) as local:
            return shared.mirror_into(local)
    shared = BlobStore.open(destination, connection_string, account_url)
    with Store(Path(source)) as local:
        return shared.push_from(local)
