"""What every command module shares: consoles, the common options, opening the store, printing problems."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console

from ghost_eval.base.settings import Settings, revealed
from ghost_eval.store import BLOB_SCHEME, Problem, RunFilter, Store, default_store_path

if TYPE_CHECKING:
    from ghost_eval.base.errors import CaseError
    from ghost_eval.cases.case import Case
    from ghost_eval.store.blob import BlobStore

__all__ = [
    "Handler",
    "Parents",
    "cases_for",
    "err",
    "open_shared",
    "open_store",
    "out",
    "progress",
    "report_problems",
    "run_filter",
]

# Tables keep full run ids when piped or captured, where rich would otherwise assume 80 columns.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 240)
err = Console(stderr=True, highlight=False, soft_wrap=True)
Handler = Callable[[argparse.Namespace], int]
_T = TypeVar("_T")


def progress(description: str, total: int | None = None) -> Callable[[Iterable[_T]], Iterable[_T]]:
    """A progress bar on stderr over the items as they are worked through (shown only on a terminal)."""

    def each(items: Iterable[_T]) -> Iterable[_T]:
        from rich.progress import track  # a large module: imported when a command shows progress

        return track(items, description, total, console=err, transient=True, disable=not err.is_terminal)

    return each


@dataclass(frozen=True)
class Parents:
    """Shared option groups: `common` (--store) for every command, `select` (run filters) where runs are chosen."""

    common: argparse.ArgumentParser
    select: argparse.ArgumentParser


def report_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        err.print(f"problem: {p}", markup=False)


def cases_for(args: argparse.Namespace) -> tuple[dict[str, Case], list[CaseError]]:
    """The cases of `--cases` (default: the bundled ones); each file that fails to load is named (file, field, reason).
    The teams' installed criteria are registered here too, as every command that scores, judges or reports loads its
    cases here. Scoring is imported here, not at start-up: a command that loads no case (or scores an empty store)
    never pays."""
    from ghost_eval.evaluation.evaluate import load_case_set
    from ghost_eval.evaluation.extensions import load_criteria

    load_criteria()
    cases, errors = load_case_set(getattr(args, "cases", None))
    for e in errors:
        err.print(f"problem: {e}", markup=False)
    return cases, errors


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    """The store of `--store`; a shared `azblob://<container>` is read through its local mirror, brought up to date."""
    if str(args.store or "").startswith(BLOB_SCHEME):
        from ghost_eval.store.blob import mirror_folder  # the Azure SDK only where a shared store is named

        shared = open_shared(args)
        local = Store(mirror_folder(shared, args.settings.mirror), create=True)
        report_problems(shared.mirror_into(local).problems)
        return local
    return Store(default_store_path(args.store, args.settings), create=create)


def open_shared(args: argparse.Namespace) -> BlobStore:
    """The shared store of `--store`, with the credentials of the settings `main` read."""
    from ghost_eval.store.blob import BlobStore

    settings: Settings = args.settings
    return BlobStore.open(args.store, revealed(settings.azure_storage_connection_string), settings.azure_storage_account_url)


def run_filter(args: argparse.Namespace) -> RunFilter:
    return RunFilter(
        use_case=getattr(args, "use_case", None),
        model=getattr(args, "model", None),
        prompt_hash=getattr(args, "prompt_hash", None),
        run_label=getattr(args, "label", None),
        suite_version=getattr(args, "suite_version", None),
        include_superseded=getattr(args, "include_superseded", False),
    )
