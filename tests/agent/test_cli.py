"""`python -m ghost_eval.agent` keeps the original command-line contract: symptom on stdin, artifacts in --audit-dir,
the report on stdout; an addon moves the effective hash and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ghost_eval.agent.tools import COMPLETE_TOOL
from ghost_eval.connect.target import Target
from tests.agent.test_loop import COMPLETION
from tests.agent.vendors import VENDORS, Vendor
from tests.conftest import REPO
from tests.fakes.llm import FakeLLMServer


def _agent(
    vendor: Vendor, server: FakeLLMServer, target_file: Path, audit: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        {
            "ANTHROPIC_API_KEY": "k",
            "ANTHROPIC_BASE_URL": server.url,
            "GEMINI_API_KEY": "k",
            "GHOST_EVAL_GEMINI_BASE_URL": server.url,
        }
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ghost_eval.agent",
            "--llm-provider",
            vendor.provider,
            "--model",
            vendor.model,
            "--audit-dir",
            str(audit),
            "--target",
            str(target_file),
            *extra,
        ],
        input="Port 8080 on tf-dest-vm times out.\n",
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.parametrize("vendor", VENDORS, ids=[v.provider for v in VENDORS])
def test_command_line_contract(vendor: Vendor, offline_target: Target, tmp_path: Path) -> None:
    target_file = tmp_path / "target.json"
    target_file.write_text(offline_target.model_dump_json())
    addon = tmp_path / "both-layers.txt"
    addon.write_text("Inspect both layers before closing.\n")
    script = [vendor.reply(calls=[(COMPLETE_TOOL, COMPLETION)]), vendor.reply(calls=[(COMPLETE_TOOL, COMPLETION)])]
    with vendor.server(script) as server:
        plain = _agent(vendor, server, target_file, tmp_path / "plain")
        varied = _agent(vendor, server, target_file, tmp_path / "varied", "--prompt-addon", str(addon))
    assert plain.returncode == 0, plain.stderr
    assert varied.returncode == 0, varied.stderr
    assert plain.stdout.startswith("# Ghost Agent Investigation Report") and COMPLETION["root_cause"] in plain.stdout
    names = {p.name for p in (tmp_path / "plain").iterdir()}
    assert {"investigation_result.json", "tool_trace.jsonl", "agent_run.json", "PROMPT.txt"} <= names
    assert all(any(n.startswith(p) for n in names) for p in ("ghost_report_ghost_", "ghost_audit_ghost_", "shell_audit_ghost_"))
    info = json.loads((tmp_path / "plain" / "agent_run.json").read_text())
    info_addon = json.loads((tmp_path / "varied" / "agent_run.json").read_text())
    assert info["base_prompt_hash"] == info_addon["base_prompt_hash"]
    assert info["effective_prompt_hash"] != info_addon["effective_prompt_hash"] and info_addon["addon_name"] == "both-layers"
    assert (tmp_path / "plain" / "PROMPT.txt").read_text() == "Port 8080 on tf-dest-vm times out.\n"


@pytest.mark.slow
def test_command_line_errors_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ghost_eval.agent", "--model", "m", "--target", str(tmp_path / "none.json")],
        input="x",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 2 and "none.json" in done.stderr and "missing" in done.stderr
