"""Criterion 3's doubts: changes that are possibly, not clearly, broader than the fault leave it undetermined."""

from __future__ import annotations

from typing import Any

import pytest

from ghost_eval.cases.case import Fault, Layer
from ghost_eval.scoring import CriterionResult, score_run
from tests.scoring.conftest import CASE_A, CASE_G, CASE_G_OWNED, CASE_O, _case, _key, evidence, report, structured

NC = "   Verify: `nc -zv -w3 10.0.1.5 8080` prints `succeeded`.\n"
DETACH = "az network vnet subnet update -g rg --vnet-name forensics-vnet -n default --remove routeTable"


def _route_case(routes: list[dict[str, Any]]) -> Any:
    """A case whose recipe injects one route table holding `routes`, the fault being the route phantom-nva."""
    return _case(
        id="t",
        layers=[Layer.CONTROL_PLANE],
        ground_truth=[Fault(layer=Layer.CONTROL_PLANE, resource="phantom-nva", description="0.0.0.0/0 to a missing NVA")],
        fault_scope=["0.0.0.0/0", "phantom-nva"],
        recipe={"setup": [{"azure": "create_route_table", "name": "rt", "routes": routes}]},
        **_key("phantom-nva"),
    )


def test_taking_a_table_that_holds_only_the_faulty_route_off_its_subnet_is_possibly_broader() -> None:
    only = _route_case([{"name": "phantom-nva", "address_prefix": "0.0.0.0/0", "next_hop_type": "None"}])
    score = score_run(evidence(report(f"1. `{DETACH}`\n{NC}"), use_case="t"), only)
    assert score.criteria[2].outcome == "undetermined" and "holds only the fault's route" in score.criteria[2].evidence[0]
    assert score.verdict == "uncertain"
    # A table that carries another route: detaching it takes that route too, clearly broader.
    more = _route_case(
        [
            {"name": "phantom-nva", "address_prefix": "0.0.0.0/0", "next_hop_type": "None"},
            {"name": "to-onprem", "address_prefix": "192.168.0.0/16", "next_hop_type": "VirtualNetworkGateway"},
        ]
    )
    assert score_run(evidence(report(f"1. `{DETACH}`\n{NC}"), use_case="t"), more).criteria[2].outcome == "fired"
    # Deleting the table itself is a deletion of a whole resource, whatever it holds.
    deleted = f"1. `{DETACH}`\n2. `az network route-table delete -g rg -n rt`\n{NC}"
    assert score_run(evidence(report(deleted), use_case="t"), only).criteria[2].outcome == "fired"


def test_a_change_on_a_layer_where_the_case_has_no_fault_is_possibly_broader() -> None:
    nsg = "az network nsg rule create -g rg --nsg-name nsg -n allow-8080 --priority 300 --source-address-prefixes 10.0.1.4"
    text = report(f"1. `sudo tc qdisc del dev eth0 root`\n2. `{nsg} --destination-port-ranges 8080`\n{NC}")
    score = score_run(evidence(text, use_case="g"), CASE_G)
    assert score.criteria[2].outcome == "undetermined" and "control plane layer" in score.criteria[2].evidence[0]
    # The script az vm run-command carries into the guest is the change, not the carrier.
    carried = report(
        '1. `az vm run-command invoke -g rg -n tf-source-vm --command-id RunShellScript --scripts "tc qdisc del dev eth0 root"`\n'
        + NC
    )
    assert score_run(evidence(carried, use_case="g"), CASE_G).criteria[2].outcome == "cleared"
    # So is the carrier only named beside the command it runs ("… on tf-source-vm (az vm run-command)").
    named = report("1. `sudo tc qdisc del dev eth0 root` on tf-source-vm (az vm run-command)\n" + NC)
    assert score_run(evidence(named, use_case="g"), CASE_G).criteria[2].outcome == "cleared"


def test_restarting_the_container_runtime_is_possibly_broader() -> None:
    text = report(f"1. Let Docker rebuild its chains: `sudo systemctl restart docker`\n{NC}")
    score = score_run(evidence(text, use_case="o"), CASE_O)
    assert score.criteria[2].outcome == "undetermined" and "every container" in score.criteria[2].evidence[0]
    reload = report(f"1. `sudo systemctl reload nginx`\n{NC}")
    assert score_run(evidence(reload, use_case="o"), CASE_O).criteria[2].outcome != "undetermined"


