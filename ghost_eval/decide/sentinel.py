"""Go/no-go for a model migration: the sentinel cases on the current and the candidate model.

Failures are sorted by a written decision tree (`sentinel/criteria.yaml`): a safety regression
blocks the migration; a diagnosis-only drop asks for more repeats before anyone decides.
Earlier sentinel records for the same model id are compared too, so a behaviour change under an
unchanged model id shows up as drift.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import Record, load_yaml_record
from ghost_eval.cases.case import AZURE_DEMO, Case, case_key
from ghost_eval.decide.checks import Check, CheckKind, describe
from ghost_eval.decide.groups import GroupStats, Outcome, collect, group_stats
from ghost_eval.decide.passk import runs_needed
from ghost_eval.decide.records import decision_folder, latest_record_id, write_decision
from ghost_eval.store import RunRecord, Store, single_suite_version

__all__ = ["CaseVerdict", "SentinelCriteria", "SentinelDecision", "decide_sentinel", "load_criteria"]

Branch = Literal["block", "more_repeats"]


class SentinelCriteria(Record):
    """`sentinel/criteria.yaml`: the pass criteria and the failure decision tree, as data."""

    schema_version: str = "1"
    cases: list[str] = Field(min_length=1)
    repeats: int = Field(ge=1)
    """k: runs per case and model, and the k of pass^k."""
    min_pass_hat_k: float = Field(ge=0, le=1)
    regression_margin: float = Field(ge=0, le=1)
    """A case regresses when the candidate's pass rate is below the current one's by more than this."""
    drift_margin: float = Field(ge=0, le=1)
    """A change this large for the same model id across records is reported as drift."""
    checks: dict[str, list[Check]]
    """Per case, what makes one run pass."""
    on_failure: dict[CheckKind, Branch]
    """Which branch of the decision tree a failing check of each kind takes."""
    run_label: str | None = None
    """Only runs with this label count (None: every run of the case and model)."""
    addon_runs: bool = False
    """Whether runs made with a prompt addon (variant experiments) count. A migration is decided under the production
    prompt: by default those runs are left out, so a variant's failures or successes never move the sentinel."""
    environment: str = AZURE_DEMO
    """Where the runs that decide were recorded (`azure_demo`, `lab`, …); runs of other environments never count."""


class CaseVerdict(Record):
    use_case_id: str
    current: GroupStats | None
    candidate: GroupStats | None
    verdict: Literal["pass", "block", "more_repeats", "insufficient"]
    branch: str
    """The branch of the decision tree that applied, in words."""
    failing_checks: list[str] = []


class SentinelDecision(Record):
    schema_version: str = "2"
    """2: the suite version of the runs decided on."""
    kind: Literal["sentinel"] = "sentinel"
    current_model: str
    candidate_model: str
    k: int
    suite_version: str | None = None
    """The one suite version of the runs decided on (a decision never pools two); None when no run records one."""
    criteria: dict[str, list[str]]
    per_case: list[CaseVerdict]
    decision: Literal["go", "no-go", "insufficient"]
    reasons: list[str]
    more_runs_needed: dict[str, int] = {}
    drift: list[str] = []
    run_ids: list[str]
    decided_at: datetime
    previous: str | None = None


def load_criteria(path: Path) -> SentinelCriteria:
    criteria = load_yaml_record(SentinelCriteria, path)
    missing = [c for c in criteria.cases if case_key(c) not in criteria.checks]
    if missing:
        raise RecordError(path, f"no checks for cases {missing}", "checks")
    return criteria


def _stats(outcomes: list[Outcome], model: str, k: int) -> GroupStats | None:
    mine = [o.model_copy(update={"system_prompt_hash": None}) for o in outcomes if o.model_id == model]
    groups = group_stats(mine, k)
    return groups[0] if groups else None


def _failing_kinds(outcomes: list[Outcome], model: str) -> dict[int, int]:
    counts: dict[int, int] = {}
    for o in outcomes:
        if o.model_id == model:
            for i in o.failed_checks:
                counts[i] = counts.get(i, 0) + 1
    return counts


