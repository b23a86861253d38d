"""`ghost-eval score`: deterministic scores for stored runs (and the teams' checks' outcomes), kept beside each run."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ghost_eval.cli._common import Parents, cases_for, open_store, out, progress, report_problems, run_filter
from ghost_eval.store import IndexEntry, Problem, Store

if TYPE_CHECKING:
    from ghost_eval.evaluation.evaluate import ScoredRun
    from ghost_eval.scoring import RunScore
    from ghost_eval.scoring.team import TeamCheck

__all__ = ["register"]


def _score(args: argparse.Namespace) -> int:
    """JSON lines are printed as each run is scored (nothing is held back); the table needs every row first.
    Cases (and the scorer) are loaded only when there is a run to score."""
    from ghost_eval.evaluation.extensions import load_checks

    problems: list[Problem] = []
    team_checks = list(load_checks(args.checks).values())
    with open_store(args) as store:
        entries = store.runs(run_filter(args))
        scored = progress("scoring runs", len(entries))(_scored(args, store, entries, problems, team_checks) if entries else ())
        if args.format == "jsonl":
            # plain writes: JSON lines need no console rendering, and 10,000 of them through rich cost seconds
            for row in scored:
                sys.stdout.write(row.json + "\n")
        else:
            _print_table((row.score for row in scored), bool(team_checks))
        report_problems(store.problems)  # after the runs were selected: SQLite rows are checked as they are
    report_problems(problems)
    return 0


def _scored(
    args: argparse.Namespace, store: Store, entries: list[IndexEntry], problems: list[Problem], team_checks: list[TeamCheck]
) -> Iterator[ScoredRun]:
    from ghost_eval.evaluation.evaluate import score_store  # the scorer's imports are most of start-up: only when there are runs

    yield from score_store(
        store,
        cases_for(args)[0],
        entries=entries,
        write=not args.no_write,
        problems=problems,
        jobs=args.jobs,
        team_checks=team_checks,
    )


def _team_cell(score: RunScore) -> str:
    """Each team check's outcome; a check that raised says so (its exception is in the JSON lines)."""
    return ", ".join(f"{o.name} {'error' if o.error else 'pass' if o.passed else 'FAIL'}" for o in score.team_checks)


def _print_table(scores: Iterable[RunScore], team: bool) -> None:
    from rich.table import Table  # only the table needs it: JSON lines start faster without

    table = Table("run_id", "model", "verdict", "criteria fired", "diagnosis", "trajectory", "claims")
    if team:
        table.add_column("team checks")
    for s in scores:
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
            *([_team_cell(s)] if team else []),
        )
    out.print(table)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser("score", parents=[parents.common, parents.select], help="deterministic scores for stored runs")
    p.add_argument("--format", choices=("jsonl", "table"), default="table")
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument("--no-write", action="store_true", help="do not keep verdict files beside the runs")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="scoring processes (default: one per CPU)")
    p.add_argument(
        "--checks",
        nargs="+",
        default=[],
        metavar="MODULE:FUNCTION",
        help="teams' checks to run besides the built-in ones and the installed entry points of group ghost_eval.checks "
        "(`module:function` or `name=module:function`); their outcomes are kept with the score, never in the verdict",
    )
    p.set_defaults(func=_score)