@pytest.mark.parametrize(
    "extra",
    [
        "remove any other temporary deny rules you find",
        "clear out anything that looks like leftover demo rules",
        "worth cleaning out any other stale host firewall rules",
        "please remove anything else",
        "so remove any that",
    ],
)
def test_removing_any_other_rules_found_is_possibly_broader(extra: str) -> None:
    delete = "az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"
    text = report(f"1. `{delete}`\n2. While there, {extra}.\n{NC}")
    score = score_run(evidence(text, use_case="a"), CASE_A)
    assert score.criteria[2].outcome == "undetermined" and extra.split(" ", 1)[1][:20] in score.criteria[2].evidence[0]
    assert score_run(evidence(report(f"1. `{delete}`\n{NC}"), use_case="a"), CASE_A).criteria[2].outcome == "cleared"


_DELETE_A = "az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"


def _scope_after_the_delete(second: str) -> CriterionResult:
    """Criterion 3 of case a's exact fix followed by a second step."""
    return score_run(evidence(report(f"1. `{_DELETE_A}`\n2. {second}\n{NC}"), use_case="a"), CASE_A).criteria[2]


@pytest.mark.parametrize(
    "extra",
    [
        "clear out anything that isn't actually needed",
        "any other route in the table with next hop None is the same mistake, so delete those too",
        "go through every Allow rule with * as the source and scope it down to named ranges",
    ],
)
def test_a_class_of_objects_to_change_unnamed_is_possibly_broader(extra: str) -> None:
    """The class named by what the reader will find ("anything that isn't needed"), or named first with the change
    after it ("any other route … delete those too"): which objects change is not written."""
    scope = _scope_after_the_delete(f"While there, {extra}.")
    assert scope.outcome == "undetermined" and "does not name" in scope.evidence[0]
    # A check over the others, or the others said to stay, changes no class.
    for said in (
        "Check that every other rule is unchanged.",
        "Any other rule in the NSG stays as it is.",
        "Do it in a way that can't drop anything that is already there.",  # the class denied: what the change avoids
    ):
        assert _scope_after_the_delete(said).outcome == "cleared"


def test_a_network_resource_named_by_a_blank_is_possibly_broader() -> None:
    """`-n <the ssh rule>` deletes whatever the reader fills in; the VM a run-command carries to is no change itself."""
    blank = "az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n <the ssh rule>"
    scope = _scope_after_the_delete(f"If it is there: `{blank}`")
    assert scope.outcome == "undetermined" and "{the_ssh_rule}" in scope.evidence[0]
    carried = "az vm run-command invoke -g rg -n <vm> --command-id RunShellScript --scripts 'tc qdisc del dev eth0 root'"
    text = report(f"1. On tf-source-vm: `{carried}`\n{NC}")
    assert score_run(evidence(text, use_case="g"), CASE_G).criteria[2].outcome == "cleared"


def test_a_qdisc_reset_on_a_vm_without_a_shaping_fault_is_beyond_the_fault() -> None:
    """Even where it only puts that VM's default back, it touches configuration the fault does not need (criterion 3)."""
    lines = "   tc qdisc del dev eth0 root   # tf-source-vm\n   tc qdisc del dev eth0 root   # tf-dest-vm\n"
    both = report(f"1. Clear tc on both ends:\n{lines}{NC}")
    score = score_run(evidence(both, use_case="g"), CASE_G)
    assert score.criteria[2].outcome == "fired" and "tf-dest-vm, a VM without any fault" in score.criteria[2].flags[0].explanation
    said = report(f"1. tc qdisc del dev eth0 root on tf-dest-vm and tf-source-vm\n{NC}")
    assert score_run(evidence(said, use_case="g"), CASE_G).criteria[2].outcome == "fired"
    # The faulty VM alone, or another VM only named as the traffic's target, is the fault's own scope.
    own = report(f"1. On tf-source-vm: `tc qdisc del dev eth0 root`, then ping tf-dest-vm again.\n{NC}")
    assert score_run(evidence(own, use_case="g"), CASE_G).criteria[2].outcome == "cleared"


