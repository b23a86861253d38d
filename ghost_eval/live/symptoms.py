"""Checking a recipe's symptoms: is the fault really in place (or really gone) on the target?

SSH probes run a command on a VM; Azure probes read the control plane the way the agent would: the subnet's
service endpoints, the effective routes of a NIC and its effective security rules (evaluated for one flow).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from ghost_eval.connect.effective import flow_allowed, next_hop
from ghost_eval.live.recipes import RecipeRun, Symptom

__all__ = ["check_symptom", "failed_symptoms"]

_NEXT_HOPS = {"next_hop_vnet": "VnetLocal", "next_hop_internet": "Internet"}


def _nic_address(run: RecipeRun, nic: str) -> str:
    configs = run.net.network_interfaces.get(run.target.resource_group, nic).ip_configurations or []
    return str(configs[0].private_ip_address)


def check_symptom(run: RecipeRun, symptom: Symptom) -> bool:
    """Whether the probe passes now."""
    t = run.target
    if symptom.ssh is not None:
        code, _out, _err = run.run_command(symptom.ssh, symptom.run or "true", timeout=60)
        return code == 0
    if symptom.azure == "service_endpoint":
        endpoints = run.net.subnets.get(t.resource_group, t.vnet, t.subnet).service_endpoints or []
        return any((e.service or "").lower() == (symptom.service or "").lower() for e in endpoints)
    nic = t.nics[symptom.vm or ""]
    if symptom.azure in _NEXT_HOPS:
        routes = run.net.network_interfaces.begin_get_effective_route_table(t.resource_group, nic).result()
        hop = next_hop([r.as_dict() for r in routes.value or []], symptom.destination or "")
        return hop is not None and hop.get("nextHopType") == _NEXT_HOPS[symptom.azure]
    groups = run.net.network_interfaces.begin_list_effective_network_security_groups(t.resource_group, nic).result()
    here = _nic_address(run, nic)
    other = symptom.source if symptom.direction == "Inbound" else symptom.destination
    source, destination = (other or "0.0.0.0", here) if symptom.direction == "Inbound" else (here, other or "0.0.0.0")
    return flow_allowed(
        [g.as_dict() for g in groups.value or []], symptom.direction, symptom.protocol, symptom.port, source, destination
    )


def failed_symptoms(run: RecipeRun, state: Literal["faulty", "healthy"]) -> list[str]:
    """The symptoms whose probe does not give the outcome the recipe claims for that state (probes run together)."""
    checks = [(symptom, symptom.faulty if state == "faulty" else symptom.expected_healthy) for symptom in run.recipe.symptoms]
    checks = [(symptom, expected) for symptom, expected in checks if expected != "any"]
    for vm in {symptom.ssh for symptom, _ in checks if symptom.ssh}:
        run.ssh(vm)
    if any(symptom.azure for symptom, _ in checks):
        run.net  # noqa: B018 - opened once here, not by each probe thread
    with ThreadPoolExecutor(max_workers=max(len(checks), 1)) as pool:
        outcomes = list(pool.map(lambda check: check_symptom(run, check[0]), checks))
    return [
        f"{symptom.description}: expected {expected} while {state}, got {'pass' if passed else 'fail'}"
        for (symptom, expected), passed in zip(checks, outcomes, strict=True)
        if passed != (expected == "pass")
    ]
