"""Decisions with evidence: pass^k over repeated runs, variant acceptance, sentinel go/no-go."""

from ghost_eval.decide.checks import Check, check_passes
from ghost_eval.decide.groups import GroupStats, Outcome, collect, group_stats
from ghost_eval.decide.passk import pass_at_k, pass_hat_k, runs_needed, wilson_interval
from ghost_eval.decide.sentinel import SentinelCriteria, SentinelDecision, decide_sentinel, load_criteria
from ghost_eval.decide.variants import VariantDecision, VariantSpec, decide_variant, load_variant

__all__ = [
    "Check",
    "GroupStats",
    "Outcome",
    "SentinelCriteria",
    "SentinelDecision",
    "VariantDecision",
    "VariantSpec",
    "check_passes",
    "collect",
    "decide_sentinel",
    "decide_variant",
    "group_stats",
    "load_criteria",
    "load_variant",
    "pass_at_k",
    "pass_hat_k",
    "runs_needed",
    "wilson_interval",
]
