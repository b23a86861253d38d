"""The on-disk layout: where a run's files live, what the v1 index looks like, and which paths are safe."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from ghost_eval.errors import RecordError, UnsafePathError
from ghost_eval.identity import HashKind
from ghost_eval.records import Record, parse_record

__all__ = [
    "INDEX_FILE",
    "INDEX_SCHEMA_VERSION",
    "MANIFEST_FILE",
    "METADATA_FILE",
    "SQLITE_FILE",
    "STAGING_DIR",
    "VERDICTS_DIR",
    "Coverage",
    "IndexEntry",
    "Problem",
    "V1Index",
    "check_component",
    "read_v1_index",
    "resolve_inside",
    "run_folder",
    "session_files",
]

INDEX_FILE = "run_index.json"
INDEX_SCHEMA_VERSION = "1"
"""The JSON view keeps the v1 schema so the original tooling can still read it."""
SQLITE_FILE = ".index/runs.sqlite"
STAGING_DIR = ".staging"
METADATA_FILE = "metadata.json"
MANIFEST_FILE = "manifest.json"
VERDICTS_DIR = "verdicts"

_COMPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Coverage(StrEnum):
    FULL = "full"
    REPORT_ONLY = "report_only"


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


def resolve_inside(root: Path, relative: str) -> Path:
    """Resolve an index path, refusing absolute paths and anything (symlinks included) outside the store."""
    if not relative or Path(relative).is_absolute():
        raise UnsafePathError(f"path {relative!r} is not relative to the store")
    base = _resolved(root)
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise UnsafePathError(f"path {relative!r} points outside the store")
    return target


def read_v1_index(root: Path) -> tuple[list[IndexEntry], list[Problem]]:
    """Read `run_index.json`, keeping every valid entry and naming each invalid one."""
    path = root / INDEX_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], []
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return [], [Problem(path=str(path), message=f"is not valid JSON ({exc}); no run can be listed from it")]
    try:
        index = parse_record(V1Index, data, path)
    except RecordError as exc:
        return [], [Problem(path=str(path), message=exc.detail if not exc.field else f"field '{exc.field}': {exc.detail}")]
    entries: list[IndexEntry] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, raw in enumerate(index.runs):
        where = f"{path}: runs[{i}]"
        try:
            entry = parse_record(IndexEntry, raw, where)
        except RecordError as exc:
            problems.append(Problem(path=where, message=f"field '{exc.field}': {exc.detail}"))
            continue
        if entry.run_id in seen:
            problems.append(
                Problem(path=where, message=f"duplicate entry for run {entry.run_id}; the first one is used", run_id=entry.run_id)
            )
            continue
        try:
            resolve_inside(root, entry.path)
        except UnsafePathError as exc:
            problems.append(Problem(path=where, message=f"{exc}; entry ignored", run_id=entry.run_id))
            continue
        seen.add(entry.run_id)
        entries.append(entry)
    return entries, problems


def session_files(folder: Path, prefix: str, suffix: str) -> list[Path]:
    """Files like `ghost_report_<sid>.md`; a run normally has exactly one per kind."""
    return sorted(folder.glob(f"{prefix}*{suffix}"))