def _case_verdict(
    case: str, outcomes: list[Outcome], current: str, candidate: str, criteria: SentinelCriteria, missing: dict[str, int]
) -> CaseVerdict:
    k = criteria.repeats
    checks = criteria.checks[case]
    cur, cand = _stats(outcomes, current, k), _stats(outcomes, candidate, k)
    short = {m: runs_needed(s.n if s else 0, k) for m, s in ((current, cur), (candidate, cand))}
    if any(short.values()):
        missing.update({f"{case}/{m}": n for m, n in short.items() if n})
        return CaseVerdict(
            use_case_id=case,
            current=cur,
            candidate=cand,
            verdict="insufficient",
            branch=f"fewer than k={k} runs: no decision on this case yet",
        )
    assert cur is not None and cand is not None and cand.pass_hat_k is not None
    assert cur.pass_rate is not None and cand.pass_rate is not None
    regressed = cand.pass_rate < cur.pass_rate - criteria.regression_margin
    below = cand.pass_hat_k < criteria.min_pass_hat_k
    if not regressed and not below:
        return CaseVerdict(
            use_case_id=case,
            current=cur,
            candidate=cand,
            verdict="pass",
            branch=f"candidate pass^{k} {cand.pass_hat_k:.2f} meets {criteria.min_pass_hat_k}; no regression",
        )
    cand_fail, cur_fail = _failing_kinds(outcomes, candidate), _failing_kinds(outcomes, current)
    worse = [i for i in cand_fail if cand_fail[i] / cand.n > cur_fail.get(i, 0) / cur.n] or list(cand_fail)
    branches = {criteria.on_failure.get(checks[i].kind, "block") for i in worse}
    verdict: Literal["block", "more_repeats"] = "block" if "block" in branches or not branches else "more_repeats"
    named = [describe(checks[i]) for i in worse]
    why = "regressed against the current model" if regressed else f"pass^{k} below {criteria.min_pass_hat_k}"
    branch = f"{why}; failing: {', '.join(named)} → " + (
        "a safety check failed: block the migration"
        if verdict == "block"
        else "only non-safety checks failed: run more repeats before deciding"
    )
    return CaseVerdict(use_case_id=case, current=cur, candidate=cand, verdict=verdict, branch=branch, failing_checks=named)


def _drift(folder: Path, per_case: list[CaseVerdict], margin: float) -> list[str]:
    """Same model id, different behaviour than in earlier records: consistent with, not proof of, a backend update."""
    notes: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            old = SentinelDecision.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            notes.append(f"{path}: unreadable earlier record, skipped for drift")
            continue
        for prev in old.per_case:
            for now in per_case:
                if case_key(now.use_case_id) != case_key(prev.use_case_id):  # m and use_case_m are one case
                    continue
                for side in ("current", "candidate"):
                    a: GroupStats | None = getattr(prev, side)
                    for b in (now.current, now.candidate):
                        if (
                            a
                            and b
                            and a.model_id == b.model_id
                            and a.pass_rate is not None
                            and b.pass_rate is not None
                            and abs(a.pass_rate - b.pass_rate) > margin
                        ):
                            notes.append(
                                f"case {now.use_case_id}, model {b.model_id}: pass rate {a.pass_rate:.2f} in record {path.stem} "
                                f"→ {b.pass_rate:.2f} now under the same model id; consistent with, not proof of, a silent "
                                "backend update"
                            )
    return sorted(set(notes))


def decide_sentinel(
    store: Store,
    cases: dict[str, Case],
    criteria: SentinelCriteria,
    current: str,
    candidate: str,
    suite_version: str | None = None,
) -> tuple[SentinelDecision, Path]:
    """Go or no-go from the stored runs of one suite version (`suite_version` selects it; runs of two versions raise
    `SuiteVersionError` rather than being pooled)."""
    missing: dict[str, int] = {}

    def counts(record: RunRecord) -> bool:
        meta = record.metadata
        if criteria.run_label is not None and not (meta and meta.run_label == criteria.run_label):
            return False
        return criteria.addon_runs or not (meta and meta.addon_hash)

    by_case = {
        case: collect(
            store,
            cases,
            criteria.checks[case],
            models=[current, candidate],
            use_cases=[case],
            keep=counts,
            environment=criteria.environment,
            suite_version=suite_version,
        )
        for case in (case_key(raw) for raw in criteria.cases)
    }
    decided_version = single_suite_version(o.suite_version for outcomes in by_case.values() for o in outcomes)
    run_ids = [o.run_id for outcomes in by_case.values() for o in outcomes]
    per_case = [_case_verdict(case, outcomes, current, candidate, criteria, missing) for case, outcomes in by_case.items()]
    verdicts = {v.verdict for v in per_case}
    if "block" in verdicts:
        decision: Literal["go", "no-go", "insufficient"] = "no-go"
        reasons = [f"case {v.use_case_id}: {v.branch}" for v in per_case if v.verdict == "block"]
    elif verdicts & {"insufficient", "more_repeats"}:
        decision = "insufficient"
        for v in per_case:
            if v.verdict == "more_repeats":
                for model in (current, candidate):
                    missing[f"{v.use_case_id}/{model}"] = missing.get(f"{v.use_case_id}/{model}", 0) + criteria.repeats
        reasons = [f"{sum(missing.values())} more runs needed: " + ", ".join(f"{key}: {n}" for key, n in sorted(missing.items()))]
    else:
        decision = "go"
        reasons = [f"every sentinel case passes on {candidate} with no regression against {current}"]
    folder = decision_folder(store, "sentinel", "migrations")
    record = SentinelDecision(
        current_model=current,
        candidate_model=candidate,
        k=criteria.repeats,
        suite_version=decided_version,
        criteria={c: [describe(x) for x in criteria.checks[case_key(c)]] for c in criteria.cases},
        per_case=per_case,
        decision=decision,
        reasons=reasons,
        more_runs_needed=missing,
        drift=_drift(folder, per_case, criteria.drift_margin),
        run_ids=sorted(run_ids),
        decided_at=datetime.now(UTC),
        previous=latest_record_id(folder),
    )
    _, path = write_decision(folder, record, "sentinel.md.j2")
    return record, path
