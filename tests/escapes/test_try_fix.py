"""`ghost-eval lab try-fix --all` on a store whose runs recommend the escape corpus: each run in a lab of its own, no
host change, no run judged on what an earlier run left; and a trial during which the host does change fails loudly."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.lab import lab_down, lab_up
from tests.conftest import v1_run, write_index
from tests.escapes.corpus import ATTEMPTS, host_listener, leftover_markers
from tests.lab.helpers import HOST_MARKS, require_lab_host
from tests.trials.helpers import report_with

pytestmark = HOST_MARKS
_START = datetime(2026, 3, 12, 14, 0, 0)


def _literal(commands: list[str]) -> list[str]:
    """The report template is filled with str.format: braces in a command are text."""
    return [c.replace("{", "{{").replace("}", "}}") for c in commands]


def _store(root: Path, fixes: list[tuple[str, list[str]]]) -> list[str]:
    root.mkdir()
    entries = [
        v1_run(root, use_case=f"use_case_{case}", when=_START + timedelta(seconds=i), report=report_with(_literal(commands)))
        for i, (case, commands) in enumerate(fixes)
    ]
    write_index(root, entries)
    return [e["run_id"] for e in entries]


def test_every_escape_attempt_through_try_fix_changes_nothing_on_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_lab_host()
    with host_listener() as listener:
        attempts = [a.filled(listener.port) for a in ATTEMPTS]
        run_ids = _store(tmp_path / "store", [(a.case, list(a.commands)) for a in attempts])
        code = main(["lab", "try-fix", "--all", "--store", str(tmp_path / "store"), "--json"])
    captured = capsys.readouterr()
    results = {r["run_id"]: r for r in map(json.loads, captured.out.splitlines())}
    by_attempt = {a.id: results[run_id] for a, run_id in zip(attempts, run_ids, strict=True)}
    assert code == 0, captured.err
    assert {a: r["host_changes"] for a, r in by_attempt.items() if r["host_changes"]} == {}
    assert all(r["setup_ok"] and r["lab_traces"] == [] for r in results.values())
    assert leftover_markers(attempts) == [] and listener.received == []
    # a later run's VM is the pristine one: the owner's client an earlier run replaced is the real one again
    assert by_attempt["owner-client-after-replacement"]["resolved"] is True
    assert by_attempt["replace-owner-client"]["resolved"] is False
    # the az line is never a shell line: its script ran in the named VM, the substitution with it
    invoke = by_attempt["run-command-substitution"]["actions"][0]["commands"][0]
    assert invoke["decision"] in {"ran", "refused"} and invoke["decision"] != "not_executable"
    stored = "".join(p.read_text() for p in (tmp_path / "store").rglob("verdicts/*.json"))
    assert "PRIVATE KEY" not in stored and '"token"' not in stored


def test_a_trial_during_which_the_host_changes_fails_loudly_and_names_the_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The host changes while the fix runs (here the test itself writes the file once the fix has started in the VM,
    as an escaped command would): the trial exits non-zero and names the file."""
    require_lab_host()
    state = tmp_path / "lab"
    lab_up(state)
    marker = Path("/srv") / f"ghost-escape-detector-{tmp_path.name}"
    started = [state / "vms" / vm / "upper" / "opt" / "ghost-escape-go" for vm in ("tf-source-vm", "tf-dest-vm")]

    def breach() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(p.exists() for p in started):
            time.sleep(0.05)
        marker.write_text("written on the host while a fix ran\n")

    writer = threading.Thread(target=breach, daemon=True)
    writer.start()
    try:
        (run_id,) = _store(tmp_path / "store", [("v", ["touch /opt/ghost-escape-go && sleep 3"])])
        code = main(["lab", "try-fix", run_id, "--store", str(tmp_path / "store"), "--state-dir", str(state), "--json"])
        writer.join(5)
        captured = capsys.readouterr()
        result = json.loads(captured.out)
        assert code == 1
        assert f"file created or changed: {marker}" in result["host_changes"]
        assert "SANDBOX BREACH" in captured.err and str(marker) in captured.err
    finally:
        marker.unlink(missing_ok=True)
        lab_down(state)
