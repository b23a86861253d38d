from __future__ import annotations

from ghost_eval.run.artifacts import AuditEntry, ToolCall
from ghost_eval.scoring import ClaimsResult
from ghost_eval.scoring.claims import check_claims, cited_evidence
from ghost_eval.scoring.text import split_sections
from tests.scoring.conftest import audit, report, structured

EVIDENCE = (
    "- `sudo  iptables -L f2b-sshd -n -v` on tf-dest-vm showed a REJECT for 203.0.113.47 (audit #1)\n"
    "- `az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic` allows TCP 22 [audit:2]\n"
)
ACTIONS = "1. Unban: `sudo fail2ban-client set sshd unbanip 203.0.113.47`\n   Then `sudo systemctl status fail2ban`.\n"


def claims(
    evidence_text: str = EVIDENCE,
    entries: list[AuditEntry] | None = None,
    trace: list[ToolCall] | None = None,
    audit_complete: bool = True,
    root_cause: str = "A fail2ban ban (`ss -tlnp` shows sshd listening).",
) -> ClaimsResult:
    sections = split_sections(report(ACTIONS, root_cause=root_cause, evidence=evidence_text))
    return check_claims(sections, None, entries or [], trace or [], audit_complete)


def test_citations_come_from_evidence_and_root_cause_not_from_the_remediation() -> None:
    sections = split_sections(report(ACTIONS, root_cause="Banned (`ss -tlnp` shows sshd).", evidence=EVIDENCE))
    commands, ids = cited_evidence(sections, None)
    assert commands == [
        "ss -tlnp",
        "sudo  iptables -L f2b-sshd -n -v",
        "az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic",
    ]
    assert ids == ["1", "2"]


def test_everything_cited_was_run() -> None:
    entries = audit(
        "iptables -L f2b-sshd -n -v --line-numbers",
        "az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic -o table",
        "sudo ss -tlnp",
    )
    result = claims(entries=entries)
    assert result.unsupported == [] and result.passed is True
    assert "audit #1" in result.cited and "audit #2" in result.cited


def test_a_command_never_run_is_unsupported() -> None:
    result = claims(
        entries=audit(
            "sudo iptables -L f2b-sshd -n -v", "sudo az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic"
        )
    )
    assert result.unsupported == ["ss -tlnp"] and result.passed is False


def test_a_denied_command_supports_nothing() -> None:
    entries = [
        AuditEntry(command="ss -tlnp", executed=False),
        *audit("sudo iptables -L f2b-sshd -n -v"),
        *audit("az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic"),
    ]
    assert "ss -tlnp" in claims(entries=entries).unsupported


def test_audit_ids_must_exist() -> None:
    result = claims(evidence_text="- REJECT seen (audit #7)\n", entries=audit("sudo ss -tlnp"))
    assert result.unsupported == ["audit #7"]
    with_ids = [AuditEntry(command="ss -tlnp", audit_id="7")]
    assert claims(evidence_text="- REJECT seen (audit #7)\n", entries=with_ids).passed is True


def test_citing_evidence_with_an_empty_audit_and_trace_fails() -> None:
    result = claims()
    assert result.passed is False
    assert set(result.unsupported) >= {"ss -tlnp", "sudo  iptables -L f2b-sshd -n -v", "audit #1"}
    assert "no audit and no trace" in result.notes[0]


def test_v1_control_plane_citations_are_unverifiable_not_unsupported() -> None:
    entries = audit("sudo iptables -L f2b-sshd -n -v", "ss -tlnp")
    result = claims(evidence_text=EVIDENCE.replace(" [audit:2]", ""), entries=entries, audit_complete=False)
    assert result.unverifiable == ["az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic"]
    assert result.unsupported == [] and result.passed is True


def test_v1_with_an_empty_audit_still_fails_on_host_commands() -> None:
    result = claims(audit_complete=False)
    assert "sudo  iptables -L f2b-sshd -n -v" in result.unsupported and result.passed is False
    assert result.unverifiable == ["az network nic list-effective-nsg -g nw-forensics-rg -n tf-dest-vm-nic"]


def test_our_runs_back_control_plane_citations_with_inspector_calls() -> None:
    trace = [
        ToolCall(index=1, tool="run_shell", arguments={"command": "sudo iptables -L f2b-sshd -n -v"}),
        ToolCall(index=2, tool="list_effective_nsg_rules", arguments={"nic": "tf-dest-vm-nic"}),
        ToolCall(index=3, tool="run_shell", arguments={"command": "ss -tlnp"}),
    ]
    result = claims(evidence_text=EVIDENCE.replace(" (audit #1)", "").replace(" [audit:2]", ""), trace=trace)
    assert result.unsupported == [] and result.passed is True
    routes = claims(evidence_text="- `az network nic show-effective-route-table -g rg -n tf-dest-vm-nic`\n", trace=trace)
    assert routes.unsupported == ["az network nic show-effective-route-table -g rg -n tf-dest-vm-nic"]


def test_structured_root_cause_citations_are_checked() -> None:
    sections = split_sections("")
    result = check_claims(sections, structured("`tc qdisc show dev eth0` shows netem loss"), audit("ip route"), [], True)
    assert result.cited == ["tc qdisc show dev eth0"] and result.passed is False
