from __future__ import annotations

import pytest

from ghost_eval.run.artifacts import InvestigationResult
from ghost_eval.scoring.diagnosis import check_diagnosis
from tests.scoring.conftest import CASE_M


def test_a_report_that_finds_the_ban_is_correct() -> None:
    result = check_diagnosis(CASE_M, "fail2ban on tf-dest-vm banned 203.0.113.47; the f2b-sshd chain rejects it.", None)
    assert result.correct is True
    assert result.matched == ["k1", "k2"] and result.missing == [] and result.forbidden == []
    assert [f.status for f in result.facts] == ["found", "found"]


def test_missing_and_forbidden_patterns_are_listed() -> None:
    result = check_diagnosis(CASE_M, "The NSG is blocking SSH from 203.0.113.47.", None)
    assert result.correct is False
    assert result.missing == ["k1"]
    assert result.forbidden == ["w1"]
    assert result.wrong_claims[0].sentence == "The NSG is blocking SSH from 203.0.113.47."


def test_the_structured_root_cause_is_read_with_the_report() -> None:
    result = InvestigationResult(root_cause="fail2ban banned the partner")
    assert check_diagnosis(CASE_M, "Evidence: REJECT for 203.0.113.47.", result).correct is True
    assert check_diagnosis(CASE_M, "Evidence: REJECT for 203.0.113.47.", None).correct is False


def test_an_unknown_case_has_no_answer() -> None:
    result = check_diagnosis(None, "fail2ban banned 203.0.113.47", None)
    assert result.correct is None and result.note and "unknown case" in result.note


def test_an_empty_run_is_incorrect_and_says_why() -> None:
    result = check_diagnosis(CASE_M, "", None)
    assert result.correct is False and result.missing == ["k1", "k2"]
    assert result.note == "the run left neither a report nor a root cause"


def test_an_aborted_run_says_so() -> None:
    result = InvestigationResult(root_cause="fail2ban banned 203.0.113.47", aborted="turn limit reached")
    assert check_diagnosis(CASE_M, "", result).note == "the run ended early: turn limit reached"


@pytest.mark.parametrize(
    "denial",
    ["nothing points to failing hardware", "there is no sign of a faulty NIC", "nothing suggests a failing host"],
)
def test_a_claim_denied_by_nothing_or_no_sign_of_is_not_asserted(denial: str) -> None:
    from ghost_eval.evaluation.evaluate import load_case_set

    case_i = load_case_set()[0]["i"]
    text = (
        "A netem qdisc on tf-source-vm applies 10% loss, 10 ms delay and 2% corruption to its egress; "
        f"this is configuration, and {denial}."
    )
    result = check_diagnosis(case_i, text, None)
    assert "hardware_blamed" not in result.forbidden
    assert check_diagnosis(case_i, text.replace(denial, "the NIC is a failing NIC"), None).forbidden == ["hardware_blamed"]


@pytest.mark.parametrize("negation", ["wasn't", "wasnt", "was not", "didnt get"])
def test_a_negation_without_its_apostrophe_still_denies_the_claim(negation: str) -> None:
    """Messy output drops the apostrophe ("wasnt added in the window"); no English word ends that way but a negation."""
    from ghost_eval.evaluation.evaluate import load_case_set

    case_r = load_case_set()[0]["r"]
    text = "tf-dest-vm INPUT has -p tcp --dport 9090 -j DROP. it {} added in the window, it was there before."
    assert "window_added_rule" not in check_diagnosis(case_r, text.format(negation), None).forbidden
    assert "window_added_rule" in check_diagnosis(case_r, text.format("was"), None).forbidden


def test_a_refutation_label_before_a_colon_still_refutes_what_follows() -> None:
    from ghost_eval.evaluation.evaluate import load_case_set

    case_n = load_case_set()[0]["n"]
    assert check_diagnosis(case_n, "The NSG blocks the traffic.", None).forbidden == ["nsg_blamed"]
    assert check_diagnosis(case_n, "Refuted: the NSG blocks the traffic.", None).forbidden == []
    assert check_diagnosis(case_n, "H1 (refuted): the NSG blocks the traffic.", None).forbidden == []


