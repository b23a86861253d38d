"""Azure's reading of NSG port ranges and of one flow through effective security rules (the lab's emulator and the
scorer's precedence both rely on it)."""

from __future__ import annotations

import pytest

from ghost_eval.connect.effective import flow_allowed, port_in_ranges


@pytest.mark.parametrize(
    ("port", "ranges", "held"),
    [
        (5432, ["5432"], True),
        (6500, ["6000-7000"], True),
        (7001, ["6000-7000"], False),
        (22, ["80", "443"], False),
        (443, ["80", " 443"], True),
        (1, ["*"], True),
        (80, ["Any", "http"], False),  # not a range Azure writes: holds nothing rather than raising
        (80, [], False),
    ],
)
def test_port_ranges_as_azure_writes_them(port: int, ranges: list[str], held: bool) -> None:
    assert port_in_ranges(port, ranges) is held


def _rule(name: str, priority: int, access: str, ports: list[str]) -> dict[str, object]:
    return {
        "name": name,
        "priority": priority,
        "access": access,
        "direction": "Inbound",
        "protocol": "All",
        "sourceAddressPrefix": "*",
        "destinationAddressPrefix": "*",
        "destinationPortRanges": ports,
    }


def test_the_lowest_numbered_matching_rule_decides_by_port() -> None:
    group = {
        "association": {"networkInterface": {"id": "nic"}},
        "effectiveSecurityRules": [
            _rule("deny-range", 100, "Deny", ["5000-6000"]),
            _rule("allow-all", 200, "Allow", ["*"]),
        ],
    }
    assert flow_allowed([group], "Inbound", "TCP", 5432, "10.0.1.4", "10.0.1.5") is False
    assert flow_allowed([group], "Inbound", "TCP", 8080, "10.0.1.4", "10.0.1.5") is True
