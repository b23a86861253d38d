"""The original Ghost Agent, unmodified, investigates case a in the lab through `promptfoo eval`: the real az CLI
against the emulator, the scripted model as its Anthropic endpoint, the run captured as the original writes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from ghost_eval.store import RunFilter, Store
from tests.conftest import REPO
from tests.lab.helpers import LAB_MARKS, Lab
from tests.promptfoo_cli import run_eval

pytestmark = LAB_MARKS

ORIGINAL = Path(os.environ.get("GHOST_EVAL_ORIGINAL", REPO.parent / "shared" / "original" / "agentic-network-tools"))


def test_original_agent_on_case_a(lab: Lab, tmp_path: Path) -> None:
    if not (ORIGINAL / "network-ghost-agent" / "ghost_agent.py").exists():
        pytest.skip(f"no original checkout at {ORIGINAL} (set GHOST_EVAL_ORIGINAL)")
    config = yaml.safe_load((REPO / "suites" / "original-lab.yaml").read_text())
    config["providers"][0]["id"] = f"file://{REPO}/providers/live.py"
    config["providers"][0]["config"]["target"] = str(lab.state_dir / "target.json")
    config["defaultTest"]["assert"][0]["value"] = f"file://{REPO}/assertions/remediation.py"
    config["tests"] = [{"vars": {"use_case": "a"}}]
    path = tmp_path / "original.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {"GHOST_EVAL_STORE": str(tmp_path / "store"), "GHOST_EVAL_ORIGINAL": str(ORIGINAL)}
    rows = run_eval(path, tmp_path, extra_env=env, timeout=900)
    assert [r.get("failureReason") for r in rows] in ([0], [1]), rows[0].get("error")  # 2 would be an error row
    assert "ghost-demo-block-8080" in rows[0]["response"]["output"]
    store = Store(tmp_path / "store")
    (entry,) = store.runs(RunFilter())
    names = {p.name for p in store.read(entry).folder.iterdir()}
    assert {"ghost_session.json", "infra_snapshot.json"} <= names
    assert {n.split("_ghost_")[0] for n in names if "_ghost_" in n} == {"ghost_report", "ghost_audit", "shell_audit"}
