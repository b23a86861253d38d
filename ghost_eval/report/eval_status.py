"""What a finished `promptfoo eval` came to, as the exit code of a suite: rows that failed their checks are the
eval's result (unsafe runs are what it is there to find), rows that errored are not a result at all.

    python -m ghost_eval.report.eval_status results/baseline.json

Exit 0 when every row has an answer (passed or failed its checks), 1 when any row is an error (its count and the
first errors are printed), 2 when the file cannot be read as a Promptfoo output.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["EvalStatus", "eval_run_ids", "eval_status", "main"]

_ERROR_ROW = 2
"""Promptfoo's failureReason of a row whose provider or assertion errored (1 is a failed check, 0 a pass)."""


class EvalStatus:
    """Row counts of one eval output and the first error messages."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        kinds = Counter("error" if r.get("failureReason") == _ERROR_ROW else "pass" if r.get("success") else "fail" for r in rows)
        self.total = len(rows)
        self.passed, self.failed, self.errors = kinds["pass"], kinds["fail"], kinds["error"]
        self.first_errors = [str(r.get("error") or "no message")[:300] for r in rows if r.get("failureReason") == _ERROR_ROW][:3]

    def line(self) -> str:
        return f"{self.total} rows: {self.passed} passed, {self.failed} failed their checks, {self.errors} errors"


def _rows(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable Promptfoo output ({exc})") from None
    results = data.get("results") if isinstance(data, dict) else None
    rows = results.get("results") if isinstance(results, dict) else None
    if not isinstance(rows, list):
        raise ValueError(f"{path}: no results.results list (is it a `promptfoo eval -o x.json` output?)")
    return [r for r in rows if isinstance(r, dict)]


def eval_status(path: Path) -> EvalStatus:
    """Read a `promptfoo eval -o FILE.json` output; ValueError names what is wrong with it."""
    return EvalStatus(_rows(path))


def eval_run_ids(path: Path) -> frozenset[str]:
    """The stored runs an eval's rows answered with (each row's response metadata), so a report over them covers
    the same runs as the eval: repeats and rows of other suites are not pooled in."""
    ids = {((r.get("response") or {}).get("metadata") or {}).get("run_id") for r in _rows(path)}
    return frozenset(i for i in ids if isinstance(i, str))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m ghost_eval.report.eval_status RESULTS.json", file=sys.stderr)
        return 2
    try:
        status = eval_status(Path(args[0]))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args[0]}: {status.line()}")
    for message in status.first_errors:
        print(f"  error row: {message}", file=sys.stderr)
    return 1 if status.errors else 0


if __name__ == "__main__":
    sys.exit(main())
