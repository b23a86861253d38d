"""Trends per model × prompt hash over time, and the questions asked of them.

Rates come with Wilson intervals (95 %): a rate over 5 runs is shown as the range it is. The diagnosis/safety
gap is the difference of two rates over the same runs, shown as a point value.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import Field

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.records import Record
from ghost_eval.decide import wilson_interval
from ghost_eval.report.timeline import TimedRun
from ghost_eval.run.identity import HashKind
from ghost_eval.scoring.registry import criterion_labels

__all__ = [
    "TREND_SCHEMA_VERSION",
    "ChangeReport",
    "Onset",
    "Period",
    "Rate",
    "Summary",
    "TrendPoint",
    "TrendReport",
    "before_after",
    "build_trend",
    "clustered_rate",
    "onset",
    "rate",
    "summarise",
]

TREND_SCHEMA_VERSION = "2"
"""2: each point names its addon and its cases."""
Period = Literal["day", "week", "month"]


class Rate(Record):
    """k of n runs, with a 95 % Wilson interval (None when n is 0) on the independent runs among them."""

    k: int
    n: int
    rate: float | None = None
    low: float | None = None
    high: float | None = None
    independent: float | None = None
    """The effective number of independent runs the interval rests on: n when no run is a copy of another, fewer when
    some are (`clustered_rate`); None when not known (the interval then takes every run as independent)."""

    def __str__(self) -> str:
        if self.rate is None or self.low is None or self.high is None:
            return "n/a"
        copies = f", {self.independent:.3g} independent" if self.independent is not None and self.independent < self.n else ""
        return f"{self.rate:.0%} [{self.low:.0%}–{self.high:.0%}] of {self.n}{copies}"


def rate(k: int, n: int) -> Rate:
    """k of n with its Wilson interval, every run independent."""
    if n == 0:
        return Rate(k=0, n=0)
    low, high = wilson_interval(k, n)
    return Rate(k=k, n=n, rate=k / n, low=low, high=high, independent=n)


def clustered_rate(outcomes: Sequence[tuple[str, bool]]) -> Rate:
    """The share of (cluster, outcome) runs that pass, with the Wilson interval on the effective number of independent
    runs. A cluster is a run and its copies (`RunMetadata.derived_from`): copies repeat one observation, so a cluster
    of m runs weighs m in the rate but adds evidence as one weighted observation, and Kish's effective n,
    (Σ m)² / Σ m², is what the interval uses. Ten runs that are each their own cluster give n = 10; five copies of
    one run and five of another give 2."""
    n = len(outcomes)
    if n == 0:
        return Rate(k=0, n=0)
    k = sum(1 for _, ok in outcomes if ok)
    sizes = Counter(cluster for cluster, _ in outcomes).values()
    independent = n * n / sum(m * m for m in sizes)
    low, high = wilson_interval(k / n * independent, independent)
    return Rate(k=k, n=n, rate=k / n, low=low, high=high, independent=independent)


class Summary(Record):
    """What a set of runs scored: verdicts, criterion firing rates, diagnosis accuracy, safe rate, gap."""

    runs: int
    first_at: datetime | None = None
    last_at: datetime | None = None
    verdicts: dict[str, int] = Field(default_factory=dict)
    fired: dict[int, Rate] = Field(default_factory=dict)
    """Criterion → runs it fired on."""
    diagnosis: Rate
    """Correct diagnoses over the runs whose case has an answer key."""
    safe: Rate
    """Safe-remediation verdicts over all runs."""
    gap: float | None = None
    """Diagnosis accuracy minus the safe-remediation rate: found the fault, did not fix it safely."""


def summarise(runs: Sequence[TimedRun]) -> Summary:
    """Rates over the runs, a run and its copies counted as one independent observation in every interval."""
    known = [r for r in runs if r.score.diagnosis.correct is not None]
    diagnosis = clustered_rate([(r.cluster, r.score.diagnosis.correct is True) for r in known])
    safe = clustered_rate([(r.cluster, r.score.verdict == "safe") for r in runs])
    fired = {
        c: clustered_rate([(r.cluster, any(x.fired for x in r.score.criteria if x.criterion_id == c)) for r in runs])
        for c in criterion_labels()
    }
    return Summary(
        runs=len(runs),
        first_at=runs[0].at if runs else None,
        last_at=runs[-1].at if runs else None,
        verdicts=dict(Counter(r.score.verdict for r in runs)),
        fired=fired,
        diagnosis=diagnosis,
        safe=safe,
        gap=diagnosis.rate - safe.rate if diagnosis.rate is not None and safe.rate is not None else None,
    )


class TrendPoint(Record):
    model_id: str
    prompt_hash: str
    hash_kind: HashKind
    """`effective_prompt_sha256`, or `agent_source_sha256` for v1 runs (a hash of the agent's code, not its prompt)."""
    addon: str | None = None
    """The prompt addon of the point's runs (`TimedRun.addon`), None for the base prompt."""
    cases: list[str] = Field(default_factory=list)
    """The use cases the point's runs are of: a rate over other cases is another line, not a change."""
    period_start: date
    summary: Summary

    @property
    def prompt(self) -> str:
        """The prompt as a reader names it: its hash, and the addon by name (`-` alone: no hash, no addon)."""
        if not self.addon:
            return self.prompt_hash[:12]
        addon = f"addon {self.addon}"
        return addon if self.prompt_hash == "-" else f"{self.prompt_hash[:12]} + {addon}"

    @property
    def case_set(self) -> str:
        """The point's cases by their short ids (`a, d, e`)."""
        return ", ".join(c.removeprefix("use_case_") for c in self.cases)


class TrendReport(Record):
    """`ghost-eval report --trend`: `remediation_trend.json`."""

    schema_version: str = TREND_SCHEMA_VERSION
    store: str
    period: Period
    points: list[TrendPoint] = Field(default_factory=list)
    """Ordered by model, then time (a new prompt hash, addon or set of cases starts its own line)."""
    problems: list[str] = Field(default_factory=list)


def _period_start(at: datetime, period: Period) -> date:
    day = at.date()
    if period == "week":
        return day - timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    return day


def build_trend(runs: Sequence[TimedRun], store: str, period: Period, problems: Sequence[str] = ()) -> TrendReport:
    """One point per model × prompt (hash and addon) × period, from runs ordered oldest first."""
    groups: dict[tuple[str, str, str, date], list[TimedRun]] = defaultdict(list)
    for r in runs:
        groups[(r.entry.model_id, r.prompt_hash, r.addon or "", _period_start(r.at, period))].append(r)
    points = [
        TrendPoint(
            model_id=m,
            prompt_hash=h,
            hash_kind=rs[0].hash_kind,
            addon=a or None,
            cases=sorted({r.entry.use_case_id for r in rs}),
            period_start=p,
            summary=summarise(rs),
        )
        for (m, h, a, p), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[1][0].at, kv[0][1], kv[0][2]))
    ]
    return TrendReport(store=store, period=period, points=points, problems=list(problems))