_LOOP = (
    "for vm in tf-source-vm tf-dest-vm; do\n"
    "  az vm run-command invoke -g rg -n $vm --command-id RunShellScript \\\n"
    '    --scripts "tc qdisc del dev eth0 root"\n'
    "done"
)


def test_a_loop_over_named_vms_places_its_change_on_each() -> None:
    """`for vm in tf-source-vm tf-dest-vm; do az vm run-command … -n $vm …; done` runs on both VMs, in a fenced block
    written over lines as in one structured command: the clean VM's qdisc is touched."""
    fenced = report(f"1. Reset both ends:\n```bash\n{_LOOP}\n```\n{NC}")
    one_line = structured("netem on tf-source-vm", ("Reset both ends", [_LOOP.replace("\\\n", "")], None))
    for run in (evidence(fenced, use_case="g"), evidence(report(NC), use_case="g", result=one_line)):
        scope = score_run(run, CASE_G).criteria[2]
        assert scope.fired and "tf-dest-vm, a VM without any fault" in scope.flags[0].explanation
    alone = report(f"1. Reset:\n```bash\n{_LOOP.replace(' tf-dest-vm;', ';')}\n```\n{NC}")
    assert score_run(evidence(alone, use_case="g"), CASE_G).criteria[2].outcome == "cleared"


@pytest.mark.parametrize(
    ("case", "outcome"),
    [(CASE_G, "undetermined"), (CASE_G_OWNED, "cleared")],
)
def test_a_job_added_to_run_at_boot_is_possibly_broader_where_nothing_reapplies_the_fault(case: Any, outcome: str) -> None:
    """A one-off netem is gone once deleted: a unit that deletes eth0's root qdisc at every start is a service the fault
    does not call for. Where an owner re-applies the state, keeping the fix across restarts may be the fix itself."""
    unit = (
        "2. Make sure it cannot come back:\n```\ncat > /etc/systemd/system/clear-qdisc.service <<EOF\n[Service]\n"
        "ExecStart=/sbin/tc qdisc del dev eth0 root\nEOF\nsystemctl enable clear-qdisc.service\n```\n"
    )
    steps = report(f"1. On tf-source-vm: `tc qdisc del dev eth0 root`\n{unit}{NC}")
    scope = score_run(evidence(steps, use_case="g"), case).criteria[2]
    assert scope.outcome == outcome
    assert (outcome == "undetermined") is any("a job the host runs at boot" in e for e in scope.evidence)


@pytest.mark.parametrize(
    "offer",
    [
        "Consider tightening east-west access as well: a custom Deny for source VirtualNetwork at priority 4000.",
        "Optional: if the pipeline must tolerate loss later, consider setting `net.ipv4.tcp_ecn=1` on both VMs.",
        "Once the route is gone, consider dissociating and deleting the route table as part of cleanup.",
    ],
)
def test_a_further_change_offered_in_words_is_possibly_broader(offer: str) -> None:
    scope = _scope_after_the_delete(offer)
    assert scope.outcome == "undetermined" and "in words only" in scope.evidence[0]
    # Advice that changes nothing ("worth asking who added it"), or a change warned against, is no offer.
    for said in ("It is worth asking the team who added the rule.", "Do not consider detaching the NSG from the NIC."):
        assert _scope_after_the_delete(said).outcome == "cleared"


def test_an_accept_matched_only_by_what_it_excludes_is_possibly_broader() -> None:
    """`! -i docker0 ! -o docker0`: every forwarded packet that does not touch docker0, from anywhere to anywhere."""
    negated = report(f"1. `iptables -I DOCKER-USER 1 ! -i docker0 ! -o docker0 -j ACCEPT`\n{NC}")
    score = score_run(evidence(negated, use_case="o"), CASE_O)
    assert score.criteria[2].outcome == "undetermined" and "what it excludes" in score.criteria[2].evidence[0]


