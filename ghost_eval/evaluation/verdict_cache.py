"""Verdicts reused instead of recomputed: a stored verdict is keyed by (scorer, case hash, run content digest, the
teams' checks whose outcomes it holds, by name and version).

A run is read-only once published, but its folder gains outputs (`verdicts/`, `remediation_verdict.json`): the
digest covers every other regular file, by name and bytes, and the index fields scoring reads. A verdict written
by the same scorer for the same case content and the same run content is the verdict the scorer would compute.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ghost_eval.base.errors import RecordError
from ghost_eval.base.safe_read import JSON_LIMIT, decode_json, read_chunks, read_limited
from ghost_eval.scoring.team import team_checks_signature
from ghost_eval.store.layout import V1_VERDICT_FILE, VERDICTS_DIR, IndexEntry, verdict_glob

__all__ = ["content_hash", "find_cached", "run_digest"]

_OUTPUTS = frozenset({V1_VERDICT_FILE})


def content_hash(record: BaseModel) -> str:
    """sha256 of a record's canonical JSON (a case as loaded: what the scorer reads of it, whatever the file's layout)."""
    return hashlib.sha256(record.model_dump_json().encode()).hexdigest()


def _counted(entry: os.DirEntry[str]) -> bool:
    return entry.is_file(follow_symlinks=False) and entry.name not in _OUTPUTS


def run_digest(folder: Path, entry: IndexEntry) -> str | None:
    """sha256 over the run's index fields and every regular file of its folder but the outputs; None if unreadable."""
    digest = hashlib.sha256(
        json.dumps([entry.run_id, entry.use_case_id, entry.model_id, entry.environment, entry.artifact_coverage]).encode()
    )
    try:
        with os.scandir(folder) as it:
            files = sorted((e.name, e.stat(follow_symlinks=False).st_size) for e in it if _counted(e))
        for name, size in files:  # in chunks: a huge report costs time, never its size in memory
            digest.update(f"\0{name}\0{size}\0".encode())
            for chunk in read_chunks(folder / name):
                digest.update(chunk)
    except (OSError, RecordError):
        return None
    return digest.hexdigest()


def _team_signature(data: dict[str, Any]) -> str | None:
    """Which team checks a stored verdict holds outcomes of (`team_checks_signature`); None when unreadable."""
    outcomes = data.get("team_checks", [])
    if not isinstance(outcomes, list) or not all(isinstance(o, dict) for o in outcomes):
        return None
    return team_checks_signature((str(o.get("name")), str(o.get("version"))) for o in outcomes)


def find_cached(folder: Path, scorer: str, case_hash: str | None, digest: str, team_checks: str = "") -> str | None:
    """The JSON of a stored verdict by `scorer` for this case content and run content, holding the outcomes of exactly
    the team checks `team_checks` names (`team_checks_signature`; "" for none), or None."""
    verdicts = folder / VERDICTS_DIR
    if verdicts.is_symlink() or not verdicts.is_dir():
        return None
    for path in sorted(verdicts.glob(verdict_glob(scorer))):
        if path.is_symlink():
            continue
        try:
            text = read_limited(path, JSON_LIMIT, "JSON files", follow=False).decode("utf-8")
            data = decode_json(text, path)
        except (RecordError, UnicodeDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        if (data.get("scorer"), data.get("case_hash"), data.get("run_digest"), _team_signature(data)) == (
            scorer,
            case_hash,
            digest,
            team_checks,
        ):
            return text
    return None
