"""Checks every run and the index against the disk, read-only: one line per problem, each naming its file."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ghost_eval.base.errors import RecordError
from ghost_eval.base.safe_read import INDEX_LIMIT, load_json, read_chunks
from ghost_eval.store.artifact_store import Store
from ghost_eval.store.layout import (
    INDEX_FILE,
    MANIFEST_FILE,
    METADATA_FILE,
    REPORT,
    SQLITE_FILE,
    STAGING_DIR,
    V1_VERDICT_FILE,
    VERDICTS_DIR,
    IndexEntry,
    Problem,
    read_v1_index,
)
from ghost_eval.store.query import RunFilter
from ghost_eval.store.reader import RunRecord
from ghost_eval.store.supersede import cycle_through, mismatch

__all__ = ["ViewDisagreement", "verify_store", "view_disagreements"]

_RUN_MARKERS = (METADATA_FILE, MANIFEST_FILE)


def _sha256(path: Path) -> str:
    """Never through a symlink, only a regular file, in bounded memory (`read_chunks`)."""
    h = hashlib.sha256()
    for chunk in read_chunks(path):
        h.update(chunk)
    return h.hexdigest()


def _listed_file_problem(folder: Path, name: str, digest: str) -> tuple[Path, str] | None:
    """What is wrong with one file manifest.json lists, if anything."""
    path = folder / name
    if name in ("", ".", "..") or "/" in name or "\x00" in name:
        return folder / MANIFEST_FILE, f"field 'files': {name!r} is not a file name in the run folder; not read"
    if path.is_symlink():
        return None  # the reader names it: refused, not followed
    if not path.is_file():
        return path, "listed in manifest.json but missing"
    try:
        actual = _sha256(path)
    except RecordError as exc:
        return path, f"{exc.detail}; checksum not checked"
    return None if actual == digest else (path, "checksum does not match manifest.json (file was modified)")


"""Added to a finished run by the original judge, or by ours for the original's reports (marked `verdict_file`)."""


def _v1_verdict_note(path: Path) -> str | None:
    """A note for the original judge's verdict file; none for the one ghost-eval publishes beside its own verdicts."""
    try:
        data = load_json(path, follow=False)
    except RecordError:
        data = None
    if isinstance(data, dict) and "verdict_file" in data:
        return None
    return f"{path}: added after the run was written by the original judge; kept, not in manifest.json"


def _check_manifest(record: RunRecord, notes: list[str]) -> list[Problem]:
    assert record.manifest is not None
    rid = record.entry.run_id
    problems: list[Problem] = []
    for name, digest in sorted(record.manifest.files.items()):
        found = _listed_file_problem(record.folder, name, digest)
        if found is not None:
            problems.append(Problem(path=str(found[0]), message=found[1], run_id=rid))
    allowed = set(record.manifest.files) | {MANIFEST_FILE, VERDICTS_DIR}
    if record.metadata is not None and record.metadata.backfilled:
        allowed.add(METADATA_FILE)  # `store backfill` adds it to imported runs that never had one
    for child in sorted(record.folder.iterdir()):
        if child.name == V1_VERDICT_FILE and child.name not in allowed and child.is_file() and not child.is_symlink():
            if (note := _v1_verdict_note(child)) is not None:
                notes.append(note)
        elif child.name not in allowed:
            problems.append(
                Problem(path=str(child), message="not listed in manifest.json (added after the run was written)", run_id=rid)
            )
    return problems


def _folders_on_disk(root: Path) -> set[Path]:
    found: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != VERDICTS_DIR]
        if any(f in _RUN_MARKERS or f.startswith(REPORT.prefix) for f in filenames):
            found.add(Path(dirpath).resolve())
            dirnames[:] = []
    return found