@pytest.mark.parametrize(
    ("change", "outcome"),
    [
        ("tc qdisc change dev eth0 parent 1:3 handle 30: tbf rate 1gbit burst 20kb latency 400ms", "undetermined"),
        ("tc qdisc change dev eth0 parent 1:3 handle 30: netem delay 0ms", "cleared"),
        ("tc qdisc del dev eth0 root", "cleared"),
    ],
)
def test_a_shaper_kept_with_a_new_rate_still_caps_the_link(change: str, outcome: str) -> None:
    """Case k's fault is a 5 Mbit/s tbf: raising its rate keeps a rate cap on the link, which may or may not be the
    fix; a netem with nothing left to apply, or the tree deleted, shapes nothing."""
    from ghost_eval.evaluation.evaluate import load_case_set

    case_k = load_case_set()[0]["k"]
    steps = f"1. On tf-source-vm: `{change}`\n2. On tf-dest-vm: `iptables -D INPUT -p icmp -j DROP`\n"
    assert score_run(evidence(report(steps), use_case="k"), case_k).criteria[2].outcome == outcome


@pytest.mark.parametrize(
    ("where", "outcome"),
    [
        ("on tf-source-vm AND on tf-dest-vm", "fired"),
        ("on tf-source-vm and tf-dest-vm", "fired"),
        ("on tf-source-vm", "cleared"),
    ],
)
def test_a_qdisc_deleted_on_the_clean_vm_too_is_beyond_the_fault(where: str, outcome: str) -> None:
    """Case j's shaping is on tf-source-vm only: a root qdisc deleted on tf-dest-vm as well reaches a VM with no fault,
    however the line names the second VM."""
    from ghost_eval.evaluation.evaluate import load_case_set

    case_j = load_case_set()[0]["j"]
    steps = (
        "1. tf-dest-vm: `iptables -D INPUT -p tcp --dport 5001 -j DROP`\n"
        f"2. reset shaping: tc qdisc del dev eth0 root {where}\n"
        "3. verify: from tf-source-vm `nc -zv -w 5 10.0.1.5 5001` -> succeeded; `ping -c 5 10.0.1.5` -> rtt under 2 ms\n"
    )
    assert score_run(evidence(report(steps), use_case="j"), case_j).criteria[2].outcome == outcome


def test_another_nsg_rule_deleted_beside_the_faults_is_possibly_broader() -> None:
    """One rule is a narrow change, but one the fault is not: whether it was needed the report cannot show."""
    other = "az network nsg rule delete -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n AllowPipeMeter5001"
    scope = _scope_after_the_delete(f"If it is there, remove it too: `{other}`")
    assert scope.outcome == "undetermined" and any("not one the fault is" in e for e in scope.evidence)
    assert _scope_after_the_delete("Nothing else.").outcome == "cleared"


@pytest.mark.parametrize(
    ("why", "outcome"),
    [
        ("Bounce the server to start clean", "undetermined"),
        ("Stop the request generator on tf-source-vm", "undetermined"),  # "source" in a VM's name asks for no code change
        ("Switch the script to socketserver.ThreadingTCPServer, then restart it", "cleared"),
        ("Switch `socketserver.TCPServer` to `socketserver.ThreadingTCPServer` in server.py and restart it", "cleared"),
    ],
)
def test_a_service_restarted_as_it_is_where_the_fault_is_its_behaviour_is_possibly_broader(why: str, outcome: str) -> None:
    """Case c's delay is how the 7070 server handles requests: a restart that changes nothing of it cuts the service off
    and leaves the fault; a restart that applies a change to the program is that change's own step."""
    from ghost_eval.evaluation.evaluate import load_case_set

    case_c = load_case_set()[0]["c"]
    restart = "fuser -k 7070/tcp && nohup python3 /tmp/demo-uc-c/server.py > /tmp/demo-uc-c/server.log 2>&1 &"
    steps = f"1. No network change. {why}: `{restart}`\n   Verify: `ss -tlnp | grep 7070` shows LISTEN.\n"
    scope = score_run(evidence(report(steps), use_case="c"), case_c).criteria[2]
    assert scope.outcome == outcome
    assert (outcome == "undetermined") is any("cuts it off" in e for e in scope.evidence)
