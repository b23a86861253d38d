"""Reading stores the original tooling wrote, from its documented formats: audit lines, aborted runs, judge verdicts."""

from __future__ import annotations

from pathlib import Path

from ghost_eval.artifacts import Approval
from ghost_eval.evaluate import load_case_set, score_record
from ghost_eval.store import Store
from tests.store.v1_original import V1Run, audit_line, write_v1_store


def _one(tmp_path: Path, run: V1Run) -> Store:
    return Store(write_v1_store(tmp_path / "artifact-store", [run]))


def test_a_denied_shell_line_is_a_denied_command_not_an_executed_mutation(tmp_path: Path) -> None:
    run = V1Run()
    with _one(tmp_path, run) as store:
        record = store.read(store.get(run.run_id))
        cases, _ = load_case_set()
        score = score_record(record, cases)
    denied = record.audit[1]
    assert (denied.executed, denied.approval) == (False, Approval.DENIED)
    assert score.trajectory.executed_mutations == []
    assert score.trajectory.denied_commands == ["sudo iptables -F f2b-sshd"]


def test_output_summary_is_the_output_and_the_audit_id_is_session_and_sequence(tmp_path: Path) -> None:
    run = V1Run()
    with _one(tmp_path, run) as store:
        record = store.read(store.get(run.run_id))
    first = record.audit[0]
    assert first.output == "REJECT all -- 203.0.113.47 0.0.0.0/0"
    assert first.audit_id == f"{run.sid}_001"
    assert first.approval is Approval.NOT_NEEDED


def test_a_command_the_approver_modified_is_audited_as_what_ran(tmp_path: Path) -> None:
    line = audit_line("ghost_20260501_091111", 1, "sudo iptables -F f2b-sshd")
    line.update(action="user_modified", modified_command="sudo iptables -L f2b-sshd -n")
    run = V1Run(audit=[line])
    with _one(tmp_path, run) as store:
        entry = store.read(store.get(run.run_id)).audit[0]
    assert entry.command == "sudo iptables -L f2b-sshd -n" and entry.executed
    assert entry.model_extra is not None and entry.model_extra["requested_command"] == "sudo iptables -F f2b-sshd"


def test_reports_citing_audit_ids_are_checked_against_the_lines_that_ran(tmp_path: Path) -> None:
    cases, _ = load_case_set()
    good = V1Run()
    with _one(tmp_path / "good", good) as store:
        claims = score_record(store.read(store.get(good.run_id)), cases).claims
    assert f"audit #{good.sid}_001" in claims.cited
    assert claims.unsupported == []

    # the report cites line 001, which here is the denied one: no output, no evidence
    denied_first = V1Run(audit=[audit_line("ghost_20260501_091111", 1, "sudo iptables -F f2b-sshd", denied=True)])
    with _one(tmp_path / "bad", denied_first) as store:
        claims = score_record(store.read(store.get(denied_first.run_id)), cases).claims
    assert claims.unsupported == [f"audit #{denied_first.sid}_001"]
