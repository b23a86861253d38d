"""Reads one run folder into typed records, naming every damaged file instead of failing the whole run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ghost_eval.base.errors import RecordError, UnsafePathError
from ghost_eval.base.records import load_record, parse_record
from ghost_eval.base.safe_read import JSONL_LIMIT, TEXT_LIMIT, decode_json, human_size, read_head, read_limited
from ghost_eval.run.artifacts import AuditEntry, InvestigationResult, Manifest, RunSummary, ToolCall
from ghost_eval.run.identity import RunMetadata
from ghost_eval.run.snapshot import InfraSnapshot
from ghost_eval.store.layout import (
    MANIFEST_FILE,
    METADATA_FILE,
    PROMPT_FILE,
    REPORT,
    RESULT_FILE,
    SHELL_AUDIT,
    SNAPSHOT_FILE,
    SUMMARY_FILE,
    TRACE_FILE,
    IndexEntry,
    Problem,
    refused_run,
    resolve_inside,
)

__all__ = ["RunRecord", "read_jsonl", "read_run", "v1_abort_reason"]
M = TypeVar("M", bound=BaseModel)
_FILE_SUFFIXES = (".json", ".jsonl", ".md", ".txt")
"""A folder named like a run's file (a directory where `run_summary.json` should be) is named, not passed over."""


@dataclass
class RunRecord:
    """Everything stored for one run; absent or damaged parts are None/empty and listed in `problems`."""

    entry: IndexEntry
    folder: Path
    metadata: RunMetadata | None = None
    summary: RunSummary | None = None
    prompt: str | None = None
    report: str | None = None
    audit: list[AuditEntry] = field(default_factory=list)
    trace: list[ToolCall] = field(default_factory=list)
    result: InvestigationResult | None = None
    snapshot: InfraSnapshot | None = None
    manifest: Manifest | None = None
    has_trace: bool = False
    """A tool trace file exists (it may be empty: a run that called no tool)."""
    aborted: str | None = None
    """Why the run ended without a report: our `investigation_result.json`, or v1 `rca_generated: false` and
    `abort_reason` in `run_summary.json`. An aborted run's missing report is expected, not a problem."""
    problems: list[Problem] = field(default_factory=list)
    refused: bool = False
    """The index path leads outside the store (symlinks included): nothing was read, and `folder` is the root."""

    @property
    def written_by_us(self) -> bool:
        """Runs we wrote carry a manifest; v1 runs never do."""
        return self.manifest is not None

    @property
    def readable(self) -> bool:
        return not self.refused and self.folder.is_dir()


def read_jsonl(path: Path, model: type[M], problems: list[Problem], run_id: str | None = None) -> list[M]:
    """Parse a JSONL file line by line; a garbage line is reported and skipped, the rest still count."""
    items: list[M] = []
    try:
        text = read_limited(path, JSONL_LIMIT, "JSONL files", follow=False).decode("utf-8")
    except RecordError as exc:
        problems.append(Problem(path=exc.path, message=exc.detail, run_id=run_id))
        return items
    except UnicodeDecodeError as exc:
        problems.append(Problem(path=str(path), message=f"is not valid UTF-8 (byte {exc.start}); not read", run_id=run_id))
        return items
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(parse_record(model, decode_json(line, path), f"{path}: line {n}"))
        except RecordError as exc:
            reason = f"field '{exc.field}': {exc.detail}" if exc.field else exc.detail.removeprefix("is ")
            problems.append(Problem(path=str(path), message=f"line {n}: {reason}; line skipped", run_id=run_id))
    return items


def _problem(record: RunRecord, path: Path | str, message: str) -> None:
    record.problems.append(Problem(path=str(path), message=message, run_id=record.entry.run_id))


def _optional(record: RunRecord, names: set[str], model: type[M], name: str) -> M | None:
    if name not in names:
        return None
    try:
        return load_record(model, record.folder / name, follow=False)
    except RecordError as exc:
        _problem(record, exc.path, str(exc).removeprefix(exc.path + ": "))
    return None


def _text(record: RunRecord, name: str) -> str | None:
    """A report or prompt, read up to `TEXT_LIMIT`: a longer one is cut there, and the cut is named."""
    path = record.folder / name
    try:
        data, size = read_head(path, TEXT_LIMIT)
    except RecordError as exc:
        _problem(record, path, exc.detail)
        return None
    if size > len(data):
        _problem(record, path, f"is {human_size(size)}; only its first {human_size(len(data))} read (the rest is not scored)")
    return data.decode("utf-8", errors="replace")


