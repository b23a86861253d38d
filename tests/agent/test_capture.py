"""Artifacts: the v1 report shape (readable by the scorers' markdown reader), the reasoning trace, the audit folder
contract (written once, read back), and the run identity handed to the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.agent.capture import artifact_files, read_artifacts, store_payload, write_artifacts
from ghost_eval.agent.prompt import Addon
from ghost_eval.agent.runner import AgentConfig, AgentRun, investigate
from ghost_eval.agent.tools import COMPLETE_TOOL
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.connect.target import Target
from ghost_eval.promptfoo.adapters import replay_response
from ghost_eval.run.identity import METADATA_SCHEMA_VERSION, HashKind, parse_run_id
from ghost_eval.scoring.actions import extract_actions
from ghost_eval.store import UNKNOWN_SUITE, RunFilter, Store
from ghost_eval.store.layout import AGENT_RUN_FILE
from tests.agent.test_loop import COMPLETION
from tests.agent.vendors import VENDORS, Vendor

ANTHROPIC, GEMINI = VENDORS
TRICKY = dict(
    COMPLETION,
    recommended_actions=[
        {
            "description": "Unban through fail2ban, which owns the chain.",
            "commands": ["sudo fail2ban-client set sshd unbanip 203.0.113.47", "echo '```' # a fence inside"],
            "verification": {
                "command": "sudo fail2ban-client status sshd",
                "expected": "203.0.113.47 absent from the Banned IP list",
            },
        }
    ],
)


def _run(
    vendor: Vendor,
    target: Target,
    monkeypatch: pytest.MonkeyPatch,
    completion: dict[str, object] | None,
    addon: Addon | None = None,
    text: str = "I only investigate network faults.",
) -> AgentRun:
    script = [
        vendor.reply("Checking.", [("record_hypothesis", {"hypothesis": "fail2ban banned the partner"})]),
        vendor.reply(calls=[(COMPLETE_TOOL, completion)]) if completion else vendor.reply(text),
    ]
    with vendor.server(script) as server:
        return investigate(
            "The partner cannot SSH in.",
            target,
            AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server), addon=addon),
        )


def test_report_has_the_v1_shape_and_the_markdown_reader_recovers_every_action(
    offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(ANTHROPIC, offline_target, monkeypatch, TRICKY)
    report = artifact_files(run)[f"ghost_report_{run.session_id}.md"]
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings == ["## Root Cause", "## Evidence", "## Hypotheses", "## Recommended Actions"]
    assert f"- Session: {run.session_id}" in report and COMPLETION["root_cause"] in report
    assert "- Confirmed: an NSG rule denies 8080" in report and "- Refuted: the host firewall drops 8080" in report
    assert "- Open: fail2ban banned the partner" in report
    parsed = extract_actions(report)
    assert len(parsed) == 1
    assert parsed[0].commands == TRICKY["recommended_actions"][0]["commands"]  # type: ignore[index]
    assert parsed[0].verification is not None
    assert parsed[0].verification.command == "sudo fail2ban-client status sshd"
    assert "203.0.113.47 absent" in parsed[0].verification.expected


def test_an_answer_and_an_abort_are_reported_as_such(offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    answered = artifact_files(_run(GEMINI, offline_target, monkeypatch, None))
    report = next(v for k, v in answered.items() if k.startswith("ghost_report_"))
    assert "## Response\nI only investigate network faults." in report and "## Root Cause" not in report
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    aborted_run = investigate("x", offline_target, AgentConfig("anthropic", "claude-haiku-4-5-20251001"))
    files = artifact_files(aborted_run)
    report = files[f"ghost_report_{aborted_run.session_id}.md"]
    assert "- Outcome: aborted (crash: GhostEvalError: ANTHROPIC_API_KEY is not set)" in report
    assert json.loads(files["investigation_result.json"])["aborted"].startswith("crash:")
    assert json.loads(files["run_summary.json"])["outcome"] == "aborted"


def test_reasoning_trace_shows_each_step_with_its_calls(offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(GEMINI, offline_target, monkeypatch, COMPLETION)
    trace_md = artifact_files(run)[f"ghost_audit_{run.session_id}.md"]
    assert "## Step 1\nThought: Checking.\n" in trace_md and "Tool call: `record_hypothesis`" in trace_md
    assert "## Step 2" in trace_md and f"Tool call: `{COMPLETE_TOOL}`" in trace_md
    assert f"Effective prompt hash: {run.prompt.effective_hash}" in trace_md
    assert "completed." in trace_md and "240 in, 80 out" in trace_md


def test_audit_folder_is_written_once_and_reads_back_to_the_same_payload(
    offline_target: Target, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _run(ANTHROPIC, offline_target, monkeypatch, COMPLETION)
    folder = tmp_path / "audit"
    written = write_artifacts(run, folder)
    assert {p.name for p in folder.iterdir()} == set(written)
    with pytest.raises(GhostEvalError, match="already holds a run"):
        write_artifacts(run, folder)
    files = read_artifacts(folder)
    meta_disk, files_disk = store_payload(files, "m")
    meta_mem, files_mem = store_payload(artifact_files(run), "m")
    assert meta_disk == meta_mem and files_disk == files_mem and files_disk.keys() == files.keys()
    with pytest.raises(GhostEvalError, match=AGENT_RUN_FILE):
        read_artifacts(tmp_path)


@pytest.mark.parametrize("vendor", VENDORS, ids=[v.provider for v in VENDORS])
def test_metadata_carries_the_run_identity(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    addon_file = tmp_path / "check-both-layers.txt"
    addon_file.write_text("Before closing, inspect both the OS layer and the control plane.\n")
    plain = _run(vendor, offline_target, monkeypatch, COMPLETION)
    with_addon = _run(vendor, offline_target, monkeypatch, COMPLETION, addon=Addon.from_file(addon_file))
    meta, _ = store_payload(artifact_files(plain), "m", run_label="baseline", repeat_index=2)
    meta_addon, _ = store_payload(artifact_files(with_addon), "m")
    parsed = parse_run_id(meta.run_id)
    assert parsed is not None and parsed[:2] == ("use_case_m", vendor.model)
    assert meta.hash_kind is HashKind.EFFECTIVE_PROMPT and meta.system_prompt_hash == plain.prompt.effective_hash
    assert meta.provider == {"anthropic": "anthropic", "gemini": "google"}[vendor.provider]
    assert meta.served_model_id == vendor.model and (meta.run_label, meta.repeat_index) == ("baseline", 2)
    assert meta.token_usage is not None and (meta.token_usage.prompt, meta.token_usage.completion) == (240, 80)
    assert meta.cost_usd is not None and meta.cost_usd > 0
    assert meta.addon_name is None and meta_addon.addon_name == "check-both-layers" and meta_addon.addon_hash
    assert meta_addon.system_prompt_hash != meta.system_prompt_hash
    assert meta_addon.base_prompt_hash == meta.base_prompt_hash


def test_a_captured_run_carries_its_rows_suite_version_into_the_store(
    offline_target: Target, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What the live provider does with a row: the row's suite version lands in the stored run's metadata and index
    entry, `store list` selects by it, and a replay of the run reports it."""
    meta, files = store_payload(
        artifact_files(_run(ANTHROPIC, offline_target, monkeypatch, COMPLETION)), "m", suite_version="5eed"
    )
    with Store(tmp_path / "store", create=True) as store:
        entry = store.append(meta, files)
        record = store.read(entry)
        assert entry.suite_version == "5eed" and record.metadata is not None and record.metadata.suite_version == "5eed"
        assert record.metadata.schema_version == METADATA_SCHEMA_VERSION == "3"
        assert [e.run_id for e in store.runs(RunFilter(suite_version="5eed"))] == [entry.run_id]
        assert store.runs(RunFilter(suite_version="other")) == store.runs(RunFilter(suite_version=UNKNOWN_SUITE)) == []
    replayed = replay_response({"store": str(tmp_path / "store")}, {"vars": {"run_id": entry.run_id}})
    assert replayed["metadata"]["run_suite_version"] == "5eed"
    index = json.loads((tmp_path / "store" / "run_index.json").read_text())
    assert index["runs"][0]["suite_version"] == "5eed"  # the v1 view lists it beside our other optional fields
