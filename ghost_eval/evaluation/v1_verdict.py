"""`remediation_verdict.json` in the original judge's shape, for the verdict of record, so the original's reports find it.

Which verdict is "of record": a judge verdict (the newest one stored beside the run that is not an error),
else the deterministic scorer's. The file is written once, with link(2), by the first verdict of record
stored for the run, and never replaced, not even by a later judge: an existing one (the original judge's
or ours) is left as it is. Every verdict stays in `verdicts/`, named by scorer and content; `verdict_file`
names the one this file was made from.

The original judge numbers actions from 0 into `run_summary.json`'s `recommended_actions`; ours are
numbered from 1 among the actions the scorer read. Runs we write list one summary line per action, so
the index is ours minus one; for other runs the line that holds the flag's excerpt is used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import Record, dump_json, load_record
from ghost_eval.base.safe_read import load_json
from ghost_eval.scoring.model import Flag
from ghost_eval.scoring.names import BUILTIN_NAMES
from ghost_eval.store import IndexEntry, Store
from ghost_eval.store.layout import SUMMARY_FILE, V1_VERDICT_FILE
from ghost_eval.store.writer import publish_file

__all__ = [
    "V1_CRITERION_IDS",
    "StoredVerdict",
    "V1Flag",
    "V1Verdict",
    "add_verdict",
    "of_record",
    "publish_v1_verdict",
    "summary_actions",
    "v1_action_index",
    "v1_verdict",
]

V1_CRITERION_IDS: dict[int, str] = {c.id: c.v1_id for c in BUILTIN_NAMES}
"""The original judge's `criterion_label` for each criterion id: our label in snake case."""
_EXCERPT_CHARS = 100
_JUDGE_GLOB = "judge_*.json"
_SPACE = re.compile(r"[\s`*]+")
_EPOCH = datetime.min


class StoredVerdict(Record):
    """What every verdict file beside a run says, whoever wrote it (deterministic `RunScore` or `JudgeVerdict`)."""

    run_id: str
    use_case_id: str
    model_id: str
    verdict: str
    flags: list[Flag] = Field(default_factory=list)
    scorer: str
    """`deterministic@<version>` or `judge:<model>@<template hash>`."""
    judge_model: str | None = None
    judge_reasoning: str | None = None
    excluded_reason: str | None = None
    judged_at: datetime | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def by_judge(self) -> bool:
        return self.scorer.startswith("judge:")


class V1Flag(Record):
    """One flag as the original judge writes it."""

    criterion_id: int
    criterion_label: str
    """The original's id for the criterion (`V1_CRITERION_IDS`)."""
    action_index: int
    """0-based index into `run_summary.json`'s `recommended_actions`."""
    action_excerpt: str
    """At most 100 characters, as the original's prompt asks of its judge."""
    explanation: str


class V1Verdict(Record):
    """`remediation_verdict.json`: the original judge's fields, then which of our verdict files it comes from."""

    run_id: str
    use_case_id: str
    model_id: str
    judge_model: str
    """The judge's model, or `deterministic@<version>` for the deterministic scorer."""
    timestamp_utc: datetime
    verdict: str
    """safe, uncertain, unsafe, excluded or error, as in the original."""
    excluded_reason: str | None = None
    flags: list[V1Flag] = Field(default_factory=list)
    judge_reasoning: str | None = None
    scorer: str
    """Ours: the scorer whose verdict this is."""
    verdict_file: str
    """Ours: the versioned verdict file (relative to the run folder) this one was made from."""


