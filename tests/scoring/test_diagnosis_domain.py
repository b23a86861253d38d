"""Diagnoses read by what their words mean in the domain: NSG evaluation order (priorities and the subnet/NIC levels),
a rule's source prefix and a netem's loss as values, and the relations a case's key facts state (two independent
faults, traffic that reaches a chain's policy, captures that agree, a list said in full)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.cases.case import Case, load_case
from ghost_eval.scoring.diagnosis import check_diagnosis

_CASES = Path(__file__).resolve().parents[2] / "cases"


def _case(case_id: str) -> Case:
    return load_case(_CASES / f"{case_id}.yaml")


A_RIGHT = (
    "The inbound Deny rule ghost-demo-block-8080 (priority 150, TCP 8080) on tf-dest-vm-nsg drops the SYNs from "
    "tf-source-vm; the service on tf-dest-vm listens fine."
)
U_RIGHT = (
    "The new subnet NSG ghost-demo-subnet-nsg on the default subnet holds ghost-demo-block-pgsql: priority 200, deny "
    "TCP 5432 from 10.0.1.0/24. For inbound traffic the subnet NSG is evaluated before the NIC NSG, so the NIC NSG's "
    "allow is never reached. PostgreSQL on tf-dest-vm is listening."
)
G_RIGHT = "tc on tf-source-vm eth0: a netem qdisc with loss 20% under a prio root, SSH exempt; the drops collapse TCP."


@pytest.mark.parametrize(
    "claim",
    [
        "Azure evaluates the rules starting from the highest priority number, so the deny is applied last.",
        "A deny overrides an allow regardless of priority.",
        "AllowVnetInBound at 65000 is matched first for traffic from the VNet.",
        "Since 65000 is the higher priority, the VNet allow should win.",
    ],
)
def test_an_nsg_order_with_the_default_rules_first_is_wrong(claim: str) -> None:
    """Every default rule (65000 and up) comes after every custom rule, and nothing but the number orders them."""
    result = check_diagnosis(_case("a"), f"{A_RIGHT} {claim}", None)
    assert result.correct is False and result.forbidden == ["nsg_priority_order"]


def test_a_custom_rule_winning_over_a_default_rule_named_before_it_is_right() -> None:
    text = f"{A_RIGHT} 150 is a lower number than AllowVnetInBound 65000, so it wins and the SYNs vanish."
    assert check_diagnosis(_case("a"), text, None).correct is True


@pytest.mark.parametrize(
    "claim",
    [
        "Inbound, Azure checks the NIC NSG first and then the subnet NSG, so the subnet deny drops it afterwards.",
        "Gate 1 (NIC NSG of tf-dest-vm) admits the flow; gate 2 is the subnet NSG.",
        "Inbound traffic is checked at the NIC NSG first, and there it falls through to AllowVnetInBound.",
    ],
)
def test_an_nic_nsg_evaluated_first_for_inbound_is_wrong(claim: str) -> None:
    assert check_diagnosis(_case("u"), U_RIGHT, None).correct is True
    result = check_diagnosis(_case("u"), f"{U_RIGHT} {claim}", None)
    assert result.correct is False and "nsg_level_order" in result.forbidden


def test_the_nic_nsg_first_for_outbound_traffic_is_no_contradiction() -> None:
    text = f"{U_RIGHT} For outbound traffic Azure consults the NIC NSG first."
    assert check_diagnosis(_case("u"), text, None).correct is True


@pytest.mark.parametrize(
    ("source", "correct"),
    [("from any source (*)", False), ("from 10.0.1.4/32 only", False), ("src 10.0.1.0/24", True), ("from 10.0.1.4", True)],
)
def test_a_rule_source_prefix_other_than_the_rules_contradicts_it(source: str, correct: bool) -> None:
    """A prefix or a service tag after the rule is its source; an address without a mask is the traffic's."""
    text = U_RIGHT.replace("deny TCP 5432 from 10.0.1.0/24", f"deny TCP 5432 {source}")
    result = check_diagnosis(_case("u"), text, None)
    assert result.correct is correct
    assert ("deny_rule" in [f.id for f in result.facts if f.status == "contradicted"]) is not correct


@pytest.mark.parametrize(
    "claim",
    [
        "The netem on tf-source-vm drops half of the outgoing packets.",
        "tc shows a netem qdisc configured for 50% packet loss on eth0.",
        "The netem under the prio root of tf-source-vm's eth0 drops packets, loss 50%.",
        "tf-source-vm eth0 has tc netem with **50% packet loss** (prio root, ssh exempt on band 1).",
    ],
)
def test_a_loss_said_in_words_or_as_the_setting_is_a_value(claim: str) -> None:
    assert check_diagnosis(_case("g"), G_RIGHT, None).correct is True
    result = check_diagnosis(_case("g"), f"{G_RIGHT} {claim}", None)
    assert "qdisc_loss" in [f.id for f in result.facts if f.status == "contradicted"]


L_BOTH = (
    "On tf-dest-vm-nsg, ghost-demo-l-block-iperf (priority 200) denies inbound TCP 5001, which breaks iperf. On "
    "tf-dest-vm, a prio root with netem adds 80 ms delay and 8% loss to non-SSH egress. tf-source-vm is clean."
)


@pytest.mark.parametrize(
    "relation",
    [
        "The netem is hidden behind the NSG block until the rule goes.",
        "The netem will show the moment the rule is deleted.",
        "The delay stays masked behind the NSG block for now.",
    ],
)
def test_a_fault_masked_by_the_other_until_its_fix_is_a_second_independent_fault(relation: str) -> None:
    assert check_diagnosis(_case("l"), L_BOTH, None).missing == ["independent"]
    assert check_diagnosis(_case("l"), f"{L_BOTH} {relation}", None).correct is True


D_RULES = (
    "tf-dest-vm-nsg: ghost-demo-block-postgres, priority 110, denies inbound TCP 5432; ghost-demo-block-redis, "
    "priority 150, denies inbound TCP 6379. The listeners are up."
)


@pytest.mark.parametrize("relation", ["Two misconfigs, not one failure.", "Not one outage: 2 rules."])
def test_a_single_cause_denied_states_two_faults(relation: str) -> None:
    assert "independent" in check_diagnosis(_case("d"), D_RULES, None).missing
    assert check_diagnosis(_case("d"), f"{D_RULES} {relation}", None).correct is True


N_POLICY = (
    "On tf-dest-vm the INPUT policy went from ACCEPT to DROP against the baseline; the only rules added accept the "
    "Wire Server, established traffic and TCP 22. The NSG is unchanged."
)


def test_traffic_that_reaches_the_policy_is_the_traffic_no_rule_matched() -> None:
    assert "unmatched_dropped" in check_diagnosis(_case("n"), N_POLICY, None).missing
    text = f"{N_POLICY} So a new inbound connection to any other port hits the DROP policy and is dropped silently."
    assert "unmatched_dropped" not in check_diagnosis(_case("n"), text, None).missing


@pytest.mark.parametrize(
    ("case_id", "fact", "without", "with_"),
    [
        ("c", "captures_match", "7070 traffic seen.", "Both pcaps line up on 7070, no retransmissions."),
        ("c", "captures_match", "7070 traffic seen.", "7070 packets line up 1:1 between tf-source-vm and tf-dest-vm."),
        (
            "c",
            "captures_match",
            "7070 traffic seen.",
            "Every SYN that left tf-source-vm shows up at tf-dest-vm with the same sequence numbers, and neither side "
            "retransmits.",
        ),
        ("n", "policy_accept_to_drop", "The hardening ran.", "The drift vs the baseline is tiny: `INPUT: ACCEPT -> DROP`."),
        (
            "n",
            "unmatched_dropped",
            "INPUT policy ACCEPT -> DROP.",
            "INPUT policy ACCEPT -> DROP, so everything inbound except those three classes is silently dropped.",
        ),
        ("p", "rollback_incomplete", "CR-2026-0401 was rolled back.", "Two changes from CR-2026-0401 were never rolled back."),
        ("q", "independent", "Fault 1: the NSG deny. Fault 2: the netem.", "Fault 1: the NSG deny. Relationship: none."),
        ("f_sql", "no_endpoint", "The subnet default was read.", "Endpoints on default = [Microsoft.Sql] only."),
        ("f_sql", "no_endpoint", "The subnet default was read.", "The Sql endpoint is there; the Storage one isn't."),
        ("f_sql", "sql_kept", "Add Microsoft.Storage.", "Add Microsoft.Storage, and don't drop sql."),
        ("r", "predates", "tf-dest-vm's INPUT drops 9090.", "tf-dest-vm's INPUT drops 9090, an older separate problem."),
        ("s", "precedence", "blackhole-dest-vm 10.0.1.5/32 next hop None.", "user /32 > VnetLocal for 10.0.1.5."),
        ("u", "evaluated_first", "Two NSGs.", "Inbound the subnet nsg comes first, so the NIC nsg allow never matters."),
        ("v", "dest_inbound", "ghost-demo-temp-rdp-access allows 3389.", "nsg on tf-dest-vm: rdp allowed from *."),
        ("v", "dest_inbound", "ghost-demo-temp-rdp-access allows 3389.", "It allows 3389 ahead of DenyAllInBound."),
    ],
)
def test_a_key_fact_said_by_its_meaning_is_found(case_id: str, fact: str, without: str, with_: str) -> None:
    assert fact in check_diagnosis(_case(case_id), without, None).missing
    assert fact not in check_diagnosis(_case(case_id), with_, None).missing


