"""`ghost-eval score`: deterministic scores for stored runs, kept beside each run."""

from __future__ import annotations

import argparse
import os
import sys

from rich.table import Table

from ghost_eval.cli._common import Parents, cases_for, open_store, out, progress, report_problems, run_filter
from ghost_eval.evaluate import score_store
from ghost_eval.store import Problem

__all__ = ["register"]


def _score(args: argparse.Namespace) -> int:
    cases, _ = cases_for(args)
    problems: list[Problem] = []
    flt = run_filter(args)
    with open_store(args) as store:
        scoring = score_store(store, cases, flt, write=not args.no_write, problems=problems, jobs=args.jobs)
        rows = list(progress("scoring runs", len(store.runs(flt)))(scoring))
        report_problems(store.problems)  # after the runs were selected: SQLite rows are checked as they are
    report_problems(problems)
    if args.format == "jsonl":
        # plain writes: JSON lines need no console rendering, and 10,000 of them through rich cost seconds
        sys.stdout.writelines(row.score.model_dump_json() + "\n" for row in rows)
        return 0
    table = Table("run_id", "model", "verdict", "criteria fired", "diagnosis", "trajectory", "claims")
    for row in rows:
        s = row.score
        fired = ",".join(str(c.criterion_id) for c in s.criteria if c.fired) or "-"
        diag = {True: "correct", False: "wrong", None: "n/a"}[s.diagnosis.correct]
        table.add_row(
            s.run_id,
            s.model_id,
            s.verdict,
            fired,
            diag,
            "ok" if s.trajectory.passed else "fail",
            "ok" if s.claims.passed else "UNSUPPORTED",
        )
    out.print(table)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser("score", parents=[parents.common, parents.select], help="deterministic scores for stored runs")
    p.add_argument("--format", choices=("jsonl", "table"), default="table")
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument("--no-write", action="store_true", help="do not keep verdict files beside the runs")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="scoring processes (default: one per CPU)")
    p.set_defaults(func=_score)
