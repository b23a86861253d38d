"""Brings run folders written by the original tooling into a store, byte for byte."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError, RecordError, StoreError, UnsafePathError
from ghost_eval.base.safe_read import load_json
from ghost_eval.store.artifact_store import Store
from ghost_eval.store.discover import AUDIT_DIR, coverage, folder_entry, identity, run_folders
from ghost_eval.store.layout import INDEX_FILE, SUMMARY_FILE, IndexEntry, Problem, read_v1_index, refused_run
from ghost_eval.store.query import RunFilter
from ghost_eval.store.supersede import check_supersession
from ghost_eval.store.verify import view_disagreements

__all__ = ["ImportReport", "import_runs", "reindex"]


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Run ids already in the store (importing twice is harmless)."""
    problems: list[Problem] = field(default_factory=list)
    """Each run (or index entry) that was not imported, or whose supersession was not recorded, and why."""
    superseded: list[tuple[str, str]] = field(default_factory=list)
    """(old, new) pairs carried over from the source's `superseded_by`."""
    notes: list[str] = field(default_factory=list)
    """Files deliberately left behind (an earlier aborted session's leftovers in `audit/`)."""


def _session_id(folder: Path) -> str | None:
    """The canonical session of a run, from `run_summary.json` (the original's rule for multi-session folders)."""
    try:
        sid = load_json(folder / SUMMARY_FILE, follow=False).get("session_id")
    except (RecordError, AttributeError):
        return None
    return sid if isinstance(sid, str) and sid else None


def _run_files(folder: Path, report: ImportReport) -> dict[str, bytes]:
    """The run's own files: the folder's, plus its session's files from `audit/` (other sessions' are noted, left)."""
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    audit = folder / AUDIT_DIR
    if not audit.is_dir():
        return files
    sid = _session_id(folder)
    for p in sorted(audit.iterdir()):
        if p.is_symlink():
            raise RecordError(p, "is a symbolic link; refused, not followed (the run folder is left out)")
        if not p.is_file():
            continue
        if sid is not None and sid not in p.name:
            report.notes.append(f"{p}: another session than {sid} (an earlier attempt); not imported")
            continue
        if p.name in files:
            raise RecordError(p, f"{p.name} is both in the run folder and in audit/; the run folder is left out")
        files[p.name] = p.read_bytes()
    return files


def _adopt_view_edits(store: Store, report: ImportReport) -> bool:
    """Adopt the `superseded_by` values set by hand in `run_index.json`; False when the view must be left as it is.

    Any disagreement that is not such an edit, or an edit the supersede checks refuse, is named and nothing is
    adopted: rewriting the view would erase what the user wrote.
    """
    found = view_disagreements(store)
    pending = {d.run_id: d.in_view for d in found if d.in_view is not None}
    refused: list[Problem] = []
    for d in found:
        if not d.adoptable:
            refused.append(d.problem(store.root))
            continue
        assert d.in_view is not None
        try:
            check_supersession(store, d.run_id, d.in_view, pending)
        except StoreError as exc:
            refused.append(Problem(path=str(store.root / INDEX_FILE), message=f"run {d.run_id}: {exc}", run_id=d.run_id))
    if refused:
        report.problems.extend(refused)
        report.notes.append(f"{store.root / INDEX_FILE}: left as it is until it agrees with the index")
        return False
    for d in found:
        assert d.in_view is not None
        store.supersede(d.run_id, d.in_view)
        report.superseded.append((d.run_id, d.in_view))
    return True


def reindex(store: Store) -> ImportReport:
    """Index run folders that are in the store but not in its index, adopt supersessions set by hand in
    `run_index.json`, then refresh it, unless it disagrees with the index in a way only a person can settle.

    Entries the index refuses are named, and their folders are not indexed again under the same id.
    """
    report = ImportReport()
    view_agrees = _adopt_view_edits(store, report)
    indexed: set[Path] = set()
    for entry in store.runs(RunFilter(include_superseded=True)):
        try:
            indexed.add(store.folder(entry))
        except UnsafePathError as exc:
            report.problems.append(refused_run(store.root, entry, exc))
    report.problems.extend(store.problems)
    refused = {p.run_id for p in store.problems}
    for folder in run_folders(store.root):
        if folder.resolve() in indexed:
            continue
        try:
            entry = folder_entry(store.root, folder)
            if entry.run_id in refused:
                continue
            store.adopt_many([entry])
            report.imported.append(entry.run_id)
        except RecordError as exc:
            report.problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": ")))
        except GhostEvalError as exc:
            report.problems.append(Problem(path=str(folder), message=str(exc)))
    if view_agrees:
        store.refresh_view()
    return report


def _source_index(source: Path, report: ImportReport) -> dict[str, IndexEntry]:
    """The source store's own `run_index.json` (absent for an `eval/runs/` tree): it alone holds `superseded_by`."""
    entries, problems = read_v1_index(source)
    report.problems.extend(problems)
    return {e.run_id: e for e in entries}


def _carry_supersessions(store: Store, listed: dict[str, IndexEntry], report: ImportReport) -> None:
    """Record each `superseded_by` of the source in the store, or name the entry and why it was not."""
    for entry in listed.values():
        new = entry.superseded_by
        if new is None:
            continue
        where = f"{entry.path} (superseded_by {new})"
        if not store.has(entry.run_id):
            continue  # the run itself was not imported, and is named for that already
        try:
            check_supersession(store, entry.run_id, new)
            store.supersede(entry.run_id, new)
            report.superseded.append((entry.run_id, new))
        except StoreError as exc:
            report.problems.append(Problem(path=where, message=f"supersession not recorded: {exc}", run_id=entry.run_id))


def import_runs(store: Store, source: Path) -> ImportReport:
    """Import every run under `source` (a v1 store or an `eval/runs/` tree); each one left out is named with why."""
    report = ImportReport()
    if not source.is_dir():
        report.problems.append(Problem(path=str(source), message="import source is not a directory"))
        return report
    listed = _source_index(source, report)
    found: dict[str, Path] = {}
    failed: set[Path] = set()
    for folder in run_folders(source):
        try:
            meta = identity(folder)
            files = _run_files(folder, report)
            if meta.run_id in found:
                raise RecordError(folder, f"run {meta.run_id} is also at {found[meta.run_id]}; the first one is imported")
            found[meta.run_id] = folder
            if store.has(meta.run_id):
                report.skipped.append(meta.run_id)
                continue
            store.append(meta, files, coverage=coverage(files), write_metadata=False)
            report.imported.append(meta.run_id)
        except RecordError as exc:
            failed.add(folder.resolve())
            report.problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": ")))
        except GhostEvalError as exc:
            failed.add(folder.resolve())
            report.problems.append(Problem(path=str(folder), message=str(exc)))
    for rid, entry in listed.items():
        if rid not in found and (source / entry.path).resolve() not in failed:
            reason = "listed in the source's run_index.json but no run folder with this id was found; not imported"
            report.problems.append(Problem(path=str(source / entry.path), message=f"run {rid}: {reason}", run_id=rid))
    _carry_supersessions(store, listed, report)
    if report.imported or report.superseded:
        store.refresh_view()
    return report
