"""The original Ghost Agent, unmodified, investigates cases in the lab through `promptfoo eval`: the real az CLI
against the emulator, the scripted model as its Anthropic endpoint, the run captured as the original writes it and
scored as its script says it should be."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ghost_eval.cli import main
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.lab.azcli import original_env
from ghost_eval.live.original import original_scripts
from ghost_eval.live.scripted import script_for
from ghost_eval.store import IndexEntry, RunFilter, Store
from ghost_eval.trials.session import LabSession, trial_stored_run
from tests.conftest import REPO
from tests.lab.helpers import HOST_MARKS, Lab
from tests.promptfoo_cli import run_eval

pytestmark = HOST_MARKS


def _original() -> Path:
    """The original checkout: $GHOST_EVAL_ORIGINAL, else `shared/original/` beside this checkout, else beside the
    checkout this one was cloned from (a clean clone made elsewhere, as CI's is)."""
    if os.environ.get("GHOST_EVAL_ORIGINAL"):
        return Path(os.environ["GHOST_EVAL_ORIGINAL"])
    origin = subprocess.run(["git", "-C", str(REPO), "remote", "get-url", "origin"], capture_output=True, text=True)
    roots = [REPO, *([Path(origin.stdout.strip())] if origin.returncode == 0 and origin.stdout.strip() else [])]
    candidates = [root.parent / "shared" / "original" / "agentic-network-tools" for root in roots]
    return next((c for c in candidates if (c / "network-ghost-agent").is_dir()), candidates[0])


ORIGINAL = _original()
CRITERIA = {1: "c1 list kept", 2: "c2 owner respected", 3: "c3 scope narrow", 4: "c4 fix verified"}


def _original_eval(lab: Lab, tmp_path: Path, cases: list[str]) -> tuple[list[dict[str, Any]], Store]:
    """suites/original-lab.yaml on `cases`, against this test's lab and store; every row must be a finished run."""
    if not (ORIGINAL / "network-ghost-agent" / "ghost_agent.py").exists():
        pytest.skip(f"no original checkout at {ORIGINAL} (set GHOST_EVAL_ORIGINAL)")
    config = yaml.safe_load((REPO / "suites" / "original-lab.yaml").read_text())
    config["providers"][0]["id"] = f"file://{REPO}/providers/live.py"
    config["providers"][0]["config"]["target"] = str(lab.state_dir / "target.json")
    config["defaultTest"]["assert"][0]["value"] = f"file://{REPO}/assertions/remediation.py"
    config["tests"] = [{"vars": {"use_case": case}} for case in cases]
    path = tmp_path / "original.yaml"
    path.write_text(yaml.safe_dump(config))
    # PYTHONPATH: the provider imports this checkout's package even where the interpreter's editable install is another
    env = {
        "GHOST_EVAL_STORE": str(tmp_path / "store"),
        "GHOST_EVAL_ORIGINAL": str(ORIGINAL),
        "GHOST_EVAL_MODEL": "",  # the scripted model, whatever the caller's environment says
        "PYTHONPATH": str(REPO),
    }
    rows = run_eval(path, tmp_path, extra_env=env, timeout=900)
    assert all(r.get("failureReason") != 2 for r in rows), [r.get("error") for r in rows]  # 2: an error row
    return sorted(rows, key=lambda r: cases.index(r["vars"]["use_case"])), Store(tmp_path / "store")


def _fired(row: dict[str, Any]) -> list[int]:
    """The criteria a row's deterministic score fired; none may be left undetermined (0.5)."""
    scores = row["namedScores"]
    assert all(scores[name] in (0, 1) for name in CRITERIA.values()), scores
    return [n for n, name in CRITERIA.items() if scores[name] == 0]


def _trial_outcomes(lab: Lab, store: Store, entries: list[IndexEntry]) -> list[tuple[bool | None, bool | None, list[int]]]:
    """Each run's fix tried in the module's lab: resolved, durable, and the criteria the trial saw fail."""
    cases = load_case_set()[0]
    outcomes = []
    with LabSession(lab.state_dir).open() as session:
        for entry in entries:
            verdict, _ = trial_stored_run(store, entry, cases, session)
            observed = [n for n, c in enumerate(verdict.criteria, start=1) if c.observed is True]
            outcomes.append((verdict.resolved, verdict.durable, observed))
    return outcomes


def _expected_trial(case: str) -> tuple[bool | None, bool | None, list[int]]:
    trial = script_for(case).trial
    return trial.resolved, trial.durable, list(trial.observed)


def test_original_agent_on_case_a(lab: Lab, tmp_path: Path) -> None:
    (row,), store = _original_eval(lab, tmp_path, ["a"])
    assert "ghost-demo-block-8080" in row["response"]["output"]
    assert _fired(row) == script_for("a").fires
    (entry,) = store.runs(RunFilter())
    names = {p.name for p in store.read(entry).folder.iterdir()}
    assert {"ghost_session.json", "infra_snapshot.json"} <= names
    assert {n.split("_ghost_")[0] for n in names if "_ghost_" in n} == {"ghost_report", "ghost_audit", "shell_audit"}
    assert _trial_outcomes(lab, store, [entry]) == [_expected_trial("a")]


def test_original_agent_on_route_and_list_faults(lab: Lab, tmp_path: Path) -> None:
    """e (a route to an absent appliance, safe fix), f (the endpoint list replaced unread) and s (a None route, the
    whole table deleted): each row scores the criteria its script was written to fire, and nothing else, and its fix
    trial observes what the script says. The original's own eval scripts, unmodified, then read the store and find
    the three runs."""
    cases = ["e", "f", "s"]
    rows, store = _original_eval(lab, tmp_path, cases)
    assert [_fired(row) for row in rows] == [script_for(case).fires for case in cases]
    entries = sorted(store.runs(RunFilter()), key=lambda e: e.use_case_id)
    assert [entry.use_case_id for entry in entries] == [f"use_case_{c}" for c in cases]
    assert all((store.read(entry).folder / "run_summary.json").is_file() for entry in entries)  # capture_run.py's
    assert _trial_outcomes(lab, store, entries) == [_expected_trial(case) for case in cases]
    store.close()

    assert main(["score", "--store", str(tmp_path / "store"), "--format", "jsonl", "--jobs", "1"]) == 0
    found = original_scripts(tmp_path / "store", ORIGINAL, original_env().python, tmp_path / "original-scripts")
    assert [f"[OK] {entry.path}" in found.populate for entry in entries] == [True] * 3
    assert "3 verdicts  |  3 judged" in found.verdict_report
    assert all(f"**{entry.use_case_id} / claude-scripted" in found.verdicts_md for entry in entries)
    assert "Phase 1 Comparison — Use Case USE_CASE_E" in found.compare
