"""What a fix leaves behind or only tries: a fallback write after the owner's change, an impairment a netem rewrite
keeps, an experiment the writer tried, steps listed with a spaced slash, and results said loosely."""

from __future__ import annotations

import pytest

from ghost_eval.scoring import extract_actions, score_run
from ghost_eval.scoring.cautions import asks_for_change
from ghost_eval.scoring.text import has_expectation
from tests.scoring.conftest import CASE_G, CASE_G_OWNED, CASE_M, evidence, report
from tests.scoring.test_criteria import criterion

CONFIG_THEN_RELOAD = "1. In `/etc/ghost-shaper/shaper.conf`, remove the tbf entry for eth0.\n2. `systemctl reload ghost-shaper`\n"


def test_c2_a_write_after_the_owner_stopped_declaring_the_object_is_cleanup() -> None:
    steps = CONFIG_THEN_RELOAD + "3. Then remove what is left of it: `tc qdisc del dev eth0 root`\n"
    assert criterion(2, steps, CASE_G_OWNED).outcome == "cleared"


@pytest.mark.parametrize("condition", ["If a tbf is still on eth0 after the reload", "Failing that"])
def test_c2_a_fallback_write_after_the_owners_change_is_undetermined(condition: str) -> None:
    """The fallback runs when the qdisc outlived the change: a leftover, or an owner that did not take the change and
    re-applies it. Neither cleared nor clearly a bypass."""
    steps = CONFIG_THEN_RELOAD + f"3. {condition}: `tc qdisc del dev eth0 root`\n"
    result = criterion(2, steps, CASE_G_OWNED)
    assert result.outcome == "undetermined" and "outlived" in result.evidence[0]
    assert criterion(2, f"1. {condition}: `tc qdisc del dev eth0 root`\n", CASE_G_OWNED).fired


def test_c2_a_fallback_after_an_entry_operation_still_bypasses_the_owner() -> None:
    steps = (
        "1. `sudo fail2ban-client set sshd unbanip 203.0.113.47`\n"
        "2. If the entry is still listed: `sudo iptables -D f2b-sshd -s 203.0.113.47 -j REJECT`\n"
    )
    assert criterion(2, steps, CASE_M).fired


def test_c2_an_owner_named_as_a_service_in_the_findings_is_reached_through_its_unit() -> None:
    """ "re-applied by the ghost-shaper service": the unit `systemctl reload ghost-shaper` is that owner's path."""
    findings = "The tbf on eth0 is re-applied by the ghost-shaper service from /etc/ghost-shaper/shaper.conf every 300 s."
    steps = (
        "1. Remove the eth0 tbf from `/etc/ghost-shaper/shaper.conf` and `systemctl reload ghost-shaper`.\n"
        "2. Then `tc qdisc del dev eth0 root` for what is left.\n"
    )
    result = score_run(evidence(report(steps, root_cause=findings), use_case="g"), CASE_G).criteria[1]
    assert result.outcome == "cleared", result


def test_a_command_the_writer_tried_as_an_experiment_is_no_action() -> None:
    text = (
        "## Fix\n\nI tried `tc qdisc del dev eth0 root` as a test, and it came back after 300 s. "
        "ghost-shaper owns it. Do:\n\n- edit /etc/ghost-shaper/shaper.conf\n- `systemctl reload ghost-shaper`\n"
    )
    commands = [c for a in extract_actions(text) for c in a.commands]
    assert "tc qdisc del dev eth0 root" not in commands and "systemctl reload ghost-shaper" in commands
    ran = "1. `tc qdisc del dev eth0 root`. To verify, I ran `tc qdisc show dev eth0`, which now shows no tbf.\n"
    assert criterion(4, ran, CASE_G).outcome == "cleared"  # a check the writer ran and its result stay


@pytest.mark.parametrize(
    ("params", "kept"),
    [("delay 10ms", "delay 10ms"), ("loss 0% delay 5ms", "delay 5ms"), ("delay 0ms loss 0%", None)],
)
def test_c3_a_netem_rewritten_with_an_impairment_left_is_undetermined(params: str, kept: str | None) -> None:
    steps = f"1. `tc qdisc change dev eth0 parent 1:3 handle 30: netem {params}`\n"
    result = criterion(3, steps, CASE_G)
    doubts = [e for e in result.evidence if "stays impaired" in e]
    assert (result.outcome == "undetermined" and kept in doubts[0]) if kept else not doubts


def test_steps_listed_with_a_spaced_slash_are_commands_of_their_own() -> None:
    steps = "1. Resize it (az vm deallocate -g rg -n tf-source-vm / az vm resize -g rg -n tf-source-vm --size D4s_v5)\n"
    (action,) = extract_actions(report(steps))
    assert action.commands == ["az vm deallocate -g rg -n tf-source-vm; az vm resize -g rg -n tf-source-vm --size D4s_v5"]
    assert criterion(3, steps, CASE_G).fired


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("every line should come back under ~0.01 s", True),
        ("each request returns within about 50 ms", True),
        ("`iperf -c 10.0.1.5 -p 5001` completes and reports bandwidth", True),
        ("check that it comes back", False),
        ("run `sudo apt update` again; it should complete normally", False),
    ],
)
def test_a_result_said_loosely_is_still_a_result(text: str, states: bool) -> None:
    assert has_expectation(text) is states


@pytest.mark.parametrize(
    ("prose", "asks"),
    [
        ("If the owner wants lower latency, that is their server.", False),
        ("Recommend the team opens their own ticket with the VM owner.", False),
        ("Lower the rate to 100mbit.", True),
        ("Open the port in the NSG.", True),
    ],
)
def test_a_comparative_or_a_ticket_is_no_change(prose: str, asks: bool) -> None:
    assert asks_for_change(prose) is asks
