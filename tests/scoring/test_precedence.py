"""A rule or route added against a faulty one left in place: Azure's precedence decides whether it wins at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.cases.case import Fault, Layer, load_case
from tests.scoring.conftest import CASE_A, _case
from tests.scoring.test_criteria import CASE_A_NSG, NC, SHADOW, criterion

CASE_E = _case(
    id="e",
    layers=[Layer.CONTROL_PLANE],
    ground_truth=[
        Fault(
            layer=Layer.CONTROL_PLANE,
            resource="ghost-demo-blackhole-rt/ghost-demo-nva-redirect",
            description="Route table ghost-demo-blackhole-rt holds route ghost-demo-nva-redirect: 10.0.1.5/32, next hop "
            "type VirtualAppliance, next hop 10.0.1.100.",
        )
    ],
    fault_scope=["ghost-demo-nva-redirect"],
)
_CASES = Path(__file__).resolve().parents[2] / "cases"
ROUTE = "az network route-table route create -g rg --route-table-name ghost-demo-blackhole-rt -n local --next-hop-type VnetLocal"


@pytest.mark.parametrize(("priority", "fired"), [("200", True), ("140", False)])
def test_c3_an_allow_numbered_after_the_faulty_deny_never_wins(priority: str, fired: bool) -> None:
    """Lower numbers are evaluated first: an Allow at 200 comes after the Deny at 150, which still drops the flow."""
    result = criterion(3, f"1. `{SHADOW.replace('--priority 140', f'--priority {priority}')}`\n{NC}", CASE_A_NSG)
    assert result.fired is fired
    assert fired is any("after the faulty Deny" in f.explanation for f in result.flags)


def test_c3_an_allow_in_the_other_direction_than_the_faulty_deny_overrides_nothing() -> None:
    """A rule meets only traffic of its own direction: an Outbound Allow on the NSG of an Inbound Deny leaves the Deny
    deciding the flow. az makes an Inbound rule where --direction is not given."""
    case = load_case(_CASES / "a.yaml")
    inbound = SHADOW.replace("-g rg", "-g nw-forensics-rg")
    outbound = criterion(3, f"1. `{inbound} --direction Outbound`\n{NC}", case)
    assert outbound.fired and "wrong direction" in outbound.flags[0].explanation
    assert not any("direction" in f.explanation for f in criterion(3, f"1. `{inbound}`\n{NC}", case).flags)


def test_c3_an_allow_after_a_deny_that_the_fix_removes_is_no_misplacement() -> None:
    delete = "az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"
    fix = f"1. `{delete}`\n2. `{SHADOW.replace('--priority 140', '--priority 200')}`\n{NC}"
    assert not any("after the faulty Deny" in f.explanation for f in criterion(3, fix, CASE_A_NSG).flags)


def test_c3_a_deny_whose_priority_the_case_does_not_say_is_not_compared() -> None:
    unnumbered = CASE_A.model_copy(
        update={
            "ground_truth": [
                CASE_A.ground_truth[0].model_copy(
                    update={"resource": "tf-dest-vm-nsg/ghost-demo-block-8080", "description": "Inbound, Deny, Tcp"}
                )
            ]
        }
    )
    fix = f"1. `{SHADOW.replace('--priority 140', '--priority 200')}`\n{NC}"
    assert not any("after the faulty Deny" in f.explanation for f in criterion(3, fix, unnumbered).flags)


@pytest.mark.parametrize(("prefix", "fired"), [("10.0.1.0/24", True), ("10.0.0.0/16", True), ("10.0.1.5/32", False)])
def test_c3_a_route_less_specific_than_the_faulty_one_never_wins(prefix: str, fired: bool) -> None:
    """Longest prefix wins: a /24 beside the faulty /32 leaves the /32 carrying tf-dest-vm's traffic."""
    fix = f"1. `{ROUTE} --address-prefix {prefix}`\n   Verify: `curl -s http://10.0.1.5:8080/` prints 200.\n"
    assert any("less specific than the faulty route" in f.explanation for f in criterion(3, fix, CASE_E).flags) is fired


def test_c3_a_route_added_while_the_faulty_route_is_deleted_is_not_outranked() -> None:
    delete = "az network route-table route delete -g rg --route-table-name ghost-demo-blackhole-rt -n ghost-demo-nva-redirect"
    fix = f"1. `{delete}`\n2. `{ROUTE} --address-prefix 10.0.1.0/24`\n"
    assert not any("less specific" in f.explanation for f in criterion(3, fix, CASE_E).flags)


def test_c3_a_deny_numbered_after_the_faulty_allow_never_closes_it() -> None:
    """Case v's fault is an Allow at 500: a Deny at 4000 beside it is evaluated after it, so RDP stays open; one at 400
    comes first and is no misplacement."""
    case_v = load_case(_CASES / "v.yaml")
    create = (
        "az network nsg rule create -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n deny-rdp --priority {p} "
        "--direction Inbound --access Deny --protocol Tcp --destination-port-ranges 3389"
    )
    check = "   Verify: `az network watcher test-ip-flow … --local 10.0.1.5:3389` returns `Deny`.\n"
    late = criterion(3, f"1. `{create.format(p=4000)}`\n{check}", case_v)
    assert late.fired and "after the faulty Allow ghost-demo-temp-rdp-access (500)" in late.flags[0].explanation
    early = criterion(3, f"1. `{create.format(p=400)}`\n{check}", case_v)
    assert not any("after the faulty" in f.explanation for f in early.flags)


@pytest.mark.parametrize(
    ("priority", "ports", "left"),
    [
        ("100", "5432 6379", False),  # ahead of 110 and 150, on both ports: both Denies are reached
        ("120", "5432 6379", True),  # after the postgres Deny at 110: it still decides 5432
        ("100", "5432", True),  # ahead of both, but the redis port stays denied
        ("100", "6000-6400 5432", False),  # a range holds 6379
    ],
)
def test_c3_an_allow_ahead_of_each_faulty_deny_on_its_port_reaches_it_without_naming_it(
    priority: str, ports: str, left: bool
) -> None:
    """Case d has two reported Denies (110 on 5432, 150 on 6379). A fix that names neither leaves them, unless a rule
    it adds on their NSG matches their flow first: lower number, opposite access, the Deny's port."""
    case_d = load_case(_CASES / "d.yaml")
    allow = (
        f"az network nsg rule create -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n allow-app --priority {priority} "
        f"--direction Inbound --access Allow --protocol Tcp --source-address-prefixes 10.0.1.4/32 "
        f"--destination-port-ranges {ports}"
    )
    check = "   Verify: from tf-source-vm `nc -zv -w 3 10.0.1.5 5432` and `nc -zv -w 3 10.0.1.5 6379` print `succeeded`.\n"
    result = criterion(3, f"1. `{allow}`\n{check}", case_d)
    assert any("no change names the faulty rule" in f.explanation for f in result.flags) is left
    assert result.fired is left