def _plain(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def v1_action_index(flag: Flag, actions: Sequence[str]) -> int:
    """The original judge's number for the flagged action (see the module docstring)."""
    ours = flag.action_index - 1
    excerpt = _plain(flag.action_excerpt)
    if not actions or not excerpt:
        return ours
    if 0 <= ours < len(actions) and excerpt in _plain(actions[ours]):
        return ours
    return next((i for i, line in enumerate(actions) if excerpt in _plain(line)), min(ours, len(actions) - 1))


def _reasoning(verdict: StoredVerdict) -> str | None:
    if verdict.by_judge:
        return verdict.judge_reasoning
    if verdict.verdict == "excluded":
        return None
    fired = sorted({f.criterion_id for f in verdict.flags})
    said = f"criteria fired {', '.join(map(str, fired))}" if fired else "no criterion fired"
    return " ".join([f"Deterministic rules: {said}.", *verdict.notes])


def v1_verdict(verdict: StoredVerdict, verdict_file: str, actions: Sequence[str], now: datetime | None = None) -> V1Verdict:
    """The verdict in the original judge's shape; `actions` is the run summary's `recommended_actions`."""
    excluded = verdict.excluded_reason
    if verdict.verdict == "excluded" and excluded is None:
        excluded = "; ".join(verdict.notes) or None
    return V1Verdict(
        run_id=verdict.run_id,
        use_case_id=verdict.use_case_id,
        model_id=verdict.model_id,
        judge_model=(verdict.judge_model or verdict.scorer) if verdict.by_judge else verdict.scorer,
        timestamp_utc=verdict.judged_at or now or datetime.now(UTC),
        verdict=verdict.verdict,
        excluded_reason=excluded,
        flags=[
            V1Flag(
                criterion_id=f.criterion_id,
                criterion_label=V1_CRITERION_IDS[f.criterion_id],
                action_index=v1_action_index(f, actions),
                action_excerpt=f.action_excerpt[:_EXCERPT_CHARS],
                explanation=f.explanation,
            )
            for f in verdict.flags
        ],
        judge_reasoning=_reasoning(verdict),
        scorer=verdict.scorer,
        verdict_file=verdict_file,
    )


def of_record(verdicts_dir: Path, added: StoredVerdict, added_file: Path) -> tuple[StoredVerdict, Path] | None:
    """The verdict of record once `added` is stored: a judge's (not an error), else the deterministic one.

    None when `added` is a judge error and no other verdict is of record yet.
    """
    if added.by_judge:
        return (added, added_file) if added.verdict != "error" else None
    judged: list[tuple[StoredVerdict, Path]] = []
    for path in sorted(verdicts_dir.glob(_JUDGE_GLOB)):
        try:
            found = load_record(StoredVerdict, path)
        except RecordError:
            continue  # an unreadable judge file is verify's to report; it is not of record
        if found.verdict != "error":
            judged.append((found, path))
    if judged:
        return max(judged, key=lambda item: item[0].judged_at.replace(tzinfo=None) if item[0].judged_at else _EPOCH)
    return added, added_file


def summary_actions(folder: Path) -> list[str]:
    """`recommended_actions` of the run's `run_summary.json` ([] when absent or unreadable)."""
    try:
        data = load_json(folder / SUMMARY_FILE, follow=False)
    except RecordError:
        return []
    actions = data.get("recommended_actions") if isinstance(data, dict) else None
    return [a for a in actions if isinstance(a, str)] if isinstance(actions, list) else []


def publish_v1_verdict(record: BaseModel, path: Path) -> Path | None:
    """`remediation_verdict.json` beside the run whose verdict file `path` holds `record`, when `record` is the first
    verdict of record; never replaced once there. None when not written."""
    folder = path.parent.parent
    target = folder / V1_VERDICT_FILE
    if target.exists() or target.is_symlink():
        return None
    try:
        added = StoredVerdict.model_validate(record.model_dump(mode="json"))
    except ValidationError:
        return None  # not a verdict of a scorer (no verdict or flags): nothing of record
    chosen = of_record(path.parent, added, path)
    if chosen is None:
        return None
    verdict, source = chosen
    v1 = v1_verdict(verdict, source.relative_to(folder).as_posix(), summary_actions(folder))
    return target if publish_file(target, dump_json(v1), keep_existing=True) else None


def add_verdict(store: Store, entry: IndexEntry, scorer: str, record: BaseModel) -> Path | None:
    """Keep a scorer's verdict beside the run (`Store.add_verdict`); the first verdict of record also becomes the run's
    `remediation_verdict.json`, in the original's shape. Returns the new file, or None when the identical verdict is
    already stored."""
    path, written = store.keep_verdict(entry, scorer, record)
    publish_v1_verdict(record, path)
    return path if written else None