@dataclass(frozen=True)
class ViewDisagreement:
    """A run whose `superseded_by` differs between `run_index.json` and the SQLite index (the view was edited)."""

    run_id: str
    in_view: str | None
    in_index: str | None

    @property
    def adoptable(self) -> bool:
        """Set in the view, unset in the index: the original's documented procedure, which `store reindex` adopts."""
        return self.in_view is not None and self.in_index is None

    def problem(self, root: Path) -> Problem:
        what = (
            "set by hand in this file; `store reindex` adopts it (after the supersede checks)"
            if self.adoptable
            else "the two disagree; edit this file to match or use `store supersede`: `store reindex` keeps it until they do"
        )
        return Problem(
            path=str(root / INDEX_FILE),
            message=f"run {self.run_id}: superseded_by is {self.in_view!r} here but {self.in_index!r} in the index: {what}",
            run_id=self.run_id,
        )


def view_disagreements(store: Store) -> list[ViewDisagreement]:
    """Where an adopted store's JSON view says otherwise than its SQLite index about `superseded_by`.

    Readers follow the index; the original tooling follows the view. A store without SQLite has only the view.
    """
    if not (store.root / SQLITE_FILE).exists():
        return []
    listed, _ = read_v1_index(store.root)  # a malformed view is named by the count note in verify_store
    indexed = {e.run_id: e.superseded_by for e in store.runs(RunFilter(include_superseded=True))}
    return [
        ViewDisagreement(e.run_id, e.superseded_by, indexed[e.run_id])
        for e in listed
        if e.run_id in indexed and e.superseded_by != indexed[e.run_id]
    ]


def _supersession_problems(root: Path, entries: list[IndexEntry]) -> list[Problem]:
    """Supersessions no reader should follow: to an unknown run, to another case or model, or in a cycle (which
    hides every run in it). The original's index is edited by hand, so its values were never checked."""
    by_id = {e.run_id: e for e in entries}
    links = {e.run_id: e.superseded_by for e in entries}
    problems: list[Problem] = []
    for entry in entries:
        new = entry.superseded_by
        if new is None:
            continue
        if new not in by_id:
            why: str | None = f"run {entry.run_id} is superseded by unknown run {new}"
        elif (cycle := cycle_through(entry.run_id, links)) is not None:
            shown = " → ".join([*cycle, entry.run_id])
            why = f"run {entry.run_id} is in a supersession cycle ({shown}): no reader sees any of them"
        else:
            why = mismatch(entry, by_id[new])
        if why is not None:
            problems.append(Problem(path=str(root / INDEX_FILE), message=why, run_id=entry.run_id))
    return problems


def verify_store(store: Store) -> tuple[list[Problem], list[str]]:
    """Return (problems, notes). Problems make `store verify` fail; notes are informational."""
    notes: list[str] = []
    entries = store.runs(RunFilter(include_superseded=True))
    problems = list(store.problems)  # after runs(): SQLite rows are checked as they are selected
    indexed: set[Path] = set()
    for entry in entries:
        record = store.read(entry)
        problems.extend(record.problems)
        if record.readable:
            indexed.add(record.folder.resolve())
        if record.manifest is not None and record.readable:
            problems.extend(_check_manifest(record, notes))
    problems.extend(_supersession_problems(store.root, entries))
    for folder in sorted(_folders_on_disk(store.root) - indexed):
        problems.append(Problem(path=str(folder), message="run folder on disk but not in the index (`store reindex` adds it)"))
    staging = store.root / STAGING_DIR
    if staging.is_dir() and any(staging.iterdir()):
        notes.append(f"{staging}: leftovers of interrupted writes; they are not runs (`store clean` removes old ones)")
    problems.extend(d.problem(store.root) for d in view_disagreements(store))
    view = store.root / INDEX_FILE
    if (store.root / ".index").is_dir():
        try:
            listed = len(load_json(view, INDEX_LIMIT, "the run index")["runs"])
        except (RecordError, KeyError, TypeError):
            listed = -1
        if listed != len(entries):
            notes.append(f"{view}: view lists {max(listed, 0)} runs, the index {len(entries)}; `store reindex` refreshes it")
    return problems, notes
