"""A demo-store copy with chosen runs' reports swapped for another model's, so a comparison has known changes."""

from __future__ import annotations

from pathlib import Path

from tests.judge.helpers import demo_copy

__all__ = ["changed_copy", "report_of", "two_prompt_copy"]

SONNET_M = "use_case_m_claude-sonnet-4-6_20260312_162731"
"""Safe on the demo store; given gemini's case-m report it becomes unsafe (criteria 2 and 4)."""
GEMINI_M = "use_case_m_gemini-2.5-flash_20260312_100847"
HAIKU_Q = "use_case_q_claude-haiku-4-5-20251001_20260311_140338"
"""A wrong diagnosis on the demo store; given sonnet's case-q report it becomes correct."""
SONNET_Q = "use_case_q_claude-sonnet-4-6_20260311_162015"


def report_of(store: Path, run_id: str) -> Path:
    return next(store.glob(f"*/*/{run_id}/ghost_report_*.md"))


def changed_copy(tmp_path: Path) -> Path:
    store = demo_copy(tmp_path)
    for target, source in ((SONNET_M, GEMINI_M), (HAIKU_Q, SONNET_Q)):
        report_of(store, target).write_text(report_of(store, source).read_text(encoding="utf-8"), encoding="utf-8")
    return store


NEW_HASH = "b7e41f09c2aa"
"""A second prompt version: haiku's runs from 2026-03-09 on are re-labelled with it in `two_prompt_copy`."""
HAIKU_J = "use_case_j_claude-haiku-4-5-20251001_20260309_142611"
"""Haiku's first run under NEW_HASH, and the first on which criterion 3 fires for haiku."""


def two_prompt_copy(tmp_path: Path) -> Path:
    """The demo store with haiku's runs from 2026-03-09 on under another prompt hash (the index says which)."""
    import json

    store = demo_copy(tmp_path)
    index = json.loads((store / "run_index.json").read_text(encoding="utf-8"))
    for run in index["runs"]:
        if run["model_id"] == "claude-haiku-4-5-20251001" and run["run_id"].rsplit("_", 2)[1] >= "20260309":
            run["system_prompt_hash"] = NEW_HASH
    (store / "run_index.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    return store
