"""`ghost-eval query …`: questions over the store's time axis — which runs used a prompt version, a model's
verdicts before and after a change, when a criterion started firing on a model."""

from __future__ import annotations

import argparse
import json
from datetime import datetime

from rich.table import Table

from ghost_eval.cli._common import Parents, cases_for, err, open_store, out, progress, report_problems, run_filter
from ghost_eval.report.timeline import TimedRun, parse_when, scored_runs
from ghost_eval.report.trend import Summary, before_after, onset
from ghost_eval.store import Problem, RunFilter

__all__ = ["register"]


def _runs(args: argparse.Namespace, flt: RunFilter) -> list[TimedRun]:
    cases, _ = cases_for(args)
    problems: list[Problem] = []
    with open_store(args) as store:
        runs = scored_runs(store, cases, flt, problems, progress("scoring runs"))
    report_problems(problems)
    return runs


def _prompt(args: argparse.Namespace) -> int:
    flt = run_filter(args)
    runs = _runs(args, RunFilter(**{**vars(flt), "prompt_hash": args.hash}))
    if args.json:
        for r in runs:
            row = {"run_id": r.entry.run_id, "at": r.at.isoformat(), "use_case_id": r.entry.use_case_id}
            row |= {"model_id": r.entry.model_id, "prompt_hash": r.prompt_hash, "verdict": r.score.verdict}
            out.print(json.dumps(row), markup=False)
        return 0
    table = Table("started (UTC)", "run_id", "case", "model", "prompt hash", "verdict")
    for r in runs:
        table.add_row(
            f"{r.at:%Y-%m-%d %H:%M}", r.entry.run_id, r.entry.use_case_id, r.entry.model_id, r.prompt_hash[:12], r.score.verdict
        )
    out.print(table)
    out.print(f"{len(runs)} runs used prompt hash {args.hash}", markup=False)
    return 0


def _summary_rows(table: Table, label: str, s: Summary) -> None:
    verdicts = ", ".join(f"{v} {n}" for v, n in sorted(s.verdicts.items())) or "-"
    fired = "; ".join(f"c{c} {r}" for c, r in s.fired.items() if r.k) or "none fired"
    gap = "n/a" if s.gap is None else f"{s.gap * 100:+.0f} pts"
    table.add_row(label, str(s.runs), verdicts, str(s.safe), str(s.diagnosis), gap, fired)


def _change(args: argparse.Namespace) -> int:
    at: datetime | str
    try:
        at = parse_when(args.at)
    except ValueError:
        at = args.at  # not a date: a run id
    runs = _runs(args, RunFilter(model=args.model, include_superseded=args.include_superseded))
    if not runs:
        err.print(f"error: the store has no run of model {args.model!r}", markup=False)
        return 2
    report = before_after(runs, args.model, at)
    if args.json:
        out.print(report.model_dump_json(indent=2), markup=False)
        return 0
    pivot = f" (run {report.pivot_run})" if report.pivot_run else ""
    table = Table("", "runs", "verdicts", "safe remediation", "diagnosis accuracy", "gap", "criteria fired")
    _summary_rows(table, f"before {report.at:%Y-%m-%d %H:%M}", report.before)
    _summary_rows(table, f"from {report.at:%Y-%m-%d %H:%M}{pivot}", report.after)
    out.print(table)
    out.print(
        f"prompt hashes before: {report.prompt_hashes_before or '-'}; after: {report.prompt_hashes_after or '-'}", markup=False
    )
    return 0


def _onset(args: argparse.Namespace) -> int:
    runs = _runs(args, RunFilter(model=args.model, include_superseded=args.include_superseded))
    if not runs:
        err.print(f"error: the store has no run of model {args.model!r}", markup=False)
        return 2
    found = onset(runs, args.model, args.criterion)
    if args.json:
        out.print(found.model_dump_json(indent=2), markup=False)
        return 0
    if found.first_run is None or found.first_at is None:
        out.print(f"criterion {args.criterion} never fired on {args.model} ({found.runs} runs)", markup=False)
        return 0
    change = {True: "the prompt hash changed with this run", False: "same prompt hash as the run before", None: "its first run"}
    out.print(
        f"criterion {args.criterion} first fired on {args.model} at {found.first_at:%Y-%m-%d %H:%M} UTC in run "
        f"{found.first_run} (prompt hash {found.prompt_hash}; {change[found.prompt_changed]}); "
        f"{found.runs_before} earlier runs without it; fired since: {found.since}",
        markup=False,
    )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    query = sub.add_parser("query", help="questions over time: runs of a prompt version, before/after a change, onsets")
    qsub = query.add_subparsers(dest="query_command", required=True)
    p = qsub.add_parser("prompt", parents=[parents.common, parents.select], help="which runs used this prompt version")
    p.add_argument("hash", help="prompt hash, full or a prefix of 6+ characters")
    p.set_defaults(func=_prompt)
    p = qsub.add_parser("change", parents=[parents.common], help="a model's verdicts before and after a date or run")
    p.add_argument("--model", required=True)
    p.add_argument("--at", required=True, help="a date (YYYY-MM-DD), an ISO date-time, or a run id (it counts as after)")
    p.set_defaults(func=_change)
    p = qsub.add_parser("onset", parents=[parents.common], help="when a criterion started firing on a model")
    p.add_argument("--model", required=True)
    p.add_argument("--criterion", type=int, required=True, choices=(1, 2, 3, 4))
    p.set_defaults(func=_onset)
    for name in ("change", "onset"):
        qsub.choices[name].add_argument("--include-superseded", action="store_true")
    for p in qsub.choices.values():
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("--cases", help="cases folder (default: the bundled cases)")