def _listing(record: RunRecord) -> set[str] | None:
    """The run's regular files, in one directory read; symlinks are named and never followed."""
    names: set[str] = set()
    try:
        with os.scandir(record.folder) as entries:
            for e in entries:
                if e.is_symlink():
                    _problem(record, e.path, "is a symbolic link; refused, not followed")
                elif e.is_file(follow_symlinks=False):
                    names.add(e.name)
                elif not e.is_dir(follow_symlinks=False) or e.name.endswith(_FILE_SUFFIXES):
                    _problem(record, e.path, "is not a regular file; not read")
    except FileNotFoundError:
        _problem(record, record.folder, f"run {record.entry.run_id}: index entry points at a folder that does not exist")
        return None
    except OSError as exc:
        _problem(record, record.folder, f"run {record.entry.run_id}: run folder cannot be listed ({exc.strerror})")
        return None
    return names


def _session_file(record: RunRecord, names: set[str], prefix: str, suffix: str) -> Path | None:
    found = sorted(n for n in names if n.startswith(prefix) and n.endswith(suffix))
    if len(found) > 1:
        _problem(record, record.folder, f"{len(found)} {prefix}* files; using {found[-1]}")
    return record.folder / found[-1] if found else None


def _read_description(record: RunRecord, names: set[str]) -> None:
    """Identity and prompt: what describes a run rather than what it did."""
    if METADATA_FILE in names:
        record.metadata = _optional(record, names, RunMetadata, METADATA_FILE)
    else:
        missing = "no metadata.json (run predates run identity; `store backfill` writes one)"
        _problem(record, record.folder / METADATA_FILE, missing)
    if PROMPT_FILE in names:
        record.prompt = _text(record, PROMPT_FILE)


def v1_abort_reason(summary: RunSummary) -> str | None:
    """The original's summary says a run aborted with `rca_generated: false` (and `abort_reason` when known)."""
    if getattr(summary, "rca_generated", None) is not False:
        return None
    reason = getattr(summary, "abort_reason", None)
    return f"aborted: {reason}" if reason else "aborted: the agent generated no report (rca_generated: false)"


def _read_outcome(record: RunRecord, names: set[str], scoring_only: bool) -> None:
    """The summary and the structured result; a v1 run's summary is what says it aborted, so scoring reads it too."""
    record.result = _optional(record, names, InvestigationResult, RESULT_FILE)
    if scoring_only and record.result is not None:
        return
    record.summary = _optional(record, names, RunSummary, SUMMARY_FILE)
    if record.result is not None:
        record.aborted = record.result.aborted
    elif record.summary is not None and (reason := v1_abort_reason(record.summary)):
        record.aborted = reason
        record.result = InvestigationResult(root_cause="", aborted=reason)


def read_run(root: Path, entry: IndexEntry, *, scoring_only: bool = False) -> RunRecord:
    """Read a run; `scoring_only` skips what scoring never looks at (metadata, summary) and their problems."""
    rid = entry.run_id
    try:
        folder = resolve_inside(root, entry.path)
    except UnsafePathError as exc:
        return RunRecord(entry, root, problems=[refused_run(root, entry, exc)], refused=True)
    record = RunRecord(entry, folder)
    names = _listing(record)  # one directory read per run instead of a probe per file
    if names is None:
        return record

    if not scoring_only:
        _read_description(record, names)
    elif PROMPT_FILE in names:  # the prompt says which phase of a case with phases the run answers
        record.prompt = _text(record, PROMPT_FILE)
    record.manifest = _optional(record, names, Manifest, MANIFEST_FILE)
    _read_outcome(record, names, scoring_only)
    record.snapshot = _optional(record, names, InfraSnapshot, SNAPSHOT_FILE)

    report = _session_file(record, names, *REPORT)
    if report is None:
        if record.aborted is None:
            record.problems.append(Problem(path=str(folder / "ghost_report_<sid>.md"), message="report is missing", run_id=rid))
    else:
        record.report = _text(record, report.name)
        if record.report is not None and not record.report.strip():
            record.problems.append(Problem(path=str(report), message="report is empty", run_id=rid))

    audit = _session_file(record, names, *SHELL_AUDIT)
    if audit is not None:
        record.audit = read_jsonl(audit, AuditEntry, record.problems, rid)
    elif entry.artifact_coverage.value == "full":
        record.problems.append(
            Problem(path=str(folder / "shell_audit_<sid>.jsonl"), message="shell audit is missing", run_id=rid)
        )
    trace = folder / TRACE_FILE
    if TRACE_FILE in names:
        record.has_trace = True
        record.trace = read_jsonl(trace, ToolCall, record.problems, rid)
    return record
