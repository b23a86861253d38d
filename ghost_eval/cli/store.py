"""`ghost-eval store …`: list, query, show, verify, clean, reindex, import, backfill, supersede."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.table import Table

from ghost_eval.base.errors import StoreError
from ghost_eval.base.settings import revealed
from ghost_eval.cli._common import Parents, err, open_shared, open_store, out, report_problems, run_filter
from ghost_eval.store import BLOB_SCHEME, UNKNOWN_SUITE, RunFilter, Store, default_store_path
from ghost_eval.store.backfill import backfill_metadata
from ghost_eval.store.clean import clean_store
from ghost_eval.store.importer import import_runs, reindex
from ghost_eval.store.supersede import supersede, undo_supersede
from ghost_eval.store.verify import verify_store

__all__ = ["register"]


def _store_to_write(args: argparse.Namespace, *, create: bool = False) -> Store:
    """The store a writing command changes, refused up front (naming why) when it cannot be written to.

    Only `store import` may create a store; `reindex`, `backfill` and `supersede` work on an existing one.
    """
    command = f"store {args.store_command}"
    if str(args.store or "").startswith(BLOB_SCHEME):
        raise StoreError(f"`{command}` changes a local store; a shared store is written by `store sync` (and `store reindex`)")
    path = default_store_path(args.store, args.settings)
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path} is a file, not a store folder; `{command}` needs a store folder")
    if not path.exists():
        if not create:
            raise StoreError(f"store not found: {path} does not exist; `{command}` creates no store (`store import` starts one)")
        parent = next(p for p in path.parents if p.exists())
        if not os.access(parent, os.W_OK):
            raise StoreError(f"{path} cannot be created: {parent} is read-only")
    elif not os.access(path, os.W_OK):
        raise StoreError(
            f"store {path} is read-only: `{command}` must write to it; "
            "`store list`, `store verify`, `score --no-write` and replay read it as it is"
        )
    return Store(path, create=create)


def _store_list(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        entries = store.runs(run_filter(args))
        report_problems(store.problems)  # after runs(): SQLite rows are checked as they are selected
        if args.json:
            for e in entries:
                out.print(e.model_dump_json(), markup=False)
            return 0
        table = Table("run_id", "case", "model", "prompt hash", "hash kind", "suite version", "coverage", "superseded by")
        for e in entries:
            kind = e.hash_kind.value if e.hash_kind else "v1 agent source"
            table.add_row(
                e.run_id,
                e.use_case_id,
                e.model_id,
                (e.system_prompt_hash or "-")[:12],
                kind,
                e.suite_version or UNKNOWN_SUITE,
                e.artifact_coverage.value,
                e.superseded_by or "",
            )
        out.print(table)
        out.print(f"{len(entries)} runs")
    return 0


def _store_show(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        record = store.read(store.get(args.run_id))
        info = {
            "entry": record.entry.model_dump(mode="json"),
            "folder": str(record.folder),
            "metadata": record.metadata.model_dump(mode="json") if record.metadata else None,
            "files": sorted(p.name for p in record.folder.iterdir()) if record.readable else [],
            "verdicts": sorted(p.name for p in (record.folder / "verdicts").glob("*.json")) if record.readable else [],
            "audit_lines": len(record.audit),
            "trace_calls": len(record.trace),
            "has_snapshot": record.snapshot is not None,
            "aborted": record.aborted,
        }
        out.print(json.dumps(info, indent=2), markup=False)
        report_problems(record.problems)
    return 0


def _store_verify(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        problems, notes = verify_store(store)
        for p in problems:
            out.print(str(p), markup=False)
        for n in notes:
            err.print(f"note: {n}", markup=False)
        count = len(store.runs(RunFilter(include_superseded=True)))
    err.print(f"{count} runs checked, {len(problems)} problems", markup=False)
    return 1 if problems else 0


def _store_reindex(args: argparse.Namespace) -> int:
    if str(args.store or "").startswith(BLOB_SCHEME):
        found = open_shared(args).reindex()  # the Azure SDK only where a shared store is named
        out.print(f"indexed {len(found)} complete runs whose writer died before indexing them: {found}", markup=False)
        return 0
    with _store_to_write(args) as store:
        report = reindex(store)
        report_problems(report.problems)
        for note in report.notes:
            err.print(f"note: {note}", markup=False)
        for old, new in report.superseded:
            out.print(f"{old} is superseded by {new} (set by hand in run_index.json)", markup=False)
        kept = "run_index.json left as it is" if report.notes else "run_index.json refreshed"
        out.print(f"indexed {len(report.imported)} run folders found on disk; {kept}", markup=False)
    return 1 if report.problems else 0


def _store_import(args: argparse.Namespace) -> int:
    with _store_to_write(args, create=True) as store:
        report = import_runs(store, Path(args.source))
        report_problems(report.problems)
        for note in report.notes:
            err.print(f"note: {note}", markup=False)
        for old, new in report.superseded:
            out.print(f"{old} is superseded by {new} (kept from the source)", markup=False)
        counts = (
            f"imported {len(report.imported)}, already present {len(report.skipped)}, "
            f"superseded {len(report.superseded)}, problems {len(report.problems)}"
        )
        out.print(counts, markup=False)
    return 1 if report.problems else 0


def _store_backfill(args: argparse.Namespace) -> int:
    with _store_to_write(args) as store:
        report = backfill_metadata(store)
        report_problems(report.problems)
        for rid in report.written:
            out.print(f"backfilled metadata.json for {rid}", markup=False)
        out.print(f"{len(report.written)} runs backfilled", markup=False)
    return 1 if report.problems else 0


def _store_sync(args: argparse.Namespace) -> int:
    from ghost_eval.store.blob import sync

    settings = args.settings
    report = sync(
        args.source, args.destination, revealed(settings.azure_storage_connection_string), settings.azure_storage_account_url
    )
    report_problems(report.problems)
    for run_id in report.copied:
        out.print(f"{run_id}: copied", markup=False)
    out.print(f"{len(report.copied)} copied, {report.present} already there, {len(report.problems)} problem(s)", markup=False)
    return 1 if report.problems else 0


def _store_clean(args: argparse.Namespace) -> int:
    with _store_to_write(args) as store:
        report = clean_store(store, args.older_than * 3600)
    for run_id in report.recovered:
        out.print(f"{run_id}: its writer died after publishing it; indexed", markup=False)
    for run_id in report.released:
        out.print(f"{run_id}: its writer died before publishing it; the claim is dropped", markup=False)
    for path in report.removed:
        out.print(f"{path}: staging leftover removed", markup=False)
    out.print(f"{len(report.recovered)} recovered, {len(report.released)} released, {len(report.removed)} removed", markup=False)
    return 0


def _store_supersede(args: argparse.Namespace) -> int:
    if args.undo:
        if args.new is not None:
            raise StoreError("store supersede --undo OLD takes no NEW")
        with _store_to_write(args) as store:
            new = undo_supersede(store, args.old)
        out.print(f"{args.old} counts again (it was superseded by {new}; the log keeps both)", markup=False)
        return 0
    if args.new is None:
        raise StoreError("store supersede OLD NEW: name the run that replaces OLD (or --undo OLD)")
    with _store_to_write(args) as store:
        supersede(store, args.old, args.new)
    out.print(f"{args.old} is superseded by {args.new}", markup=False)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    common, select = parents.common, parents.select
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
    p = ssub.add_parser("clean", parents=[common], help="settle claims of writers that died; remove old staging leftovers")
    p.add_argument("--older-than", type=float, default=1.0, metavar="HOURS", help="staging age to remove (default 1)")
    p.set_defaults(func=_store_clean)
    p = ssub.add_parser("reindex", parents=[common], help="index folders missing from the index; refresh run_index.json")
    p.set_defaults(func=_store_reindex)
    p = ssub.add_parser("import", parents=[common], help="import original Ghost Agent run folders")
    p.add_argument("source")
    p.set_defaults(func=_store_import)
    ssub.add_parser("backfill", parents=[common], help="write missing metadata.json files").set_defaults(func=_store_backfill)
    p = ssub.add_parser("supersede", parents=[common], help="record that NEW replaces OLD (or --undo OLD)")
    p.add_argument("old")
    p.add_argument("new", nargs="?")
    p.add_argument("--undo", action="store_true", help="make OLD count again; the supersession log keeps both events")
    p.set_defaults(func=_store_supersede)
    p = ssub.add_parser("sync", help="copy runs between a local store folder and a shared azblob://<container>")
    p.add_argument("source", help="store folder or azblob://<container>")
    p.add_argument("destination", help="store folder or azblob://<container> (a folder is created)")
    p.set_defaults(func=_store_sync)