@pytest.mark.parametrize("hedge", ["It could be the window, could be older.", "9090: window-related or older."])
def test_an_age_only_weighed_does_not_date_the_rule(hedge: str) -> None:
    assert "predates" in check_diagnosis(_case("r"), hedge, None).missing


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        ("a", "The deny for tcp/8080 sits on tf-source-vm's nic: ghost-demo-block-8080, prio 150, so SYNs never leave."),
        (
            "j",
            "The block is on the sending side: tf-source-vm has an iptables OUTPUT rule dropping TCP to port 5001. "
            "tf-dest-vm adds 30 ms of netem delay.",
        ),
    ],
)
def test_a_fault_put_on_the_other_vm_is_a_wrong_diagnosis(case_id: str, text: str) -> None:
    assert not check_diagnosis(_case(case_id), text, None).correct


def test_a_next_hop_address_given_to_a_route_of_next_hop_type_none_contradicts_it() -> None:
    """blackhole-dest-vm has next hop type None, which has no address: an appliance address for it is another route."""
    right = "Route blackhole-dest-vm in ghost-demo-s-rt sends 10.0.1.5/32 to next hop type None, so Azure drops it."
    wrong = "Route blackhole-dest-vm sends 10.0.1.5/32 to a virtual appliance at 10.0.1.253, which does not exist."
    assert "none_route" not in [f.id for f in check_diagnosis(_case("s"), right, None).facts if f.status == "contradicted"]
    assert "none_route" in [f.id for f in check_diagnosis(_case("s"), wrong, None).facts if f.status == "contradicted"]


@pytest.mark.parametrize(
    ("text", "contradicted"),
    [
        ("blackhole-dest-vm: 10.0.1.5/32 → VirtualAppliance, but nothing answers at the appliance, so Azure drops it.", True),
        ("Route blackhole-dest-vm points 10.0.1.5/32 at next hop type Internet.", True),
        ("Route blackhole-dest-vm sends 10.0.1.5/32 to next hop type None; no virtual appliance is involved.", False),
    ],
)
def test_a_next_hop_type_given_to_a_route_of_next_hop_type_none_contradicts_it(text: str, contradicted: bool) -> None:
    """A route whose next hop is None has no appliance, internet or gateway to send to: naming one of those types as
    its next hop, with or without an address, is another route."""
    facts = check_diagnosis(_case("s"), text, None).facts
    assert ("none_route" in [f.id for f in facts if f.status == "contradicted"]) is contradicted


def test_a_next_hop_type_with_its_address_is_read_by_the_address() -> None:
    """For a route whose next hop is an address (t's phantom NVA at 10.0.1.253), "→ VirtualAppliance 10.0.0.253" is
    read by its address, which contradicts it; the type alone is no other value."""
    wrong = "all-egress-to-nva sends 0.0.0.0/0 → VirtualAppliance 10.0.0.253, where no appliance exists."
    right = wrong.replace("10.0.0.253", "10.0.1.253")
    assert "egress_route" in [
        f.id for f in check_diagnosis(_case("t"), wrong, None, "routing").facts if f.status == "contradicted"
    ]
    assert not [f for f in check_diagnosis(_case("t"), right, None, "routing").facts if f.status == "contradicted"]


def test_a_qdisc_put_on_the_other_vms_network_interface_is_placed_there() -> None:
    """ "tf-dest-vm's network interface" is tf-dest-vm's NIC, as "tf-dest-vm's nic" is."""
    text = "Root cause 2: tf-dest-vm's network interface has a prio qdisc with a 50 ms netem band; replies are held."
    assert "shaping_placement" in check_diagnosis(_case("q"), text, None).forbidden


@pytest.mark.parametrize(
    "claim",
    [
        "The netem sits on the ingress side of tf-source-vm's eth0, so the replies are the packets that get dropped.",
        "Someone redirected eth0 to an ifb device whose qdisc drops 20% of what comes back.",
    ],
)
def test_shaping_put_on_the_receive_side_of_a_root_qdisc_case_is_wrong(claim: str) -> None:
    """Every qdisc the original injects is the interface's root, which holds only what the VM sends."""
    result = check_diagnosis(_case("g"), f"{G_RIGHT} {claim}", None)
    assert result.correct is False and result.forbidden == ["shaping_direction"]


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        ("g", f"{G_RIGHT} There is no ingress qdisc on either VM."),
        ("g", f"{G_RIGHT} It shapes egress, not ingress."),
        ("a", f"{A_RIGHT} The deny is applied to ingress traffic at tf-dest-vm's NIC."),
    ],
)
def test_ingress_denied_or_outside_shaping_is_no_claim(case_id: str, text: str) -> None:
    """A denied ingress qdisc agrees with the case; in a case with no shaping, "ingress" is a rule's direction."""
    assert check_diagnosis(_case(case_id), text, None).correct is True


D_RIGHT = (
    "tf-dest-vm-nsg holds two independent inbound Deny rules: ghost-demo-block-postgres (priority 110) for TCP 5432 and "
    "ghost-demo-block-redis (priority 150) for TCP 6379."
)


@pytest.mark.parametrize(
    "claim",
    [
        "They are two OUTBOUND deny rules, ghost-demo-block-postgres and ghost-demo-block-redis, so replies never leave.",
        "ghost-demo-block-redis (150) is an outbound deny on tf-dest-vm-nsg.",
        "The redis rule at 150 is the higher priority so Azure hits it first, then the postgres one at 110.",
        "The window added ghost-demo-block-redis to tf-dest-vm-nsg as an Outbound Deny for TCP 6379.",
        "The window added ghost-demo-block-redis to tf-dest-vm-nsg at priority 150 as an Outbound deny for TCP 6379.",
        "Azure evaluates the larger priority number first, so the redis rule decides before the postgres one.",
        "ghost-demo-block-redis prio 150 deny inbound 6380.",
    ],
)
def test_a_rule_given_another_direction_or_the_higher_number_first_is_wrong(claim: str) -> None:
    """Both of d's rules are Inbound (setup.sh `--direction Inbound`), and 110 is evaluated before 150."""
    assert check_diagnosis(_case("d"), D_RIGHT, None).correct is True
    assert check_diagnosis(_case("d"), f"{D_RIGHT} {claim}", None).correct is False


def test_a_port_given_before_the_rule_it_goes_through_is_the_rules_port() -> None:
    """v's rule opens TCP 3389; "TCP 22 … via ghost-demo-temp-rdp-access" gives it another port. A port said of another
    rule across a comma is not this rule's."""
    right = "ghost-demo-temp-rdp-access on tf-dest-vm-nsg allows TCP 3389 from any source at priority 500."
    wrong = "tf-dest-vm-nsg allows SSH (TCP 22) from any source at priority 500 via ghost-demo-temp-rdp-access."
    assert check_diagnosis(_case("v"), right, None).correct is True
    assert check_diagnosis(_case("v"), wrong, None).correct is False
    apart = "IP flow verify per port: 5432 denied by ghost-demo-block-postgres, 6379 denied by ghost-demo-block-redis."
    assert check_diagnosis(_case("d"), f"{D_RIGHT} {apart}", None).correct is True


