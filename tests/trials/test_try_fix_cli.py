"""`ghost-eval lab try-fix`: a lab of its own, one JSON object, a verdict file kept beside the run, no trace left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.base.records import load_record
from ghost_eval.cli import main
from ghost_eval.trials import TrialVerdict
from tests.conftest import v1_run, write_index
from tests.lab.helpers import HOST_MARKS, require_lab_host
from tests.trials.helpers import report_with

pytestmark = HOST_MARKS


def test_try_fix_builds_its_own_lab_stores_the_verdict_and_leaves_no_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_lab_host()
    root = tmp_path / "store"
    root.mkdir()
    entry = v1_run(
        root,
        use_case="use_case_v",
        report=report_with(
            ["az network nsg rule delete -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n ghost-demo-temp-rdp-access"]
        ),
    )
    write_index(root, [entry])
    code = main(["lab", "try-fix", entry["run_id"], "--store", str(root), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["lab_traces"] == [] and printed["teardown_ok"] is True
    assert {"run_id", "case", "environment", "actions", "resolved", "durable", "collateral", "verification"} <= set(printed)
    assert {"c1", "c2", "c3", "c4"} <= set(printed)
    assert printed["actions"][0]["commands"][0]["decision"] == "ran"
    assert printed["resolved"] is True and printed["collateral"] == []
    stored = load_record(TrialVerdict, Path(printed["verdict_file"]))
    assert stored.run_id == entry["run_id"] and stored.scorer.startswith("lab-trial@")
    assert Path(printed["verdict_file"]).parent.name == "verdicts"
