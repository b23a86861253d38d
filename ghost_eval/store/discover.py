"""Finding runs from their folders alone: what `store import` and `store reindex` index, and what a store lists when
its index is unreadable or empty while run folders exist (so a damaged index never hides a run)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from fnmatch import fnmatch
from pathlib import Path

from ghost_eval.base.errors import RecordError, UnsafePathError
from ghost_eval.base.records import load_record
from ghost_eval.base.safe_read import load_json
from ghost_eval.run.identity import RunMetadata, make_run_id, parse_run_id
from ghost_eval.store.layout import (
    AUDIT_LOG,
    METADATA_FILE,
    REPORT,
    SHELL_AUDIT,
    SUMMARY_FILE,
    VERDICTS_DIR,
    Coverage,
    IndexEntry,
    Problem,
    check_run_id,
    metadata_entry,
)

__all__ = ["AUDIT_DIR", "coverage", "folder_entry", "identity", "run_folders", "scan"]

_FULL = (SHELL_AUDIT, AUDIT_LOG)
_MARKERS = (f"{REPORT.prefix}*{REPORT.suffix}", METADATA_FILE, SUMMARY_FILE)
"""A folder holding any of these is a run, even without a report (a v1 run that aborted before writing one)."""
AUDIT_DIR = "audit"
"""`eval/runs/<label>/<provider>/<model>/<use_case>/audit/`: where the original runner leaves a run's session files."""


def run_folders(source: Path) -> list[Path]:
    """Every run folder under `source`; an `audit/` folder belongs to the run folder around it.

    Hidden folders (a writer's `.staging/`) and verdict folders are never entered, and a folder that vanishes while it
    is walked is passed over: another process may be writing or moving a run at the same moment, and a reader must not
    fail for it. Symlinked folders are not followed."""
    found: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != VERDICTS_DIR]
        if not any(fnmatch(name, pattern) for name in filenames for pattern in _MARKERS):
            continue
        folder = Path(dirpath)
        if folder.name == AUDIT_DIR and folder != source and _is_runner_folder(folder.parent):
            folder = folder.parent
        found.add(folder)
    return sorted(found)


def _is_runner_folder(folder: Path) -> bool:
    return (folder / SUMMARY_FILE).is_file() or (folder / METADATA_FILE).is_file()


def identity(folder: Path) -> RunMetadata:
    """The sidecar when present, else what the folder name says (runs from before run identity).

    A folder holding a symlink is refused whole: its files are never read through one.
    """
    links = sorted(p for p in folder.iterdir() if p.is_symlink())
    if links:
        raise RecordError(links[0], "is a symbolic link; refused, not followed (the run folder is left out)")
    if (folder / METADATA_FILE).exists():
        meta = load_record(RunMetadata, folder / METADATA_FILE, follow=False)
        parsed = parse_run_id(meta.run_id)
        if meta.use_case_id is None and parsed:
            meta.use_case_id = parsed[0]
        if meta.model_id is None and parsed:
            meta.model_id = parsed[1]
        return meta
    parsed = parse_run_id(folder.name)
    if parsed is not None:
        return RunMetadata(run_id=folder.name, use_case_id=parsed[0], model_id=parsed[1])
    from_summary = _identity_from_summary(folder)
    if from_summary is None:
        raise RecordError(
            folder,
            "no metadata.json, the folder name is not a run id (<use_case>_<model>_<YYYYmmdd>_<HHMMSS>), "
            "and run_summary.json lacks use_case, model or created_at",
        )
    return from_summary


def _identity_from_summary(folder: Path) -> RunMetadata | None:
    """A runner folder from before run identity: the id `backfill_metadata.py` would give it, from its summary."""
    try:
        data = load_json(folder / SUMMARY_FILE, follow=False)
        use_case, model = str(data["use_case"]), str(data["model"])
        when = datetime.fromisoformat(str(data["created_at"]))
    except (RecordError, ValueError, KeyError, TypeError):
        return None
    return RunMetadata(run_id=make_run_id(use_case, model, when), use_case_id=use_case, model_id=model, started_at=when)


def coverage(names: Iterable[str]) -> Coverage:
    """`full` when the tool-call audit and the hypothesis log are both there (the original's rule)."""
    names = list(names)
    has = [any(n.startswith(prefix) and n.endswith(suffix) for n in names) for prefix, suffix in _FULL]
    return Coverage.FULL if all(has) else Coverage.REPORT_ONLY


def folder_entry(root: Path, folder: Path) -> IndexEntry:
    """The index entry of a run folder inside the store at `root`; RecordError names the file when it has none."""
    meta = identity(folder)
    try:
        check_run_id(meta.run_id)
    except UnsafePathError as exc:
        source = METADATA_FILE if (folder / METADATA_FILE).exists() else SUMMARY_FILE
        raise RecordError(folder / source, f"{exc}; the run folder is left out", "run_id") from None
    path = folder.resolve().relative_to(root.resolve()).as_posix()
    return metadata_entry(meta, coverage(p.name for p in folder.iterdir()), path)


def scan(root: Path) -> tuple[list[IndexEntry], list[Problem]]:
    """Every run folder of the store at `root` as an index entry; each folder that gives none is named, with why."""
    entries: dict[str, IndexEntry] = {}
    problems: list[Problem] = []
    for folder in run_folders(root):
        try:
            entry = folder_entry(root, folder)
        except RecordError as exc:
            problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": ")))
            continue
        if entry.run_id in entries:
            first = entries[entry.run_id].path
            problems.append(Problem(path=str(folder), message=f"run {entry.run_id} is also at {first}; the first is listed"))
            continue
        entries[entry.run_id] = entry
    return list(entries.values()), problems
