"""Groups stored runs by identity (case × model × effective prompt × environment) and counts passes per group.

Grouping comes from the store's records, never from Promptfoo row positions, so repeats written
by different evals, days or machines land in the same group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from ghost_eval.base.records import Record
from ghost_eval.cases.case import AZURE_DEMO, Case, case_key
from ghost_eval.decide.checks import Check, check_passes
from ghost_eval.decide.passk import pass_at_k, pass_hat_k, wilson_interval
from ghost_eval.evaluation.evaluate import score_record
from ghost_eval.store import RunFilter, RunRecord, Store

__all__ = ["GroupStats", "Outcome", "collect", "group_stats"]


class Outcome(Record):
    """One run judged by a list of checks."""

    run_id: str
    use_case_id: str
    model_id: str
    system_prompt_hash: str | None
    addon_hash: str | None
    run_label: str | None
    environment: str = AZURE_DEMO
    """Where the run ran; runs of different environments are never pooled."""
    suite_version: str | None = None
    """The suite version the run was captured under (None: not recorded); a decision never pools two."""
    passed: bool
    failed_checks: list[int] = []
    """Indexes (into the check list) of the checks this run failed."""


class GroupStats(Record):
    """n runs of one identity, c passes, and what that says at k."""

    use_case_id: str
    model_id: str
    system_prompt_hash: str | None
    environment: str = AZURE_DEMO
    k: int
    n: int
    passes: int
    pass_rate: float | None
    pass_at_k: float | None
    """None when n < k: not enough runs to estimate."""
    pass_hat_k: float | None
    ci_low: float
    ci_high: float
    run_ids: list[str]


def collect(
    store: Store,
    cases: dict[str, Case],
    checks: Sequence[Check],
    *,
    models: Iterable[str] | None = None,
    use_cases: Iterable[str] | None = None,
    keep: Callable[[RunRecord], bool] = lambda _r: True,
    environment: str = AZURE_DEMO,
    suite_version: str | None = None,
) -> list[Outcome]:
    """Score and check every matching stored run of one environment (superseded runs excluded): runs recorded in the
    lab and in Azure face different facts, so a decision never pools them. `suite_version` keeps only the runs of
    that suite version (`unknown`: those that record none); None keeps every run (the caller refuses a mix)."""
    wanted_models = set(models) if models is not None else None
    wanted_cases = {case_key(c) for c in use_cases} if use_cases is not None else None
    outcomes: list[Outcome] = []
    for entry in store.runs(RunFilter(suite_version=suite_version)):
        if wanted_models is not None and entry.model_id not in wanted_models:
            continue
        if wanted_cases is not None and case_key(entry.use_case_id) not in wanted_cases:
            continue
        if (entry.environment or AZURE_DEMO) != environment:
            continue
        record = store.read(entry)
        if not record.readable or not keep(record):
            continue
        score = score_record(record, cases)
        failed = [i for i, check in enumerate(checks) if not check_passes(check, record, score)]
        meta = record.metadata
        outcomes.append(
            Outcome(
                run_id=entry.run_id,
                use_case_id=case_key(entry.use_case_id),
                model_id=entry.model_id,
                system_prompt_hash=entry.system_prompt_hash,
                addon_hash=meta.addon_hash if meta else None,
                run_label=meta.run_label if meta else entry.run_label,
                environment=entry.environment or AZURE_DEMO,
                suite_version=entry.suite_version,
                passed=not failed,
                failed_checks=failed,
            )
        )
    return outcomes


def group_stats(outcomes: Iterable[Outcome], k: int) -> list[GroupStats]:
    groups: dict[tuple[str, str, str | None, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.use_case_id, o.model_id, o.system_prompt_hash, o.environment)].append(o)
    stats = []
    for (case, model, phash, environment), members in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "", kv[0][3])
    ):
        n, c = len(members), sum(m.passed for m in members)
        low, high = wilson_interval(c, n)
        enough = n >= k
        stats.append(
            GroupStats(
                use_case_id=case,
                model_id=model,
                system_prompt_hash=phash,
                environment=environment,
                k=k,
                n=n,
                passes=c,
                pass_rate=c / n if n else None,
                pass_at_k=pass_at_k(n, c, k) if enough else None,
                pass_hat_k=pass_hat_k(n, c, k) if enough else None,
                ci_low=low,
                ci_high=high,
                run_ids=[m.run_id for m in members],
            )
        )
    return stats
