"""Run factory for write tests (our metadata, a report, an audit line), and stores built from it."""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

from ghost_eval.run.identity import HashKind, RunMetadata, effective_prompt_hash, make_run_id
from ghost_eval.store import Store
from ghost_eval.store.layout import SQLITE_FILE

BASE = datetime(2026, 4, 1, 8, 0, 0)


def our_run(
    n: int, case: str = "m", model: str = "claude-haiku-4-5-20251001", addon: str | None = None
) -> tuple[RunMetadata, dict[str, str]]:
    when = BASE + timedelta(seconds=n)
    meta = RunMetadata(
        schema_version="2",
        run_id=make_run_id(case, model, when),
        use_case_id=case,
        model_id=model,
        system_prompt_hash=effective_prompt_hash("base prompt", "env", addon),
        hash_kind=HashKind.EFFECTIVE_PROMPT,
        repeat_index=n,
        started_at=when,
    )
    sid = f"ghost_{when:%Y%m%d_%H%M%S}"
    files = {
        f"ghost_report_{sid}.md": f"# Report {n}\n## Root Cause\nf2b-sshd bans 203.0.113.47\n",
        f"shell_audit_{sid}.jsonl": '{"command": "sudo iptables -S f2b-sshd", "host": "tf-dest-vm"}\n',
        f"ghost_audit_{sid}.md": "1. looked\n",
        "PROMPT.txt": "ssh refused\n",
    }
    return meta, files


def our_store(root: Path, n: int) -> list[str]:
    """A store we wrote (SQLite index, manifests) holding our_run(0 … n-1), closed again; returns the run ids."""
    with Store(root, create=True) as store:
        return [store.append(*our_run(i)).run_id for i in range(n)]


def folder_of(root: Path, run_id: str) -> Path:
    return next(p for p in root.rglob(run_id) if p.is_dir())


def move_outside(root: Path, run_id: str, away: Path) -> None:
    """Move a run folder out of the store and leave a symlink to it in its place."""
    folder = folder_of(root, run_id)
    away.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(folder, away)
    os.symlink(away, folder)


def set_rows(root: Path, column: str, values: dict[str, str]) -> None:
    """Damage a store's SQLite index by hand (run id → new value), as an older writer or a person might."""
    with closing(sqlite3.connect(root / SQLITE_FILE)) as conn:
        conn.executemany(f"UPDATE runs SET {column} = ? WHERE run_id = ?", [(v, rid) for rid, v in values.items()])
        conn.commit()
