"""Brings run folders written by the original tooling into a store, byte for byte."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.errors import GhostEvalError, RecordError, UnsafePathError
from ghost_eval.identity import RunMetadata, parse_run_id
from ghost_eval.records import load_record
from ghost_eval.store.artifact_store import Store
from ghost_eval.store.layout import METADATA_FILE, Coverage, IndexEntry, Problem, refused_run, session_files
from ghost_eval.store.query import RunFilter

__all__ = ["ImportReport", "import_runs", "reindex"]


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Run ids already in the store (importing twice is harmless)."""
    problems: list[Problem] = field(default_factory=list)


def _run_folders(source: Path) -> list[Path]:
    return sorted(
        {
            p.parent
            for p in source.rglob("ghost_report_*.md")
            if not any(part.startswith(".") for part in p.relative_to(source).parts)
        }
    )


def _identity(folder: Path) -> RunMetadata:
    """The sidecar when present, else what the folder name says (runs from before run identity).

    A folder holding a symlink is refused whole: its files are never read through one.
    """
    links = sorted(p for p in folder.iterdir() if p.is_symlink())
    if links:
        raise RecordError(links[0], "is a symbolic link; refused, not followed (the run folder is left out)")
    if (folder / METADATA_FILE).exists():
        meta = load_record(RunMetadata, folder / METADATA_FILE)
        parsed = parse_run_id(meta.run_id)
        if meta.use_case_id is None and parsed:
            meta.use_case_id = parsed[0]
        if meta.model_id is None and parsed:
            meta.model_id = parsed[1]
        return meta
    parsed = parse_run_id(folder.name)
    if parsed is None:
        raise RecordError(folder, "no metadata.json and the folder name is not a run id (<use_case>_<model>_<YYYYmmdd>_<HHMMSS>)")
    return RunMetadata(run_id=folder.name, use_case_id=parsed[0], model_id=parsed[1])


def _coverage(folder: Path) -> Coverage:
    full = session_files(folder, "shell_audit_", ".jsonl") and session_files(folder, "ghost_audit_", ".md")
    return Coverage.FULL if full else Coverage.REPORT_ONLY


def reindex(store: Store) -> ImportReport:
    """Index run folders that are in the store but not in its index, then refresh `run_index.json`.

    Entries the index refuses are named, and their folders are not indexed again under the same id.
    """
    report = ImportReport()
    indexed: set[Path] = set()
    for entry in store.runs(RunFilter(include_superseded=True)):
        try:
            indexed.add(store.folder(entry))
        except UnsafePathError as exc:
            report.problems.append(refused_run(store.root, entry, exc))
    report.problems.extend(store.problems)
    refused = {p.run_id for p in store.problems}
    for folder in _run_folders(store.root):
        if folder.resolve() in indexed:
            continue
        try:
            meta = _identity(folder)
            if meta.run_id in refused:
                continue
            assert meta.use_case_id is not None and meta.model_id is not None
            store.adopt_many(
                [
                    IndexEntry(
                        run_id=meta.run_id,
                        use_case_id=meta.use_case_id,
                        model_id=meta.model_id,
                        system_prompt_hash=meta.system_prompt_hash,
                        hash_kind=meta.hash_kind,
                        backfilled=meta.backfilled,
                        artifact_coverage=_coverage(folder),
                        path=folder.resolve().relative_to(store.root.resolve()).as_posix(),
                        run_label=meta.run_label,
                        repeat_index=meta.repeat_index,
                    )
                ]
            )
            report.imported.append(meta.run_id)
        except RecordError as exc:
            report.problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": ")))
        except GhostEvalError as exc:
            report.problems.append(Problem(path=str(folder), message=str(exc)))
    store.refresh_view()
    return report


def import_runs(store: Store, source: Path) -> ImportReport:
    """Import every run folder under `source`; bad folders are reported and the rest still imported."""
    report = ImportReport()
    if not source.is_dir():
        report.problems.append(Problem(path=str(source), message="import source is not a directory"))
        return report
    for folder in _run_folders(source):
        try:
            meta = _identity(folder)
            files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
            if store.has(meta.run_id):
                report.skipped.append(meta.run_id)
                continue
            store.append(
                meta,
                files,
                coverage=_coverage(folder),
                write_metadata=False,
            )
            report.imported.append(meta.run_id)
        except RecordError as exc:
            report.problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": ")))
        except GhostEvalError as exc:
            report.problems.append(Problem(path=str(folder), message=str(exc)))
    if report.imported:
        store.refresh_view()
    return report
