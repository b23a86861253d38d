"""Selected runs with their time, prompt version and deterministic score: what trends, queries and diffs read.

A run's time is when it started (metadata `started_at`, else `timestamp_utc`), else the time in its run id;
a run with none of the three cannot be placed on a time axis and is named as a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import score_record
from ghost_eval.run.identity import HashKind, RunMetadata, parse_run_id
from ghost_eval.scoring import RunScore
from ghost_eval.store import Problem, RunFilter, Store
from ghost_eval.store.layout import IndexEntry

__all__ = ["Progress", "TimedRun", "parse_when", "scored_runs"]

Progress = Callable[[Sequence[IndexEntry]], Iterable[IndexEntry]]
"""Wraps the selected runs as they are scored (the CLI shows a progress bar; the library default is `iter`)."""


@dataclass(frozen=True)
class TimedRun:
    entry: IndexEntry
    at: datetime
    """When the run started, in UTC."""
    prompt_hash: str
    """The run's prompt hash as the index holds it (`-` when the run has none)."""
    hash_kind: HashKind
    """What the hash covers: the effective prompt, or (v1 runs) the agent's source file."""
    score: RunScore
    cluster: str
    """The run this one copies (metadata `derived_from`), else its own id: runs of one cluster are one independent
    observation in an interval (`trend.clustered_rate`)."""
    addon: str | None = None
    """The prompt addon the run was made with, as its metadata records it (`name (sha256[:8])`); None without one.
    v1-shaped runs made with an addon may record no prompt hash, so this is what tells them from base-prompt runs."""


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def parse_when(text: str) -> datetime:
    """An ISO date or date-time from the command line (`2026-03-02`, `2026-03-02T10:00`), as UTC."""
    try:
        return _utc(datetime.fromisoformat(text))
    except ValueError:
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD) or an ISO date-time") from None


def _run_time(meta: RunMetadata | None, entry: IndexEntry) -> datetime | None:
    when = (meta.started_at or meta.timestamp_utc) if meta else None
    if when is None:
        parsed = parse_run_id(entry.run_id)
        when = parsed[2] if parsed else None
    return _utc(when) if when else None


def _addon(meta: RunMetadata | None) -> str | None:
    if meta is None or not (meta.addon_name or meta.addon_hash):
        return None
    if meta.addon_name and meta.addon_hash:
        return f"{meta.addon_name} ({meta.addon_hash[:8]})"
    return meta.addon_name or (meta.addon_hash or "")[:8]


def scored_runs(
    store: Store, cases: dict[str, Case], flt: RunFilter | None, problems: list[Problem], each: Progress = iter
) -> list[TimedRun]:
    """Every selected, readable run scored afresh, oldest first; unreadable or undated runs go to `problems`."""
    timed: list[TimedRun] = []
    for entry in each(store.runs(flt)):
        record = store.read(entry, scoring_only=True)
        problems.extend(record.problems)
        if not record.readable:
            continue
        meta = store.read_metadata(entry)
        at = _run_time(meta, entry)
        if at is None:
            problems.append(
                Problem(path=str(record.folder), message="no start time in metadata or run id; left off the time axis")
            )
            continue
        kind = entry.hash_kind or (record.metadata.hash_kind if record.metadata else HashKind.AGENT_SOURCE)
        cluster = (meta.derived_from if meta else None) or entry.run_id
        score = score_record(record, cases)
        timed.append(TimedRun(entry, at, entry.system_prompt_hash or "-", kind, score, cluster, _addon(meta)))
    problems.extend(store.problems)
    return sorted(timed, key=lambda t: (t.at, t.entry.run_id))
