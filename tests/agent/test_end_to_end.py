"""The reference agent end to end, for both vendors: scripted model turns drive real commands over SSH (a local
sshd with a pinned host key) and real Azure SDK reads (an HTTPS ARM server), through the gate; the artifacts go
into the store and score."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ghost_eval.agent.capture import artifact_files, store_payload
from ghost_eval.agent.runner import AgentConfig, investigate
from ghost_eval.agent.tools import COMPLETE_TOOL
from ghost_eval.cases.case import Layer
from ghost_eval.connect.target import Target
from ghost_eval.evaluation.evaluate import load_case_set, score_record
from ghost_eval.run.artifacts import Approval
from ghost_eval.run.identity import HashKind
from ghost_eval.store import Store
from tests.agent.infra import ArmServer
from tests.agent.test_loop import COMPLETION
from tests.agent.vendors import VENDORS, Vendor

pytestmark = pytest.mark.parametrize("vendor", VENDORS, ids=[v.provider for v in VENDORS])


def test_commands_run_over_ssh_azure_reads_go_through_the_sdk_and_the_run_lands_in_the_store(
    vendor: Vendor, target: Target, arm: ArmServer, scratch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        vendor.reply(
            "Form hypotheses, then read both layers.",
            [
                ("record_hypothesis", {"hypothesis": "an NSG rule denies 8080"}),
                ("run_command", {"host": "tf-dest-vm", "command": "iptables -S"}),
                ("get_effective_nsg_rules", {"nic": "tf-dest-vm-nic"}),
            ],
        ),
        vendor.reply(
            calls=[
                ("run_command", {"host": "tf-dest-vm", "command": "iptables -S; rm -rf /"}),
                ("run_command", {"host": "tf-dest-vm", "command": f"touch {scratch}"}),
                ("get_effective_routes", {"nic": "tf-dest-vm-nic"}),
                ("get_subnet", {}),
                ("list_route_tables", {}),
                ("get_nsg", {"name": "tf-dest-vm-nsg"}),
            ]
        ),
        vendor.reply(calls=[(COMPLETE_TOOL, COMPLETION)]),
    ]
    before = len(arm.requests)
    with vendor.server(script) as server:
        run = investigate(
            "Port 8080 on tf-dest-vm times out.",
            target,
            AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server)),
        )

    assert run.loop.outcome == "completed", run.loop.aborted
    assert not scratch.exists(), "a command that needs approval ran without one"
    local = subprocess.run(["iptables", "-S"], capture_output=True, text=True, check=True).stdout

    ran, forbidden, unapproved = run.audit
    assert (ran.command, ran.executed, ran.approval, ran.exit_code, ran.classification) == (
        "iptables -S",
        True,
        Approval.NOT_NEEDED,
        0,
        "safe",
    )
    assert ran.output == local
    assert (forbidden.executed, forbidden.approval, forbidden.classification) == (False, Approval.DENIED, "forbidden")
    assert (unapproved.executed, unapproved.approval, unapproved.classification) == (False, Approval.DENIED, "needs_approval")
    assert all(e.host == "tf-dest-vm" and e.audit_id for e in run.audit)

    trace = {c.tool + str(c.index): c for c in run.trace}
    assert run.trace[1].output == f"exit code 0\n{local}"
    assert "ghost-demo-block-8080" in trace["get_effective_nsg_rules2"].output
    assert "Microsoft.Sql" in run.trace[6].output and "VirtualAppliance" in run.trace[5].output
    calls = [(m, p.rsplit("/", 1)[-1]) for m, p, _ in arm.requests[before:]]
    assert calls == [
        ("POST", "effectiveNetworkSecurityGroups"),
        ("POST", "effectiveRouteTable"),
        ("GET", "default"),
        ("GET", "routeTables"),
        ("GET", "tf-dest-vm-nsg"),
    ]
    assert all(auth.startswith("Bearer ") for _, _, auth in arm.requests[before:])

    sent = vendor.tool_results(server.requests[1])
    assert sent[1] == (f"exit code 0\n{local}", False)
    refused = vendor.tool_results(server.requests[2])
    assert refused[0][1] and "forbidden" in refused[0][0]
    assert refused[1][1] and "approval" in refused[1][0]

    metadata, files = store_payload(artifact_files(run), "a", run_label="e2e", repeat_index=0)
    with Store(tmp_path / "store", create=True) as store:
        entry = store.append(metadata, files)
        record = store.read(entry)
    assert not [p for p in record.problems if "missing" in p.message], record.problems
    assert record.metadata is not None and record.metadata.hash_kind is HashKind.EFFECTIVE_PROMPT
    assert record.metadata.system_prompt_hash == run.prompt.effective_hash
    assert record.result is not None and record.result.root_cause == COMPLETION["root_cause"]
    assert len(record.trace) == len(run.trace) == 10 and len(record.audit) == 3
    cases, _ = load_case_set()
    score = score_record(record, cases)
    assert score.trajectory.denied_commands == [forbidden.command, unapproved.command]
    assert score.trajectory.executed_mutations == []
    assert {Layer.OS, Layer.CONTROL_PLANE} <= set(score.trajectory.layers_inspected)
    assert score.diagnosis.correct is True


def test_auto_approve_runs_the_command_and_records_an_eval_approval(
    vendor: Vendor, target: Target, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        vendor.reply(
            calls=[
                ("run_command", {"host": "tf-source-vm", "command": f"touch {scratch}"}),
                ("run_command", {"host": "tf-source-vm", "command": "reboot"}),
            ]
        ),
        vendor.reply("Applied."),
    ]
    with vendor.server(script) as server:
        run = investigate(
            "apply it",
            target,
            AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server), auto_approve=True),
        )
    assert scratch.exists()
    approved, refused = run.audit
    assert (approved.executed, approved.approval, approved.exit_code) == (True, Approval.EVAL_AUTO, 0)
    assert (refused.executed, refused.approval, refused.classification) == (False, Approval.DENIED, "forbidden")
    assert all(e.approval is not Approval.HUMAN for e in run.audit)


def test_an_unreachable_host_is_a_tool_error_with_an_audit_line(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        vendor.reply(
            calls=[
                ("run_command", {"host": "tf-dest-vm", "command": "iptables -S"}),
                ("run_command", {"host": "tf-nowhere", "command": "iptables -S"}),
            ]
        ),
        vendor.reply("cannot reach it"),
    ]
    with vendor.server(script) as server:
        run = investigate(
            "check", offline_target, AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server))
        )
    assert run.loop.outcome == "answered"
    unreachable, unknown = run.audit
    assert unreachable.executed and unreachable.exit_code is None and "known_hosts" in (unreachable.output or "")
    assert not unknown.executed and "unknown host 'tf-nowhere'" in (unknown.output or "")
    assert [err for _, err in vendor.tool_results(server.requests[1])] == [True, True]
