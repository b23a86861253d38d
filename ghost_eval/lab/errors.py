"""The lab's one error type, so the CLI prints lab failures (not root, a kernel feature missing) without a traceback."""

from __future__ import annotations

from ghost_eval.base.errors import GhostEvalError

__all__ = ["LabError"]


class LabError(GhostEvalError):
    """The lab cannot be built, reached or torn down; the message says which piece and why."""
