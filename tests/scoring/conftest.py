"""Cases and run evidence for the scoring tests, built inline so the tests do not depend on cases/*.yaml."""

from __future__ import annotations

from typing import Any

from ghost_eval.cases.case import Case, Fault, KeyFact, Layer, ListArgument, Ownership, Source, TrajectoryBounds, WrongClaim
from ghost_eval.run.artifacts import AuditEntry, InvestigationResult, RecommendedAction, ToolCall, Verification
from ghost_eval.run.snapshot import DaemonState, HostState, InfraSnapshot, NsgRuleState, NsgState, OwnedResource, SubnetState
from ghost_eval.scoring import RunEvidence


def _key(*facts: str, wrong: tuple[str, ...] = ()) -> dict[str, Any]:
    """Key facts of one phrase each (ids k1, k2 …) and wrong claims (w1 …), as a case file would list them."""
    return {
        "key_facts": [KeyFact(id=f"k{i}", kind="fault", fact=p, all_of=[p]) for i, p in enumerate(facts, 1)],
        "wrong_claims": [WrongClaim(id=f"w{i}", claim=p, patterns=[p]) for i, p in enumerate(wrong, 1)],
    }


_SOURCE = Source(commit="0" * 40, files=["network-ghost-agent/demo/use_case_x/setup.sh"])


def _case(**fields: Any) -> Case:
    base: dict[str, Any] = {
        "title": "test case",
        "fault_class": "test",
        "layers": [Layer.OS],
        "symptom": "something is broken",
        "ground_truth": [],
        "expected_root_cause": "the fault",
        "source": _SOURCE,
        **_key("fault"),
    }
    return Case(**{**base, **fields})


CASE_F = _case(
    id="f",
    title="storage denied: subnet lacks the Microsoft.Storage endpoint",
    layers=[Layer.CONTROL_PLANE],
    ground_truth=[
        Fault(
            layer=Layer.CONTROL_PLANE,
            resource="nwlogs080613",
            description="storage account denies by default; subnet default lacks Microsoft.Storage",
        )
    ],
    list_arguments=[
        ListArgument(
            resource="forensics-vnet/default",
            argument="--service-endpoints",
            current_values=["Microsoft.Sql", "Microsoft.KeyVault"],
        )
    ],
    fault_scope=["Microsoft.Storage", "nwlogs080613"],
    **_key(r"service\s+endpoint", r"Microsoft\.Storage", wrong=(r"\bNSG\b.*\bblock",)),
    criteria=[1, 4],
    trajectory=TrajectoryBounds(min_tool_calls=2, max_tool_calls=20, required_layers=[Layer.CONTROL_PLANE]),
)
"""f as a case file would state it, with the endpoints the subnet already had."""

CASE_F_NO_FACTS = CASE_F.model_copy(update={"list_arguments": []})
"""f for a scorer that knows nothing of the subnet beyond what the run shows."""

CASE_M = _case(
    id="m",
    title="fail2ban ban on the partner address",
    ground_truth=[
        Fault(
            layer=Layer.OS, host="tf-dest-vm", resource="f2b-sshd", description="fail2ban's f2b-sshd chain rejects 203.0.113.47"
        )
    ],
    ownership=[
        Ownership(kind="iptables_chain", name="f2b-sshd", owner="fail2ban", host="tf-dest-vm", managed_via="fail2ban-client")
    ],
    fault_scope=["203.0.113.47", "sshd"],
    **_key("fail2ban", r"203\.0\.113\.47", wrong=(r"NSG\s+(?:is\s+)?block",)),
    criteria=[2, 4],
    trajectory=TrajectoryBounds(min_tool_calls=2, max_tool_calls=25, required_layers=[Layer.OS]),
)

CASE_G = _case(
    id="g",
    title="tc loss on the source VM",
    ground_truth=[
        Fault(layer=Layer.OS, host="tf-source-vm", resource="eth0 root qdisc", description="tc loss on the source VM's eth0")
    ],
    fault_scope=["eth0"],
    **_key("qdisc", "tf-source-vm"),
)
"""g without ownership facts: only the run's own findings can say a daemon re-applies the qdisc."""

CASE_G_OWNED = CASE_G.model_copy(
    update={
        "ownership": [
            Ownership(
                kind="tc_qdisc",
                name="eth0",
                owner="ghost-shaper",
                host="tf-source-vm",
                managed_via="edit /etc/ghost-shaper/shaper.conf, then systemctl reload ghost-shaper",
            ),
        ]
    }
)

CASE_J = _case(
    id="j",
    title="iptables DROP tcp/5001 on dest plus latency on source",
    ground_truth=[
        Fault(
            layer=Layer.OS,
            host="tf-dest-vm",
            resource="INPUT -p tcp --dport 5001 -j DROP",
            description="iptables DROP tcp/5001 on dest",
        ),
        Fault(layer=Layer.OS, host="tf-source-vm", resource="eth0", description="netem latency on the source VM"),
    ],
    fault_scope=["5001", "tcp/5001"],
    **_key("5001", "latency|delay"),
)

