"""`ghost-eval`: store maintenance and queries, and bulk scoring — what is not a Promptfoo row."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ghost_eval.errors import GhostEvalError
from ghost_eval.evaluate import load_case_set, score_store
from ghost_eval.store import Problem, RunFilter, Store, default_store_path
from ghost_eval.store.backfill import backfill_metadata
from ghost_eval.store.importer import import_runs, reindex
from ghost_eval.store.verify import verify_store

__all__ = ["main"]

# Tables keep full run ids when piped or captured, where rich would otherwise assume 80 columns.
_out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 240)
_err = Console(stderr=True, highlight=False, soft_wrap=True)
Handler = Callable[[argparse.Namespace], int]


def _report(problems: Sequence[Problem]) -> None:
    for p in problems:
        _err.print(f"problem: {p}", markup=False)


def _open(args: argparse.Namespace, *, create: bool = False) -> Store:
    return Store(default_store_path(args.store), create=create)


def _filter(args: argparse.Namespace) -> RunFilter:
    return RunFilter(
        use_case=getattr(args, "use_case", None),
        model=getattr(args, "model", None),
        prompt_hash=getattr(args, "prompt_hash", None),
        run_label=getattr(args, "label", None),
        include_superseded=getattr(args, "include_superseded", False),
    )


def _store_list(args: argparse.Namespace) -> int:
    with _open(args) as store:
        _report(store.problems)
        entries = store.runs(_filter(args))
        if args.json:
            for e in entries:
                _out.print(e.model_dump_json(), markup=False)
            return 0
        table = Table("run_id", "case", "model", "prompt hash", "hash kind", "coverage", "superseded by")
        for e in entries:
            kind = e.hash_kind.value if e.hash_kind else "v1 agent source"
            table.add_row(e.run_id, e.use_case_id, e.model_id, (e.system_prompt_hash or "-")[:12], kind,
                          e.artifact_coverage.value, e.superseded_by or "")
        _out.print(table)
        _out.print(f"{len(entries)} runs")
    return 0


def _store_show(args: argparse.Namespace) -> int:
    with _open(args) as store:
        record = store.read(store.get(args.run_id))
        info = {
            "entry": record.entry.model_dump(mode="json"),
            "folder": str(record.folder),
            "metadata": record.metadata.model_dump(mode="json") if record.metadata else None,
            "files": sorted(p.name for p in record.folder.iterdir()) if record.folder.is_dir() else [],
            "verdicts": sorted(p.name for p in (record.folder / "verdicts").glob("*.json")),
            "audit_lines": len(record.audit),
            "trace_calls": len(record.trace),
            "has_snapshot": record.snapshot is not None,
        }
        _out.print(json.dumps(info, indent=2), markup=False)
        _report(record.problems)
    return 0


def _store_verify(args: argparse.Namespace) -> int:
    with _open(args) as store:
        problems, notes = verify_store(store)
        for p in problems:
            _out.print(str(p), markup=False)
        for n in notes:
            _err.print(f"note: {n}", markup=False)
        count = len(store.runs(RunFilter(include_superseded=True)))
    _err.print(f"{count} runs checked, {len(problems)} problems", markup=False)
    return 1 if problems else 0


def _store_reindex(args: argparse.Namespace) -> int:
    with _open(args, create=True) as store:
        report = reindex(store)
        _report(report.problems)
        _out.print(f"indexed {len(report.imported)} run folders found on disk; run_index.json refreshed", markup=False)
    return 1 if report.problems else 0


def _store_import(args: argparse.Namespace) -> int:
    with _open(args, create=True) as store:
        report = import_runs(store, Path(args.source))
        _report(report.problems)
        _out.print(f"imported {len(report.imported)}, already present {len(report.skipped)}, problems {len(report.problems)}", markup=False)
    return 1 if report.problems else 0


def _store_backfill(args: argparse.Namespace) -> int:
    with _open(args) as store:
        report = backfill_metadata(store)
        for rid in report.written:
            _out.print(f"backfilled metadata.json for {rid}", markup=False)
        _out.print(f"{len(report.written)} runs backfilled", markup=False)
    return 0


def _store_supersede(args: argparse.Namespace) -> int:
    with _open(args) as store:
        store.supersede(args.old, args.new)
    _out.print(f"{args.old} is superseded by {args.new}", markup=False)
    return 0


def _score(args: argparse.Namespace) -> int:
    cases, case_errors = load_case_set(args.cases)
    for ce in case_errors:
        _err.print(f"problem: {ce}", markup=False)
    problems: list[Problem] = []
    with _open(args) as store:
        _report(store.problems)
        rows = list(score_store(store, cases, _filter(args), write=not args.no_write, problems=problems))
    _report(problems)
    if args.format == "jsonl":
        for row in rows:
            _out.print(row.score.model_dump_json(), markup=False)
        return 0
    table = Table("run_id", "model", "verdict", "criteria fired", "diagnosis", "trajectory", "claims")
    for row in rows:
        s = row.score
        fired = ",".join(str(c.criterion_id) for c in s.criteria if c.fired) or "-"
        diag = {True: "correct", False: "wrong", None: "n/a"}[s.diagnosis.correct]
        table.add_row(s.run_id, s.model_id, s.verdict, fired, diag,
                      "ok" if s.trajectory.passed else "fail", "ok" if s.claims.passed else "UNSUPPORTED")
    _out.print(table)
    return 0


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", help="store folder (default: $GHOST_EVAL_STORE, else the bundled demo store)")
    select = argparse.ArgumentParser(add_help=False)
    select.add_argument("--use-case", help="case id (m or use_case_m)")
    select.add_argument("--model")
    select.add_argument("--prompt-hash", help="full hash or a prefix of 6+ characters")
    select.add_argument("--label", help="run label")
    select.add_argument("--include-superseded", action="store_true")

    parser = argparse.ArgumentParser(prog="ghost-eval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    store = sub.add_parser("store", help="artifact store maintenance and queries")
    ssub = store.add_subparsers(dest="store_command", required=True)
    for name, helptext in (("list", "list runs"), ("query", "runs matching filters, as JSON lines")):
        p = ssub.add_parser(name, parents=[common, select], help=helptext)
        p.add_argument("--json", action="store_true", default=name == "query", help="one JSON object per run")
        p.set_defaults(func=_store_list)
    p = ssub.add_parser("show", parents=[common], help="one run: identity, files, problems")
    p.add_argument("run_id")
    p.set_defaults(func=_store_show)
    ssub.add_parser("verify", parents=[common], help="check every run; read-only").set_defaults(func=_store_verify)
    ssub.add_parser("reindex", parents=[common], help="index folders missing from the index; refresh run_index.json").set_defaults(
        func=_store_reindex
    )
    p = ssub.add_parser("import", parents=[common], help="import original Ghost Agent run folders")
    p.add_argument("source")
    p.set_defaults(func=_store_import)
    ssub.add_parser("backfill", parents=[common], help="write missing metadata.json files").set_defaults(func=_store_backfill)
    p = ssub.add_parser("supersede", parents=[common], help="record that NEW replaces OLD")
    p.add_argument("old")
    p.add_argument("new")
    p.set_defaults(func=_store_supersede)

    p = sub.add_parser("score", parents=[common, select], help="deterministic scores for stored runs")
    p.add_argument("--format", choices=("jsonl", "table"), default="table")
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument("--no-write", action="store_true", help="do not keep verdict files beside the runs")
    p.set_defaults(func=_score)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler: Handler = args.func
    try:
        return handler(args)
    except GhostEvalError as exc:
        _err.print(f"error: {exc}", markup=False)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
