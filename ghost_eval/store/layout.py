"""The on-disk layout: where a run's files live, what the v1 index looks like, and which paths are safe."""

from __future__ import annotations

import os
import re
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, field_validator

from ghost_eval.base.errors import RecordError, UnsafePathError
from ghost_eval.base.records import Record, parse_record
from ghost_eval.base.safe_read import INDEX_LIMIT, load_json
from ghost_eval.run.identity import HashKind, RunMetadata

__all__ = [
    "AGENT_RUN_FILE",
    "AUDIT_LOG",
    "BLOB_SCHEME",
    "INDEX_FILE",
    "PROMPT_FILE",
    "REDACTIONS_FILE",
    "REPORT",
    "RESULT_FILE",
    "SESSION_FILES",
    "SHELL_AUDIT",
    "SNAPSHOT_FILE",
    "SUMMARY_FILE",
    "SYSTEM_PROMPT_FILE",
    "TRACE_FILE",
    "V1_VERDICT_FILE",
    "SessionFile",
    "INDEX_SCHEMA_VERSION",
    "MANIFEST_FILE",
    "METADATA_FILE",
    "SQLITE_FILE",
    "STAGING_DIR",
    "VERDICTS_DIR",
    "verdict_file_name",
    "verdict_glob",
    "Coverage",
    "IndexEntry",
    "Problem",
    "V1Index",
    "check_component",
    "check_run_id",
    "metadata_entry",
    "check_relative",
    "read_v1_index",
    "refused_entry",
    "refused_run",
    "resolve_inside",
    "run_folder",
    "session_files",
]

BLOB_SCHEME = "azblob://"
"""`--store azblob://<container>` names a shared store on Azure Blob Storage (ghost_eval.store.blob)."""
INDEX_FILE = "run_index.json"
INDEX_SCHEMA_VERSION = "1"
"""The JSON view keeps the v1 schema so the original tooling can still read it."""
SQLITE_FILE = ".index/runs.sqlite"
STAGING_DIR = ".staging"
METADATA_FILE = "metadata.json"
MANIFEST_FILE = "manifest.json"
VERDICTS_DIR = "verdicts"
# Every other file a run folder may hold, named here only: the original's v1 files, then ours.
PROMPT_FILE = "PROMPT.txt"
SUMMARY_FILE = "run_summary.json"
V1_VERDICT_FILE = "remediation_verdict.json"
"""The verdict of record in the original's shape (see `evaluation.v1_verdict`)."""
SYSTEM_PROMPT_FILE = "system_prompt.txt"
RESULT_FILE = "investigation_result.json"
SNAPSHOT_FILE = "infra_snapshot.json"
TRACE_FILE = "tool_trace.jsonl"
AGENT_RUN_FILE = "agent_run.json"
REDACTIONS_FILE = "redactions.json"


class SessionFile(NamedTuple):
    """A file named by the agent's session id (`ghost_YYYYmmdd_HHMMSS`), as the original writes it."""

    prefix: str
    suffix: str

    def name(self, sid: str) -> str:
        return f"{self.prefix}{sid}{self.suffix}"


REPORT = SessionFile("ghost_report_", ".md")
AUDIT_LOG = SessionFile("ghost_audit_", ".md")
SHELL_AUDIT = SessionFile("shell_audit_", ".jsonl")
SESSION_FILES = (REPORT, AUDIT_LOG, SHELL_AUDIT)


def _scorer_stem(scorer: str) -> str:
    return scorer.replace("/", "_").replace(":", "_")


def verdict_file_name(scorer: str, digest: str) -> str:
    """A verdict's file name in `verdicts/`: the scorer, then a digest of its content."""
    return f"{_scorer_stem(scorer)}.{digest}.json"


def verdict_glob(scorer: str) -> str:
    """Every verdict file of one scorer in `verdicts/`."""
    return f"{_scorer_stem(scorer)}.*.json"


_COMPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Coverage(StrEnum):
    FULL = "full"
    REPORT_ONLY = "report_only"


def check_run_id(value: str) -> str:
    """A run id names a folder and is matched in commands: refuse what could climb out of the store or name two files.

    Lighter than `check_component`: ids of runs written by the original tooling are kept as they are."""
    if value in ("", ".", "..") or any(c in value for c in "/\\\x00"):
        raise UnsafePathError(f"run id {value!r} is not a single folder name (no '/', '\\', NUL, '.' or '..')")
    return value


class IndexEntry(Record):
    """One run in `run_index.json`; the first eight fields are exactly the v1 entry."""

    run_id: str
    use_case_id: str
    model_id: str
    system_prompt_hash: str | None = None
    backfilled: bool = False
    artifact_coverage: Coverage = Coverage.FULL
    path: str
    """Run folder, relative to the store root."""
    superseded_by: str | None = None
    """Run id that replaces this one; every reader skips superseded runs unless asked."""
    hash_kind: HashKind | None = None
    """Absent in v1 entries, where the hash is of the agent's source file."""
    run_label: str | None = None
    repeat_index: int | None = None
    environment: str | None = None
    """Where the run ran (see `RunMetadata.environment`); None for runs that do not say (the original demo)."""
    suite_version: str | None = None
    """The suite version the run was captured under (see `RunMetadata.suite_version`); None when it does not say."""

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str) -> str:
        try:
            return check_run_id(value)
        except UnsafePathError as exc:
            raise ValueError(str(exc)) from None


