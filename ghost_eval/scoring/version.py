"""Which scorer wrote a verdict, in a module that imports nothing of the scorer, so a Promptfoo assertion process can
tell whether the grades a provider attached are current without loading it.

The version is the hand-bumped number plus a hash of the rules themselves (every source file the scorer reads its rules
from), so a verdict cached before a rule changed is never served, even when nobody bumped the number. The answer keys a
verdict used are named by its `case_hash`, which the verdict cache keys on beside this version.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["RULE_FILES", "RULES_HASH", "SCORER", "SCORER_NAME", "SCORER_VERSION", "rules_hash"]

_PACKAGE = Path(__file__).resolve().parent.parent
RULE_FILES: tuple[Path, ...] = (
    *sorted((_PACKAGE / "scoring").glob("*.py")),
    *sorted((_PACKAGE / "shell").glob("*.py")),
    _PACKAGE / "connect" / "effective.py",
    _PACKAGE / "cases" / "phrases.py",
    _PACKAGE / "cases" / "case.py",
    _PACKAGE / "run" / "artifacts.py",
    _PACKAGE / "run" / "snapshot.py",
)
"""The scorer's rules: its own modules, the command model it reads commands through, Azure's port ranges, the phrase
vocabulary, and the models its evidence and answer keys load into."""


def rules_hash(files: tuple[Path, ...] = RULE_FILES) -> str:
    """sha256 over the files' names and contents, in order; 12 hex digits are enough to tell rule sets apart."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


SCORER_NAME = "deterministic"
RULES_HASH = rules_hash()
SCORER_VERSION = f"3.217.0+rules.{RULES_HASH}"
"""Bump the number whenever a rule is meant to change what a run scores; the rules hash changes by itself."""
SCORER = f"{SCORER_NAME}@{SCORER_VERSION}"
