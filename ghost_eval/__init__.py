"""ghost-eval: run identity, an append-only artifact store and scoring for Ghost Agent runs.

The names below are imported on first use: Promptfoo starts a fresh interpreter for every Python
assertion, and importing `ghost_eval.scoring` must not pay for the store, the lab or the judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ghost_eval.base.lazy import lazy_getattr

if TYPE_CHECKING:
    from ghost_eval.base.errors import GhostEvalError
    from ghost_eval.cases.case import Case, load_cases
    from ghost_eval.run.identity import RunMetadata, effective_prompt_hash
    from ghost_eval.store import RunFilter, Store

__all__ = ["Case", "GhostEvalError", "RunFilter", "RunMetadata", "Store", "effective_prompt_hash", "load_cases"]
__version__ = "0.1.0"

_HOMES = {
    "Case": "ghost_eval.cases.case",
    "load_cases": "ghost_eval.cases.case",
    "GhostEvalError": "ghost_eval.base.errors",
    "RunMetadata": "ghost_eval.run.identity",
    "effective_prompt_hash": "ghost_eval.run.identity",
    "RunFilter": "ghost_eval.store",
    "Store": "ghost_eval.store",
}


__getattr__ = lazy_getattr(__name__, _HOMES)
