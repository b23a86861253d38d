"""`ghost-eval judge`: LLM judge verdicts on the four remediation criteria, kept beside each run."""

from __future__ import annotations

import argparse
from collections import Counter

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ghost_eval.cli._common import Parents, cases_for, err, open_store, out, report_problems, run_filter
from ghost_eval.judge import DEFAULT_JUDGES, JudgeOptions, JudgeSummary, default_judges, judge_store, make_client

__all__ = ["register"]

_VERDICTS = ("safe", "uncertain", "unsafe", "error")


def _print_summary(summary: JudgeSummary, args: argparse.Namespace) -> None:
    judged = len(summary.outcomes)
    sample = f" (sample {args.sample:g}%, seed {args.seed})" if args.sample is not None else ""
    out.print(f"judged {judged} of {summary.selected} selected runs{sample}", markup=False)
    table = Table("judge", "runs", *_VERDICTS, "self-judged")
    per_judge: dict[str, Counter[str]] = {}
    for o in summary.outcomes:
        if o.verdict.judge_model:
            counts = per_judge.setdefault(o.verdict.judge_model, Counter())
            counts[o.verdict.verdict] += 1
            counts["self"] += o.verdict.self_judged
    for model, counts in per_judge.items():
        table.add_row(model, str(sum(counts[v] for v in _VERDICTS)), *(str(counts[v]) for v in _VERDICTS), str(counts["self"]))
    out.print(table)
    tokens = summary.tokens
    cost = f"${summary.cost_usd:.4f}" if summary.cost_usd is not None else "unknown (no price for this model)"
    out.print(
        f"calls: {summary.calls} (answers reused from the cache: {summary.cached}); "
        f"tokens: {tokens.input} in, {tokens.output} out; cost: {cost}",
        markup=False,
    )
    if summary.excluded:
        out.print(f"excluded, for human review ({len(summary.excluded)}):", markup=False)
        for v in summary.excluded:
            out.print(f"  {v.run_id}: {v.excluded_reason}", markup=False)
    if summary.with_errors:
        count = len(summary.with_errors)
        out.print(f"runs with judge errors ({count}; asked again on the next `ghost-eval judge`):", markup=False)
        for v in summary.with_errors:
            for e in v.errors:
                out.print(f"  {v.run_id}: {e}", markup=False)
    if summary.disagreements:
        out.print(f"disagreements with the deterministic scorer ({len(summary.disagreements)}; both answers kept):", markup=False)
        for v, d in summary.disagreements:
            det = "fired" if d.deterministic_fired else "did not fire"
            out.print(f"  {v.run_id} criterion {d.criterion_id}: judge {d.judge_answer}, deterministic {det}", markup=False)


def _judge(args: argparse.Namespace) -> int:
    judges = args.judge or default_judges(args.settings)
    clients = {model: make_client(model, settings=args.settings) for model in judges}
    cases, _ = cases_for(args)
    options = JudgeOptions(
        force=args.force,
        allow_self_judging=args.allow_self_judging,
        sample_percent=args.sample,
        seed=args.seed,
        concurrency=args.concurrency,
    )
    columns = (TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with open_store(args) as store, Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("judge", total=None)
        summary = judge_store(
            store,
            cases,
            clients,
            options,
            run_filter(args),
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    report_problems(summary.problems)
    _print_summary(summary, args)
    return 1 if summary.with_errors else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    defaults = " and/or ".join(DEFAULT_JUDGES.values())
    p = sub.add_parser(
        "judge",
        parents=[parents.common, parents.select],
        help="LLM judge verdicts on the four remediation criteria, kept beside each run",
    )
    p.add_argument(
        "--judge",
        action="append",
        metavar="MODEL",
        help=f"judge model (repeatable, in order of preference); default: {defaults}, whichever keys are set",
    )
    p.add_argument("--sample", type=float, metavar="PCT", help="judge a reproducible sample of this percentage of runs")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--concurrency", type=int, default=4, help="runs judged at once (default 4)")
    p.add_argument("--force", action="store_true", help="ignore cached answers; writes a new verdict file beside the old")
    p.add_argument(
        "--allow-self-judging",
        action="store_true",
        help="let a judge score its own model family when no other judge is configured (marked in the verdict)",
    )
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.set_defaults(func=_judge)
