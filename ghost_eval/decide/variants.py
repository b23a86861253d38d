"""Accept or reject a prompt addon by written criteria over repeated runs, per model."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import Record, load_yaml_record
from ghost_eval.cases.case import AZURE_DEMO, Case, case_key
from ghost_eval.decide.checks import Check, describe
from ghost_eval.decide.groups import GroupStats, Outcome, collect, group_stats
from ghost_eval.decide.passk import runs_needed
from ghost_eval.decide.records import decision_folder, latest_record_id, write_decision
from ghost_eval.decide.sentinel import SentinelCriteria
from ghost_eval.run.identity import addon_hash
from ghost_eval.store import Store, single_suite_version

__all__ = [
    "ModelResult",
    "VariantDecision",
    "VariantRule",
    "VariantSpec",
    "decide_variant",
    "decision_checks",
    "load_variant",
]

DECISION_SCHEMA_VERSION = "3"
"""2: the suite version of the runs decided on; 3: sentinel cases judged by the sentinel's own checks."""


class VariantRule(Record):
    """When a variant is accepted."""

    min_pass_hat_k: float = Field(default=0.8, ge=0, le=1)
    """Every (case, model) of the variant needs pass^k at least this."""
    every_model: bool = True
    """Accept only when every model passes; otherwise a majority of models suffices."""
    sentinel_margin: float = Field(default=0.2, ge=0, le=1)
    """No sentinel case's pass rate, by the sentinel's own checks, may fall below the baseline's by more than this."""


class VariantSpec(Record):
    """`variants/<name>.yaml`."""

    schema_version: str = "1"
    name: str
    description: str = ""
    addon: str
    """Addon file, relative to the spec file."""
    cases: list[str] = Field(min_length=1)
    models: list[str] = Field(min_length=1)
    repeats: int = Field(ge=1)
    """k: runs per case × model, and the k of pass^k."""
    checks: list[Check] = Field(min_length=1)
    rule: VariantRule = VariantRule()
    environment: str = AZURE_DEMO
    """Where the runs that decide were recorded (`azure_demo`, `lab`, …); runs of other environments never count."""


class ModelResult(Record):
    model_id: str
    passed: bool
    reasons: list[str]
    variant: list[GroupStats]
    """The variant's cases, judged by its checks (runs with the addon)."""
    baseline: list[GroupStats]
    """The same cases and checks, runs without an addon."""
    sentinel_variant: list[GroupStats] = []
    """The sentinel cases judged by the sentinel's own checks, runs with the addon."""
    sentinel_baseline: list[GroupStats] = []
    """The sentinel cases judged by the sentinel's own checks, runs without an addon."""


class VariantDecision(Record):
    """A decision record: what was tested, on which runs, by which rule, and why it went this way."""

    schema_version: str = DECISION_SCHEMA_VERSION
    kind: Literal["variant"] = "variant"
    name: str
    addon_file: str
    addon_hash: str
    cases: list[str]
    models: list[str]
    k: int
    checks: list[str]
    sentinel_checks: dict[str, list[str]] = {}
    """Sentinel case → the sentinel's checks it is judged by (its criteria file), variant runs against baseline runs."""
    rule: VariantRule
    suite_version: str | None = None
    """The one suite version of the runs decided on (a decision never pools two); None when no run records one."""
    per_model: list[ModelResult]
    decision: Literal["accept", "reject", "insufficient"]
    reasons: list[str]
    more_runs_needed: dict[str, int] = {}
    """`case/model` → runs still missing before the rule can be applied."""
    run_ids: list[str]
    decided_at: datetime
    previous: str | None = None
    """Record id of the decision this one follows (decisions are never overwritten)."""


def load_variant(path: Path) -> VariantSpec:
    return load_yaml_record(VariantSpec, path)


def _by_case(stats: list[GroupStats]) -> dict[str, GroupStats]:
    """One group per case for a model; several prompt hashes of the same side are merged by the caller."""
    return {s.use_case_id: s for s in stats}


def _side(outcomes: list[Outcome], model: str, k: int) -> list[GroupStats]:
    mine = [o.model_copy(update={"system_prompt_hash": o.addon_hash or "baseline"}) for o in outcomes if o.model_id == model]
    return group_stats(mine, k)


def decision_checks(spec: VariantSpec, criteria: SentinelCriteria, case: str) -> dict[str, list[Check]]:
    """What a variant decision judges a run of `case` by: `variant` → the spec's checks (one of its cases), `sentinel`
    → the sentinel's own checks for the case (a sentinel case, compared with the baseline). A case can be both."""
    key = case_key(case)
    judged: dict[str, list[Check]] = {}
    if key in {case_key(c) for c in spec.cases}:
        judged["variant"] = list(spec.checks)
    if key in {case_key(c) for c in criteria.cases}:
        judged["sentinel"] = list(criteria.checks[key])
    return judged


def _sentinel_reasons(
    case: str, checks: list[Check], variant: GroupStats | None, baseline: GroupStats | None, margin: float
) -> tuple[bool, str | None]:
    """(worse, reason) for one sentinel case of one model, judged by the sentinel's own checks."""
    judged_by = "; ".join(describe(c) for c in checks)
    if variant is None or baseline is None or variant.pass_rate is None or baseline.pass_rate is None:
        side = "variant" if variant is None or variant.pass_rate is None else "baseline"
        return False, f"sentinel case {case}: no {side} runs, not compared"
    if variant.pass_rate < baseline.pass_rate - margin:
        return True, (
            f"sentinel case {case} got worse by the sentinel's checks ({judged_by}): {variant.passes}/{variant.n} runs pass "
            f"({variant.pass_rate:.2f}) vs baseline {baseline.passes}/{baseline.n} ({baseline.pass_rate:.2f}), margin {margin}"
        )
    return False, None


