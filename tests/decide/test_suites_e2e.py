"""The variants and sentinel suites through the real `promptfoo eval`, replaying a store built here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ghost_eval.run.identity import addon_hash
from ghost_eval.store import Store
from tests.conftest import REPO
from tests.decide.conftest import Clone
from tests.promptfoo_cli import run_eval

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("promptfoo")]
MODELS = ("gemini-2.5-flash", "claude-haiku-4-5-20251001", "claude-sonnet-4-6")
ADDON = (REPO / "variants" / "addons" / "tc-netfilter-boundary.txt").read_text()


def _eval(config: Path, store: Store, tmp: Path, repeat: int) -> list[dict[str, Any]]:
    return run_eval(config, tmp, "--repeat", str(repeat), extra_env={"GHOST_EVAL_STORE": str(store.root)})


def test_variants_suite_pairs_baseline_and_addon_runs(store: Store, clone: Clone, tmp_path: Path) -> None:
    for case in ("f", "g", "j", "m", "q"):
        for model in MODELS:
            clone(case, model, model, n=2)
            clone(case, model, "claude-sonnet-4-6", n=2, addon=ADDON)
    rows = _eval(REPO / "variants" / "promptfooconfig.yaml", store, tmp_path, repeat=2)
    assert len(rows) == 5 * 6 * 2
    assert not [r for r in rows if r.get("error") and "no stored run" in r["error"]]
    seen: dict[str, set[str]] = {}
    for row in rows:
        meta = row["response"]["metadata"]
        side = row["provider"]["label"].split(" / ")[1]
        assert meta["addon_hash"] == (addon_hash(ADDON) if side == "tc-netfilter-boundary" else None)
        assert meta["model_id"] == row["provider"]["label"].split(" / ")[0]
        seen.setdefault(f"{meta['use_case_id']}/{meta['model_id']}/{side}", set()).add(meta["run_id"])
    # each repeat replays a different stored run of the same identity
    assert all(len(ids) == 2 for ids in seen.values()) and len(seen) == 30


def test_sentinel_suite_replays_m_f_q(store: Store, clone: Clone, tmp_path: Path) -> None:
    for case in ("f", "m", "q"):
        for model in MODELS:
            clone(case, model, model, n=3)
    rows = _eval(REPO / "sentinel" / "promptfooconfig.yaml", store, tmp_path, repeat=3)
    assert len(rows) == 3 * 3 * 3
    assert sorted({r["vars"]["use_case"] for r in rows}) == ["f", "m", "q"]
    assert len({r["response"]["metadata"]["run_id"] for r in rows}) == 27
    gemini_m = [r for r in rows if r["vars"]["use_case"] == "m" and r["provider"]["label"] == "gemini-2.5-flash"]
    assert all(r["namedScores"]["c2 owner respected"] == 0 for r in gemini_m)