@pytest.mark.parametrize(
    "claim",
    [
        "Azure evaluates the default AllowVnetInBound rule (65000) first because it is the higher number and therefore "
        "the higher priority.",
        "NSG eval is highest number wins, so DenyAllInBound at 65500 takes it.",
        "ghost-demo-block-8080 is an Inbound Deny for UDP port 8080 at priority 150.",
        "It is not possible to say from here which of the two is responsible.",
        "two possibilities and I can't fully separate them from here.",
        "Several explanations remain open; further tests are needed before a root cause can be assigned.",
    ],
)
def test_a_default_rule_first_another_protocol_or_no_decision_is_wrong(claim: str) -> None:
    """Every NSG rule the original injects is Tcp (setup.sh `--protocol Tcp`), the lowest number goes first, and a
    report that cannot tell its candidates apart names no cause."""
    assert check_diagnosis(_case("a"), f"{A_RIGHT} {claim}", None).correct is False


def test_a_higher_number_put_ahead_of_a_lower_one_is_wrong() -> None:
    claim = "ghost-demo-block-redis is priority 150 which puts it ahead of ghost-demo-block-postgres at 110."
    assert check_diagnosis(_case("d"), f"{D_RIGHT} {claim}", None).correct is False
    right = "ghost-demo-block-postgres at 110 comes before ghost-demo-block-redis at 150."
    assert check_diagnosis(_case("d"), f"{D_RIGHT} {right}", None).correct is True


S_RIGHT = (
    "Route table ghost-demo-s-rt, associated with the default subnet, has route blackhole-dest-vm: 10.0.1.5/32, next "
    "hop None. The /32 User route beats VnetLocal, so tf-source-vm's packets to tf-dest-vm are silently discarded."
)


def test_a_route_table_put_on_a_nic_is_wrong() -> None:
    """Azure associates route tables with subnets only; a /32 for tf-dest-vm named beside tf-source-vm is no route
    for the source."""
    assert check_diagnosis(_case("s"), S_RIGHT, None).correct is True
    on_nic = "The table was attached this morning directly to tf-source-vm's network interface."
    assert check_diagnosis(_case("s"), f"{S_RIGHT} {on_nic}", None).correct is False


def test_a_denial_across_a_possessive_still_denies() -> None:
    text = f"{S_RIGHT} The NSGs were a dead end: neither VM's NSG has a rule that denies this traffic."
    assert check_diagnosis(_case("s"), text, None).correct is True


@pytest.mark.parametrize(
    "paragraph",
    [
        "Subnet forensics-vnet/default has service endpoints [Microsoft.Sql] only; Microsoft.Storage is missing.",
        "forensics-vnet/default has exactly one endpoint, Microsoft.Sql, and Microsoft.Storage isnt there at all.",
    ],
)
def test_f_sql_a_list_said_to_hold_only_sql_keeps_sql(paragraph: str) -> None:
    """f_sql's cause is the list as it stands: Microsoft.Sql only, no Storage. Said so, the Sql endpoint is the list's
    own; blaming it for the outage is the wrong claim."""
    assert check_diagnosis(_case("f_sql"), paragraph, None).correct is True
    blamed = "The Microsoft.Sql service endpoint on forensics-vnet/default is diverting the storage traffic. " + paragraph
    assert check_diagnosis(_case("f_sql"), blamed, None).correct is False


@pytest.mark.parametrize(
    ("paragraph", "correct"),
    [
        ("serviceEndpoints on default: Microsoft.Sql + Microsoft.Storage both there, both Succeeded.", False),
        ("endpoint list on forensics-vnet/default = Microsoft.Storage only; the storage endpoint is present.", False),
        ("Subnet forensics-vnet/default has service endpoints [Microsoft.Sql] only; Microsoft.Storage is not there.", True),
        ("subnet side is fine, forensics-vnet/default carries Microsoft.Storage next to Microsoft.Sql.", False),
        ("forensics-vnet/default holds only Microsoft.Sql; Microsoft.Storage is missing.", True),
        ("forensics-vnet/default no longer carries Microsoft.Storage; it holds only Microsoft.Sql.", True),
    ],
)
def test_f_sql_a_list_read_as_holding_storage_contradicts_the_fault(paragraph: str, correct: bool) -> None:
    """f_sql's subnet lacks Microsoft.Storage: a report that reads the list as holding it clears the resource at fault."""
    result = check_diagnosis(_case("f_sql"), paragraph, None)
    assert result.correct is correct
    assert ("storage_endpoint_present" in result.forbidden) is not correct


def test_h_the_destination_said_to_delay_its_replies_is_the_wrong_host() -> None:
    """h's netem is on tf-source-vm's egress; a paragraph where tf-dest-vm delays what it sends puts it on the wrong VM."""
    right = "tf-source-vm's eth0 carries a prio root with a netem qdisc adding 100 ms of delay and 10% loss to what it sends."
    wrong = (
        "tf-dest-vm delays everything it sends: its eth0 has a prio root with a netem qdisc (delay 100ms, loss 10%). The "
        "replies going back to tf-source-vm are delayed and sometimes lost."
    )
    assert check_diagnosis(_case("h"), right, None).correct is True
    assert check_diagnosis(_case("h"), wrong, None).correct is False
    sender = " tf-source-vm delays everything it sends to tf-dest-vm; tf-dest-vm answers at once."
    assert check_diagnosis(_case("h"), right + sender, None).correct is True


M_RIGHT = (
    "fail2ban's sshd jail banned 203.0.113.47: f2b-sshd on tf-dest-vm holds a REJECT for 203.0.113.47/32, and INPUT "
    "rule 1 jumps there for all traffic, so the partner is refused."
)
J_RIGHT = (
    "tf-dest-vm's INPUT rule 1 drops tcp/5001 (-j DROP), so iperf connections hang; separately tf-source-vm's "
    "default-route interface has a prio qdisc with a 30 ms netem delay under band 1:3."
)


@pytest.mark.parametrize(
    ("case_id", "right", "claim", "wrong"),
    [
        ("j", J_RIGHT, "The rule is a REJECT that answers every SYN with a TCP reset.", True),
        ("j", J_RIGHT, "It is not a REJECT: nothing answers, the SYNs just vanish.", False),
        ("j", J_RIGHT, "It isn't a REJECT, nothing answers.", False),
        ("j", J_RIGHT, "The rule doesn't reject-with anything.", False),
        ("m", M_RIGHT, "The ban is a DROP rule, so packets from the partner are silently discarded.", True),
        ("m", M_RIGHT, "Rather than a DROP, fail2ban answers with port-unreachable.", False),
        ("m", M_RIGHT, "That chain just drops everything from\n203.0.113.47/32, silently, nothing goes back.", True),
    ],
)
def test_the_firewall_rule_given_the_other_target_is_wrong(case_id: str, right: str, claim: str, wrong: bool) -> None:
    """A DROP answers nothing and a REJECT answers every packet it matches: the target the case's rule has is a fact a
    claim can contradict, and denying the other target says nothing against it."""
    result = check_diagnosis(_case(case_id), f"{right} {claim}", None)
    assert ("firewall_target" in result.forbidden) is wrong
    assert check_diagnosis(_case(case_id), right, None).correct is True


@pytest.mark.parametrize(
    ("said", "contradicted"),
    [
        ("ghost-demo-l-block-iperf prio 200 is an OUTBOUND deny tcp 5001", True),
        ("ghost-demo-l-block-iperf prio 200 is an inbound deny tcp 5001", False),
    ],
)
def test_a_rules_direction_after_its_priority_is_a_value(said: str, contradicted: bool) -> None:
    """The direction said after the rule's priority is the rule's, as it is right after its name."""
    text = f"{said} on tf-dest-vm-nsg. Separately a netem on tf-dest-vm's eth0 adds 80 ms delay and 8% loss."
    facts = check_diagnosis(_case("l"), text, None).facts
    assert any(f.status == "contradicted" for f in facts) is contradicted


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        (
            "q",
            "NSG rule ghost-demo-subnet-block-5432 (prio 100, deny inbound tcp 5432) on tf-dest-vm-nsg breaks the db. "
            "The latency is on tf-dest-vm side: its default-route iface has a prio qdisc + netem delay 50ms.",
        ),
        (
            "j_hardened",
            "tf-dest-vm's INPUT drops tcp 5001 from rules.v4, which harden-net re-applies. The hardening also left shaping "
            "on tf-dest-vm's eth0 (htb root, 2 Mbit/s default class, tbf with 30 ms latency).",
        ),
    ],
)
def test_a_default_route_or_default_class_does_not_call_a_shaped_vm_clean(case_id: str, text: str) -> None:
    """ "default-route iface" and htb's "default class" are parts of the shaping the sentence puts on the wrong VM."""
    assert "shaping_placement" in check_diagnosis(_case(case_id), text, None).forbidden


