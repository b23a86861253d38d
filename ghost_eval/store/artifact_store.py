"""The artifact store as one object: open (v1 or ours), list and query, read, append, supersede, keep verdicts.

It stores what it is given and never imports a scorer: the original-format verdict is written a floor above, by
`evaluation.v1_verdict`."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pydantic import BaseModel

from ghost_eval.base.errors import GhostEvalError, StoreError, UnsafePathError
from ghost_eval.base.records import dump_json, load_record
from ghost_eval.base.settings import DEFAULTS, Settings, env_name
from ghost_eval.run.identity import RunMetadata
from ghost_eval.store.discover import scan
from ghost_eval.store.index import RunIndex
from ghost_eval.store.layout import (
    INDEX_FILE,
    MANIFEST_FILE,
    METADATA_FILE,
    SQLITE_FILE,
    VERDICTS_DIR,
    Coverage,
    IndexEntry,
    Problem,
    check_run_id,
    metadata_entry,
    read_v1_index,
    resolve_inside,
    run_folder,
    verdict_file_name,
)
from ghost_eval.store.query import RunFilter
from ghost_eval.store.reader import RunRecord, read_run
from ghost_eval.store.writer import publish_file, publish_run, update_view, write_view

__all__ = ["STORE_ENV", "Store", "bundled_path", "default_store_path", "demo_store_path", "index_entry"]

STORE_ENV = env_name("store")


def bundled_path(name: str) -> Path:
    """Data shipped with the package (wheel) or beside it (a checkout)."""
    here = Path(__file__).resolve().parents[1]
    for candidate in (here / "_data" / name, here.parent / name):
        if candidate.exists():
            return candidate
    raise StoreError(f"bundled data {name!r} not found next to the package")


def default_store_path(explicit: str | Path | None = None, settings: Settings = DEFAULTS) -> Path:
    """Explicit path, else the settings' store ($GHOST_EVAL_STORE), else the bundled demo store (`demo_store_path`)."""
    if explicit:
        return Path(explicit)
    return settings.store or demo_store_path(settings.data_home)


def demo_store_path(data_home: Path = DEFAULTS.data_home) -> Path:
    """The bundled demo store as a user may write to it (scores, decisions, its index). A checkout's is its own. An
    installed package's is the wheel's, shared by every user and never written: its first use copies it, pristine,
    into the user's data folder (`data_home`/ghost-eval: $XDG_DATA_HOME, else ~/.local/share), one copy per release."""
    bundled = bundled_path("demo_store")
    if bundled.parent.name != "_data":
        return bundled
    try:
        release = version("ghost-eval")
    except PackageNotFoundError:
        release = "unknown"
    base = data_home / "ghost-eval"
    copy = base / f"demo_store-{release}"
    if not copy.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        staged = base / f".demo_store-{release}.{os.getpid()}"
        shutil.copytree(bundled, staged)
        try:
            os.rename(staged, copy)
        except OSError:  # another process put its copy there first: use that one
            shutil.rmtree(staged, ignore_errors=True)
    return copy


def index_entry(metadata: RunMetadata, coverage: Coverage = Coverage.FULL) -> IndexEntry:
    """The index entry of a run about to be stored, from its metadata (the same in every store backend)."""
    if metadata.use_case_id is None or metadata.model_id is None:
        raise StoreError(f"run {metadata.run_id}: metadata needs use_case_id and model_id")
    return metadata_entry(metadata, coverage, run_folder(metadata.use_case_id, metadata.model_id, metadata.run_id))


