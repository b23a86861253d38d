"""Scores stored runs: store records → scoring evidence → run scores, optionally kept beside each run."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ghost_eval.base.errors import CaseError, GhostEvalError
from ghost_eval.cases.case import Case, case_key, load_case_path
from ghost_eval.evaluation.v1_verdict import add_verdict
from ghost_eval.evaluation.verdict_cache import content_hash, find_cached, run_digest
from ghost_eval.scoring import SCORER, RunEvidence, RunScore, TeamCheck, score_run
from ghost_eval.scoring.team import team_checks_signature
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
        prompt=record.prompt,
        audit_complete=record.written_by_us and record.has_trace,
    )


def score_record(
    record: RunRecord,
    cases: dict[str, Case],
    case_hashes: dict[str, str] | None = None,
    team_checks: Sequence[TeamCheck] = (),
) -> RunScore:
    """The run's score, with the hash of the case it was scored against (`case_hashes` spares computing it) and the
    outcomes of the teams' checks given."""
    key = case_key(record.entry.use_case_id)
    case = cases.get(key)
    score = score_run(evidence_of(record), case, team_checks)
    if case is None:
        return score
    case_hash = case_hashes[key] if case_hashes is not None else content_hash(case)
    return score.model_copy(update={"case_hash": case_hash})


class ScoredRun:
    """A scored run: its score as a record and as JSON (`RunScore.model_dump_json`), each made from the other when first
    read. A scoring process hands back only the JSON: unpickling the records cost the parent as much as reading the
    runs, and `ghost-eval score --format jsonl` prints the JSON as it comes."""

    def __init__(
        self, entry: IndexEntry, verdict_file: Path | None, *, score: RunScore | None = None, json: str | None = None
    ) -> None:
        if score is None and json is None:
            raise ValueError("a scored run needs its score or its score's JSON")
        self.entry = entry
        self.verdict_file = verdict_file
        """Where the verdict was kept (None when not written or already stored)."""
        self._score = score
        self._json = json

    @property
    def score(self) -> RunScore:
        if self._score is None:
            self._score = RunScore.model_validate_json(self._json or "")
        return self._score

    @property
    def json(self) -> str:
        if self._json is None:
            self._json = self.score.model_dump_json()
        return self._json


@dataclass(frozen=True)
class _Scoring:
    """What scoring a run needs besides the run: the store, the cases (and their hashes), whether to keep verdicts, the
    teams' checks to run (and their signature, part of the verdict cache's key)."""

    store: Store
    cases: dict[str, Case]
    write: bool
    case_hashes: dict[str, str]
    team_checks: tuple[TeamCheck, ...] = ()

    @classmethod
    def of(cls, store: Store, cases: dict[str, Case], write: bool, team_checks: Sequence[TeamCheck] = ()) -> _Scoring:
        return cls(store, cases, write, {k: content_hash(c) for k, c in cases.items()}, tuple(team_checks))

    @property
    def team_signature(self) -> str:
        return team_checks_signature((c.name, c.version) for c in self.team_checks)


def _stored(job: _Scoring, entry: IndexEntry) -> tuple[RunScore | None, str | None]:
    """The run's stored verdict when scorer, case and run content are all unchanged (else None), and the run's digest."""
    try:
        folder = job.store.folder(entry)
    except GhostEvalError:
        return None, None  # the reader names the refused path
    digest = run_digest(folder, entry)
    case_hash = job.case_hashes.get(case_key(entry.use_case_id))
    cached = find_cached(folder, SCORER, case_hash, digest, job.team_signature) if digest else None
    if cached is None:
        return None, digest
    try:
        return RunScore.model_validate_json(cached), digest
    except ValidationError:
        return None, digest  # a verdict this code cannot read is recomputed, not trusted