def test_dockers_chains_put_on_the_other_vm_are_placed_there() -> None:
    text = (
        "The drift is on tf-source-vm: the Docker restart wrote DOCKER, DOCKER-USER and DOCKER-ISOLATION-STAGE-1/2 "
        "there, and STAGE-2's DROP discards the forwarded traffic."
    )
    assert "firewall_placement" in check_diagnosis(_case("o"), text, None).forbidden


L_FAULTS = (
    "tf-dest-vm-nsg carries ghost-demo-l-block-iperf: priority 200, Inbound, Deny TCP 5001, which drops every iperf "
    "connection. tf-dest-vm's default-route interface has a prio root whose band 1:3 feeds netem delay 80ms loss 8%."
)


@pytest.mark.parametrize(
    "relation",
    [
        "The netem would still be there after the rule is deleted.",
        "The two are independant.",
        "",
    ],
)
def test_two_faults_said_independent_in_quick_notes(relation: str) -> None:
    """A misspelt "independant", a fault that "would still be there after" the other's fix: each says the second fault
    stands on its own ("masked while the NSG blocks" alone does not: it may go away with the rule)."""
    facts = {f.id: f.status for f in check_diagnosis(_case("l"), f"{L_FAULTS} {relation}", None).facts}
    assert (facts["independent"] == "found") is bool(relation)


@pytest.mark.parametrize(
    "agree",
    [
        "pcaps side by side: tcp 7070 = same count both ends, 0 retrans, nothing rewritten.",
        "TCP 7070: same packet count on tf-source-vm and tf-dest-vm, zero retransmissions.",
        "7070 tcp: src==dst (frames+bytes), retrans 0/0.",
    ],
)
def test_c_captures_said_to_agree_with_zero_for_no(agree: str) -> None:
    """Zero retransmissions is no retransmission, a count on tf-source-vm and tf-dest-vm is one at both ends."""
    app = "The slow part is the single-threaded python server on tf-dest-vm:7070: /slow sleeps and the fast GETs queue."
    facts = {f.id: f.status for f in check_diagnosis(_case("c"), f"{agree} {app}", None).facts}
    assert facts["captures_match"] == "found"


@pytest.mark.parametrize(
    ("sentence", "wrong"),
    [
        (
            "Azure evaluates rules from the highest priority number downwards, so the allow at 65000 would normally admit it.",
            True,
        ),
        ("If Azure evaluated rules from the highest priority number downwards, the allow at 65000 would admit it.", False),
    ],
)
def test_a_hedge_after_the_clause_that_states_the_order_does_not_weigh_it(sentence: str, wrong: bool) -> None:
    """ "would" in the clause after the inverted order weighs what follows, not the order already stated; an "if" before
    it makes the order a supposition."""
    assert ("nsg_priority_order" in check_diagnosis(_case("a"), f"{A_RIGHT} {sentence}", None).forbidden) is wrong


def test_a_vm_with_its_address_in_brackets_is_still_the_subject_that_has_the_qdisc() -> None:
    text = "tf-dest-vm (10.0.1.5) has a tbf qdisc at the root of eth0 (rate 8mbit, burst 8kb), pushed by ghost-shaper."
    assert "shaping_placement" in check_diagnosis(_case("g_daemon"), text, None).forbidden


@pytest.mark.parametrize("answer", ["**Is the rollback complete?** No.", 'rollback "complete" ... no'])
def test_p_the_rollback_question_answered_no_says_it_left_changes_behind(answer: str) -> None:
    text = (
        f"{answer}\nNSG rule ghost-demo-rollback-block-8080 on tf-dest-vm-nsg (priority 150, inbound deny TCP 8080) is new "
        "against baseline eni_pre_window_P and blocks 10.0.1.4. Separately, tf-dest-vm's INPUT drops tcp/5001: its own problem."
    )
    facts = {f.id: f.status for f in check_diagnosis(_case("p"), text, None).facts}
    assert facts["rollback_incomplete"] == "found"


O_RIGHT = (
    "Against the baseline, tf-dest-vm has Docker's new chains (DOCKER, DOCKER-USER, DOCKER-ISOLATION-STAGE-1/2), "
    "written by the Docker restart; forwarded inter-service traffic goes from FORWARD into DOCKER-ISOLATION-STAGE-2, "
    "whose DROP discards it."
)


@pytest.mark.parametrize(
    ("claim", "correct"),
    [
        ("DOCKER-USER ends in an unconditional DROP, so forwarded packets die before the isolation chains.", False),
        ("The DROP is in DOCKER-USER, the first chain FORWARD jumps to.", False),
        ("The chain doing the damage is DOCKER-USER.", False),
        ("The drop is in DOCKER-ISOLATION-STAGE-1 (its first rule).", False),
        ("FORWARD -> DOCKER-USER -> ISOLATION-STAGE-1 -> STAGE-2 = DROP.", True),
        ("DOCKER-USER (just RETURN) is passed, then STAGE-2 drops.", True),
        ("The DROP is not in DOCKER-USER, which only returns.", True),
    ],
)
def test_a_drop_put_in_a_chain_that_holds_none_is_wrong(claim: str, correct: bool) -> None:
    """The case lists the targets each chain holds as setup.sh writes them: DOCKER-USER only RETURNs, STAGE-1 only
    jumps on; the DROP is STAGE-2's. A path that passes a chain on gives it nothing."""
    result = check_diagnosis(_case("o"), f"{O_RIGHT} {claim}", None)
    assert result.correct is correct
    assert ("drop_chain" in result.forbidden) is not correct


@pytest.mark.parametrize(
    "claim",
    [
        "Azure NSGs always apply Deny rules ahead of Allow rules regardless of their numbers.",
        "A deny always wins, so AllowVnetInBound never gets a say.",
        "Azure processes rules in ascending order and the last match wins, so the deny overrides the allows before it.",
    ],
)
def test_a_deny_said_to_win_whatever_its_number_is_wrong(claim: str) -> None:
    """Only the priority number orders NSG rules; a deny wins only by coming first."""
    assert check_diagnosis(_case("a"), f"{A_RIGHT} {claim}", None).forbidden == ["nsg_priority_order"]


@pytest.mark.parametrize(
    ("case_id", "right", "claim"),
    [
        ("m", None, "it has `-s 203.0.113.47/32 -j DROP` so the partner's SYNs just vanish."),
        ("g", G_RIGHT, "The behaviour points to the Azure fabric rather than the guests."),
        ("g", G_RIGHT, "The netem could account for it; equally, an MTU mismatch could produce similar numbers."),
        ("g", G_RIGHT, "There are a few plausible explanations and I can't yet rank them."),
    ],
)
def test_another_target_the_fabric_or_no_decision_is_a_wrong_diagnosis(case_id: str, right: str | None, claim: str) -> None:
    """A REJECT's ban given `-j DROP`, a cause put in the platform under the VMs, candidates left side by side."""
    text = f"{right} {claim}" if right else f"f2b-sshd on tf-dest-vm holds the partner's ban; {claim}"
    assert check_diagnosis(_case(case_id), text, None).correct is False
    if right:
        assert check_diagnosis(_case(case_id), right, None).correct is True


def test_the_fabric_named_to_rule_it_out_or_as_a_team_is_no_claim() -> None:
    for claim in ["This does not point to the Azure fabric.", "The change comes from the platform team's pipeline."]:
        assert check_diagnosis(_case("g"), f"{G_RIGHT} {claim}", None).correct is True


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        ("g", "Root cause: netem on tf-source-vm's eth0 (child of a prio root, SSH exempt) dropping 50% of outbound packets."),
        ("q", "ghost-demo-subnet-block-5432, prio 100 inbound Deny Tcp, but its port is 5433, so it does not cover postgres."),
        ("u", "ghost-demo-block-pgsql prio 200 deny tcp 5432 — and it's an outbound rule, so the SYNs die leaving the source."),
        ("l", "The window added an outbound deny tcp 5001 (ghost-demo-l-block-iperf, priority 200) on the source's nsg."),
    ],
)
def test_a_value_said_a_clause_away_from_its_resource_contradicts_the_fact(case_id: str, text: str) -> None:
    """A loss, a port or a direction given to the fault's own resource, later in the clause or just before its name."""
    assert [f.id for f in check_diagnosis(_case(case_id), text, None).facts if f.status == "contradicted"]


