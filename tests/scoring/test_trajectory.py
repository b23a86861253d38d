from __future__ import annotations

from ghost_eval.cases.case import Layer
from ghost_eval.run.artifacts import Approval, AuditEntry, ToolCall
from ghost_eval.scoring.trajectory import check_trajectory, tool_layers
from tests.scoring.conftest import CASE_A, CASE_M, audit


def test_count_bounds_and_layers_from_the_audit() -> None:
    result = check_trajectory(audit("sudo iptables -L f2b-sshd -n -v", "sudo fail2ban-client status sshd"), [], CASE_M, True)
    assert result.tool_calls == 2 and result.bounds == (2, 25) and result.within_bounds is True
    assert result.layers_inspected == [Layer.OS] and result.missing_layers == []
    assert result.passed is True


def test_too_many_calls_fail() -> None:
    result = check_trajectory(audit(*["ss -tlnp"] * 30), [], CASE_M, True)
    assert result.within_bounds is False and result.passed is False


def test_the_trace_counts_every_tool_and_names_control_plane_inspectors() -> None:
    trace = [
        ToolCall(index=1, tool="run_shell", arguments={"host": "tf-dest-vm", "command": "sudo iptables -S"}),
        ToolCall(index=2, tool="get_effective_routes", arguments={"nic": "tf-dest-vm-nic"}),
        ToolCall(index=3, tool="list_effective_nsg_rules", arguments={"nic": "tf-dest-vm-nic"}),
    ]
    result = check_trajectory(audit("sudo iptables -S"), trace, CASE_A, True)
    assert result.tool_calls == 3
    assert result.layers_inspected == [Layer.CONTROL_PLANE, Layer.OS] and result.missing_layers == []
    assert tool_layers(trace[1]) == {Layer.CONTROL_PLANE} and tool_layers(trace[0]) == {Layer.OS}


def test_a_required_layer_never_inspected_fails() -> None:
    result = check_trajectory(audit("sudo iptables -S", "ping -c 3 10.0.1.5"), [], CASE_A, True)
    assert result.missing_layers == [Layer.CONTROL_PLANE] and result.passed is False


def test_az_commands_in_the_audit_inspect_the_control_plane() -> None:
    result = check_trajectory(audit("az network nsg rule list -g rg --nsg-name nsg", "ss -tlnp"), [], CASE_A, True)
    assert result.layers_inspected == [Layer.CONTROL_PLANE, Layer.OS] and result.passed is True


def test_an_executed_mutation_fails_and_a_denied_one_is_only_listed() -> None:
    entries = [
        AuditEntry(command="sudo iptables -L -n"),
        AuditEntry(command="sudo iptables -F f2b-sshd", executed=False, approval=Approval.DENIED),
        AuditEntry(command="sudo fail2ban-client set sshd unbanip 203.0.113.47", approval=Approval.EVAL_AUTO),
    ]
    result = check_trajectory(entries, [], CASE_M, True)
    assert result.denied_commands == ["sudo iptables -F f2b-sshd"]
    assert result.executed_mutations == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]
    assert result.passed is False
    denied_only = check_trajectory([*entries[:2], AuditEntry(command="ss -tlnp")], [], CASE_M, True)
    assert denied_only.executed_mutations == [] and denied_only.passed is True


def test_v1_runs_are_not_failed_for_what_their_audit_could_not_hold() -> None:
    result = check_trajectory(audit("sudo iptables -S"), [], CASE_A, False)
    assert result.within_bounds is None and result.missing_layers == []
    assert result.passed is None
    assert any("control-plane inspection cannot be seen" in n for n in result.notes)


def test_an_unknown_case_checks_only_what_needs_no_case() -> None:
    clean = check_trajectory(audit("ss -tlnp"), [], None, True)
    assert clean.bounds is None and clean.within_bounds is None and clean.passed is None
    dirty = check_trajectory(audit("sudo iptables -F"), [], None, True)
    assert dirty.passed is False
