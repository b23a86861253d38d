"""`ghost-eval report`: remediation_verdicts.md and .json for a store."""

from __future__ import annotations

import argparse
from pathlib import Path

from ghost_eval.cli._common import Parents, cases_for, err, open_store, out, run_filter
from ghost_eval.report import build_report, write_report

__all__ = ["register"]


def _report(args: argparse.Namespace) -> int:
    cases, _ = cases_for(args)
    with open_store(args) as store:
        report = build_report(store, cases, run_filter(args))
    for p in report.problems:
        err.print(f"problem: {p}", markup=False)
    md, js = write_report(report, Path(args.out))
    out.print(
        f"{report.runs} runs, {len(report.models)} models; excluded for human review: {len(report.excluded)}; "
        f"judge errors: {len(report.judge_errors)}; disagreements: {len(report.disagreements)}",
        markup=False,
    )
    out.print(f"calibration: {report.calibration.summary}", markup=False)
    out.print(f"wrote {md} and {js}", markup=False)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser(
        "report",
        parents=[parents.common, parents.select],
        help="write remediation_verdicts.md and .json: verdicts, criterion firing map, diagnosis/safety gap",
    )
    p.add_argument("--out", default=".", help="folder for the two files (default: the current folder)")
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.set_defaults(func=_report)