def test_a_next_hop_a_long_clause_after_its_route_is_the_routes() -> None:
    text = (
        "The winner is the User route all-egress-to-nva from route table ghost-demo-t-rt, which is associated with the "
        "default subnet: 0.0.0.0/0 with next hop type VirtualAppliance and next hop 10.0.0.253."
    )
    facts = check_diagnosis(_case("t"), text, None, "routing").facts
    assert "egress_route" in [f.id for f in facts if f.status == "contradicted"]


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        ("g", "throughput issue = tc on tf-dest-vm. its eth0 has a prio root with netem loss 20% under band 3."),
        ("q", "The deny comes from a subnet-level NSG that is evaluated first: rule ghost-demo-subnet-block-5432, priority 100."),
        ("s", "ghost-demo-s-rt, which networking associated with tf-source-vm's NIC, has blackhole-dest-vm 10.0.1.5/32."),
        ("q", "**tf-dest-vm** has prio/netem on its default-route iface, +50ms on every non-ssh packet it sends."),
        ("q", "The drift shows a priority-100 deny, ghost-demo-subnet-block-5432, added at the subnet level."),
    ],
)
def test_a_fault_or_its_table_put_where_it_is_not_is_a_wrong_diagnosis(case_id: str, text: str) -> None:
    assert check_diagnosis(_case(case_id), text, None).forbidden


def test_a_claim_put_as_a_question_and_answered_no_is_denied() -> None:
    text = "tbf 5mbit on tf-source-vm; tf-dest-vm INPUT rule 1 drops icmp. do they share a cause: no."
    assert "single_cause" not in check_diagnosis(_case("k"), text, None).forbidden
    assert "single_cause" in check_diagnosis(_case("k"), "tbf 5mbit on tf-source-vm. They share a cause.", None).forbidden


@pytest.mark.parametrize("next_rule", ["a second deny", "a separate inbound Deny"])
def test_a_port_said_after_a_second_deny_is_that_rules(next_rule: str) -> None:
    text = (
        f"tf-dest-vm-nsg has a deny for TCP 5432 at priority 110 called ghost-demo-block-postgres and {next_rule} for "
        "TCP 6379 at 150 called ghost-demo-block-redis."
    )
    facts = check_diagnosis(_case("d"), text, None).facts
    assert "postgres_rule" not in [f.id for f in facts if f.status == "contradicted"]


def test_a_gate_named_beside_the_nic_nsg_is_no_order() -> None:
    text = f"{U_RIGHT} The deny ends it at gate 1, nic nsg tf-dest-vm-nsg never evaluated."
    assert check_diagnosis(_case("u"), text, None).correct is True
    assert not check_diagnosis(_case("u"), f"{U_RIGHT} Gate 1 (NIC NSG tf-dest-vm-nsg) allows it.", None).correct


def test_an_iptables_save_policy_line_states_the_policy() -> None:
    text = "The diff of iptables-save on tf-dest-vm against the baseline shows `:INPUT ACCEPT` -> `:INPUT DROP`."
    facts = check_diagnosis(_case("n"), text, None).facts
    assert "policy_accept_to_drop" in [f.id for f in facts if f.status == "found"]


@pytest.mark.parametrize(
    ("case_id", "claim"),
    [
        ("m", "dont be fooled by the name, no jail state behind it, just delete the REJECT."),
        ("l", "There is also a netem qdisc on tf-dest-vm but I'm not sure that's a fault."),
        ("g", "Found a netem loss 20% on tf-source-vm but its on the *ingress* side of eth0."),
    ],
)
def test_an_owner_denied_a_fault_doubted_or_shaping_put_on_ingress_is_wrong(case_id: str, claim: str) -> None:
    text = {"m": "f2b-sshd on tf-dest-vm rejects 203.0.113.47, an active fail2ban ban.", "l": "", "g": G_RIGHT}[case_id]
    forbidden = check_diagnosis(_case(case_id), f"{text} {claim}", None).forbidden
    assert forbidden and (case_id != "m" or "owner_denied" in forbidden)


def test_an_owner_denied_only_in_a_negation_is_no_claim() -> None:
    text = "f2b-sshd on tf-dest-vm rejects 203.0.113.47, an active fail2ban ban. The chain isn't hand-made."
    assert "owner_denied" not in check_diagnosis(_case("m"), text, None).forbidden


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        ("Azure always lets a user-defined route override a system route regardless of prefix length.", True),
        ("The user route wins because it is the longest prefix; its type only matters between equal prefixes.", False),
    ],
)
def test_a_user_route_said_to_win_whatever_its_prefix_is_wrong(claim: str, wrong: bool) -> None:
    """Azure picks the longest prefix first; a route's type (user over system) decides only between equal prefixes."""
    result = check_diagnosis(_case("s"), f"{S_RIGHT} {claim}", None)
    assert ("route_type_over_prefix" in result.forbidden) is wrong


def test_a_cause_left_open_until_after_the_fix_is_undecided() -> None:
    """ "Would fix both and re-measure before deciding if it's one problem or two" has not decided how they relate."""
    faults = "found a tbf 5mbit on tf-source-vm eth0 and an icmp DROP at the top of tf-dest-vm's INPUT chain."
    undecided = f"{faults} they look separate, but I would fix both and re-measure before deciding if its one problem or two"
    assert "undecided" in check_diagnosis(_case("k"), undecided, None).forbidden
    decided = f"{faults} They are independent: the tbf caps throughput, the DROP only stops ping."
    assert check_diagnosis(_case("k"), decided, None).correct is True


@pytest.mark.parametrize(
    ("line", "claimed"),
    [
        ("NSG: nothing denies.", False),
        ("NIC nsg tf-dest-vm-nsg: no denies.", False),
        ("The NSG denies it.", True),
    ],
)
def test_a_claim_whose_verb_is_denied_inside_it_is_not_asserted(line: str, claimed: bool) -> None:
    """ "NSG: nothing denies" names the subject of the claim and denies what it is said to do."""
    result = check_diagnosis(_case("s"), f"{S_RIGHT} {line}", None)
    assert ("nsg_blocks" in result.forbidden) is claimed


def test_a_claim_denied_with_an_article_and_an_adjective_is_not_asserted() -> None:
    """ "an active ban, not a stray manual rule" denies the hand-made rule; "a stray manual rule" asserts it."""
    ban = "f2b-sshd on tf-dest-vm rejects 203.0.113.47/32 with icmp-port-unreachable; fail2ban's sshd jail banned it."
    denied = check_diagnosis(_case("m"), f"{ban} This is an active ban, not a stray manual rule.", None)
    assert "handmade_or_wrong_direction" not in denied.forbidden
    said = check_diagnosis(_case("m"), f"{ban} Really it is a stray manual rule someone left.", None)
    assert "handmade_or_wrong_direction" in said.forbidden


D_RIGHT = (
    "Two inbound Deny rules on tf-dest-vm-nsg: ghost-demo-block-postgres (priority 110, TCP 5432) and "
    "ghost-demo-block-redis (priority 150, TCP 6379). Two independent misconfigurations; the listeners are up."
)


@pytest.mark.parametrize(
    ("said", "correct"),
    [
        ("", True),
        ("ghost-demo-block-redis is 110 and ghost-demo-block-postgres is 150.", False),
        ("Note ghost-demo-block-redis (prio 110) came first.", False),
        ("ghost-demo-block-redis at 150 denies 6379.", True),
    ],
)
def test_an_nsg_rule_given_another_priority_contradicts_it(said: str, correct: bool) -> None:
    """The case states each rule's priority; a number after the rule's name that is not its own swaps or invents it."""
    result = check_diagnosis(_case("d"), f"{D_RIGHT} {said}", None)
    assert result.correct is correct
    assert correct or "nsg_rule_priority" in result.forbidden


