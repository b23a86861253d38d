"""Scores stored runs: store records → scoring evidence → run scores, optionally kept beside each run."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ghost_eval.cases import Case, case_key, load_cases
from ghost_eval.errors import CaseError, GhostEvalError
from ghost_eval.scoring import SCORER_NAME, SCORER_VERSION, RunEvidence, RunScore, score_run
from ghost_eval.store import Problem, RunFilter, RunRecord, Store, bundled_path

__all__ = ["ScoredRun", "default_cases_dir", "evidence_of", "load_case_set", "score_record", "score_store"]


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
        audit_complete=record.written_by_us and bool(record.trace),
    )


def score_record(record: RunRecord, cases: dict[str, Case]) -> RunScore:
    return score_run(evidence_of(record), cases.get(case_key(record.entry.use_case_id)))


@dataclass
class ScoredRun:
    record: RunRecord
    score: RunScore
    verdict_file: Path | None
    """Where the verdict was kept (None when not written or already stored)."""


def score_store(
    store: Store,
    cases: dict[str, Case],
    flt: RunFilter | None = None,
    *,
    write: bool = True,
    problems: list[Problem] | None = None,
) -> Iterator[ScoredRun]:
    """Score every selected run; a run that cannot be read is reported in `problems` and skipped."""
    scorer = f"{SCORER_NAME}@{SCORER_VERSION}"
    for entry in store.runs(flt):
        record = store.read(entry)
        if problems is not None:
            problems.extend(record.problems)
        if not record.readable:
            continue
        score = score_record(record, cases)
        kept = None
        if write:
            try:
                kept = store.add_verdict(entry, scorer, score)
            except (GhostEvalError, OSError) as exc:
                if problems is not None:
                    problems.append(Problem(path=str(record.folder), message=f"verdict not stored: {exc}", run_id=entry.run_id))
        yield ScoredRun(record, score, kept)
