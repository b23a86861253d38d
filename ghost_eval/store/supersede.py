"""Which supersessions make sense: a replacement is a re-run of the same case on the same model, and never a cycle."""

from __future__ import annotations

from collections.abc import Mapping

from ghost_eval.cases import case_key
from ghost_eval.errors import StoreError
from ghost_eval.store.artifact_store import Store
from ghost_eval.store.query import RunFilter

__all__ = ["check_supersession", "supersede"]


def check_supersession(store: Store, old: str, new: str, pending: Mapping[str, str] | None = None) -> None:
    """Raise StoreError when `new` cannot replace `old`: unknown, itself, another case or model, or a cycle.

    A cycle (A by B, then B by A) would hide every run in it from every reader. `pending` holds supersessions
    about to be recorded with this one (old → new), so a cycle among them is refused too.
    """
    if old == new:
        raise StoreError(f"run {old} cannot supersede itself")
    before, after = store.get(old), store.get(new)
    if case_key(before.use_case_id) != case_key(after.use_case_id):
        raise StoreError(
            f"run {new} is use case {after.use_case_id}, run {old} is {before.use_case_id}: a replacement re-runs the same case"
        )
    if before.model_id != after.model_id:
        raise StoreError(
            f"run {new} is model {after.model_id}, run {old} is {before.model_id}: a replacement re-runs the same model"
        )
    chain = [new]
    every = {e.run_id: e.superseded_by for e in store.runs(RunFilter(include_superseded=True))} | dict(pending or {})
    while (nxt := every.get(chain[-1])) is not None and nxt not in chain:
        chain.append(nxt)
        if nxt == old:
            raise StoreError(f"superseding {old} by {new} makes a cycle ({' → '.join([old, *chain])}): it would hide them all")


def supersede(store: Store, old: str, new: str) -> None:
    """Record that `new` replaces `old`, after the checks above; the old run's files are never touched."""
    check_supersession(store, old, new)
    store.supersede(old, new)
