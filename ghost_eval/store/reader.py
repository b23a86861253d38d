"""Reads one run folder into typed records, naming every damaged file instead of failing the whole run."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ghost_eval.artifacts import AuditEntry, InvestigationResult, Manifest, RunSummary, ToolCall
from ghost_eval.errors import RecordError, UnsafePathError
from ghost_eval.identity import RunMetadata
from ghost_eval.records import load_record, parse_record
from ghost_eval.snapshot import InfraSnapshot
from ghost_eval.store.layout import MANIFEST_FILE, METADATA_FILE, IndexEntry, Problem, resolve_inside

__all__ = ["RESULT_FILE", "SNAPSHOT_FILE", "TRACE_FILE", "RunRecord", "read_jsonl", "read_run"]

RESULT_FILE = "investigation_result.json"
SNAPSHOT_FILE = "infra_snapshot.json"
TRACE_FILE = "tool_trace.jsonl"
M = TypeVar("M", bound=BaseModel)


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
    problems: list[Problem] = field(default_factory=list)

    @property
    def written_by_us(self) -> bool:
        """Runs we wrote carry a manifest; v1 runs never do."""
        return self.manifest is not None

    @property
    def readable(self) -> bool:
        return self.folder.is_dir()


def read_jsonl(path: Path, model: type[M], problems: list[Problem], run_id: str | None = None) -> list[M]:
    """Parse a JSONL file line by line; a garbage line is reported and skipped, the rest still count."""
    items: list[M] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(path=str(path), message=f"cannot be read ({exc})", run_id=run_id))
        return items
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            items.append(parse_record(model, json.loads(line), f"{path}: line {n}"))
        except json.JSONDecodeError as exc:
            problems.append(Problem(path=str(path), message=f"line {n}: not valid JSON ({exc.msg}); line skipped", run_id=run_id))
        except RecordError as exc:
            problems.append(
                Problem(path=str(path), message=f"line {n}: field '{exc.field}': {exc.detail}; line skipped", run_id=run_id)
            )
    return items


def _optional(record: RunRecord, names: set[str], model: type[M], name: str) -> M | None:
    if name not in names:
        return None
    try:
        return load_record(model, record.folder / name)
    except RecordError as exc:
        record.problems.append(Problem(path=exc.path, message=str(exc).removeprefix(exc.path + ": "), run_id=record.entry.run_id))
        return None


def _session_file(record: RunRecord, names: set[str], prefix: str, suffix: str) -> Path | None:
    found = sorted(n for n in names if n.startswith(prefix) and n.endswith(suffix))
    if len(found) > 1:
        record.problems.append(
            Problem(
                path=str(record.folder),
                message=f"{len(found)} {prefix}* files; using {found[-1]}",
                run_id=record.entry.run_id,
            )
        )
    return record.folder / found[-1] if found else None


def _read_description(record: RunRecord, names: set[str]) -> None:
    """Identity, summary and prompt: what describes a run rather than what it did."""
    if METADATA_FILE in names:
        record.metadata = _optional(record, names, RunMetadata, METADATA_FILE)
    else:
        record.problems.append(
            Problem(
                path=str(record.folder / METADATA_FILE),
                message="no metadata.json (run predates run identity; `store backfill` writes one)",
                run_id=record.entry.run_id,
            )
        )
    record.summary = _optional(record, names, RunSummary, "run_summary.json")
    if "PROMPT.txt" in names:
        record.prompt = (record.folder / "PROMPT.txt").read_text(encoding="utf-8", errors="replace")


def read_run(root: Path, entry: IndexEntry, *, scoring_only: bool = False) -> RunRecord:
    """Read a run; `scoring_only` skips what scoring never looks at (metadata, summary, prompt) and their problems."""
    rid = entry.run_id
    try:
        folder = resolve_inside(root, entry.path)
    except UnsafePathError as exc:
        return RunRecord(entry, root, problems=[Problem(path=str(root), message=str(exc), run_id=rid)])
    record = RunRecord(entry, folder)
    try:
        names = set(os.listdir(folder))  # one directory read per run instead of a probe per file
    except OSError:
        record.problems.append(
            Problem(path=str(folder), message="index entry points at a folder that does not exist", run_id=rid)
        )
        return record

    if not scoring_only:
        _read_description(record, names)
    record.manifest = _optional(record, names, Manifest, MANIFEST_FILE)
    record.result = _optional(record, names, InvestigationResult, RESULT_FILE)
    record.snapshot = _optional(record, names, InfraSnapshot, SNAPSHOT_FILE)

    report = _session_file(record, names, "ghost_report_", ".md")
    if report is None:
        record.problems.append(Problem(path=str(folder / "ghost_report_<sid>.md"), message="report is missing", run_id=rid))
    else:
        record.report = report.read_text(encoding="utf-8", errors="replace")
        if not record.report.strip():
            record.problems.append(Problem(path=str(report), message="report is empty", run_id=rid))

    audit = _session_file(record, names, "shell_audit_", ".jsonl")
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
