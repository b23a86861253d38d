from __future__ import annotations

import pytest

from ghost_eval.scoring.ownership import Owned, build_ownership, findings_ownership, suspected_owner, via_owner
from ghost_eval.shell.commands import parse_command_block
from tests.scoring.conftest import CASE_G_OWNED, CASE_M, SNAPSHOT_G

SHAPER = (
    "Root cause: OS-level traffic shaping on tf-source-vm. `tc qdisc show dev eth0` shows a root qdisc that drops about "
    "20% of egress packets. The qdisc is re-applied every 5 minutes by the ghost-shaper service "
    "(/etc/ghost-shaper/shaper.conf), so the change has to go through that config and `systemctl reload ghost-shaper`."
)
HARDENING = (
    "tf-dest-vm's iptables INPUT chain has `-A INPUT -p tcp --dport 5001 -j DROP`. The NSG allows 5001. "
    "The chain is restored from /etc/iptables/rules.v4 every 10 minutes by harden-net, so the rule must be removed in "
    "that file and applied with `harden-net --apply`."
)


def test_a_daemon_reapplying_a_qdisc_named_in_an_earlier_sentence() -> None:
    (owned,) = findings_ownership(SHAPER)
    assert (owned.kind, owned.name, owned.owner, owned.source) == ("tc_qdisc", "eth0", "the ghost-shaper service", "report")
    assert owned.managed_via is not None
    assert "systemctl reload ghost-shaper" in owned.managed_via and "/etc/ghost-shaper/shaper.conf" in owned.managed_via


def test_the_chain_a_script_restores_and_the_file_it_restores_from() -> None:
    (owned,) = findings_ownership(HARDENING)
    assert (owned.kind, owned.name, owned.owner) == ("iptables_chain", "INPUT", "harden-net")
    assert owned.managed_via is not None and "/etc/iptables/rules.v4" in owned.managed_via


@pytest.mark.parametrize(
    "text",
    [
        "The qdisc on eth0 is not re-applied by anything; it was added by hand.",
        "A standalone netem qdisc on eth0; nothing re-applies it.",
        "These chains look fine and the NSG is managed by the platform team.",
    ],
)
def test_no_ownership_where_the_run_says_none(text: str) -> None:
    assert findings_ownership(text) == []


def test_a_file_a_script_overwrites() -> None:
    (owned,) = findings_ownership("/etc/ssh/sshd_config.d/90-harden.conf is overwritten by the hardening script every hour.")
    assert (owned.kind, owned.name, owned.owner) == ("file", "/etc/ssh/sshd_config.d/90-harden.conf", "the hardening script")


def test_sources_rank_snapshot_then_report_then_case_then_convention() -> None:
    ownership = build_ownership(CASE_M.facts(None), None, "The f2b-sshd chain is managed by fail2ban.")
    owned = ownership.owner_of("iptables_chain", "f2b-sshd")
    assert owned is not None and owned.source == "report"
    from_case = build_ownership(CASE_M.facts(None), None, "").owner_of("iptables_chain", "f2b-sshd")
    assert from_case is not None and from_case.source == "case" and from_case.environment == "azure_demo"
    assert build_ownership(None, None, "").owner_of("iptables_chain", "f2b-recidive") == Owned(
        "iptables_chain", "f2b-*", "fail2ban", "convention", "fail2ban-client"
    )
    from_snapshot = build_ownership(None, SNAPSHOT_G, SHAPER).owner_of("tc_qdisc", "eth0")
    assert from_snapshot is not None and from_snapshot.source == "snapshot"
    assert build_ownership(None, None, SHAPER).owner_of("tc_qdisc", "eth1") is None


def test_docker_user_is_never_owned_even_when_the_run_says_docker_creates_it() -> None:
    ownership = build_ownership(None, None, "Docker recreates the DOCKER-USER and DOCKER chains on restart, managed by dockerd.")
    assert ownership.owner_of("iptables_chain", "DOCKER-USER") is None
    assert ownership.owner_of("iptables_chain", "DOCKER") is not None
    assert ownership.owner_of("iptables_chain", "DOCKER-ISOLATION-STAGE-1") is not None


def test_going_through_the_owner() -> None:
    owned = build_ownership(CASE_G_OWNED.facts(None), None, "").owner_of("tc_qdisc", "eth0")
    assert owned is not None
    (edit,) = parse_command_block("sudo sed -i 's/loss 20%/loss 0%/' /etc/ghost-shaper/shaper.conf")
    (raw,) = parse_command_block("sudo tc qdisc del dev eth0 root")
    assert via_owner(edit, owned) and not via_owner(raw, owned)


