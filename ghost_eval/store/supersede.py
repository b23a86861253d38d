"""Which supersessions make sense: a replacement is a re-run of the same case on the same model, and never a cycle."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Literal

from ghost_eval.base.errors import StoreError
from ghost_eval.base.records import Record
from ghost_eval.cases.case import case_key
from ghost_eval.store.artifact_store import Store
from ghost_eval.store.layout import IndexEntry
from ghost_eval.store.query import RunFilter

__all__ = [
    "SUPERSESSION_LOG",
    "SupersessionEvent",
    "check_supersession",
    "cycle_through",
    "mismatch",
    "supersede",
    "undo_supersede",
]

SUPERSESSION_LOG = ".index/supersessions.jsonl"


def mismatch(old: IndexEntry, new: IndexEntry) -> str | None:
    """Why `new` is no replacement for `old` (another case or model), or None when it is one."""
    if case_key(old.use_case_id) != case_key(new.use_case_id):
        return (
            f"run {new.run_id} is use case {new.use_case_id}, run {old.run_id} is {old.use_case_id}: "
            "a replacement re-runs the same case"
        )
    if old.model_id != new.model_id:
        return (
            f"run {new.run_id} is model {new.model_id}, run {old.run_id} is {old.model_id}: a replacement re-runs the same model"
        )
    return None


def cycle_through(start: str, superseded_by: Mapping[str, str | None]) -> list[str] | None:
    """The runs of the supersession cycle `start` is in (start first), or None; a cycle hides every run in it."""
    chain = [start]
    while (nxt := superseded_by.get(chain[-1])) is not None:
        if nxt == start:
            return chain
        if nxt in chain:
            return None  # a cycle further on, which does not pass through `start`
        chain.append(nxt)
    return None


def check_supersession(store: Store, old: str, new: str, pending: Mapping[str, str] | None = None) -> None:
    """Raise StoreError when `new` cannot replace `old`: unknown, itself, another case or model, or a cycle.

    `pending` holds supersessions about to be recorded with this one (old → new), so a cycle among them is
    refused too.
    """
    if old == new:
        raise StoreError(f"run {old} cannot supersede itself")
    why = mismatch(store.get(old), store.get(new))
    if why is not None:
        raise StoreError(why)
    every = {e.run_id: e.superseded_by for e in store.runs(RunFilter(include_superseded=True))}
    every |= dict(pending or {})
    every[old] = new
    cycle = cycle_through(old, every)
    if cycle is not None:
        raise StoreError(f"superseding {old} by {new} makes a cycle ({' → '.join([*cycle, old])}): it would hide them all")


def supersede(store: Store, old: str, new: str) -> None:
    """Record that `new` replaces `old`, after the checks above; the old run's files are never touched."""
    check_supersession(store, old, new)
    store.supersede(old, new)
    _log(store, "supersede", old, new)


def undo_supersede(store: Store, old: str) -> str:
    """Make `old` count again; returns the run that had replaced it. Both changes stay in the log."""
    new = store.unsupersede(old)
    _log(store, "undo", old, new)
    return new


class SupersessionEvent(Record):
    """One line of `.index/supersessions.jsonl`: every supersession and every undo, in order, never rewritten."""

    schema_version: str = "1"
    action: Literal["supersede", "undo"]
    old: str
    new: str
    at: datetime


def _log(store: Store, action: Literal["supersede", "undo"], old: str, new: str) -> None:
    event = SupersessionEvent(action=action, old=old, new=new, at=datetime.now(UTC))
    path = store.root / SUPERSESSION_LOG
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, (event.model_dump_json() + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