def _score_entry(job: _Scoring, entry: IndexEntry) -> tuple[ScoredRun | None, list[Problem]]:
    """Score one run, or reuse its stored verdict (see `_stored`); a run that cannot be read yields only its problems."""
    stored, digest = _stored(job, entry)
    if stored is not None:
        return ScoredRun(entry, None, score=stored), []
    record = job.store.read(entry, scoring_only=True)
    problems = list(record.problems)
    if not record.readable:
        return None, problems
    score = score_record(record, job.cases, job.case_hashes, job.team_checks)
    if not problems:  # a run with problems is re-read every time, so its problems are always reported
        score = score.model_copy(update={"run_digest": digest})
    kept = None
    if job.write:
        try:
            kept = add_verdict(job.store, entry, SCORER, score)
        except (GhostEvalError, OSError) as exc:
            problems.append(Problem(path=str(record.folder), message=f"verdict not stored: {exc}", run_id=entry.run_id))
    return ScoredRun(entry, kept, score=score), problems


_worker: _Scoring | None = None
"""Each pool process opens the store once and keeps the caller's cases."""


def _init_worker(root: str, cases: dict[str, Case], write: bool, team_checks: tuple[TeamCheck, ...]) -> None:
    global _worker
    _worker = _Scoring.of(Store(Path(root)), cases, write, team_checks)


_Portable = tuple[str | None, Path | None, list[Problem]]
"""What a scoring process hands back for one run: the score's JSON (None: unreadable), the verdict file, problems."""


def _score_chunk(entries: Sequence[IndexEntry]) -> list[_Portable]:
    assert _worker is not None
    done = (_score_entry(_worker, e) for e in entries)
    return [(None, None, found) if scored is None else (scored.json, scored.verdict_file, found) for scored, found in done]


def _received(entries: Sequence[IndexEntry], done: list[_Portable]) -> Iterator[tuple[ScoredRun | None, list[Problem]]]:
    for entry, (json, kept, found) in zip(entries, done, strict=True):
        yield (None if json is None else ScoredRun(entry, kept, json=json)), found


def score_store(
    store: Store,
    cases: dict[str, Case],
    flt: RunFilter | None = None,
    *,
    entries: Sequence[IndexEntry] | None = None,
    write: bool = True,
    problems: list[Problem] | None = None,
    jobs: int = 1,
    team_checks: Sequence[TeamCheck] = (),
) -> Iterator[ScoredRun]:
    """Score every selected run, in store order, yielding each as it is scored; unreadable runs are reported in
    `problems` and skipped. Nothing is collected: memory stays flat however large the store.

    `entries`, when given, are the runs already selected (`flt` is then not used). `team_checks` run on every run
    after the built-in checks; a stored verdict is reused only when it holds outcomes of the same checks and versions.
    With jobs > 1 the runs are scored by a process pool (scoring is CPU-bound and each process holds
    its own store handle and a copy of `cases`).
    """
    entries = store.runs(flt) if entries is None else entries
    results: Iterable[tuple[ScoredRun | None, list[Problem]]]
    if jobs <= 1 or len(entries) < 2 * _CHUNK:
        job = _Scoring.of(store, cases, write, team_checks)
        results = (_score_entry(job, e) for e in entries)
        yield from _kept(results, problems)
        return
    chunks = [entries[i : i + _CHUNK] for i in range(0, len(entries), _CHUNK)]
    pool = ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(str(store.root), cases, write, tuple(team_checks)))
    try:
        handed = zip(chunks, pool.map(_score_chunk, chunks), strict=True)
        results = (item for chunk, done in handed for item in _received(chunk, done))
        yield from _kept(results, problems)
    finally:
        pool.shutdown(cancel_futures=True)  # a caller that stops early leaves no chunk running


def _kept(results: Iterable[tuple[ScoredRun | None, list[Problem]]], problems: list[Problem] | None) -> Iterator[ScoredRun]:
    for scored, found in results:
        if problems is not None:
            problems.extend(found)
        if scored is not None:
            yield scored
