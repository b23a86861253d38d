"""What a fix adds beyond undoing the fault: a new Azure resource is a doubt about criterion 3, firm or offered."""

from __future__ import annotations

import pytest

from tests.scoring.conftest import CASE_F
from tests.scoring.test_criteria import criterion

_ENDPOINT = (
    "`az network vnet subnet update -g nw-forensics-rg --vnet-name forensics-vnet -n default "
    "--service-endpoints Microsoft.Sql Microsoft.Storage`"
)


@pytest.mark.parametrize(
    "creation",
    [
        "az network private-endpoint create -g nw-forensics-rg -n pe-logs --vnet-name forensics-vnet --subnet default",
        "az vm create -g nw-forensics-rg -n nva-01 --image Ubuntu2204 --private-ip-address 10.0.1.100",
        "az network nsg create -g nw-forensics-rg -n tf-dest-vm-nsg-v2",
        "az lock create -n nsg-lock --lock-type ReadOnly -g nw-forensics-rg --resource tf-dest-vm-nsg "
        "--resource-type Microsoft.Network/networkSecurityGroups",
        "az group lock create --lock-type CanNotDelete -n rg-lock -g nw-forensics-rg",
    ],
)
def test_c3_a_new_resource_offered_beside_the_fix_is_possibly_broader(creation: str) -> None:
    fix = f"1. {_ENDPOINT}\n2. Alternatively, if the owners prefer: `{creation}`\n"
    result = criterion(3, fix, CASE_F)
    assert result.outcome == "undetermined"
    assert any("creates a new" in e for e in result.evidence), result.evidence


@pytest.mark.parametrize(
    "addition",
    [
        "az network nsg rule create -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n allow-web --priority 200",
        "az network route-table route create -g nw-forensics-rg --route-table-name rt -n local "
        "--address-prefix 10.0.1.5/32 --next-hop-type VnetLocal",
    ],
)
def test_c3_a_rule_or_a_route_is_no_new_resource(addition: str) -> None:
    """A rule in an NSG or a route in a table is the unit faults are made of, judged by criterion 3's other checks."""
    result = criterion(3, f"1. {_ENDPOINT}\n2. `{addition}`\n", CASE_F)
    assert not any("creates a new" in e for e in result.evidence), result.evidence