class Store:
    """An append-only artifact store rooted at a folder."""

    def __init__(self, root: Path, *, create: bool = False) -> None:
        if not root.is_dir():
            if not create:
                raise StoreError(f"store not found: {root} is not a directory")
            root.mkdir(parents=True, exist_ok=True)  # two first writers may both create it
        self.root = root
        self._v1_problems: list[Problem] = []
        self._fallback: list[Problem] = []
        """Why the runs are listed from elsewhere than the index (and what that listing could not read)."""
        self._unwritable: str | None = None
        db = root / SQLITE_FILE
        if db.exists() or (create and not (root / INDEX_FILE).exists()):
            fresh = not db.exists()
            try:
                self._index = RunIndex.open(db)
            except sqlite3.DatabaseError as exc:
                self._index = RunIndex.memory([])
                self._adopted = False
                self._unwritable = f"{db} cannot be read ({exc}): move it aside, then run `ghost-eval store reindex`"
                self._fall_back(str(db), f"cannot be read ({exc})")
                return
            self._adopted = True
            if fresh:  # a new store has its v1 view from the start, so the original tooling finds it
                write_view(root, self._index)
            elif self._index.empty():
                self._fall_back(str(db), "holds no runs (a write that failed, e.g. on a full disk, left it empty)")
        else:
            entries, self._v1_problems = read_v1_index(root)
            self._index = RunIndex.memory(entries)
            self._adopted = False
            if not entries:
                self._fall_back(str(root / INDEX_FILE), "lists no run" if root.joinpath(INDEX_FILE).exists() else "is missing")

    def _fall_back(self, where: str, why: str) -> None:
        """The index is empty or unreadable: list the runs from the JSON view, else from the run folders, never nothing.

        Only when something is found is it said; the first write (or `store reindex`) puts what was found into SQLite.
        """
        entries: list[IndexEntry] = []
        source = INDEX_FILE
        if self._adopted or self._unwritable:
            entries, self._v1_problems = read_v1_index(self.root)
        if not entries:
            source = "the run folders"
            entries, found = scan(self.root)
            self._fallback = found
        if not entries:
            return
        self._index.close()
        self._index = RunIndex.memory(entries)
        self._adopted = False
        listed = f"{len(entries)} runs are listed from {source} instead (`ghost-eval store reindex` rebuilds the index)"
        self._fallback.insert(0, Problem(path=where, message=f"{why}; {listed}"))

    @property
    def problems(self) -> list[Problem]:
        """Entries the index holds and no reader uses, each naming its file and run id, and (first) why the runs are
        listed from elsewhere than the index, if they are.

        A v1 `run_index.json` is checked whole when the store opens; SQLite rows are checked as they
        are selected, so read this after `runs()`. The runs' own problems are on each RunRecord.
        """
        return [*self._fallback, *self._v1_problems, *self._index.refused.values()]

    def close(self) -> None:
        self._index.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -------------------------------------------------------------------------------

    def runs(self, flt: RunFilter | None = None) -> list[IndexEntry]:
        """Complete runs matching the filter, in append order; superseded ones only when asked."""
        flt = flt or RunFilter()
        done = self._index.select(flt)
        # A writer killed between its rename and its index update left a published folder: it counts.
        late = [e for e in self._index.select(flt, pending=True) if (self.root / e.path / MANIFEST_FILE).exists()]
        return done + late

    def get(self, run_id: str) -> IndexEntry:
        check_run_id(run_id)  # a run id from a command line: '../x' is refused, not looked up
        found = self.runs(RunFilter(run_id=run_id, include_superseded=True))
        if not found:
            refused = [str(p) for p in self.problems if p.run_id == run_id]
            if refused:
                raise StoreError(f"run {run_id} is refused by the index: {'; '.join(refused)}")
            raise StoreError(f"run {run_id} is not in the store at {self.root}")
        return found[0]

    def has(self, run_id: str) -> bool:
        return bool(self.runs(RunFilter(run_id=run_id, include_superseded=True)))

    def read_metadata(self, entry: IndexEntry) -> RunMetadata | None:
        """Just the sidecar (None when absent, unreadable or a symlink: `read` names the problem)."""
        try:
            return load_record(RunMetadata, self.folder(entry) / METADATA_FILE, follow=False)
        except GhostEvalError:
            return None

    def read(self, entry: IndexEntry, *, scoring_only: bool = False) -> RunRecord:
        return read_run(self.root, entry, scoring_only=scoring_only)

    def folder(self, entry: IndexEntry) -> Path:
        return resolve_inside(self.root, entry.path)

    # -- writing -------------------------------------------------------------------------------

    def writable_index(self) -> RunIndex:
        """The SQLite index, adopting a v1 store first; for maintenance commands that settle claims."""
        return self._writable()

    def _writable(self) -> RunIndex:
        """First write to a v1 store: move its JSON index into SQLite, refusing if that would drop entries."""
        if self._unwritable:
            raise StoreError(self._unwritable)
        if not self._adopted:
            if self._v1_problems:
                listed = "; ".join(str(p) for p in self._v1_problems)
                raise StoreError(f"the v1 index has problems; fix them before writing to this store: {listed}")
            entries = self._index.select(RunFilter(include_superseded=True))
            self._index.close()
            self._index = RunIndex.open(self.root / SQLITE_FILE)
            self._index.load(entries)
            self._adopted = True
        return self._index

    def append(
        self,
        metadata: RunMetadata,
        files: Mapping[str, str | bytes],
        *,
        coverage: Coverage = Coverage.FULL,
        write_metadata: bool = True,
    ) -> IndexEntry:
        """Store a complete run; refuses an existing run id.

        metadata.json is written from `metadata`, unless `files` carries the original sidecar (kept
        byte for byte on import) or `write_metadata` is False (a v1 run that never had one).
        """
        entry = index_entry(metadata, coverage)
        payload = dict(files)
        if write_metadata and METADATA_FILE not in payload:
            payload[METADATA_FILE] = dump_json(metadata)
        index = self._writable()
        publish_run(self.root, index, entry, payload)
        update_view(self.root, index)
        return entry

    def adopt_many(self, entries: Iterable[IndexEntry]) -> None:
        """Index run folders that are already on disk (reindex after a lost index update)."""
        self._writable().load(entries)

    def supersede(self, old: str, new: str) -> None:
        self._writable().supersede(old, new)
        self.refresh_view()

    def unsupersede(self, old: str) -> str:
        new = self._writable().unsupersede(old)
        self.refresh_view()
        return new

    def mark_backfilled(self, run_id: str) -> None:
        self._writable().mark_backfilled(run_id)

    def refresh_view(self) -> Path:
        """Rewrite `run_index.json` whole from the index (batch commands); each append extends it (`update_view`)."""
        return write_view(self.root, self._writable())

    def add_verdict(self, entry: IndexEntry, scorer: str, record: BaseModel) -> Path | None:
        """Keep a scorer's verdict beside the run, named by scorer and content; never replaces one.

        Returns the new file, or None when the identical verdict is already stored.
        """
        path, written = self.keep_verdict(entry, scorer, record)
        return path if written else None

    def keep_verdict(self, entry: IndexEntry, scorer: str, record: BaseModel) -> tuple[Path, bool]:
        """`add_verdict`, telling the verdict's file even when it was already there, and whether it is new: the
        evaluation room reads that file to write the run's original-format verdict (`evaluation.v1_verdict`)."""
        body = dump_json(record)
        digest = hashlib.sha256(body.encode()).hexdigest()[:12]
        verdicts = self.folder(entry) / VERDICTS_DIR
        if verdicts.is_symlink():
            raise UnsafePathError(f"{verdicts}: is a symbolic link; refused, not followed")
        path = verdicts / verdict_file_name(scorer, digest)
        return path, publish_file(path, body)