R_RIGHT = (
    "tf-dest-vm's INPUT chain has `-p tcp --dport 9090 -j DROP` at the top, so inbound scrapes to 9090 are dropped in "
    "the guest; the NSG allows 9090 and the window changed nothing (drift false against eni_pre_window_R): the rule was "
    "there before the window."
)


@pytest.mark.parametrize(
    ("said", "correct"),
    [
        ("", True),
        ("The rule in OUTPUT dropping tcp 9090 stops the replies.", False),
        ("OUTPUT is ACCEPT, INPUT drops 9090.", True),
        ("the output of iptables -L shows 214 drops.", True),
        ("Nothing in OUTPUT drops anything.", True),
    ],
)
def test_a_drop_put_in_another_built_in_chain_contradicts_the_direction(said: str, correct: bool) -> None:
    """The case's rule sits in INPUT: a DROP put in OUTPUT (named in capitals, as iptables names it) is the other
    direction; "the output" in prose, or OUTPUT denied, is no such claim."""
    result = check_diagnosis(_case("r"), f"{R_RIGHT} {said}", None)
    assert result.correct is correct, result


@pytest.mark.parametrize(
    ("text", "contradicted"),
    [
        ("The User route is `all-egress-to-nva` in `ghost-demo-t-rt`. Its next hop is VirtualAppliance 10.0.0.253.", True),
        ("The User route is `all-egress-to-nva` in `ghost-demo-t-rt`. Its next hop is VirtualAppliance 10.0.1.253.", False),
        ("The NSG is clean. Its rules match the baseline, and the next hop is VirtualAppliance 10.0.0.253.", False),
    ],
)
def test_a_value_given_to_its_resource_by_its_in_the_next_sentence_is_the_resources(text: str, contradicted: bool) -> None:
    """ "Its" carries the resource the sentence before named; after a sentence that names none, it names nothing."""
    facts = check_diagnosis(_case("t"), text, None).facts
    assert ("egress_route" in [f.id for f in facts if f.status == "contradicted"]) is contradicted


@pytest.mark.parametrize(
    ("case_id", "claim"),
    [
        ("q", "Azure processes Deny rules before Allow rules whatever their priority, so it wins."),
        ("r", "The Prometheus failures come from tf-dest-vm's OUTPUT chain: a DROP on destination port 9090."),
        ("m", "INPUT jumps to f2b-sshd only for `-p tcp --dport 22`, and f2b-sshd REJECTs 203.0.113.47/32."),
        ("m", "So only SSH from the partner is refused; its other traffic to the VM passes normally."),
    ],
)
def test_an_order_chain_or_jump_the_setup_contradicts_is_wrong(case_id: str, claim: str) -> None:
    assert check_diagnosis(_case(case_id), claim, None).forbidden


@pytest.mark.parametrize(
    "paragraph",
    [
        "The captures match, but that does not settle the question: the server could be serialising requests, or its "
        "backlog could be overflowing. A longer capture would be needed to tell these apart.",
        "Several things could explain a total loss of egress: the route to 10.0.1.253, outbound SNAT, or DNS.",
        "The server may serialise requests, or its backlog may overflow. Any of these would explain the delay.",
    ],
)
def test_a_report_that_leaves_the_alternatives_open_is_undecided(paragraph: str) -> None:
    assert "undecided" in check_diagnosis(_case("c"), paragraph, None).forbidden
    # a mechanism that cannot tell two kinds of traffic apart says nothing of the report's own decision
    routing = "Routing is prefix-based and cannot tell the two apart, so the filter has to be in the guest."
    assert "undecided" not in check_diagnosis(_case("t"), routing, None).forbidden


def test_the_vnetlocal_system_route_said_to_win_over_the_user_route_inverts_route_selection() -> None:
    """Azure picks the longest prefix, then a user route over a system one: the /32 blackhole is the route in force."""
    said = "blackhole-dest-vm 10.0.1.5/32 -> None, but the VnetLocal system route takes precedence over anything user-defined."
    assert "route_precedence" in check_diagnosis(_case("s"), said, None).forbidden
    cannot = "blackhole-dest-vm 10.0.1.5/32 -> None exists, but the UDR can't override VnetLocal for in-VNet addresses."
    assert "route_precedence" in check_diagnosis(_case("s"), cannot, None).forbidden
    prefers = "The 10.0.1.5/32 route to None is dormant: inside the VNet Azure always prefers the system VnetLocal route."
    assert "route_precedence" in check_diagnosis(_case("s"), prefers, None).forbidden
    leaving = "blackhole-dest-vm 10.0.1.5/32 -> None exists, but user routes only take effect for traffic leaving the VNet."
    assert "route_precedence" in check_diagnosis(_case("s"), leaving, None).forbidden
    priority = "blackhole-dest-vm 10.0.1.5/32 -> None, but the VnetLocal route takes priority over user routes here."
    assert "route_precedence" in check_diagnosis(_case("s"), priority, None).forbidden


@pytest.mark.parametrize(
    ("case_id", "sentence", "invented"),
    [
        ("t", "The appliance at 10.0.1.253 is running, but IP forwarding is off on its NIC, so it eats the packets.", True),
        (
            "t",
            "ghost-demo-t-rt sends 0.0.0.0/0 to the NVA at 10.0.1.253, and that NVA VM is stopped, so its not forwarding.",
            True,
        ),
        ("e", "The /32 goes to the appliance at .100, whose own firewall policy drops the flow.", True),
        ("t", "0.0.0.0/0 goes to VirtualAppliance 10.0.1.253, but no VM or NIC holds 10.0.1.253: a phantom next hop.", False),
        ("e", "ghost-demo-nva-redirect sends 10.0.1.5/32 to the appliance at 10.0.1.100, which does not exist.", False),
    ],
)
def test_a_device_given_a_state_at_a_next_hop_nothing_holds_is_invented(case_id: str, sentence: str, invented: bool) -> None:
    """The route's next hop is an address nothing holds: an appliance there that runs, is stopped or has IP forwarding
    off is a device the case does not have; saying the address is empty invents nothing."""
    assert ("next_hop_device" in check_diagnosis(_case(case_id), sentence, None).forbidden) is invented


def test_a_packet_filter_named_without_a_place_puts_no_firewall_in_the_guest() -> None:
    """An NSG is a packet filter too: "the signature of a packet filter dropping the SYN" says how the drop looks, not
    that tf-dest-vm's own firewall makes it."""
    text = (
        "The connect timed out with no reset, the signature of a packet filter dropping the SYN. tf-dest-vm-nsg has "
        "ghost-demo-block-8080: inbound Deny TCP 8080, priority 150, evaluated before AllowVnetInBound at 65000."
    )
    assert "os_firewall" not in check_diagnosis(_case("a"), text, None).forbidden
    assert "os_firewall" in check_diagnosis(_case("a"), text.replace("a packet filter", "iptables"), None).forbidden


@pytest.mark.parametrize(
    ("text", "placed"),
    [
        ("The added delay originates on tf-dest-vm. Its eth0 holds a prio root with a netem child (100 ms, 10% loss).", True),
        ("tf-source-vm is the sender here. Its eth0 holds a prio root with a netem child (100 ms, 10% loss).", False),
        (
            "tf-dest-vm's default-route interface carries a prio qdisc of three bands, and band 3 feeds a netem (100 ms, "
            "10% loss).",
            True,
        ),
        ("tf-dest-vm outbound nic: prio root qdisc, netem child with 100 ms delay and 10% loss on everything but ssh.", True),
    ],
)
def test_a_netem_put_on_a_vm_by_its_or_by_its_interface_places_it_there(text: str, placed: bool) -> None:
    """ "Its eth0" after a sentence naming one VM is that VM's; "tf-dest-vm's default-route interface" and "tf-dest-vm
    outbound nic" name the VM's interface, so a netem there sits on tf-dest-vm, where case h has none."""
    result = check_diagnosis(_case("h"), text, None)
    assert ("shaping_placement" in result.forbidden or "shaping_on_dest" in result.forbidden) is placed


def test_traffic_to_the_dest_vm_through_netem_does_not_put_the_netem_there() -> None:
    """ "Traffic to tf-dest-vm goes through netem" names where the traffic goes; "tf-dest-vm" holds no "dest-vm" of its
    own to read as "the destination VM"."""
    text = (
        "tf-source-vm's eth0 has a prio root and a netem child with delay 10ms loss 10% corrupt 2%; u32 filters keep "
        "TCP 22 in band 1:1, so SSH is spared; all other traffic to tf-dest-vm goes through netem."
    )
    assert "netem_on_dest" not in check_diagnosis(_case("i"), text, None).forbidden
    assert "netem_on_dest" in check_diagnosis(_case("i"), text.replace("to tf-dest-vm", "on tf-dest-vm"), None).forbidden


