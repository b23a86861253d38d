"""A one-run v1 store whose report recommends the given commands, and a trial of that run in a lab."""

from __future__ import annotations

from pathlib import Path

from ghost_eval.cases.case import load_case
from ghost_eval.store import Store
from ghost_eval.trials import TrialVerdict, try_fix
from ghost_eval.trials.session import lab_console
from tests.conftest import v1_run, write_index
from tests.lab.helpers import Lab

__all__ = ["CASES_DIR", "report_with", "trial_of"]

CASES_DIR = Path(__file__).parents[2] / "cases"


def report_with(commands: list[str], verification: str | None = None) -> str:
    """A v1 report whose one recommended action runs `commands` (and verifies with `verification`, if given)."""
    block = "\n".join(f"   {c}" for c in commands)
    check = f"   Verification: run `{verification}` and expect the fix to show.\n" if verification else ""
    return (
        "# Ghost Agent Investigation Report\n- Session: {sid}\n## Root Cause\nSee the evidence.\n"
        f"## Recommended Actions\n1. Apply the fix:\n   ```bash\n{block}\n   ```\n{check}"
    )


def trial_of(lab: Lab, root: Path, case_id: str, report: str) -> TrialVerdict:
    """Store one run of `case_id` with `report` under `root`, trial it, and check the trial left nothing behind."""
    root.mkdir(parents=True)
    write_index(root, [v1_run(root, use_case=f"use_case_{case_id}", report=report)])
    store = Store(root)
    entry = store.runs()[0]
    case = load_case(CASES_DIR / f"{case_id}.yaml")
    verdict = try_fix(store.read(entry), case, lab.target, lab_console(lab.state_dir), lab_dir=lab.state_dir)
    assert verdict.setup_ok, verdict.notes
    assert verdict.teardown_ok and verdict.residue == [], verdict.residue
    return verdict
