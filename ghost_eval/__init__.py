"""ghost-eval: run identity, an append-only artifact store and scoring for Ghost Agent runs."""

from ghost_eval.cases import Case, load_cases
from ghost_eval.errors import GhostEvalError
from ghost_eval.identity import RunMetadata, effective_prompt_hash
from ghost_eval.store import RunFilter, Store

__all__ = ["Case", "GhostEvalError", "RunFilter", "RunMetadata", "Store", "effective_prompt_hash", "load_cases"]
__version__ = "0.1.0"
