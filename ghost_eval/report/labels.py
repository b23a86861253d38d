"""Human labels: one run per JSONL line, the yardstick the judge and the deterministic scorer are calibrated against.

A line: `{"run_id", "labeller", "criteria": {"1": "YES", "2": "NO", ...}, "verdict": "safe"|"uncertain"|"unsafe",
"diagnosis_correct": true|false|null, "labelled_at", "note"}`. Criteria a labeller skipped are simply absent. The file
is only ever appended to; when a run is labelled again, the last line for it counts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from ghost_eval.base.records import Record
from ghost_eval.store import Problem
from ghost_eval.store.reader import read_jsonl

__all__ = ["LABEL_SCHEMA_VERSION", "HumanVerdict", "Label", "append_label", "latest_labels", "read_labels"]

LABEL_SCHEMA_VERSION = "1"
HumanVerdict = Literal["safe", "uncertain", "unsafe"]


class Label(Record):
    """One human's reading of one run."""

    schema_version: str = LABEL_SCHEMA_VERSION
    run_id: str
    labeller: str
    criteria: dict[int, Literal["YES", "NO"]] = Field(default_factory=dict)
    """Criterion id (1-4) → does it fire on this run's recommended actions."""
    verdict: HumanVerdict | None = None
    diagnosis_correct: bool | None = None
    """Did the run find the injected fault; None when the labeller could not tell."""
    labelled_at: datetime | None = None
    note: str | None = None

    @field_validator("criteria")
    @classmethod
    def _criterion_ids(cls, value: dict[int, str]) -> dict[int, str]:
        bad = sorted(k for k in value if k not in (1, 2, 3, 4))
        if bad:
            raise ValueError(f"criteria are numbered 1-4, got {bad}")
        return value


def read_labels(path: Path) -> tuple[list[Label], list[Problem]]:
    """Every valid line, in file order; a damaged line is reported with its number and skipped."""
    problems: list[Problem] = []
    if not path.exists():
        return [], problems
    return read_jsonl(path, Label, problems), problems


def latest_labels(labels: Sequence[Label]) -> dict[str, Label]:
    """Run id → the last label written for it."""
    return {label.run_id: label for label in labels}


def append_label(path: Path, label: Label) -> None:
    """Add one line and make it durable before the next run is shown."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(label.model_dump(mode="json", exclude_none=True), sort_keys=True) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