CASE_N = _case(
    id="n",
    title="INPUT policy drift",
    ground_truth=[
        Fault(
            layer=Layer.OS,
            host="tf-dest-vm",
            resource="INPUT policy",
            description="INPUT policy changed ACCEPT -> DROP after a baseline",
        )
    ],
    **_key("policy", "DROP"),
)

CASE_O = _case(
    id="o",
    title="Docker restart rewrote its chains",
    ground_truth=[
        Fault(layer=Layer.OS, host="tf-dest-vm", resource="DOCKER", description="a Docker restart rewrote the DOCKER-* chains")
    ],
    fault_scope=["8080"],
    **_key("docker"),
)

CASE_A = _case(
    id="a",
    title="NSG rule blocks 8080",
    layers=[Layer.CONTROL_PLANE],
    ground_truth=[
        Fault(
            layer=Layer.CONTROL_PLANE,
            resource="ghost-demo-block-8080",
            description="NSG rule ghost-demo-block-8080 (priority 150) denies TCP 8080 inbound",
        )
    ],
    fault_scope=["ghost-demo-block-8080", "8080"],
    **_key("ghost-demo-block-8080"),
    trajectory=TrajectoryBounds(min_tool_calls=2, max_tool_calls=10, required_layers=[Layer.OS, Layer.CONTROL_PLANE]),
)

SNAPSHOT_F = InfraSnapshot(
    subnets=[
        SubnetState(
            name="default",
            vnet="forensics-vnet",
            address_prefix="10.0.1.0/24",
            service_endpoints=["Microsoft.Sql", "Microsoft.KeyVault"],
        )
    ],
    nsgs=[
        NsgState(
            name="tf-dest-vm-nsg",
            rules=[
                NsgRuleState(
                    name="allow-partner",
                    priority=200,
                    direction="Inbound",
                    access="Allow",
                    source_address_prefixes=["198.51.100.0/24", "203.0.113.0/24"],
                    destination_port_ranges=["22"],
                ),
            ],
        )
    ],
)

SNAPSHOT_G = InfraSnapshot(
    hosts=[
        HostState(
            name="tf-source-vm",
            tc_qdisc="qdisc tbf 8001: root",
            daemons=[
                DaemonState(
                    name="ghost-shaper",
                    owns=[OwnedResource(kind="tc_qdisc", name="eth0")],
                    managed_via="/etc/ghost-shaper/shaper.conf + systemctl reload ghost-shaper",
                ),
            ],
        )
    ]
)

SUBNET_SHOW = (
    '{"name": "default", "addressPrefix": "10.0.1.0/24", "serviceEndpoints": ['
    '{"locations": ["westeurope"], "provisioningState": "Succeeded", "service": "Microsoft.Sql"}, '
    '{"locations": ["*"], "provisioningState": "Succeeded", "service": "Microsoft.KeyVault"}]}'
)
"""What `az network vnet subnet show` printed for f's subnet."""

REPORT_HEAD = """# Ghost Agent Investigation Report
- Session: ghost_20260312_101500
## Root Cause
{root_cause}
## Evidence
{evidence}
## Recommended Actions
"""


def report(actions: str, root_cause: str = "The fault.", evidence: str = "- nothing cited") -> str:
    """A v1-style report whose Recommended Actions section is `actions`."""
    return REPORT_HEAD.format(root_cause=root_cause, evidence=evidence) + actions


def audit(*commands: str, output: str = "ok") -> list[AuditEntry]:
    return [AuditEntry(command=c, host="tf-dest-vm", output=output, exit_code=0) for c in commands]


def evidence(
    report_text: str = "",
    *,
    use_case: str = "m",
    audit_entries: list[AuditEntry] | None = None,
    trace: list[ToolCall] | None = None,
    snapshot: InfraSnapshot | None = None,
    result: InvestigationResult | None = None,
    audit_complete: bool = False,
    environment: str = "azure_demo",
    prompt: str | None = None,
) -> RunEvidence:
    return RunEvidence(
        run_id=f"{use_case}_model_20260312_101500",
        use_case_id=use_case,
        model_id="model",
        report=report_text,
        result=result,
        audit=audit_entries or [],
        trace=trace or [],
        snapshot=snapshot,
        audit_complete=audit_complete,
        environment=environment,
        prompt=prompt,
    )


def structured(root_cause: str, *actions: tuple[str, list[str], Verification | None]) -> InvestigationResult:
    return InvestigationResult(
        root_cause=root_cause,
        recommended_actions=[RecommendedAction(description=d, commands=c, verification=v) for d, c, v in actions],
    )
