"""Stores ghost-eval wrote, read by a reader written from the original's documented formats only.

`V1Reader` knows what artifact-store-schema.md, metadata-schema.md and the judge spec say (file names,
field names, the run id convention, where the canonical session id comes from) and nothing of ghost-eval;
each check below is one thing an original script reads.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ghost_eval.agent.capture import artifact_files, store_payload
from ghost_eval.connect.target import Target
from ghost_eval.evaluation.evaluate import load_case_set, score_store
from ghost_eval.store import Store
from tests.agent.conftest import offline_target  # noqa: F401  (fixture)
from tests.agent.test_capture import TRICKY, _run
from tests.agent.vendors import VENDORS
from tests.judge.helpers import demo_copy
from tests.store.helpers import our_run

INDEX_FIELDS = {
    "run_id",
    "use_case_id",
    "model_id",
    "system_prompt_hash",
    "backfilled",
    "artifact_coverage",
    "path",
    "superseded_by",
}
METADATA_FIELDS = {
    "run_id": str,
    "model_id": str,
    "use_case_id": str,
    "timestamp_utc": str,
    "system_prompt_hash": str,
    "ghost_agent_commit": str,
    "silent_update_detectable": bool,
}
SUMMARY_FIELDS = (
    "use_case",
    "provider",
    "model",
    "session_id",
    "created_at",
    "turn_count",
    "rca_generated",
    "abort_reason",
    "confidence",
    "root_cause_summary",
    "recommended_actions",
    "commands_issued",
    "commands_denied",
    "commands_auto_approved",
    "commands_user_approved",
    "command_sequence",
    "hypothesis_count",
    "hypotheses",
)
"""What capture_run.py writes and compare.py / score_variant.py / judge_remediation.py read."""
VERDICT_FIELDS = {
    "run_id",
    "use_case_id",
    "model_id",
    "judge_model",
    "timestamp_utc",
    "verdict",
    "excluded_reason",
    "flags",
    "judge_reasoning",
}
FLAG_FIELDS = {"criterion_id", "criterion_label", "action_index", "action_excerpt", "explanation"}
LABELS = {
    1: "list_argument_without_current_content",
    2: "direct_modification_without_owning_process",
    3: "scope_broader_than_fault",
    4: "no_verification_step",
}


class V1Reader:
    def __init__(self, root: Path) -> None:
        self.root = root
        index = json.loads((root / "run_index.json").read_text())
        assert index["schema_version"] == "1"
        self.runs: list[dict[str, Any]] = index["runs"]

    def entry(self, run_id: str) -> dict[str, Any]:
        entry = next(r for r in self.runs if r["run_id"] == run_id)
        assert set(entry) >= INDEX_FIELDS
        assert entry["use_case_id"].startswith("use_case_")
        assert re.fullmatch(re.escape(f"{entry['use_case_id']}_{entry['model_id']}_") + r"\d{8}_\d{6}", run_id)
        assert entry["path"] == f"{entry['use_case_id']}/{entry['model_id']}/{run_id}"
        assert entry["artifact_coverage"] in ("full", "report_only") and entry["superseded_by"] is None
        return entry

    def metadata(self, entry: dict[str, Any]) -> dict[str, Any]:
        meta = json.loads((self.root / entry["path"] / "metadata.json").read_text())
        for name, kind in METADATA_FIELDS.items():
            assert isinstance(meta.get(name), kind), name
        assert meta["silent_update_detectable"] is False
        datetime.fromisoformat(meta["timestamp_utc"])
        assert (meta["run_id"], meta["use_case_id"], meta["model_id"]) == (
            entry["run_id"],
            entry["use_case_id"],
            entry["model_id"],
        )
        return meta

    def summary(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The canonical session is the one run_summary.json names; its three files must be there."""
        folder = self.root / entry["path"]
        summary = json.loads((folder / "run_summary.json").read_text())
        assert set(SUMMARY_FIELDS) <= set(summary)
        sid = summary["session_id"]
        assert re.fullmatch(r"ghost_\d{8}_\d{6}", sid)
        for name in (f"ghost_report_{sid}.md", f"ghost_audit_{sid}.md", f"shell_audit_{sid}.jsonl", "PROMPT.txt"):
            assert (folder / name).is_file(), name
        for line in (folder / f"shell_audit_{sid}.jsonl").read_text().splitlines():
            assert isinstance(json.loads(line)["command"], str)
        assert summary["use_case"] == entry["use_case_id"] and summary["model"] == entry["model_id"]
        actions = summary["recommended_actions"]
        assert isinstance(actions, list) and all(isinstance(a, str) for a in actions)
        assert all({"id", "description", "state"} <= set(h) for h in summary["hypotheses"])
        return summary

    def verdict(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        path = self.root / entry["path"] / "remediation_verdict.json"
        if not path.exists():
            return None
        verdict = json.loads(path.read_text())
        assert set(verdict) >= VERDICT_FIELDS and verdict["run_id"] == entry["run_id"]
        for flag in verdict["flags"]:
            assert set(flag) >= FLAG_FIELDS and flag["criterion_label"] == LABELS[flag["criterion_id"]]
            assert flag["action_index"] >= 0
        return verdict


def _score(root: Path) -> None:
    cases, _ = load_case_set()
    with Store(root) as store:
        list(score_store(store, cases))


def test_a_run_captured_from_the_reference_agent(
    tmp_path: Path,
    offline_target: Target,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = _run(VENDORS[0], offline_target, monkeypatch, TRICKY)
    meta, files = store_payload(artifact_files(run), "m", run_label="live")
    with Store(tmp_path / "s", create=True) as store:
        store.append(meta, files)
    _score(tmp_path / "s")
    reader = V1Reader(tmp_path / "s")
    entry = reader.entry(meta.run_id)
    assert reader.metadata(entry)["ghost_agent_commit"]
    summary = reader.summary(entry)
    assert summary["provider"] == VENDORS[0].provider and summary["rca_generated"] is True
    assert summary["root_cause_summary"] and len(summary["recommended_actions"]) == 1
    assert "fail2ban-client set sshd unbanip" in summary["recommended_actions"][0]
    verdict = reader.verdict(entry)
    assert verdict is not None and verdict["judge_model"].startswith("deterministic@")
    assert all(f["action_index"] < len(summary["recommended_actions"]) for f in verdict["flags"])


def test_an_appended_run_is_listed_at_once(tmp_path: Path) -> None:
    with Store(tmp_path / "s", create=True) as store:
        meta, files = our_run(0, case="use_case_m")
        store.append(meta, files)
        reader = V1Reader(tmp_path / "s")
        reader.metadata(reader.entry(meta.run_id))


def test_the_demo_store_after_scoring(tmp_path: Path) -> None:
    """The bundled demo runs are hand-written v1-shaped data: the index, the layout and the verdicts we publish read."""
    root = demo_copy(tmp_path)
    _score(root)
    reader = V1Reader(root)
    assert len(reader.runs) == 30
    for run in reader.runs:
        assert reader.verdict(reader.entry(run["run_id"])) is not None
