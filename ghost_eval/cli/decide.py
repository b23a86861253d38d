"""`ghost-eval variant decide` and `ghost-eval sentinel decide`: decision records with exit codes CI can act on."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.cases.case import Case, case_key
from ghost_eval.cli._common import Parents, cases_for, err, open_store, out
from ghost_eval.decide import SentinelCriteria, decide_sentinel, decide_variant, load_criteria, load_variant
from ghost_eval.store import bundled_path

__all__ = ["register"]

_VARIANT_EXIT = {"accept": 0, "reject": 1, "insufficient": 2}
_SENTINEL_EXIT = {"go": 0, "no-go": 1, "insufficient": 2}
_SUITE_HELP = (
    "decide on the runs of this suite version only (`unknown`: runs that record none); "
    "runs of two suite versions are refused, never pooled"
)


def _cases_needed(args: argparse.Namespace, needed: Iterable[str]) -> dict[str, Case]:
    """The cases, each broken file named; a decision never rests on a case whose file failed to load."""
    cases, errors = cases_for(args)
    wanted = {case_key(c) for c in needed}
    broken = [e for e in errors if case_key(Path(e.path).stem) in wanted]
    if broken:
        files = ", ".join(e.path for e in broken)
        raise GhostEvalError(f"nothing decided: the decision needs {files}, which failed to load (problem above)")
    return cases


def _criteria(args: argparse.Namespace) -> SentinelCriteria:
    return load_criteria(Path(args.criteria) if args.criteria else bundled_path("sentinel") / "criteria.yaml")


def _variant(args: argparse.Namespace) -> int:
    spec_path = (Path(args.variants_dir) if args.variants_dir else bundled_path("variants")) / f"{args.name}.yaml"
    spec = load_variant(spec_path)
    criteria = _criteria(args)
    cases = _cases_needed(args, [*spec.cases, *criteria.cases])
    with open_store(args) as store:
        record, path = decide_variant(store, cases, spec, spec_path, criteria, args.suite_version)
    out.print(f"{record.name}: {record.decision}", markup=False)
    for reason in record.reasons + [r for m in record.per_model for r in (f"{m.model_id}: {x}" for x in m.reasons)]:
        out.print(f"  {reason}", markup=False)
    err.print(f"decision record: {path} (and {path.with_suffix('.md').name})", markup=False)
    return _VARIANT_EXIT[record.decision]


def _sentinel(args: argparse.Namespace) -> int:
    criteria = _criteria(args)
    cases = _cases_needed(args, criteria.cases)
    with open_store(args) as store:
        record, path = decide_sentinel(store, cases, criteria, args.current, args.candidate, args.suite_version)
    out.print(f"{record.current_model} → {record.candidate_model}: {record.decision}", markup=False)
    for reason in record.reasons + [f"drift: {d}" for d in record.drift]:
        out.print(f"  {reason}", markup=False)
    err.print(f"decision record: {path} (and {path.with_suffix('.md').name})", markup=False)
    return _SENTINEL_EXIT[record.decision]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    variant = sub.add_parser("variant", help="prompt variants").add_subparsers(dest="variant_command", required=True)
    p = variant.add_parser(
        "decide",
        parents=[parents.common],
        help="accept/reject a variant from stored runs (exit 0 accept, 1 reject, 2 not enough runs)",
    )
    p.add_argument("name", help="variant name: <variants-dir>/<name>.yaml")
    p.add_argument("--variants-dir", help="folder of variant files (default: the bundled variants/)")
    p.add_argument(
        "--criteria",
        help="sentinel criteria the sentinel cases are judged by (default: the bundled sentinel/criteria.yaml)",
    )
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument("--suite-version", help=_SUITE_HELP)
    p.set_defaults(func=_variant)
    sentinel = sub.add_parser("sentinel", help="the sentinel migration gate")
    sentinel_sub = sentinel.add_subparsers(dest="sentinel_command", required=True)
    p = sentinel_sub.add_parser(
        "decide", parents=[parents.common], help="go/no-go for a model migration (exit 0 go, 1 no-go, 2 not enough runs)"
    )
    p.add_argument("--current", required=True, help="model id in use today")
    p.add_argument("--candidate", required=True, help="model id to migrate to")
    p.add_argument("--criteria", help="criteria file (default: the bundled sentinel/criteria.yaml)")
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument("--suite-version", help=_SUITE_HELP)
    p.set_defaults(func=_sentinel)
