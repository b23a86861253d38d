"""Scores stored runs: store records → scoring evidence → run scores, optionally kept beside each run."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ghost_eval.cases import Case, case_key, load_case_path
from ghost_eval.errors import CaseError, GhostEvalError
from ghost_eval.scoring import SCORER, RunEvidence, RunScore, score_run
from ghost_eval.store import IndexEntry, Problem, RunFilter, RunRecord, Store, bundled_path

__all__ = [
    "ScoredRun",
    "BUNDLED_CASES",
    "CasePath",
    "case_folders",
    "evidence_of",
    "load_case_set",
    "score_record",
    "score_store",
]

_CHUNK = 200
"""Runs per task sent to a scoring process: large enough to amortise the hand-off, small enough to balance."""


BUNDLED_CASES = "bundled"
"""On a case path, the cases shipped with the package."""
CasePath = str | Path | Sequence[str | Path] | None
"""Case folders: one folder, a list, or a string joined by `os.pathsep`; `bundled` names the shipped cases;
absent means the bundled cases alone."""


def case_folders(case_path: CasePath = None, base: Path | None = None) -> list[Path]:
    """The folders of a case path, relative entries resolved against `base` (a config's folder)."""
    if case_path is None or case_path == "":
        return [bundled_path("cases")]
    if isinstance(case_path, Path):
        entries: list[str | Path] = [case_path]
    elif isinstance(case_path, str):
        entries = list(case_path.split(os.pathsep))
    else:
        entries = list(case_path)
    folders = []
    for entry in entries:
        path = bundled_path("cases") if entry == BUNDLED_CASES else Path(entry)
        folders.append(path if base is None or path.is_absolute() else base / path)
    return folders


def load_case_set(case_path: CasePath = None, base: Path | None = None) -> tuple[dict[str, Case], list[CaseError]]:
    """Every case on the case path; files that fail to load (or clash) come back as errors, the rest still load."""
    return load_case_path(case_folders(case_path, base), bundled_path("cases"))


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
    """Score every selected run, in store order; unreadable runs are reported in `problems` and skipped.

    With jobs > 1 the runs are scored by a process pool (scoring is CPU-bound and each process holds
    its own store handle and a copy of `cases`).
    """
    entries = store.runs(flt)
    if jobs <= 1 or len(entries) < 2 * _CHUNK:
        results: Iterable[tuple[ScoredRun | None, list[Problem]]] = (_score_entry(store, cases, e, write) for e in entries)
    else:
        chunks = [entries[i : i + _CHUNK] for i in range(0, len(entries), _CHUNK)]
        pool = ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(str(store.root), cases, write))
        with pool:
            results = [item for chunk in pool.map(_score_chunk, chunks) for item in chunk]
    for scored, found in results:
        if problems is not None:
            problems.extend(found)
        if scored is not None:
            yield scored
