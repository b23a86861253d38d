"""Decision records kept in the store under `decisions/<kind>/<name>/`, never overwritten.

Each record is a JSON file (the typed record) and a Markdown rendering beside it, named by time
and content hash; a new decision points at the one before it.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from ghost_eval.base.records import Record, dump_json
from ghost_eval.base.templates import template_environment
from ghost_eval.store import Store
from ghost_eval.store.layout import check_component
from ghost_eval.store.writer import publish_file

__all__ = ["DECISIONS_DIR", "decision_folder", "latest_record_id", "render", "write_decision"]

DECISIONS_DIR = "decisions"
_TEMPLATES = Path(__file__).parent / "templates"


def decision_folder(store: Store, kind: str, name: str) -> Path:
    return store.root / DECISIONS_DIR / check_component(kind, "decision kind") / check_component(name, "decision name")


def latest_record_id(folder: Path) -> str | None:
    """Record ids sort by time, so the newest is the last name."""
    ids = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    return ids[-1] if ids else None


def render(template: str, record: Record) -> str:
    return template_environment(_TEMPLATES).get_template(template).render(r=record)


def write_decision(folder: Path, record: Record, template: str) -> tuple[str, Path]:
    """Publish the record and its Markdown; returns (record id, json path)."""
    body = dump_json(record)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    record_id = f"{stamp}_{hashlib.sha256(body.encode()).hexdigest()[:8]}"
    path = folder / f"{record_id}.json"
    publish_file(path, body)
    publish_file(folder / f"{record_id}.md", render(template, record))
    return record_id, path
