"""Writes the missing metadata.json of old runs as new files, marked `backfilled`, never touching existing ones."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ghost_eval.base.errors import UnsafePathError
from ghost_eval.base.records import dump_json
from ghost_eval.run.identity import HashKind, RunMetadata, parse_run_id
from ghost_eval.store.artifact_store import Store
from ghost_eval.store.layout import METADATA_FILE, IndexEntry, Problem, refused_run
from ghost_eval.store.query import RunFilter
from ghost_eval.store.writer import publish_file

__all__ = ["BackfillReport", "backfill_metadata"]


@dataclass
class BackfillReport:
    written: list[str] = field(default_factory=list)
    """Run ids that received a backfilled metadata.json."""
    problems: list[Problem] = field(default_factory=list)
    """Runs left alone because their folder leaves the store."""


def _metadata_for(entry: IndexEntry) -> RunMetadata:
    parsed = parse_run_id(entry.run_id)
    return RunMetadata(
        run_id=entry.run_id,
        use_case_id=entry.use_case_id,
        model_id=entry.model_id,
        system_prompt_hash=entry.system_prompt_hash,
        hash_kind=entry.hash_kind or (HashKind.AGENT_SOURCE if entry.system_prompt_hash else HashKind.UNKNOWN),
        started_at=parsed[2] if parsed else None,
        backfilled=True,
    )


def backfill_metadata(store: Store) -> BackfillReport:
    report = BackfillReport()
    for entry in store.runs(RunFilter(include_superseded=True)):
        try:
            folder = store.folder(entry)
        except UnsafePathError as exc:
            report.problems.append(refused_run(store.root, entry, exc))
            continue
        if not folder.is_dir() or os.path.lexists(folder / METADATA_FILE):  # a symlinked sidecar is not replaced
            continue
        if publish_file(folder / METADATA_FILE, dump_json(_metadata_for(entry))):
            store.mark_backfilled(entry.run_id)
            report.written.append(entry.run_id)
    if report.written:
        store.refresh_view()
    return report
