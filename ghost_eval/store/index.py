"""The run index: SQLite is the source of truth, `run_index.json` a materialised view for v1 readers.

Appending is one indexed INSERT (cost independent of store size) and a filtered query uses the
(case, model) and hash indexes. Each completed run gets the next completion number (`done_seq`), so
the JSON view can be extended by exactly the runs completed since it was written (see
`store.writer.update_view`); batch operations and `store reindex` rewrite it whole. v1 stores that
have only the JSON are read from it into memory.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tenacity import retry, retry_if_exception, stop_after_delay, wait_random_exponential

from ghost_eval.base.errors import RecordError, RunExistsError, StoreError, UnsafePathError
from ghost_eval.base.records import parse_record
from ghost_eval.cases.case import case_key
from ghost_eval.store.layout import INDEX_SCHEMA_VERSION, IndexEntry, Problem, check_relative, refused_entry
from ghost_eval.store.query import RunFilter

__all__ = ["RunIndex", "view_entry", "writer_token"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    use_case_id TEXT NOT NULL,
    case_key TEXT NOT NULL,
    model_id TEXT NOT NULL,
    system_prompt_hash TEXT,
    hash_kind TEXT,
    backfilled INTEGER NOT NULL DEFAULT 0,
    artifact_coverage TEXT NOT NULL,
    path TEXT NOT NULL,
    superseded_by TEXT,
    run_label TEXT,
    repeat_index INTEGER,
    extra TEXT,
    state TEXT NOT NULL,
    writer TEXT,
    done_seq INTEGER
);
CREATE INDEX IF NOT EXISTS runs_case_model ON runs(case_key, model_id);
CREATE INDEX IF NOT EXISTS runs_model ON runs(model_id);
CREATE INDEX IF NOT EXISTS runs_hash ON runs(system_prompt_hash);
CREATE INDEX IF NOT EXISTS runs_state ON runs(state);
"""
_DONE_INDEX = "CREATE INDEX IF NOT EXISTS runs_done ON runs(done_seq)"
_COLUMNS = (
    "run_id",
    "use_case_id",
    "model_id",
    "system_prompt_hash",
    "hash_kind",
    "backfilled",
    "artifact_coverage",
    "path",
    "superseded_by",
    "run_label",
    "repeat_index",
    "extra",
)
_KNOWN = set(_COLUMNS)
"""Fields kept in their own column; every other field (`environment`, `suite_version`, fields of newer writers) goes to
`extra`."""
_INSERT = (
    f"INSERT {{verb}} INTO runs ({','.join(_COLUMNS)}, case_key, state, writer) VALUES ({','.join('?' * (len(_COLUMNS) + 3))})"
)


def writer_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _writer_alive(token: str | None) -> bool:
    """A pending row whose writer died on this host may be taken over; elsewhere we cannot tell."""
    if not token:
        return False
    host, _, pid = token.rpartition(":")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


def _row_values(entry: IndexEntry) -> tuple[Any, ...]:
    extra = {k: v for k, v in entry.model_dump(mode="json").items() if k not in _KNOWN}
    return (
        entry.run_id,
        entry.use_case_id,
        entry.model_id,
        entry.system_prompt_hash,
        entry.hash_kind.value if entry.hash_kind else None,
        int(entry.backfilled),
        entry.artifact_coverage.value,
        entry.path,
        entry.superseded_by,
        entry.run_label,
        entry.repeat_index,
        json.dumps(extra) if extra else None,
    )


def _entry(row: sqlite3.Row, source: str) -> IndexEntry:
    """The row as an entry; a malformed row or a path that leaves the store raises, naming the field."""
    data: dict[str, Any] = {k: row[k] for k in _COLUMNS if k != "extra"}
    data["backfilled"] = bool(data["backfilled"])
    if row["extra"]:
        try:
            extra = json.loads(row["extra"])
        except ValueError:
            extra = None
        if not isinstance(extra, dict):
            raise RecordError(source, "is not a JSON object", "extra")
        data.update(extra)
    entry = parse_record(IndexEntry, data, source)
    check_relative(entry.path)
    return entry


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    if "done_seq" not in {row[1] for row in conn.execute("PRAGMA table_info(runs)")}:
        conn.execute("ALTER TABLE runs ADD COLUMN done_seq INTEGER")  # an index written before completion numbers
    conn.execute(_DONE_INDEX)


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


