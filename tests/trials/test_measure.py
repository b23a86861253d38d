"""What counts as in the fault's scope, and when a check's output tells the fixed state from the fault (no lab)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.cases.case import load_case
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.live.recipes import recipe_of
from ghost_eval.trials import CommandOutcome
from ghost_eval.trials.measure import outputs_differ, scope_of
from tests.trials.helpers import CASES_DIR

_LINES = [
    ("m", "tf-dest-vm iptables filter", "-A f2b-sshd -s 203.0.113.47/32 -j REJECT", True),
    ("m", "tf-dest-vm iptables filter", "-A INPUT -p tcp -m multiport --dports 22 -j f2b-sshd", True),
    ("m", "tf-dest-vm iptables filter", "-A f2b-sshd -j RETURN", False),
    ("f_sql", "arm subnet forensics-vnet/default", "service endpoint Microsoft.Storage", True),
    ("f_sql", "arm subnet forensics-vnet/default", "service endpoint Microsoft.Sql", False),
    ("n", "tf-dest-vm iptables filter", "chain INPUT policy DROP", True),
    ("n", "tf-dest-vm iptables filter", "-A INPUT -s 168.63.129.16/32 -j ACCEPT", False),
    ("q", "tf-source-vm tc", "qdisc tbf 20: dev eth0 parent 1:20 rate 2Mbit burst 16Kb lat 50ms", True),
    ("q", "tf-dest-vm tc", "qdisc tbf 20: dev eth0 parent 1:20 rate 2Mbit", False),
]


@pytest.mark.parametrize(("case_id", "area", "line", "expected"), _LINES)
def test_the_fault_scope_covers_the_faults_own_lines_only(case_id: str, area: str, line: str, expected: bool) -> None:
    """The capture's words (here: every line of the case in this table) decide which scope words are prose."""
    state: dict[str, frozenset[str]] = {}
    for other_case, other_area, other_line, _ in _LINES:
        if other_case == case_id:
            state[other_area] = state.get(other_area, frozenset()) | {other_line}
    assert scope_of(load_case(CASES_DIR / f"{case_id}.yaml"), [state])(area, line) is expected


def _out(output: str, exit_status: int = 0) -> CommandOutcome:
    return CommandOutcome(command="c", where="vm", gate="safe", decision="ran", exit_status=exit_status, output=output)


def test_jitter_is_no_difference_but_a_tenfold_delay_or_another_exit_status_is() -> None:
    fast = "5 packets transmitted, 5 received, 0% packet loss, time 4005ms\nrtt min/avg/max/mdev = 0.045/0.062/0.070/0.009 ms"
    jitter = "5 packets transmitted, 5 received, 0% packet loss, time 4071ms\nrtt min/avg/max/mdev = 0.041/0.066/0.091/0.011 ms"
    slow = "5 packets transmitted, 5 received, 0% packet loss, time 4003ms\nrtt min/avg/max/mdev = 30.1/30.4/30.9/0.3 ms"
    assert not outputs_differ(_out(fast), _out(jitter))
    assert outputs_differ(_out(fast), _out(slow))
    assert outputs_differ(_out("Connection to 10.0.1.5 22 port [tcp/ssh] succeeded!"), _out("timed out", 1))
    assert not outputs_differ(_out("from 10.0.1.5"), _out("from 10.0.1.5"))


def test_the_scope_words_come_from_the_case_file() -> None:
    assert load_case(Path(CASES_DIR / "f_sql.yaml")).fault_scope == ["Microsoft.Storage"]


def test_every_reconcile_block_names_symptoms_its_recipe_has() -> None:
    for case in load_case_set()[0].values():
        recipe = recipe_of(case)
        if recipe is not None and recipe.reconcile is not None:
            names = {s.description for s in recipe.symptoms}
            assert set(recipe.reconcile.resolved_by) <= names, case.id
