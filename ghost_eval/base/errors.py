"""One family of errors, each naming the file and field at fault, so the CLI can print them plainly."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CaseError",
    "ExtensionError",
    "GhostEvalError",
    "RecordError",
    "RunExistsError",
    "StoreError",
    "SuiteVersionError",
    "UnsafePathError",
]


class GhostEvalError(Exception):
    """Base of every error the library raises on purpose; the CLI prints these without a traceback."""


class RecordError(GhostEvalError):
    """A persisted record (JSON/JSONL/YAML) is missing, unreadable or fails its schema."""

    def __init__(self, path: Path | str, message: str, field: str | None = None) -> None:
        self.path = str(path)
        self.field = field
        self.detail = message
        where = f"{self.path}: field '{field}'" if field else self.path
        super().__init__(f"{where}: {message}")


class CaseError(RecordError):
    """A use-case YAML file is malformed or fails the case schema."""


class ExtensionError(GhostEvalError):
    """A team's check cannot be found, loaded or run, or two checks share a name."""


class StoreError(GhostEvalError):
    """The artifact store refused an operation or is inconsistent."""


class RunExistsError(StoreError):
    """A run id is already present: the store never overwrites a run."""


class UnsafePathError(StoreError):
    """A path taken from the index would resolve outside the store."""


class SuiteVersionError(GhostEvalError):
    """A report or decision would pool runs of two suite versions (their cases, answer keys or scorer differ)."""
