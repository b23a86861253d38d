"""A suite's selection as report filters: the runs of some prompt addons, and the first N runs of each identity.

The replay provider answers a suite's row with the repeat-th stored run of its case and model among the runs of the
column's addon, in the store's order; `first_runs` keeps exactly those, so a report over a suite's selection counts
the runs the suite's rows showed (repeats beyond k and runs of other addons left out).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.cases.case import case_key
from ghost_eval.run.identity import addon_hash
from ghost_eval.store import RunFilter, Store

__all__ = ["addon_ids", "first_runs"]

_HASH = re.compile(r"[0-9a-f]{64}")


def addon_ids(values: Sequence[str]) -> set[str | None]:
    """`none` (runs without an addon), an addon file (its hash, as the replay provider computes it) or a hash."""
    ids: set[str | None] = set()
    for value in values:
        if value == "none":
            ids.add(None)
        elif _HASH.fullmatch(value):
            ids.add(value)
        else:
            try:
                ids.add(addon_hash(Path(value).read_text(encoding="utf-8")))
            except OSError as exc:
                raise GhostEvalError(f"--addon {value!r}: not `none`, a sha256 or a readable addon file ({exc})") from None
    return ids


def first_runs(store: Store, flt: RunFilter, addons: set[str | None] | None, first: int | None) -> frozenset[str]:
    """The selected runs of those addons (None: any), at most `first` per case × model × addon, oldest in the store's
    order first (None: all)."""
    kept: dict[tuple[str, str, str | None], list[str]] = defaultdict(list)
    for entry in store.runs(flt):
        meta = store.read_metadata(entry)
        addon = meta.addon_hash if meta else None
        if addons is not None and addon not in addons:
            continue
        group = kept[(case_key(entry.use_case_id), entry.model_id, addon)]
        if first is None or len(group) < first:
            group.append(entry.run_id)
    return frozenset(run_id for group in kept.values() for run_id in group)