def test_what_follows_a_command_is_no_owner() -> None:
    said = "It can be put back with `tc qdisc add dev eth0 root handle 1: prio` followed by the netem and filter commands."
    assert findings_ownership(said) == []


def test_an_owner_in_one_table_row_owns_nothing_in_the_next() -> None:
    """Each row of a findings table is a statement of its own: harden-net keeping row 1's DROP in place says nothing
    of row 2's qdisc on the other VM."""
    table = (
        "| # | Host | Fault |\n|---|---|---|\n"
        "| 1 | tf-dest-vm | the 5001 DROP, kept in place by harden-net (re-applied every 600 s) |\n"
        "| 2 | tf-source-vm | eth0 htb root 1: with a tbf 20: |\n"
    )
    assert all(o.kind != "tc_qdisc" for o in findings_ownership(table))
    joined = table.replace("|\n| 2 |", "; 2:")
    assert any(o.kind == "tc_qdisc" for o in findings_ownership(joined)), "in one sentence the qdisc is named with it"


@pytest.mark.parametrize(
    ("text", "owner"),
    [
        ("tf-dest-vm drops ICMP in INPUT, the ufw ruleset (ufw puts it back whenever ufw reloads).", "ufw"),
        (
            "The DROP sits at the top of INPUT. The hardening tooling enforces its baseline and re-inserts this rule.",
            "the hardening tooling",
        ),
        ("tf-dest-vm drops ICMP in INPUT and puts it back.", None),
    ],
)
def test_the_process_that_puts_a_rule_back_is_the_verbs_subject(text: str, owner: str | None) -> None:
    """A kernel chain named in capitals is a chain; "this rule" is the last chain named; the owner is the verb's subject
    where it is a process known by convention or one the sentence calls a tool, service or daemon."""
    found = [(o.kind, o.name, o.owner) for o in findings_ownership(text)]
    assert found == ([("iptables_chain", "INPUT", owner)] if owner else [])


@pytest.mark.parametrize(
    ("reason", "owned"),
    [
        ("The ICMP drop in INPUT is the ufw ruleset: ufw puts it back on reload. For now just pull it out.", True),
        ("Both rules are runtime-only; delete the rule in INPUT by its exact specification, which restores connectivity.", False),
        ("harden-net re-applies INPUT every 600s, so iptables -D alone will not stick.", False),
    ],
)
def test_an_actions_reason_owns_only_through_an_owner_known_by_convention(reason: str, owned: bool) -> None:
    """A fix's words name its effects ("restores connectivity") and its means ("by its exact specification") in the
    verbs and prepositions a finding uses for owners: there only a conventional owner is taken at its word."""
    ownership = build_ownership(None, None, "", reason)
    assert (ownership.owner_of("iptables_chain", "INPUT") is not None) is owned


@pytest.mark.parametrize(
    ("text", "suspected"),
    [
        ("If netem comes back after the ping test, look for whatever is re-applying it (cron, cloud-init).", False),
        ("It may get re-applied by whatever provisioning job put it there; if it reappears, track that job down.", True),
        ("This looks like cloud-init output, which may re-apply it on the next run.", True),
        (
            "I can't tell whether the platform team deploys this nsg from terraform. If they do, the next pipeline run "
            "puts the rule straight back.",
            True,
        ),
    ],
)
def test_what_to_do_should_the_object_come_back_suspects_no_owner_now(text: str, suspected: bool) -> None:
    """A plan for a later observation ("if it comes back, look for cron") raises no process; a process said to
    re-apply it does."""
    assert (suspected_owner(text) is not None) is suspected


@pytest.mark.parametrize(
    ("text", "owner"),
    [
        ("It is applied by the **ghost-shaper** service. The daemon re-applies the qdisc on eth0 every 300 s.", "ghost-shaper"),
        ("harden-net runs here. The chain INPUT is restored by the service every 600 s.", "a service"),
        ("The daemon re-applies the qdisc on eth0 every 300 s.", "a daemon"),
    ],
)
def test_the_daemon_is_the_process_named_before_it(text: str, owner: str) -> None:
    """ "The daemon re-applies …" names no process: it is the last one named before it, or an unnamed daemon."""
    (owned,) = findings_ownership(text)
    assert owned.owner == owner


def test_an_unnamed_owner_in_the_findings_yields_to_the_same_objects_named_owner() -> None:
    """The report's "something re-applies it every 300 s" and the case's ghost-shaper are one owner with its name."""
    findings = "A process re-applies the qdisc on eth0 every 300 s."
    ownership = build_ownership(CASE_G_OWNED.facts("azure_demo"), None, findings)
    owned = ownership.owner_of("tc_qdisc", "eth0")
    assert owned is not None and owned.owner == "ghost-shaper"
