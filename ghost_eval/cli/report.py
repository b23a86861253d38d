"""`ghost-eval report`: remediation_verdicts.md and .json for a store, the per-model rates in the terminal, and on
request trends, plots, junit XML, a pull-request summary and a threshold gate."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from rich.table import Table

from ghost_eval.base.records import dump_json
from ghost_eval.cli._common import Parents, cases_for, err, open_store, out, progress, run_filter
from ghost_eval.report import RemediationReport, build_report, write_report
from ghost_eval.report.ci import Threshold, by_model, check_gate, junit_xml, summary_markdown
from ghost_eval.report.eval_status import eval_run_ids
from ghost_eval.report.selection import addon_ids, first_runs
from ghost_eval.report.timeline import scored_runs
from ghost_eval.report.trend import TrendReport, build_trend, rate
from ghost_eval.run.identity import HashKind
from ghost_eval.store import Problem, single_suite_version

__all__ = ["register"]

TREND_FILE = "remediation_trend.json"


def _rates(report: RemediationReport) -> None:
    """What a person looks at after an eval: per model, the safe-remediation rate, diagnosis accuracy and the gap."""
    table = Table("model", "runs", "safe remediation", "diagnosis accuracy", "gap", "safe / uncertain / unsafe", "judge safe")
    for m in report.models:
        det = m.deterministic
        gap = "n/a" if m.gap_deterministic is None else f"{m.gap_deterministic * 100:+.0f} pts"
        judge = "not judged" if m.safe_rate_judge is None else f"{m.safe_rate_judge:.0%} of {m.judged}"
        table.add_row(
            m.model_id,
            str(m.runs),
            str(m.safe_remediation or rate(det.get("safe", 0), m.runs)),
            str(m.diagnosis or rate(m.diagnosis_correct, m.diagnosis_known)),
            gap,
            f"{det.get('safe', 0)} / {det.get('uncertain', 0)} / {det.get('unsafe', 0)}",
            judge,
        )
    out.print(table)


def _trend_table(trend: TrendReport) -> None:
    table = Table(
        "model",
        "prompt",
        "cases",
        f"{trend.period} of",
        "runs",
        "safe remediation",
        "diagnosis accuracy",
        "gap",
        "criteria fired",
    )
    for p in trend.points:
        s = p.summary
        fired = ", ".join(f"c{c} {r.k}/{r.n}" for c, r in s.fired.items() if r.k) or "-"
        gap = "n/a" if s.gap is None else f"{s.gap * 100:+.0f} pts"
        kind = "" if p.hash_kind == HashKind.EFFECTIVE_PROMPT else f" ({p.hash_kind.value})"
        table.add_row(
            p.model_id,
            p.prompt + kind,
            p.case_set,
            str(p.period_start),
            str(s.runs),
            str(s.safe),
            str(s.diagnosis),
            gap,
            fired,
        )
    out.print(table)


def _report(args: argparse.Namespace) -> int:
    cases, _ = cases_for(args)
    flt = run_filter(args)
    if args.from_eval:
        try:
            flt = dataclasses.replace(flt, run_ids=eval_run_ids(Path(args.from_eval)))
        except ValueError as exc:
            err.print(f"error: {exc}", markup=False)
            return 2
    if args.first is not None and args.first < 1:
        err.print(f"error: --first {args.first}: needs a whole number of runs, at least 1", markup=False)
        return 2
    if args.addon or args.first is not None:
        with open_store(args) as store:
            flt = dataclasses.replace(
                flt, run_ids=first_runs(store, flt, addon_ids(args.addon) if args.addon else None, args.first)
            )
    out_dir = Path(args.out)
    thresholds = [Threshold.parse(t, "under") for t in args.fail_under] + [Threshold.parse(t, "over") for t in args.fail_over]
    per_run = args.trend or args.html or args.junit or args.summary or thresholds
    problems: list[Problem] = []
    with open_store(args) as store:
        single_suite_version(e.suite_version for e in store.runs(flt))  # refused before any run is scored
        runs = scored_runs(store, cases, flt, problems, progress("scoring runs")) if per_run else []
        scores = {r.entry.run_id: r.score for r in runs}
        report = build_report(store, cases, flt, progress("gathering the report" if scores else "scoring runs"), scores)
    for p in report.problems:
        err.print(f"problem: {p}", markup=False)
    md, js = write_report(report, out_dir)
    out.print(
        f"{report.runs} runs, {len(report.models)} models; excluded for human review: {len(report.excluded)}; "
        f"judge errors: {len(report.judge_errors)}; disagreements: {len(report.disagreements)}",
        markup=False,
    )
    _rates(report)
    if any(m.independent_runs is not None and m.independent_runs < m.runs for m in report.models):
        out.print(
            "independent: a run and its copies (metadata derived_from, e.g. the demo store's repeats and addon runs) "
            "count as one observation in the intervals (Kish's effective n); the rates count every run",
            markup=False,
        )
    out.print(f"calibration: {report.calibration.summary}", markup=False)
    written = [md, js]
    trend = build_trend(runs, str(store.root), args.period, [str(p) for p in problems])
    if args.trend:
        _trend_table(trend)
        (out_dir / TREND_FILE).write_text(dump_json(trend), encoding="utf-8")
        written.append(out_dir / TREND_FILE)
    summaries = by_model(runs)
    if args.html:
        from ghost_eval.report.plots import write_plots  # matplotlib only when plots are asked for

        written += write_plots(summaries, trend, out_dir, str(store.root))
    if args.junit:
        Path(args.junit).write_text(junit_xml(runs), encoding="utf-8")
        written.append(Path(args.junit))
    gate = check_gate(summaries, thresholds)
    if args.summary:
        Path(args.summary).write_text(summary_markdown(summaries, gate, str(store.root)), encoding="utf-8")
        written.append(Path(args.summary))
    out.print("wrote " + ", ".join(str(p) for p in written), markup=False)
    if gate.mode == "advisory":
        return 0
    for failure in gate.failures:
        err.print(f"gate: {failure}", markup=False)
    out.print(f"gate {'FAILED' if gate.failed else 'passed'}: {', '.join(gate.thresholds)}", markup=False)
    return 1 if gate.failed else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser(
        "report",
        parents=[parents.common, parents.select],
        help="write remediation_verdicts.md and .json (verdicts, criterion firing map, diagnosis/safety gap); "
        "trends, plots, junit XML, a PR summary and a threshold gate on request",
    )
    p.add_argument("--out", default=".", help="folder for the files (default: the current folder)")
    p.add_argument(
        "--from-eval",
        metavar="RESULTS.json",
        help="exactly the runs a `promptfoo eval -o` output's rows answered with (what `make eval` shows after its eval)",
    )
    p.add_argument(
        "--addon",
        action="append",
        default=[],
        metavar="none|FILE|SHA256",
        help="only runs made with this prompt addon (`none`: without one); repeat for several",
    )
    p.add_argument(
        "--first",
        type=int,
        metavar="N",
        help="at most the first N runs of each case × model × addon, in the store's order (what a suite with "
        "`repeat: N` replays)",
    )
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument(
        "--trend",
        action="store_true",
        help=f"per model × prompt (hash, addon) over time, with the cases of each point and Wilson intervals; also {TREND_FILE}",
    )
    p.add_argument("--period", choices=("day", "week", "month"), default="week", help="trend bucket (default: week)")
    p.add_argument("--html", action="store_true", help="PNG plots and one self-contained remediation_report.html in --out")
    p.add_argument("--junit", metavar="FILE", help="junit XML: one test case per run (safe passes)")
    p.add_argument("--summary", metavar="FILE", help="Markdown summary for a pull-request comment (one table, a marker line)")
    p.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="gate: exit 1 when any model is below (e.g. safe_remediation_rate=0.8); without a gate the report is advisory",
    )
    p.add_argument(
        "--fail-over",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="gate: exit 1 when any model is above (e.g. diagnosis_safety_gap=0.2)",
    )
    p.set_defaults(func=_report)
