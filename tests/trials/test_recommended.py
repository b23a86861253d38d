"""What a fix trial applies and verifies is what the scorer's checks read: the run parsed once (no lab)."""

from __future__ import annotations

from pathlib import Path

from ghost_eval.cases.case import load_case
from ghost_eval.evaluation.evaluate import evidence_of
from ghost_eval.scoring.parsed import parse_run
from ghost_eval.store import Store
from ghost_eval.trials.trial import recommended
from tests.conftest import v1_run, write_index
from tests.trials.helpers import CASES_DIR

_BLOCK = '```\naz vm run-command invoke -n tf-dest-vm --scripts "iptables -D X -j DROP && iptables -L X -n"\n```\n'
_REPORT = f"## Fix\n{_BLOCK}\nOutput after the change: `Chain X (1 references)` with only `RETURN`.\n"


def test_the_trial_verifies_with_the_fix_s_own_read_as_the_scorer_does(tmp_path: Path) -> None:
    """The report's only check is the output the fix's own read printed; the scorer's verification criterion counts
    it, so the trial must run it too (read without the run's actions, it was lost)."""
    write_index(tmp_path, [v1_run(tmp_path, use_case="use_case_n", report=_REPORT)])
    store = Store(tmp_path)
    record = store.read(store.runs()[0])
    case = load_case(CASES_DIR / "n.yaml")
    actions, checks = recommended(record, case)
    parsed = parse_run(evidence_of(record), case)
    assert (actions, checks) == (parsed.actions, parsed.report_verifications)
    assert actions[0].commands == [_BLOCK.splitlines()[1]]
    assert [v.command for v in checks] == ["iptables -L X -n"]