def decide_variant(
    store: Store,
    cases: dict[str, Case],
    spec: VariantSpec,
    spec_path: Path,
    criteria: SentinelCriteria,
    suite_version: str | None = None,
) -> tuple[VariantDecision, Path]:
    """Accept or reject the variant from the stored runs of one suite version (`suite_version` selects it; runs of
    two versions raise `SuiteVersionError` rather than being pooled). The variant's cases are judged by its checks;
    the sentinel cases (`criteria`) by the sentinel's own checks, variant runs against baseline runs."""
    addon_path = (spec_path.parent / spec.addon).resolve()
    try:
        addon_id = addon_hash(addon_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(spec_path, f"addon file {addon_path} is missing", "addon") from None
    k = spec.repeats
    wanted_cases = [case_key(c) for c in spec.cases]
    sentinel_cases = [case_key(c) for c in criteria.cases]

    def gather(checks: list[Check], use_cases: list[str]) -> list[Outcome]:
        return collect(
            store,
            cases,
            checks,
            models=spec.models,
            use_cases=use_cases,
            environment=spec.environment,
            suite_version=suite_version,
        )

    outcomes = gather(spec.checks, wanted_cases)
    sentinel_outcomes = [o for case in sentinel_cases for o in gather(criteria.checks[case], [case])]
    decided_version = single_suite_version({o.run_id: o.suite_version for o in outcomes + sentinel_outcomes}.values())
    variant = [o for o in outcomes if o.addon_hash == addon_id]
    baseline = [o for o in outcomes if o.addon_hash is None]
    sentinel_variant = [o for o in sentinel_outcomes if o.addon_hash == addon_id]
    sentinel_baseline = [o for o in sentinel_outcomes if o.addon_hash is None]

    per_model: list[ModelResult] = []
    missing: dict[str, int] = {}
    for model in spec.models:
        v, b = _by_case(_side(variant, model, k)), _by_case(_side(baseline, model, k))
        sv, sb = _by_case(_side(sentinel_variant, model, k)), _by_case(_side(sentinel_baseline, model, k))
        reasons: list[str] = []
        notes: list[str] = []
        ok = True
        for case in wanted_cases:
            stats = v.get(case)
            n = stats.n if stats else 0
            if n < k:
                missing[f"{case}/{model}"] = runs_needed(n, k)
                continue
            assert stats is not None and stats.pass_hat_k is not None
            if stats.pass_hat_k < spec.rule.min_pass_hat_k:
                ok = False
                reasons.append(
                    f"case {case}: pass^{k} = {stats.pass_hat_k:.2f} < {spec.rule.min_pass_hat_k} "
                    f"({stats.passes}/{stats.n} runs pass)"
                )
        for case in sentinel_cases:
            worse, why = _sentinel_reasons(case, criteria.checks[case], sv.get(case), sb.get(case), spec.rule.sentinel_margin)
            ok = ok and not worse
            if why:
                (reasons if worse else notes).append(why)
        if ok and not any(key.endswith(f"/{model}") for key in missing):
            reasons.append(f"every case meets pass^{k} >= {spec.rule.min_pass_hat_k}; no sentinel case worse than the baseline")
        per_model.append(
            ModelResult(
                model_id=model,
                passed=ok,
                reasons=reasons + notes,
                variant=sorted(v.values(), key=lambda s: s.use_case_id),
                baseline=sorted(b.values(), key=lambda s: s.use_case_id),
                sentinel_variant=sorted(sv.values(), key=lambda s: s.use_case_id),
                sentinel_baseline=sorted(sb.values(), key=lambda s: s.use_case_id),
            )
        )

    passing = [m.model_id for m in per_model if m.passed]
    failing = [m.model_id for m in per_model if not m.passed]
    if missing:
        decision: Literal["accept", "reject", "insufficient"] = "insufficient"
        listed = ", ".join(f"{key}: {n}" for key, n in sorted(missing.items()))
        reasons = [f"not enough runs: {sum(missing.values())} more needed ({listed})"]
    else:
        enough = len(passing) == len(per_model) if spec.rule.every_model else len(passing) * 2 > len(per_model)
        decision = "accept" if enough else "reject"
        rule = "every model must pass" if spec.rule.every_model else "a majority of models must pass"
        reasons = [f"{rule}: passes for {', '.join(passing) or 'no model'}; fails for {', '.join(failing) or 'no model'}"]
    folder = decision_folder(store, "variants", spec.name)
    record = VariantDecision(
        name=spec.name,
        addon_file=str(addon_path),
        addon_hash=addon_id,
        cases=wanted_cases,
        models=spec.models,
        k=k,
        checks=[describe(c) for c in spec.checks],
        sentinel_checks={case: [describe(c) for c in criteria.checks[case]] for case in sentinel_cases},
        rule=spec.rule,
        suite_version=decided_version,
        per_model=per_model,
        decision=decision,
        reasons=reasons,
        more_runs_needed=missing,
        run_ids=sorted({o.run_id for o in variant + baseline + sentinel_variant + sentinel_baseline}),
        decided_at=datetime.now(UTC),
        previous=latest_record_id(folder),
    )
    _, path = write_decision(folder, record, "variant.md.j2")
    return record, path
