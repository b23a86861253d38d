"""Every bundled fault recipe, applied to a real lab: the symptom it claims appears, and teardown removes every trace."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ghost_eval.cases.case import load_case, load_cases
from ghost_eval.connect.azure import network_client, storage_client
from ghost_eval.lab.layout import INTERNET_HOST
from ghost_eval.lab.shell import in_netns, run
from ghost_eval.live.recipes import (
    CreateSecurityRule,
    DeleteSecurityRule,
    Recipe,
    RecipeError,
    RecipeRun,
    SshStep,
    applied,
    recipe_of,
)
from ghost_eval.live.snapshot import take_snapshot
from ghost_eval.live.symptoms import failed_symptoms
from tests.lab.helpers import LAB_MARKS, Lab, normalized_firewall, vm_run, wait_until

pytestmark = LAB_MARKS
CASES_DIR = Path(__file__).parents[2] / "cases"
LAB_CASES = sorted(case_id for case_id, case in load_cases(CASES_DIR)[0].items() if case.recipe is not None)
_TRANSIENT = {"ps", "sort", "bash", "sh", "awk"}


def _recipe(case_id: str) -> Recipe:
    recipe = recipe_of(load_case(CASES_DIR / f"{case_id}.yaml"))
    assert recipe is not None
    return recipe


def _without_etags(value: Any) -> Any:
    """ARM JSON without `etag`s, which change with every write even when a teardown restores the content."""
    if isinstance(value, dict):
        return {k: _without_etags(v) for k, v in value.items() if k != "etag"}
    if isinstance(value, list):
        return [_without_etags(v) for v in value]
    return value


def _arm_resources(lab: Lab) -> dict[str, Any]:
    """Every resource the emulator holds, as the SDK lists it."""
    with network_client(lab.target) as client:
        groups = {
            "networkSecurityGroups": client.network_security_groups.list_all(),
            "routeTables": client.route_tables.list_all(),
            "virtualNetworks": client.virtual_networks.list_all(),
            "networkInterfaces": client.network_interfaces.list_all(),
        }
        resources = {kind: sorted((_without_etags(r.as_dict()) for r in items), key=str) for kind, items in groups.items()}
    with storage_client(lab.target) as storage:
        accounts = storage.storage_accounts.list_by_resource_group(lab.target.resource_group)
        resources["storageAccounts"] = sorted((a.as_dict() for a in accounts), key=str)
    return resources


def _state(lab: Lab) -> dict[str, Any]:
    """Everything a recipe could leave behind: control plane (snapshot and the emulator's resources), firewalls,
    qdiscs, daemons, listening sockets, processes, links, files."""
    data = take_snapshot(lab.target).model_dump(mode="json", exclude={"taken_at"})
    data["ARM resources"] = _arm_resources(lab)
    for host in data["hosts"]:
        host["iptables_save"] = normalized_firewall(host["iptables_save"])
        host["nft_ruleset"] = normalized_firewall(host["nft_ruleset"])
    for vm in lab.target.hosts:
        _, out, _ = vm_run(lab.target, vm, "ps -eo comm=; ip -o link show | awk -F': ' '{print $2}'")
        data[f"{vm} processes and links"] = sorted(set(out.split()) - _TRANSIENT)
        _, out, _ = vm_run(lab.target, vm, "ss -Hltun | awk '{print $1, $5}'")
        data[f"{vm} listening sockets"] = sorted(set(out.splitlines()))
        uppers = lab.state_dir / "vms" / vm / "overlay"
        data[f"{vm} files"] = sorted(str(p.relative_to(uppers)) for p in uppers.glob("*/upper/**/*"))
    return data


@pytest.fixture(scope="module")
def pristine(lab: Lab) -> dict[str, Any]:
    return _state(lab)


def test_the_pristine_lab_shows_every_recipe_healthy(lab: Lab, pristine: dict[str, Any]) -> None:
    recipes = [_recipe(c) for c in LAB_CASES]
    every = Recipe.model_construct(setup=[], teardown=[], symptoms=[s for r in recipes for s in r.symptoms])
    probe = RecipeRun(lab.target, every, "pristine")
    try:
        assert failed_symptoms(probe, "healthy") == []
    finally:
        probe.close()
    assert pristine["subnets"][0]["service_endpoints"] == ["Microsoft.Sql", "Microsoft.KeyVault", "Microsoft.Storage"]


@pytest.mark.parametrize("case_id", LAB_CASES)
def test_recipe_plants_its_fault_and_teardown_removes_it(lab: Lab, pristine: dict[str, Any], case_id: str) -> None:
    recipe = _recipe(case_id)
    with applied(lab.target, recipe, case_id) as planted:
        assert failed_symptoms(planted, "faulty") == []
    assert [entry.phase for entry in planted.log] == ["setup"] * len(recipe.setup) + ["teardown"] * len(recipe.teardown)
    assert all(entry.ok for entry in planted.log), planted.log
    after = RecipeRun(lab.target, recipe, case_id)
    try:
        assert failed_symptoms(after, "healthy") == []
    finally:
        after.close()
    assert _state(lab) == pristine


@pytest.fixture
def partner(lab: Lab) -> Iterator[str]:
    """203.0.113.47 as a client outside the VNet: an address on tf-source-vm, routed back to it by the fabric."""
    fabric = lab.layout.fabric_ns
    vm_run(lab.target, "tf-source-vm", "ip addr add 203.0.113.47/32 dev lo")
    run(in_netns(fabric, "ip", "route", "add", "203.0.113.47/32", "via", "10.0.1.4"))
    try:
        yield "203.0.113.47"
    finally:
        run(in_netns(fabric, "ip", "route", "del", "203.0.113.47/32"), check=False)
        vm_run(lab.target, "tf-source-vm", "ip addr del 203.0.113.47/32 dev lo")


def _ssh_banner_from(lab: Lab, address: str) -> tuple[int, str]:
    script = (
        f"import socket; s = socket.socket(); s.bind(({address!r}, 0)); s.settimeout(3); "
        "s.connect(('10.0.1.5', 22)); print(s.recv(64).decode().strip())"
    )
    code, out, err = vm_run(lab.target, "tf-source-vm", f"python3 -c {shlex.quote(script)}")
    return code, out + err


def test_m_the_banned_partner_is_refused_and_admitted_after_teardown(lab: Lab, partner: str) -> None:
    with applied(lab.target, _recipe("m"), "m"):
        code, output = _ssh_banner_from(lab, partner)
        assert code != 0 and "ConnectionRefusedError" in output
        code, output = _ssh_banner_from(lab, "10.0.1.4")
        assert code == 0 and output.startswith("SSH-2.0-OpenSSH")
    code, output = _ssh_banner_from(lab, partner)
    assert code == 0 and output.startswith("SSH-2.0-OpenSSH")


def test_g_daemon_the_shaping_daemon_puts_its_qdisc_back(lab: Lab) -> None:
    with applied(lab.target, _recipe("g_daemon"), "g_daemon"):
        assert vm_run(lab.target, "tf-source-vm", "tc qdisc del dev eth0 root")[0] == 0
        assert "noqueue" in vm_run(lab.target, "tf-source-vm", "tc qdisc show dev eth0 root")[1]
        assert vm_run(lab.target, "tf-source-vm", "systemctl reload ghost-shaper")[0] == 0
        wait_until(
            lambda: (
                vm_run(lab.target, "tf-source-vm", "systemctl status ghost-shaper")[1].count("applied root qdisc on eth0") == 2
            ),
            "the qdisc applied at start, then on reload",
        )
        assert "qdisc tbf" in vm_run(lab.target, "tf-source-vm", "tc qdisc show dev eth0 root")[1]


def _rule_names(lab: Lab) -> set[str]:
    with network_client(lab.target) as client:
        return {str(r.name) for r in client.security_rules.list(lab.target.resource_group, "tf-dest-vm-nsg")}


def _deny(name: str, priority: int) -> CreateSecurityRule:
    return CreateSecurityRule(
        azure="create_security_rule",
        nsg="tf-dest-vm-nsg",
        name=name,
        priority=priority,
        access="Deny",
        destination_port_range="9999",
    )


def test_teardown_runs_when_setup_fails_midway(lab: Lab) -> None:
    recipe = Recipe(
        setup=[_deny("probe-deny", 120), SshStep(ssh="tf-dest-vm", run="echo planting failed >&2; exit 7")],
        teardown=[DeleteSecurityRule(azure="delete_security_rule", nsg="tf-dest-vm-nsg", name="probe-deny")],
    )
    with (
        pytest.raises(RecipeError, match=r"setup step failed: ssh tf-dest-vm: .*exit 7: planting failed"),
        applied(lab.target, recipe, "probe"),
    ):
        pytest.fail("the body must not run when setup fails")
    assert "probe-deny" not in _rule_names(lab)


def test_teardown_runs_when_the_body_fails(lab: Lab) -> None:
    recipe = Recipe(
        setup=[_deny("probe-deny", 120)],
        teardown=[DeleteSecurityRule(azure="delete_security_rule", nsg="tf-dest-vm-nsg", name="probe-deny")],
    )
    with pytest.raises(KeyError), applied(lab.target, recipe, "probe"):
        assert "probe-deny" in _rule_names(lab)
        raise KeyError("agent crashed")
    assert "probe-deny" not in _rule_names(lab)


def test_a_recipe_never_takes_over_an_existing_rule(lab: Lab) -> None:
    owner = Recipe(
        setup=[_deny("probe-owned", 130)],
        teardown=[DeleteSecurityRule(azure="delete_security_rule", nsg="tf-dest-vm-nsg", name="probe-owned")],
    )
    with applied(lab.target, owner, "owner"):
        with pytest.raises(RecipeError, match="already exists"), applied(lab.target, owner, "intruder"):
            pytest.fail("the second setup must be refused")
        assert "probe-owned" in _rule_names(lab)  # the refused run's teardown left the owner's rule alone
    assert "probe-owned" not in _rule_names(lab)


def _connects(lab: Lab, vm: str, address: str, port: int) -> bool:
    return vm_run(lab.target, vm, f"timeout 2 bash -c '</dev/tcp/{address}/{port}'")[0] == 0


def test_t_phase_two_leaves_only_the_os_block(lab: Lab) -> None:
    """fix_fault1.sh's step (the route table off the subnet) brings HTTPS back while HTTP stays dropped on tf-source-vm."""
    with applied(lab.target, _recipe("t"), "t") as planted:
        assert not _connects(lab, "tf-source-vm", INTERNET_HOST, 443)
        planted.enter_phase("os_firewall")
        assert _connects(lab, "tf-source-vm", INTERNET_HOST, 443)
        assert _connects(lab, "tf-dest-vm", INTERNET_HOST, 80)
        assert not _connects(lab, "tf-source-vm", INTERNET_HOST, 80)
        with network_client(lab.target) as client:
            assert client.route_tables.get(lab.target.resource_group, "ghost-demo-t-rt").subnets is None
    assert all(entry.ok for entry in planted.log), planted.log
    with network_client(lab.target) as client:
        assert [t.name for t in client.route_tables.list(lab.target.resource_group)] == []
    assert _connects(lab, "tf-source-vm", INTERNET_HOST, 80)