class ChangeReport(Record):
    """A model's runs before and after a point in time (a date, or the start of a named run)."""

    model_id: str
    at: datetime
    pivot_run: str | None = None
    before: Summary
    after: Summary
    prompt_hashes_before: list[str] = Field(default_factory=list)
    prompt_hashes_after: list[str] = Field(default_factory=list)


def before_after(runs: Sequence[TimedRun], model: str, at: datetime | str) -> ChangeReport:
    """Split `model`'s runs at a time or at a run id (that run counts as after)."""
    mine = [r for r in runs if r.entry.model_id == model]
    pivot_run = None
    if isinstance(at, str):
        pivot = next((r for r in runs if r.entry.run_id == at), None)
        if pivot is None:
            raise GhostEvalError(f"run {at!r} is not among the selected runs")
        pivot_run, at = pivot.entry.run_id, pivot.at
    before = [r for r in mine if r.at < at]
    after = [r for r in mine if r.at >= at]
    return ChangeReport(
        model_id=model,
        at=at,
        pivot_run=pivot_run,
        before=summarise(before),
        after=summarise(after),
        prompt_hashes_before=sorted({r.prompt_hash for r in before}),
        prompt_hashes_after=sorted({r.prompt_hash for r in after}),
    )


class Onset(Record):
    """When a criterion first fired on a model's runs, and what changed then."""

    model_id: str
    criterion_id: int
    runs: int
    """The model's runs looked at."""
    first_run: str | None = None
    """The earliest run it fired on; None when it never fired."""
    first_at: datetime | None = None
    prompt_hash: str | None = None
    """That run's prompt hash."""
    prompt_changed: bool | None = None
    """True when the prompt hash differs from the model's run just before it."""
    runs_before: int = 0
    """Earlier runs of the model, on none of which it fired."""
    since: Rate | None = None
    """How often it fired from then on (that run included)."""


def onset(runs: Sequence[TimedRun], model: str, criterion: int) -> Onset:
    if criterion not in (known := criterion_labels()):
        raise GhostEvalError(f"criterion {criterion} does not exist: use one of {sorted(known)}")
    mine = [r for r in runs if r.entry.model_id == model]
    fires = [any(c.fired for c in r.score.criteria if c.criterion_id == criterion) for r in mine]
    if True not in fires:
        return Onset(model_id=model, criterion_id=criterion, runs=len(mine))
    i = fires.index(True)
    return Onset(
        model_id=model,
        criterion_id=criterion,
        runs=len(mine),
        first_run=mine[i].entry.run_id,
        first_at=mine[i].at,
        prompt_hash=mine[i].prompt_hash,
        prompt_changed=mine[i].prompt_hash != mine[i - 1].prompt_hash if i else None,
        runs_before=i,
        since=rate(sum(fires[i:]), len(fires) - i),
    )
