"""The infrastructure snapshot of a lab with faults planted: what it records, and that taking it changes nothing."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

from ghost_eval.base.records import dump_json
from ghost_eval.cases.case import load_case
from ghost_eval.live.recipes import Recipe, applied, recipe_of
from ghost_eval.live.snapshot import take_snapshot
from ghost_eval.run.snapshot import SNAPSHOT_SCHEMA_VERSION, HostState, InfraSnapshot, OwnedResource
from tests.lab.helpers import LAB_MARKS, Lab, normalized_firewall

pytestmark = LAB_MARKS
CASES_DIR = Path(__file__).parents[2] / "cases"


def _recipe(case_id: str) -> Recipe:
    recipe = recipe_of(load_case(CASES_DIR / f"{case_id}.yaml"))
    assert recipe is not None
    return recipe


def _host(snapshot: InfraSnapshot, name: str) -> HostState:
    return next(h for h in snapshot.hosts if h.name == name)


def _requests(lab: Lab) -> list[dict[str, object]]:
    log = lab.state_dir / "arm" / "requests.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_snapshot_with_f_m_g_daemon_applied_shows_endpoints_ban_and_shaper(lab: Lab) -> None:
    with ExitStack() as faults:
        for case_id in ("f", "m", "g_daemon"):
            faults.enter_context(applied(lab.target, _recipe(case_id), case_id))
        seen = len(_requests(lab))
        snapshot = take_snapshot(lab.target)
        writes = [r for r in _requests(lab)[seen:] if r["method"] in ("PUT", "DELETE", "PATCH")]
        again = take_snapshot(lab.target)
    assert writes == []  # read-only on the control plane
    assert snapshot.schema_version == SNAPSHOT_SCHEMA_VERSION and snapshot.target == "lab"
    (subnet,) = snapshot.subnets
    assert (subnet.vnet, subnet.name, subnet.service_endpoints) == (
        "forensics-vnet",
        "default",
        ["Microsoft.Sql", "Microsoft.KeyVault"],
    )

    dest = _host(snapshot, "tf-dest-vm")
    assert "-A f2b-sshd -s 203.0.113.47/32 -j REJECT --reject-with icmp-port-unreachable" in (dest.iptables_save or "")
    assert "chain f2b-sshd" in (dest.nft_ruleset or "")
    (fail2ban,) = [d for d in dest.daemons if d.name == "fail2ban-server"]
    assert OwnedResource(kind="iptables_chain", name="f2b-sshd") in fail2ban.owns
    assert fail2ban.managed_via == "fail2ban-client"

    source = _host(snapshot, "tf-source-vm")
    assert "qdisc tbf" in next(line for line in (source.tc_qdisc or "").splitlines() if "dev eth0" in line)
    (shaper,) = source.daemons
    assert (shaper.name, shaper.owns) == ("ghost-shaper", [OwnedResource(kind="tc_qdisc", name="eth0")])
    assert shaper.managed_via and "/etc/ghost-shaper/shaper.conf" in shaper.managed_via

    dest_rules = {r.name: r for r in snapshot.effective_nsg_rules["tf-dest-vm-nic"]}
    assert dest_rules["securityRules/SSH"].destination_port_ranges == ["22-22"]
    assert dest_rules["defaultSecurityRules/DenyAllInBound"].nsg == "tf-dest-vm-nsg"
    routes = snapshot.effective_routes["tf-source-vm-nic"]
    assert ("10.0.0.0/16", "VnetLocal", "Default") in {(r.address_prefix, r.next_hop_type, r.source) for r in routes}
    assert {n.name for n in snapshot.nsgs} == {"tf-source-vm-nsg", "tf-dest-vm-nsg"} and snapshot.route_tables == {}

    # taking it twice reads the same infrastructure, and the record survives its JSON form
    for first, second in zip(snapshot.hosts, again.hosts, strict=True):
        assert normalized_firewall(first.iptables_save) == normalized_firewall(second.iptables_save)
        assert first.daemons == second.daemons
    assert InfraSnapshot.model_validate_json(dump_json(snapshot)) == snapshot


def test_snapshot_with_j_hardened_o_applied_shows_hardening_file_and_docker_chains(lab: Lab) -> None:
    with applied(lab.target, _recipe("j_hardened"), "j_hardened"), applied(lab.target, _recipe("o"), "o"):
        snapshot = take_snapshot(lab.target)
    dest = _host(snapshot, "tf-dest-vm")
    daemons = {d.name: d for d in dest.daemons}
    assert set(daemons) == {"fail2ban-server", "harden-net", "dockerd"}
    assert daemons["harden-net"].owns == [
        OwnedResource(kind="file", name="/etc/iptables/rules.v4"),
        OwnedResource(kind="iptables_chain", name="INPUT"),
    ]
    docker_chains = {o.name for o in daemons["dockerd"].owns}
    assert docker_chains == {"DOCKER", "DOCKER-ISOLATION-STAGE-1", "DOCKER-ISOLATION-STAGE-2"}
    assert daemons["dockerd"].managed_via and "DOCKER-USER" in daemons["dockerd"].managed_via
    assert ":DOCKER-USER" in (dest.iptables_save or "")
    assert "htb" in (_host(snapshot, "tf-source-vm").tc_qdisc or "")