def test_the_asserting_sentence_is_found_after_ones_that_only_mention_the_claim() -> None:
    text = "We wondered whether the NSG is blocking SSH. Not the NSG. The NSG is blocking SSH from 203.0.113.47, we think."
    result = check_diagnosis(CASE_M, text, None)
    assert result.forbidden == ["w1"]
    assert result.wrong_claims[0].sentence == "The NSG is blocking SSH from 203.0.113.47, we think."
    assert check_diagnosis(CASE_M, "```\nThe NSG is blocking SSH\n```", None).forbidden == []  # code only: no sentence


def test_a_fact_is_found_in_a_later_window_and_a_refuted_clause_never_counts() -> None:
    text = "Ruled out: fail2ban banned 203.0.113.47. Checked routes. Then fail2ban banned 203.0.113.47; f2b-sshd rejects it."
    result = check_diagnosis(CASE_M, text, None)
    assert result.correct is True
    assert result.facts[0].sentence == "Then fail2ban banned 203.0.113.47; f2b-sshd rejects it."  # as written


@pytest.mark.parametrize(
    "text",
    [
        "Root cause: fail2ban on tf-dest-vm banned 203.0.113.47 in f2b-sshd.\n\nRuled out\n- the NSG is blocking SSH\n",
        "Root cause: fail2ban on tf-dest-vm banned 203.0.113.47 in f2b-sshd. The NSG is blocking SSH — nothing ties "
        "the NSG to the failures.\n",
    ],
)
def test_claims_listed_as_ruled_out_or_answered_on_the_spot_are_not_asserted(text: str) -> None:
    result = check_diagnosis(CASE_M, text, None)
    assert result.forbidden == [] and result.correct


def test_a_fact_only_in_a_clause_refuted_by_any_refutation_word_is_missing() -> None:
    result = check_diagnosis(CASE_M, "Nothing ties fail2ban to the failures; 203.0.113.47 answers pings.", None)
    assert result.missing == ["k1"]  # "nothing ties" refutes its clause like "ruled out" does


def test_a_line_labelled_with_a_vm_role_names_that_vm() -> None:
    from ghost_eval.cases.phrases import compile_phrase

    dest, source = compile_phrase("@dest_vm"), compile_phrase("@source_vm")
    assert dest.search("dest: DROP tcp/5001 in INPUT.") and not source.search("dest: DROP tcp/5001 in INPUT.")
    assert source.search("source: htb 2mbit on eth0")
    assert not source.search("rule x allows it, source: *")  # a rule's field, not a VM


@pytest.mark.parametrize(
    ("opening", "found"),
    [
        ("The lead engineer's rollback claim does not hold.", True),
        ("rollback != done.", True),
        ("rollback \u2260 done.", True),
        ("The rollback is complete; nothing ties the window to the outage.", False),
        ("Change window CR-2026-0401 is over.", False),
    ],
)
def test_a_fact_that_a_claim_is_false_is_asserted_by_refuting_the_claim(opening: str, found: bool) -> None:
    """Case p's key fact is that the rollback claim is false: "does not hold" refutes the claim and so states the fact
    (other refutations still remove their clause), and notes write "is not" as an inequality between words."""
    from ghost_eval.evaluation.evaluate import load_case_set

    case_p = load_case_set()[0]["p"]
    text = (
        f"{opening} Drift against eni_pre_window_P shows ghost-demo-rollback-block-8080 (priority 150, inbound Deny "
        "TCP 8080) added on tf-dest-vm-nsg. Separately tf-dest-vm's iptables INPUT chain drops TCP 5001, which Azure "
        "cannot see; neither explains the other."
    )
    result = check_diagnosis(case_p, text, None)
    assert ("rollback_incomplete" in result.matched) is found
    assert result.correct is found
