"""Inputs of a live run that must not reach outside: the target lock, the external agent's argv, and a run whose
fault is planted is stored whatever fails, with its snapshot and an external agent's files redacted."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

import ghost_eval.live.run as live_run
from ghost_eval.connect.target import Target
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.live.run import LiveConfig, external_argv, run_case
from ghost_eval.run.snapshot import HostState, InfraSnapshot
from ghost_eval.store import Store
from ghost_eval.store.layout import REDACTIONS_FILE
from tests.fixtures.secrets.canaries import CORPUS, count_canaries

_TARGET = Target(name="planted", subscription_id="s", resource_group="rg", nics={}, nsgs={}, hosts={})


@pytest.fixture
def locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Root's runtime folder and a user's `<runtime_dir>/ghost-eval` (the tests pass tmp_path) are both this folder."""
    folder = tmp_path / "ghost-eval"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(live_run, "_RUNTIME_DIR", folder, raising=False)
    monkeypatch.setattr(live_run, "_LOCK_DIR", folder, raising=False)
    return folder


def test_a_symlink_planted_at_the_lock_path_is_not_followed(locks: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (locks / "planted.lock").symlink_to(victim)
    with pytest.raises(Exception, match="lock"), live_run._exclusive(_TARGET, tmp_path):
        pass
    assert victim.read_text() == "precious\n"


def test_an_existing_lock_is_opened_without_truncation(locks: Path) -> None:
    lock = locks / "planted.lock"
    lock.write_text("held\n")
    with live_run._exclusive(_TARGET, locks.parent):
        assert lock.read_text() == "held\n"


def test_the_model_name_is_one_argument_of_the_external_agent(tmp_path: Path) -> None:
    config = LiveConfig(
        provider="anthropic",
        model="m; touch /tmp/owned --x",
        store=tmp_path,
        agent="python ghost_agent.py --llm-provider {provider} --model {model} --audit-dir {audit_dir} {addon}",
        addon_file=tmp_path / "my addon.md",
    )
    argv = external_argv(config, "/tmp/audit dir")
    assert argv == [
        "python",
        "ghost_agent.py",
        "--llm-provider",
        "anthropic",
        "--model",
        "m; touch /tmp/owned --x",
        "--audit-dir",
        "/tmp/audit dir",
        "--prompt-addon",
        str(tmp_path / "my addon.md"),
    ]


_FAKE_AGENT = """
import sys, pathlib
audit = pathlib.Path(sys.argv[sys.argv.index("--audit-dir") + 1])
(audit / "ghost_report_ghost_20260101_000000.md").write_text("# Report\\nRoot cause: settings were\\n" + sys.stdin.read())
(audit / "ghost_audit_ghost_20260101_000000.md").write_text(open(sys.argv[-1]).read())
"""


@contextmanager
def _planted(*_: Any, **__: Any) -> Iterator[None]:
    yield


@pytest.fixture
def planted_run(locks: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """`run_case` with the lab replaced: a fault that plants nothing and a snapshot whose rules carry the corpus."""
    monkeypatch.setattr(live_run, "load_target", lambda _: _TARGET)
    monkeypatch.setattr(live_run, "applied", _planted)
    snapshot = InfraSnapshot(hosts=[HostState(name="tf-dest-vm", iptables_save=CORPUS)])
    monkeypatch.setattr(live_run, "take_snapshot", lambda _: snapshot)
    cases, _ = load_case_set()
    return {"case": cases["m"], "store": tmp_path / "store"}


def _stored(store_dir: Path) -> dict[str, str]:
    with Store(store_dir) as store:
        (entry,) = store.runs()
        folder = store.read(entry).folder
    return {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.is_file()}


def test_an_external_agents_files_and_the_snapshot_are_redacted_before_the_store(
    planted_run: dict[str, Any], tmp_path: Path
) -> None:
    agent = tmp_path / "fake_agent.py"
    agent.write_text(_FAKE_AGENT)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS)
    config = LiveConfig(
        provider="anthropic",
        model="claude-haiku-4-5",
        store=planted_run["store"],
        agent=f"{sys.executable} {agent} --model {{model}} --audit-dir {{audit_dir}} {corpus}",
    )
    case = planted_run["case"].model_copy(update={"symptom": CORPUS})
    run = run_case(case, config)
    assert run.aborted is None
    stored = _stored(planted_run["store"])
    assert {"infra_snapshot.json", "ghost_audit_ghost_20260101_000000.md", REDACTIONS_FILE} <= set(stored)
    assert {name: count_canaries(text) for name, text in stored.items() if count_canaries(text)} == {}
    where = {r["where"] for r in json.loads(stored[REDACTIONS_FILE])["redactions"]}
    assert {"infra_snapshot.json", "ghost_audit_ghost_20260101_000000.md"} <= where


def test_a_run_whose_fault_is_planted_is_stored_as_aborted_when_the_agent_crashes(
    planted_run: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*_: Any) -> Any:
        raise RuntimeError("the agent fell over")

    monkeypatch.setattr(live_run, "_reference", crash)
    config = LiveConfig(provider="anthropic", model="claude-haiku-4-5", store=planted_run["store"])
    run = run_case(planted_run["case"], config)
    assert run.aborted is not None and "the agent fell over" in run.aborted
    stored = _stored(planted_run["store"])
    assert "infra_snapshot.json" in stored and count_canaries(stored["infra_snapshot.json"]) == 0


def test_an_external_agent_off_the_lab_runs_on_this_host_with_the_target_named(tmp_path: Path) -> None:
    """Off the lab there is no sandbox to run in: the agent is this host's process, told where its target is (on the
    lab it runs in `ghost_eval.lab.agentbox`: tests/live/test_original_agent_sandbox.py)."""
    case = load_case_set()[0]["a"]
    planted = LiveConfig(provider="anthropic", model="claude-haiku-4-5", store=tmp_path, agent="x")
    agent = live_run._external_agent(case, _TARGET, tmp_path / "target.json", planted, tmp_path, ExitStack())
    assert agent.box is None and agent.python == sys.executable
    assert agent.env["GHOST_EVAL_TARGET"] == str(tmp_path / "target.json")