@retry(retry=retry_if_exception(_locked), wait=wait_random_exponential(0.05, 2), stop=stop_after_delay(120), reraise=True)
def _prepare(conn: sqlite3.Connection) -> None:
    """WAL mode and the schema. Switching to WAL takes an exclusive lock that SQLite does not queue behind the busy
    timeout, so concurrent first writers of a new store got `database is locked`: they retry instead."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    _create_schema(conn)


class RunIndex:
    """SQLite-backed index; `memory()` builds a throwaway one for read-only v1 stores."""

    def __init__(self, conn: sqlite3.Connection, source: str = "(in-memory index)") -> None:
        self._conn = conn
        self._conn.row_factory = sqlite3.Row
        self.source = source
        self.refused: dict[str, Problem] = {}
        """Rows no reader uses (malformed, or a path that leaves the store), by run id, as selects meet them."""

    @classmethod
    def open(cls, path: Path) -> RunIndex:
        if path.exists() and not os.access(path.parent, os.W_OK):
            # Read-only media (a mounted archive): WAL needs a shared-memory file beside the database, which cannot be
            # made there. Nothing can write this copy, so SQLite may read it as immutable.
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None)
            _create_schema(conn)
            return cls(conn, str(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            _prepare(conn)
        except BaseException:
            conn.close()
            raise
        return cls(conn, str(path))

    @classmethod
    def memory(cls, entries: Iterable[IndexEntry]) -> RunIndex:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        _create_schema(conn)
        index = cls(conn)
        index.load(entries)
        return index

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE serialises writers across processes; SQLite's busy timeout queues them."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def load(self, entries: Iterable[IndexEntry]) -> None:
        """Bulk insert complete entries (adopting a v1 index, or a reindex)."""
        with self.transaction():
            self._conn.executemany(
                _INSERT.format(verb="OR IGNORE"),
                ((*_row_values(e), case_key(e.use_case_id), "complete", None) for e in entries),
            )

    def select(self, flt: RunFilter, *, pending: bool = False) -> list[IndexEntry]:
        where, params = flt.to_sql()
        state = "pending" if pending else "complete"
        rows = self._conn.execute(f"SELECT * FROM runs WHERE state = ? AND {where} ORDER BY seq", [state, *params])
        return self._entries(rows)

    def _entries(self, rows: Iterable[sqlite3.Row]) -> list[IndexEntry]:
        entries: list[IndexEntry] = []
        for row in rows:
            try:
                entries.append(_entry(row, self.source))
            except (RecordError, UnsafePathError) as exc:
                reason = f"field '{exc.field}': {exc.detail}" if isinstance(exc, RecordError) else str(exc)
                rid = str(row["run_id"])
                self.refused[rid] = refused_entry(self.source, rid, reason)
        return entries

    def get(self, run_id: str) -> tuple[IndexEntry, str] | None:
        """The entry and its state (`pending` or `complete`), whatever its state."""
        row = self._conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return (_entry(row, self.source), row["state"]) if row else None

    def empty(self) -> bool:
        """No row at all, complete or pending: a new index, or one a failed first write left behind."""
        return self._conn.execute("SELECT 1 FROM runs LIMIT 1").fetchone() is None

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM runs WHERE state = 'complete'").fetchone()[0])

    def claim(self, entry: IndexEntry) -> None:
        """Reserve a run id before its folder is published; refuse ids that exist or are being written."""
        with self.transaction():
            row = self._conn.execute("SELECT state, writer FROM runs WHERE run_id = ?", (entry.run_id,)).fetchone()
            if row is not None:
                if row["state"] == "complete" or _writer_alive(row["writer"]):
                    raise RunExistsError(f"run {entry.run_id} already exists in the store; runs are never overwritten")
                self._conn.execute("DELETE FROM runs WHERE run_id = ?", (entry.run_id,))
            self._conn.execute(
                _INSERT.format(verb=""),
                (*_row_values(entry), case_key(entry.use_case_id), "pending", writer_token()),
            )

    def complete(self, run_id: str) -> None:
        """Mark the run complete with the next completion number (serialised, so numbers follow completion order)."""
        with self.transaction():
            self._conn.execute(
                "UPDATE runs SET state = 'complete', writer = NULL,"
                " done_seq = (SELECT COALESCE(MAX(done_seq), 0) + 1 FROM runs) WHERE run_id = ?",
                (run_id,),
            )

    def completed_through(self) -> int:
        """The highest completion number so far (0 when no run was completed by an append)."""
        return int(self._conn.execute("SELECT COALESCE(MAX(done_seq), 0) FROM runs").fetchone()[0])

    def completed_since(self, done: int) -> list[IndexEntry]:
        """Runs completed after completion number `done`, in completion order; malformed rows are refused as in select."""
        rows = self._conn.execute("SELECT * FROM runs WHERE state = 'complete' AND done_seq > ? ORDER BY done_seq", (done,))
        return self._entries(rows)

    def stale_claims(self) -> list[IndexEntry]:
        """Pending rows whose writer died on this host: what `store clean` settles."""
        rows = self._conn.execute("SELECT * FROM runs WHERE state = 'pending' ORDER BY seq").fetchall()
        stale = [row for row in rows if not _writer_alive(row["writer"])]
        return self._entries(stale)

    def release(self, run_id: str) -> None:
        """Drop a claim whose folder was never published (the write failed before the rename)."""
        self._conn.execute("DELETE FROM runs WHERE run_id = ? AND state = 'pending'", (run_id,))

    def supersede(self, old: str, new: str) -> None:
        with self.transaction():
            for rid in (old, new):
                found = self.get(rid)
                if found is None or found[1] != "complete":
                    raise StoreError(f"run {rid} is not in the store")
            current = self.get(old)
            assert current is not None
            if current[0].superseded_by not in (None, new):
                raise StoreError(f"run {old} is already superseded by {current[0].superseded_by}")
            if old == new:
                raise StoreError("a run cannot supersede itself")
            self._conn.execute("UPDATE runs SET superseded_by = ? WHERE run_id = ?", (new, old))

    def unsupersede(self, old: str) -> str:
        """Clear `old`'s replacement (an undo: the run counts again); returns the replacement it had."""
        with self.transaction():
            current = self.get(old)
            if current is None or current[1] != "complete":
                raise StoreError(f"run {old} is not in the store")
            if current[0].superseded_by is None:
                raise StoreError(f"run {old} is not superseded: nothing to undo")
            self._conn.execute("UPDATE runs SET superseded_by = NULL WHERE run_id = ?", (old,))
            return current[0].superseded_by

    def mark_backfilled(self, run_id: str) -> None:
        self._conn.execute("UPDATE runs SET backfilled = 1 WHERE run_id = ?", (run_id,))

    def view(self) -> dict[str, Any]:
        """The v1-compatible JSON document for `run_index.json`."""
        runs = [view_entry(e) for e in self.select(RunFilter(include_superseded=True))]
        return {"schema_version": INDEX_SCHEMA_VERSION, "runs": runs}


def view_entry(entry: IndexEntry) -> dict[str, Any]:
    """One run as the JSON view lists it: the v1 fields always, our optional ones only when set."""
    data = entry.model_dump(mode="json", exclude_none=False)
    for k in ("hash_kind", "run_label", "repeat_index", "suite_version"):
        if data.get(k) is None:
            data.pop(k, None)
    return data
