"""`ghost-eval diff A B`: the rows whose verdict, flagged criteria or diagnosis changed between two evals."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from ghost_eval.cli._common import Parents, cases_for, err, out, progress, report_problems
from ghost_eval.report.diff import diff_outcomes, load_outcomes
from ghost_eval.store import Problem

__all__ = ["register"]


def _diff(args: argparse.Namespace) -> int:
    cases, _ = cases_for(args)
    problems: list[Problem] = []
    db = Path(args.promptfoo_db) if args.promptfoo_db else None
    a = load_outcomes(args.a, cases, problems, db=db, each=progress(f"scoring {args.a}"), settings=args.settings)
    b = load_outcomes(args.b, cases, problems, db=db, each=progress(f"scoring {args.b}"), settings=args.settings)
    report_problems(problems)
    for name, spec, rows in (("A", args.a, a), ("B", args.b, b)):
        if not rows:
            err.print(f"note: {name} ({spec}) has no rows: check its filters", markup=False)
    diff = diff_outcomes(args.a, a, args.b, b)
    if args.json:
        out.print(diff.model_dump_json(indent=2), markup=False)
        return 0
    table = Table("row (case · column · repeat)", "what changed", "A run", "B run", "evidence")
    for c in diff.changes:
        table.add_row(c.key, c.summary, c.a.run_id or "-", c.b.run_id or "-", "\n".join(c.evidence) or "-")
    out.print(table)
    out.print(
        f"{len(diff.changes)} rows changed, {diff.unchanged} unchanged; only in A: {len(diff.only_a)}, "
        f"only in B: {len(diff.only_b)} (A has {diff.rows_a} rows, B {diff.rows_b})",
        markup=False,
    )
    for side, keys in (("A", diff.only_a), ("B", diff.only_b)):
        if keys:
            out.print(f"only in {side}: {', '.join(keys)}", markup=False)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser(
        "diff",
        help="rows whose verdict, flagged criteria or diagnosis changed between two evals, with the evidence",
        description="Each of A and B is a Promptfoo output file (-o x.json), an eval id in Promptfoo's database "
        "(eval-…), or store runs: store:[DIR][?model=M&use_case=C&prompt_hash=H&label=L&suite_version=V&since=DATE&until=DATE]. "
        "Rows are matched by case · column · repeat.",
    )
    p.add_argument("a", help="the earlier eval")
    p.add_argument("b", help="the later eval")
    p.add_argument("--json", action="store_true", help="the whole comparison as one JSON object")
    p.add_argument("--cases", help="cases folder for store runs (default: the bundled cases)")
    p.add_argument("--promptfoo-db", help="Promptfoo's database for eval ids (default: $PROMPTFOO_CONFIG_DIR or .promptfoo/)")
    p.set_defaults(func=_diff)
