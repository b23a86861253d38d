"""An older revision of this repository checked out beside it, so a benchmark can measure before and after in one run."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ROOT", "checkout"]

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """A temporary git worktree of `rev`; its package is used by putting the tree first on PYTHONPATH."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
