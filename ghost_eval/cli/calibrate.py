"""`ghost-eval label` and `ghost-eval calibrate`: human labels, and the scorers measured against them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.table import Table

from ghost_eval.cli._common import Parents, cases_for, err, open_store, out, report_problems, run_filter
from ghost_eval.report import (
    HOLDOUT_FRACTION,
    AgreementStats,
    ScorerCalibration,
    calibrate,
    label_runs,
    latest_labels,
    read_labels,
    save_calibration,
)
from ghost_eval.scoring.registry import criterion_labels
from ghost_eval.store import Problem

__all__ = ["register"]


def _num(x: float | None) -> str:
    return f"{x:.2f}" if x is not None else "n/a"


def _confusion(stats: AgreementStats) -> str:
    return ", ".join(f"{h}→{s} {n}" for h, row in sorted(stats.confusion.items()) for s, n in sorted(row.items())) or "-"


def _table(title: str, scorer: ScorerCalibration) -> Table:
    table = Table(
        "question",
        "n",
        "agreement",
        "κ",
        "false safe",
        "confusion (human→scorer)",
        title=f"{title}: {scorer.scorer} (no usable verdict: {scorer.not_scored})",
    )
    rows = [(f"criterion {c} {label}", scorer.criteria[c]) for c, label in criterion_labels().items() if c in scorer.criteria]
    rows.append(("verdict", scorer.verdict))
    if scorer.diagnosis is not None:
        rows.append(("diagnosis", scorer.diagnosis))
    for name, stats in rows:
        table.add_row(name, str(stats.n), _num(stats.agreement), _num(stats.kappa), str(stats.false_safe), _confusion(stats))
    return table


def _calibrate(args: argparse.Namespace) -> int:
    labels, problems = read_labels(Path(args.labels))
    if not labels and not problems:
        err.print(f"error: no labels in {args.labels} (write some with `ghost-eval label`)", markup=False)
        return 2
    cases, _ = cases_for(args)
    found: list[Problem] = list(problems)
    with open_store(args) as store:
        result = calibrate(
            store,
            cases,
            latest_labels(labels),
            args.labels,
            judge=args.judge,
            seed=args.seed,
            holdout=args.holdout,
            problems=found,
        )
        kept = None if args.no_write else save_calibration(store, result)
    report_problems(found)
    if args.json:
        out.print(result.model_dump_json(), markup=False)
        return 0
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False)
    for split in result.splits:
        out.print(f"{split.name}: {split.runs} labelled runs", markup=False)
        out.print(_table(split.name, split.deterministic))
        out.print(_table(split.name, split.judge))
    if kept is not None:
        out.print(f"kept in {kept}", markup=False)
    return 0


def _label(args: argparse.Namespace) -> int:
    cases, _ = cases_for(args)
    with open_store(args) as store:
        labeller = args.labeller or args.settings.user
        label_runs(
            store, cases, Path(args.labels), labeller, sys.stdin, out, flt=run_filter(args), limit=args.limit, seed=args.seed
        )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    c = sub.add_parser(
        "calibrate",
        parents=[parents.common],
        help="agreement, Cohen's kappa, confusion and false-safe counts of judge and deterministic vs labels",
    )
    c.add_argument("--labels", required=True, help="labels file (JSONL, one run per line)")
    c.add_argument("--judge", metavar="MODEL", help="compare only this judge's verdicts (default: each run's latest)")
    c.add_argument("--seed", type=int, default=0, help="seed of the held-out split (default 0)")
    c.add_argument(
        "--holdout",
        type=float,
        default=HOLDOUT_FRACTION,
        help=f"share of runs held out once there are enough labels (default {HOLDOUT_FRACTION})",
    )
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.add_argument("--no-write", action="store_true", help="do not keep the result in the store's calibration folder")
    c.add_argument("--cases", help="cases folder (default: the bundled cases)")
    c.set_defaults(func=_calibrate)

    lab = sub.add_parser(
        "label",
        parents=[parents.common, parents.select],
        help="walk through unlabelled runs in the terminal and append labels (answers read from stdin)",
    )
    lab.add_argument("--labels", required=True, help="labels file to append to (JSONL)")
    lab.add_argument("--labeller", help="who is labelling (default: $USER, else unknown)")
    lab.add_argument("--limit", type=int, help="stop after this many runs")
    lab.add_argument("--seed", type=int, help="shuffle the runs with this seed instead of store order")
    lab.add_argument("--cases", help="cases folder (default: the bundled cases)")
    lab.set_defaults(func=_label)