def metadata_entry(meta: RunMetadata, coverage: Coverage, path: str) -> IndexEntry:
    """The index entry of a run from its metadata (whose `use_case_id` and `model_id` the caller has checked)."""
    assert meta.use_case_id is not None and meta.model_id is not None
    return IndexEntry(
        run_id=meta.run_id,
        use_case_id=meta.use_case_id,
        model_id=meta.model_id,
        system_prompt_hash=meta.system_prompt_hash,
        backfilled=meta.backfilled,
        artifact_coverage=coverage,
        path=path,
        hash_kind=meta.hash_kind,
        run_label=meta.run_label,
        repeat_index=meta.repeat_index,
        environment=meta.environment,
        suite_version=meta.suite_version,
    )


class V1Index(BaseModel):
    schema_version: str
    runs: list[object]


class Problem(BaseModel):
    """Something wrong in the store, named by file so a user can find it."""

    path: str
    message: str
    run_id: str | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def refused_entry(where: str, run_id: str | None, reason: str) -> Problem:
    """An index entry no reader will use, named by its file (and position) and, when it has one, its run id."""
    return Problem(path=where, message=f"{f'run {run_id}: ' if run_id else ''}{reason}; entry ignored", run_id=run_id)


def refused_run(root: Path, entry: IndexEntry, exc: UnsafePathError) -> Problem:
    """A listed run whose folder leaves the store once symlinks are followed: named, never read or written."""
    return Problem(path=str(root / entry.path), message=f"run {entry.run_id}: {exc}; not read", run_id=entry.run_id)


def check_component(value: str, what: str) -> str:
    """Ids become folder names; refuse anything that could climb out of the store."""
    if not _COMPONENT.match(value):
        raise UnsafePathError(f"{what} {value!r} cannot be used as a folder name (letters, digits, '.', '_', '-' only)")
    return value


def run_folder(use_case_id: str, model_id: str, run_id: str) -> str:
    return "/".join(
        (check_component(use_case_id, "use case id"), check_component(model_id, "model id"), check_component(run_id, "run id"))
    )


@lru_cache(maxsize=64)
def _resolved(root: Path) -> Path:
    """A store's own location is resolved once per process; each run's path is still resolved every time."""
    return root.resolve()


def check_relative(relative: str) -> str:
    """What can be refused without touching the disk: absolute paths, `..`, the store root itself, NUL bytes.

    Listing runs checks only this (plain string tests, no system call, so 100,000 entries stay cheap);
    reading a run also resolves symlinks with `resolve_inside`.
    """
    if not relative or relative.startswith("/"):
        raise UnsafePathError(f"path {relative!r} is not relative to the store")
    if "\x00" in relative:
        raise UnsafePathError(f"path {relative!r} contains a NUL byte")
    parts = relative.split("/")
    if ".." in parts:
        raise UnsafePathError(f"path {relative!r} points outside the store ('..' is never followed)")
    if all(part in ("", ".") for part in parts):
        raise UnsafePathError(f"path {relative!r} is the store itself, not a run folder")
    return relative


def resolve_inside(root: Path, relative: str) -> Path:
    """Resolve an index path, refusing absolute paths and anything (symlinks included) outside the store."""
    check_relative(relative)
    base = _resolved(root)
    try:
        target = (base / relative).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise UnsafePathError(f"path {relative!r} cannot be resolved ({exc})") from None
    if base not in target.parents:
        where = "is the store itself" if target == base else "points outside the store"
        raise UnsafePathError(f"path {relative!r} {where} once symlinks are followed")
    return target


def read_v1_index(root: Path) -> tuple[list[IndexEntry], list[Problem]]:
    """Read `run_index.json`, keeping every valid entry and naming each invalid one."""
    path = root / INDEX_FILE
    if not os.path.lexists(path):
        return [], []
    try:
        data = load_json(resolve_inside(root, INDEX_FILE), INDEX_LIMIT, "the run index")
    except (RecordError, UnsafePathError) as exc:
        reason = exc.detail if isinstance(exc, RecordError) else str(exc)
        return [], [Problem(path=str(path), message=f"{reason}; no run can be listed from it")]
    try:
        index = parse_record(V1Index, data, path)
    except RecordError as exc:
        return [], [Problem(path=str(path), message=exc.detail if not exc.field else f"field '{exc.field}': {exc.detail}")]
    entries: list[IndexEntry] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, raw in enumerate(index.runs):
        where = f"{path}: runs[{i}]"
        raw_id = raw.get("run_id") if isinstance(raw, dict) else None
        rid = raw_id if isinstance(raw_id, str) else None
        try:
            entry = parse_record(IndexEntry, raw, where)
        except RecordError as exc:
            problems.append(refused_entry(where, rid, f"field '{exc.field}': {exc.detail}"))
            continue
        if entry.run_id in seen:
            problems.append(refused_entry(where, entry.run_id, "duplicate entry (the first one for this run id is used)"))
            continue
        try:
            resolve_inside(root, entry.path)
        except UnsafePathError as exc:
            problems.append(refused_entry(where, entry.run_id, str(exc)))
            continue
        seen.add(entry.run_id)
        entries.append(entry)
    return entries, problems


def session_files(folder: Path, prefix: str, suffix: str) -> list[Path]:
    """Files like `ghost_report_<sid>.md`; a run normally has exactly one per kind."""
    return sorted(folder.glob(f"{prefix}*{suffix}"))
