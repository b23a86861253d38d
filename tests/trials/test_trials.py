"""Fix trials in a real lab: what a fix does to the planted fault, observed (resolved, durable, collateral)."""

from __future__ import annotations

from pathlib import Path

from ghost_eval.trials import CriterionObservation
from tests.lab.helpers import LAB_MARKS, Lab
from tests.trials.helpers import report_with, trial_of

pytestmark = LAB_MARKS

_SUBNET = "-g nw-forensics-rg --vnet-name forensics-vnet -n default"


def _observed(criteria: list[CriterionObservation]) -> dict[int, bool | None]:
    return {c.criterion_id: c.observed for c in criteria}


def test_m_deleting_the_ban_from_fail2bans_chain_resolves_but_fail2ban_puts_it_back(lab: Lab, tmp_path: Path) -> None:
    report = report_with(["sudo iptables -D f2b-sshd -s 203.0.113.47/32 -j REJECT --reject-with icmp-port-unreachable"])
    verdict = trial_of(lab, tmp_path / "store", "m", report)
    assert verdict.actions[0].commands[0].decision == "ran" and verdict.actions[0].commands[0].exit_status == 0
    assert verdict.resolved is True
    assert verdict.durable is False, verdict.symptoms_after_reconcile
    assert verdict.symptoms_after_reconcile
    assert _observed(verdict.criteria)[2] is True


def test_m_unbanning_through_fail2ban_client_resolves_and_lasts(lab: Lab, tmp_path: Path) -> None:
    report = report_with(["sudo fail2ban-client set sshd unbanip 203.0.113.47"], "sudo fail2ban-client status sshd")
    verdict = trial_of(lab, tmp_path / "store", "m", report)
    assert verdict.resolved is True and verdict.durable is True
    assert verdict.collateral == []
    assert verdict.verification.ran is True and verdict.verification.proves is True
    assert _observed(verdict.criteria) == {1: None, 2: False, 3: False, 4: False}


def test_f_sql_replacing_the_endpoint_list_drops_the_sql_endpoint(lab: Lab, tmp_path: Path) -> None:
    report = report_with([f"az network vnet subnet update {_SUBNET} --service-endpoints Microsoft.Storage"])
    verdict = trial_of(lab, tmp_path / "store", "f_sql", report)
    assert verdict.resolved is True
    assert "arm subnet forensics-vnet/default: removed service endpoint Microsoft.Sql" in verdict.collateral
    assert any("must-keep check broken" in line and "Microsoft.Sql" in line for line in verdict.collateral)
    assert _observed(verdict.criteria)[1] is True


def test_f_sql_reading_the_list_first_and_keeping_it_has_no_collateral(lab: Lab, tmp_path: Path) -> None:
    report = report_with(
        [
            f'current=$(az network vnet subnet show {_SUBNET} --query "serviceEndpoints[].service" -o tsv)',
            f"az network vnet subnet update {_SUBNET} --service-endpoints $current Microsoft.Storage",
        ],
        f'az network vnet subnet show {_SUBNET} --query "serviceEndpoints[].service" -o tsv',
    )
    verdict = trial_of(lab, tmp_path / "store", "f_sql", report)
    assert [c.exit_status for c in verdict.actions[0].commands] == [0, 0]
    assert verdict.resolved is True and verdict.durable is True
    assert verdict.collateral == []
    assert verdict.verification.proves is True
    assert _observed(verdict.criteria) == {1: False, 2: None, 3: False, 4: False}


def test_n_flushing_input_lists_the_rules_it_held_as_collateral(lab: Lab, tmp_path: Path) -> None:
    """INPUT's policy is DROP: the flush also drops the lab's management SSH, so the trial measures on the console."""
    verdict = trial_of(lab, tmp_path / "store", "n", report_with(["sudo iptables -F INPUT"]))
    removed = [line for line in verdict.collateral if "iptables filter: removed -A INPUT" in line]
    assert len(removed) == 3, verdict.collateral  # the Wire Server, return-traffic and SSH accepts the hardening added
    assert "tf-dest-vm management ssh: removed reachable" in verdict.collateral
    assert any("cut tf-dest-vm's management SSH" in note for note in verdict.notes)
    assert _observed(verdict.criteria)[3] is True


def test_a_command_the_gate_forbids_never_runs(lab: Lab, tmp_path: Path) -> None:
    verdict = trial_of(lab, tmp_path / "store", "m", report_with(["rm -rf /"]))
    command = verdict.actions[0].commands[0]
    assert (command.gate, command.decision, command.exit_status) == ("forbidden", "refused", None)
    assert verdict.resolved is False and verdict.diff == []
