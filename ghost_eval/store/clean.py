"""`store clean`: settle what interrupted writers left behind, so nothing half-written lingers or hides a run."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.store.artifact_store import Store
from ghost_eval.store.layout import STAGING_DIR
from ghost_eval.store.writer import settle_claim

__all__ = ["CleanReport", "clean_store"]


@dataclass
class CleanReport:
    recovered: list[str] = field(default_factory=list)
    """Runs a dead writer had published whole; now indexed."""
    released: list[str] = field(default_factory=list)
    """Claims of dead writers whose folder never appeared; the ids are free again."""
    removed: list[Path] = field(default_factory=list)
    """Staging folders older than the threshold (a live writer stages for seconds, not hours)."""


def clean_store(store: Store, older_than_s: float) -> CleanReport:
    """Settle dead writers' claims and remove old staging leftovers; never touches a published run folder."""
    report = CleanReport()
    index = store.writable_index()
    for entry in index.stale_claims():
        (report.recovered if settle_claim(store.root, index, entry) else report.released).append(entry.run_id)
    staging = store.root / STAGING_DIR
    cutoff = time.time() - older_than_s
    for leftover in sorted(staging.iterdir()) if staging.is_dir() else []:
        if leftover.is_dir() and not leftover.is_symlink() and leftover.stat().st_mtime < cutoff:
            shutil.rmtree(leftover)
            report.removed.append(leftover)
    if report.recovered or report.released:
        store.refresh_view()
    return report