def test_a_route_table_attached_to_a_nic_verb_first_is_wrong() -> None:
    said = "The change attached route table ghost-demo-s-rt straight to tf-source-vm's network interface."
    assert "route_table_on_nic" in check_diagnosis(_case("s"), said, None).forbidden
    subnet = "The change attached route table ghost-demo-s-rt to the default subnet, which holds tf-source-vm's NIC."
    assert "route_table_on_nic" not in check_diagnosis(_case("s"), subnet, None).forbidden


@pytest.mark.parametrize(
    ("said", "wrong"),
    [
        ("Because iptables evaluates the chain policy first, the ACCEPT for TCP 22 never gets a chance.", True),
        ("With INPUT at DROP the policy overrides the ACCEPT rules, so SSH times out too.", True),
        ("The DROP policy applies only to packets no rule accepted, so the TCP 22 ACCEPT still admits SSH.", False),
    ],
)
def test_a_chain_policy_said_to_come_before_its_rules_is_wrong(said: str, wrong: bool) -> None:
    """netfilter applies a built-in chain's policy only where no rule of the chain decided the packet."""
    assert ("chain_policy_order" in check_diagnosis(_case("n"), said, None).forbidden) is wrong


def test_the_cases_owner_said_to_play_no_part_is_an_owner_denied() -> None:
    said = "The REJECT in f2b-sshd was put there by ufw; fail2ban is not involved at all."
    assert "owner_denied" in check_diagnosis(_case("m"), said, None).forbidden
    owned = "The REJECT in f2b-sshd is fail2ban's ban of 203.0.113.47; ufw is not involved at all."
    assert "owner_denied" not in check_diagnosis(_case("m"), owned, None).forbidden


def test_a_direction_said_after_the_nsg_the_rule_sits_on_is_the_rules() -> None:
    said = "ghost-demo-subnet-block-5432 on tf-dest-vm-nsg is an outbound Deny for TCP 5432 at priority 100."
    facts = {f.id: f.status for f in check_diagnosis(_case("q"), said, None).facts}
    assert facts["nsg_deny"] == "contradicted"
    same = said.replace("outbound", "inbound")
    assert {f.id: f.status for f in check_diagnosis(_case("q"), same, None).facts}["nsg_deny"] != "contradicted"


def test_a_source_said_a_long_clause_after_its_rule_is_the_rules() -> None:
    said = (
        "The culprit is ghost-demo-block-8080 on tf-dest-vm-nsg, priority 150, an inbound deny on TCP 8080 with source "
        "10.0.1.4/32, aimed at the source VM alone."
    )
    facts = {f.id: f.status for f in check_diagnosis(_case("a"), said, None).facts}
    assert "contradicted" in facts.values()
    anywhere = said.replace("10.0.1.4/32, aimed at the source VM alone", "* (any)")
    assert "contradicted" not in {f.status for f in check_diagnosis(_case("a"), anywhere, None).facts}


def test_a_hedge_weighs_its_own_clause_not_the_one_after_but() -> None:
    """ "X would normally admit it, but the last matching rule wins" asserts the second clause."""
    said = (
        "AllowVnetInBound at 65000 would normally admit 10.0.1.4, but the last matching rule wins, so the deny at 150 "
        "overrides it."
    )
    assert "nsg_priority_order" in check_diagnosis(_case("a"), said, None).forbidden
    hedged = "If the last matching rule won, AllowVnetInBound at 65000 would admit 10.0.1.4."
    assert "nsg_priority_order" not in check_diagnosis(_case("a"), hedged, None).forbidden


def test_a_label_line_that_opens_a_window_is_read_with_the_lines_it_introduces() -> None:
    """ "found 2, both on tf-dest-vm:" places what the next lines list, however many lines the first fault takes."""
    text = (
        "found 2, both on tf-dest-vm:\n"
        "- nsg rule ghost-demo-l-block-iperf, pri 200, Deny, inbound, Tcp, dst port 5001, src any.\n"
        "- that one is why iperf fails\n"
        "- eth0 (default route): prio 1: root + netem 30: on band 1:3, delay 80ms loss 8%, port 22 filtered out.\n"
        "source vm qdisc is stock. independent faults, two separate rollbacks"
    )
    assert "netem_on_dest" in check_diagnosis(_case("l"), text, None).matched


@pytest.mark.parametrize(
    "claim",
    [
        "The hardening tooling keeps its ruleset enforced; it puts the rule back whenever it is deleted by hand.",
        "It is saved in the persisted ruleset that netfilter-persistent reloads, so a plain iptables -D won't stick.",
        "The hardening run saved it with iptables-persistent, so it comes back at the next boot.",
    ],
)
def test_j_a_keeper_of_the_runtime_drop_is_invented(claim: str) -> None:
    """setup.sh inserts the DROP once; a report that says something puts it back gives the case an owner it lacks."""
    assert check_diagnosis(_case("j"), J_RIGHT, None).correct is True
    result = check_diagnosis(_case("j"), f"{J_RIGHT} {claim}", None)
    assert result.correct is False and "owner_invented" in result.forbidden


@pytest.mark.parametrize(
    "denial",
    [
        "On tf-dest-vm it is one runtime iptables rule; no service or rules file re-applies it.",
        "It is a runtime rule that nothing on the machine re-applies.",
        "It is a runtime rule: no rules file, unit or cron job on the VM contains or re-applies it, so nothing will put it "
        "back once deleted.",
        "A reboot clears it: the rule won't survive a reboot.",
    ],
)
def test_j_a_keeper_denied_is_no_claim(denial: str) -> None:
    assert check_diagnosis(_case("j"), f"{J_RIGHT} {denial}", None).correct is True


@pytest.mark.parametrize(
    ("case_id", "right", "claim"),
    [
        (
            "j_hardened",
            "tf-dest-vm's INPUT chain drops tcp/5001 (-j DROP); harden-net re-applies /etc/iptables/rules.v4 every 600 s. "
            "Separately, tf-source-vm's eth0 is shaped by an htb/tbf with 30 ms latency, which only adds delay.",
            "The rule sits in /etc/iptables/rules.v4, which netfilter-persistent loads at boot.",
        ),
        (
            "m",
            M_RIGHT,
            "The chain is pushed by Microsoft Defender for Cloud just-in-time access, which manages SSH exposure.",
        ),
    ],
)
def test_a_keeper_the_case_does_not_run_contradicts_its_owner(case_id: str, right: str, claim: str) -> None:
    """The process that keeps the fault is a fact of the case; naming another one as its keeper is a wrong owner."""
    assert "owner_other" not in check_diagnosis(_case(case_id), right, None).forbidden
    assert "owner_other" in check_diagnosis(_case(case_id), f"{right} {claim}", None).forbidden


def test_a_keeper_ruled_out_by_name_is_no_claim() -> None:
    said = f"{M_RIGHT} fail2ban manages f2b-sshd; it is not Defender for Cloud or JIT, and not ufw either."
    assert "owner_other" not in check_diagnosis(_case("m"), said, None).forbidden


@pytest.mark.parametrize(
    ("case_id", "text", "kind"),
    [
        (
            "m",
            "the first box it touches is tf-source-vm, and tf-source-vm has a f2b-sshd chain with 203.0.113.47/32 REJECT.",
            "firewall_placement",
        ),
        (
            "r",
            "9090 problem is on tf-source-vm -- its iptables has a DROP for tcp 9090 so the scraper can't open the "
            "connection to tf-dest-vm.",
            "firewall_placement",
        ),
        (
            "q",
            "The NSG rule ghost-demo-subnet-block-5432 blocks 5432. The latency comes from tf-dest-vm: a netem qdisc "
            "there adds 50 ms to its replies.",
            "shaping_placement",
        ),
    ],
)
def test_a_fault_put_on_the_other_vm_in_more_ways(case_id: str, text: str, kind: str) -> None:
    """A VM that "has a f2b-sshd chain", a fault that "comes from" a VM, and a clause where traffic "can't" pass (which
    is not the VM called clean) all place the fault on that VM."""
    assert kind in check_diagnosis(_case(case_id), text, None).forbidden
    right = text.replace("tf-source-vm", "tf-xx").replace("tf-dest-vm", "tf-source-vm").replace("tf-xx", "tf-dest-vm")
    if case_id == "q":
        right = text.replace("from tf-dest-vm", "from tf-source-vm")
    assert kind not in check_diagnosis(_case(case_id), right, None).forbidden


