"""Scores stored runs: store records → scoring evidence → run scores, optionally kept beside each run."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ghost_eval.cases import Case, case_key, load_cases
from ghost_eval.errors import CaseError, GhostEvalError
from ghost_eval.scoring import SCORER, RunEvidence, RunScore, score_run
from ghost_eval.store import IndexEntry, Problem, RunFilter, RunRecord, Store, bundled_path

__all__ = ["ScoredRun", "default_cases_dir", "evidence_of", "load_case_set", "score_record", "score_store"]

_CHUNK = 200
"""Runs per task sent to a scoring process: large enough to amortise the hand-off, small enough to balance."""


def default_cases_dir(explicit: str | Path | None = None) -> Path:
    return Path(explicit) if explicit else bundled_path("cases")


def load_case_set(explicit: str | Path | None = None) -> tuple[dict[str, Case], list[CaseError]]:
    return load_cases(default_cases_dir(explicit))


def evidence_of(record: RunRecord) -> RunEvidence:
    """v1 runs never audited inspector calls and cut outputs to 200 characters: their audit is incomplete."""
    return RunEvidence(
        run_id=record.entry.run_id,
        use_case_id=record.entry.use_case_id,
        model_id=record.entry.model_id,
        report=record.report or "",
        result=record.result,
        audit=record.audit,
        trace=record.trace,
        snapshot=record.snapshot,
        environment=record.entry.environment,
        audit_complete=record.written_by_us and record.has_trace,
    )


def score_record(record: RunRecord, cases: dict[str, Case]) -> RunScore:
    return score_run(evidence_of(record), cases.get(case_key(record.entry.use_case_id)))


@dataclass
class ScoredRun:
    entry: IndexEntry
    score: RunScore
    verdict_file: Path | None
    """Where the verdict was kept (None when not written or already stored)."""


def _score_entry(store: Store, cases: dict[str, Case], entry: IndexEntry, write: bool) -> tuple[ScoredRun | None, list[Problem]]:
    """Score one run; a run that cannot be read yields only its problems."""
    record = store.read(entry, scoring_only=True)
    problems = list(record.problems)
    if not record.readable:
        return None, problems
    score = score_record(record, cases)
    kept = None
    if write:
        try:
            kept = store.add_verdict(entry, SCORER, score)
        except (GhostEvalError, OSError) as exc:
            problems.append(Problem(path=str(record.folder), message=f"verdict not stored: {exc}", run_id=entry.run_id))
    return ScoredRun(entry, score, kept), problems


_worker: tuple[Store, dict[str, Case], bool] | None = None
"""Each pool process opens the store once and keeps the caller's cases."""


def _init_worker(root: str, cases: dict[str, Case], write: bool) -> None:
    global _worker
    _worker = (Store(Path(root)), cases, write)


def _score_chunk(entries: list[IndexEntry]) -> list[tuple[ScoredRun | None, list[Problem]]]:
    assert _worker is not None
    store, cases, write = _worker
    return [_score_entry(store, cases, e, write) for e in entries]


def score_store(
    store: Store,
    cases: dict[str, Case],
    flt: RunFilter | None = None,
    *,
    write: bool = True,
    problems: list[Problem] | None = None,
    jobs: int = 1,
) -> Iterator[ScoredRun]:
    """Score every selected run, in store order, yielding each as it is scored; unreadable runs are reported in
    `problems` and skipped. Nothing is collected: memory stays flat however large the store.

    With jobs > 1 the runs are scored by a process pool (scoring is CPU-bound and each process holds
    its own store handle and a copy of `cases`).
    """
    entries = store.runs(flt)
    results: Iterable[tuple[ScoredRun | None, list[Problem]]]
    if jobs <= 1 or len(entries) < 2 * _CHUNK:
        results = (_score_entry(store, cases, e, write) for e in entries)
        yield from _kept(results, problems)
        return
    chunks = [entries[i : i + _CHUNK] for i in range(0, len(entries), _CHUNK)]
    pool = ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(str(store.root), cases, write))
    try:
        results = (item for chunk in pool.map(_score_chunk, chunks) for item in chunk)
        yield from _kept(results, problems)
    finally:
        pool.shutdown(cancel_futures=True)  # a caller that stops early leaves no chunk running


def _kept(results: Iterable[tuple[ScoredRun | None, list[Problem]]], problems: list[Problem] | None) -> Iterator[ScoredRun]:
    for scored, found in results:
        if problems is not None:
            problems.extend(found)
        if scored is not None:
            yield scored