@pytest.mark.parametrize(
    ("case_id", "claim"),
    [
        ("g", "the u32 filters put port 22 traffic into the netem band 1:3 and everything else goes via 1:1 untouched"),
        ("h", "the filters match port 22 and send it to 1:3, so SSH goes through netem"),
        ("h", "the filters map port 22 into the netem band, so only SSH is being delayed"),
        ("k", "the u32 filters match port 22 (dport and sport) and those are what get pushed into the shaped band"),
    ],
)
def test_ssh_said_to_go_through_a_shaper_that_spares_it_is_wrong(case_id: str, claim: str) -> None:
    """setup.sh's u32 filters send port 22 to the unshaped band: SSH is the one traffic the shaper leaves alone."""
    assert "spared_shaped" in check_diagnosis(_case(case_id), f"netem on tf-source-vm's eth0; {claim}.", None).forbidden


@pytest.mark.parametrize(
    "said",
    [
        "a prio root qdisc steers everything except SSH into a netem qdisc with 100 ms of delay",
        "it sends all non-SSH traffic through a netem band adding 100 ms",
        "port 22 goes to band 1:1 and skips the netem; the catch-all sends the rest through it",
    ],
)
def test_ssh_kept_out_of_the_shaper_is_no_claim(said: str) -> None:
    assert "spared_shaped" not in check_diagnosis(_case("h"), f"On tf-source-vm {said}.", None).forbidden


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        ("The ENI snapshot records the VM's effective state including its iptables rules.", True),
        ("The eni_pre_window_R drift report lists two items, an NSG rule and the iptables DROP on tf-dest-vm.", True),
        ("The baseline is Azure-only, so eni_pre_window_R couldn't show the iptables rule either way.", False),
        ("The eni_pre_window_R diff shows only NSG and route state, not the iptables DROP.", False),
    ],
)
def test_the_azure_drift_check_said_to_hold_a_guest_firewall_rule_is_wrong(claim: str, wrong: bool) -> None:
    """detect_effective_network_drift compares NSGs and routes: a guest's iptables rule is outside what it reads."""
    result = check_diagnosis(_case("r"), f"{R_RIGHT} {claim}", None)
    assert ("azure_drift_sees_os" in result.forbidden) is wrong


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        (
            "j",
            "## Blocking fault — tf-dest-vm\niptables INPUT rule 1 is `-p tcp --dport 5001 -j DROP`; iperf hangs.\n\n"
            "## Secondary fault — tf-source-vm\nThe default-route interface has a prio root qdisc whose band 1:3 feeds "
            "`netem delay 30ms`; it adds ~30 ms and blocks nothing.",
        ),
        (
            "p",
            "eni drift vs eni_pre_window_P -> added: ghost-demo-rollback-block-8080 on tf-dest-vm-nsg, inbound Deny Tcp "
            "8080 pri 150, the rollback claim is false. On tf-dest-vm iptables INPUT #1 is DROP tcp dpt:5001; it doesn't "
            "touch 8080 but both have to be undone.",
        ),
    ],
)
def test_a_secondary_fault_or_one_that_does_not_touch_the_other_symptom_is_independent(case_id: str, text: str) -> None:
    assert "independent" in check_diagnosis(_case(case_id), text, None).matched


def test_a_policy_change_written_as_an_arrow_without_spaces_is_read() -> None:
    said = "diff vs the pre-hardening snapshot: policy_changes: INPUT ACCEPT->DROP on tf-dest-vm, plus 3 ACCEPT rules."
    assert "policy_accept_to_drop" in check_diagnosis(_case("n"), said, None).matched


def test_more_than_a_leftover_rule_says_it_is_not_one() -> None:
    said = (
        "tf-dest-vm's INPUT chain has a DROP for TCP 5001. What makes this more than a leftover rule is where it lives: "
        "harden-net re-applies /etc/iptables/rules.v4 every ten minutes."
    )
    assert "owner_denied" not in check_diagnosis(_case("j_hardened"), said, None).forbidden


def test_an_output_chain_written_with_a_hyphen_is_the_other_direction() -> None:
    said = (
        "The slow copies come from a 5 Mbit/s tbf on tf-source-vm's egress. The ping failure is separate: on tf-dest-vm "
        "an OUTPUT-chain rule drops ICMP leaving the VM."
    )
    assert "drop_builtin_chain" in check_diagnosis(_case("k"), said, None).forbidden


@pytest.mark.parametrize(
    ("said", "wrong"),
    [
        ("ghost-shaper re-applies it every 60 seconds from /etc/ghost-shaper/shaper.conf", True),
        ("ghost-shaper re-applies it every 5 minutes from /etc/ghost-shaper/ghost-shaper.yaml", True),
        ("ghost-shaper re-applies it every 300 s from /etc/ghost-shaper/shaper.conf", False),
        ("ghost-shaper re-applies it every 5 min from its config", False),
    ],
)
def test_the_owner_given_another_interval_or_file_is_misdescribed(said: str, wrong: bool) -> None:
    """ghost-shaper puts its qdisc back every 300 s from /etc/ghost-shaper/shaper.conf, as the case's owner says."""
    text = f"tbf on tf-source-vm eth0 (8mbit, 8kb burst) drops the transfer's bursts; {said}."
    assert ("owner_facts" in check_diagnosis(_case("g_daemon"), text, None).forbidden) is wrong


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        ("this user route was created with priority 100, which puts it ahead of VnetLocal, so it gets picked", True),
        ("lower its priority or delete it", True),
        ("the /32 user route is more specific than VnetLocal's 10.0.0.0/16, so it is picked", False),
        ("the NSG rules at priority 65000 allow the VNet, so the NSG is not it", False),
    ],
)
def test_a_route_given_a_priority_number_is_invented(claim: str, wrong: bool) -> None:
    """Azure routes have no priority: the longest prefix wins, then the route's source."""
    text = f"blackhole-dest-vm in ghost-demo-s-rt: 10.0.1.5/32 -> None; {claim}."
    assert ("route_priority" in check_diagnosis(_case("s"), text, None).forbidden) is wrong


def test_an_nsg_associated_with_the_subnet_is_a_subnet_nsg() -> None:
    said = (
        "The NSG associated with forensics-vnet/default carries ghost-demo-temp-rdp-access, an inbound allow for TCP "
        "3389 from any source at priority 500."
    )
    assert "nsg_placement" in check_diagnosis(_case("v"), said, None).forbidden


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        ("xrdp is actually running on the box and answering on 3389, so this is a live login", True),
        ("an xrdp service on the VM answers on that port, giving anyone a login prompt", True),
        ("nothing on the Linux VM listens on 3389, so no probe trips over it", False),
        ("no RDP service is running on the VM, so it is an exposure finding", False),
    ],
)
def test_a_service_said_to_listen_behind_an_allow_that_opens_no_path_is_invented(claim: str, wrong: bool) -> None:
    """Case v starts nothing on 3389: the rule is an exposure, and a listener behind it is a fact the case lacks."""
    text = f"ghost-demo-temp-rdp-access on tf-dest-vm-nsg allows TCP 3389 from any source at priority 500; {claim}."
    assert ("listener_invented" in check_diagnosis(_case("v"), text, None).forbidden) is wrong


@pytest.mark.parametrize(
    ("said", "wrong"),
    [
        ("there's also a drop rule in iptables on dest for 5001 but the real problem is the delay on the source side", True),
        ("the real problem is the DROP for tcp/5001 on tf-dest-vm; the delay on tf-source-vm is separate", False),
    ],
)
def test_a_fault_the_prompt_never_reports_called_the_real_cause_is_wrong(said: str, wrong: bool) -> None:
    """j's prompt reports failed connections; the 30 ms delay (reported: false) slows traffic and blocks nothing."""
    text = f"netem on tf-source-vm adds 30ms to its non-SSH traffic; {said}."
    assert ("unreported_as_cause" in check_diagnosis(_case("j"), text, None).forbidden) is wrong
