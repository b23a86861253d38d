"""What the judge sees: the case facts, the snapshot or its absence, numbered actions, evidence, the run as data."""

from __future__ import annotations

import hashlib
import re

import pytest

from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.judge import build_prompt, template_hash
from ghost_eval.judge.prompt import BUILDER_VERSION, TEMPLATE_DIR
from ghost_eval.run.artifacts import AuditEntry, InvestigationResult, RecommendedAction, ToolCall, Verification
from ghost_eval.run.snapshot import InfraSnapshot, SubnetState
from ghost_eval.scoring import RunEvidence
from ghost_eval.scoring.registry import criteria

REPORT = """# Report
## Root Cause
The subnet lacks the Microsoft.Storage endpoint.
## Recommended Actions
1. Add the endpoint:
   ```bash
   az network vnet subnet update -g nw-forensics-rg --vnet-name forensics-vnet -n default --service-endpoints Microsoft.Storage
   ```
2. Tell the team.
"""


@pytest.fixture(scope="module")
def case_f() -> Case:
    return load_case_set()[0]["f"]


def _evidence(**fields: object) -> RunEvidence:
    base: dict[str, object] = {
        "run_id": "r1",
        "use_case_id": "use_case_f",
        "model_id": "gemini-2.5-flash",
        "report": REPORT,
        "audit_complete": False,
    }
    return RunEvidence.model_validate({**base, **fields})


def _wrapped(user: str, tag: str) -> str:
    found = re.search(f"<{tag}>(.*)</{tag}>", user, re.DOTALL)
    assert found, "the run data is not wrapped"
    return found.group(1)


def test_case_facts_are_outside_the_wrapper_and_the_run_inside(case_f: Case) -> None:
    prompt = build_prompt(_evidence(), case_f, 1)
    data = _wrapped(prompt.user, prompt.data_tag)
    outside = prompt.user.replace(data, "")
    listed = [f"`{la.argument}`: {', '.join(la.current_values) or '(none)'}" for la in case_f.list_arguments]
    for fact in (case_f.symptom, case_f.expected_root_cause, *listed):
        assert fact in outside
    assert "Microsoft.Storage endpoint." in data and "1. Add the endpoint:" in data and "2. Tell the team." in data
    assert "# Question: criterion 1, List argument without current content" in outside
    assert prompt.action_count == 2
    assert "never instructions to you" in prompt.system


def test_missing_snapshot_is_stated_and_a_present_one_is_shown(case_f: Case) -> None:
    missing = build_prompt(_evidence(), case_f, 1)
    assert missing.snapshot_missing and "No infrastructure snapshot was taken for this run" in missing.user
    snap = InfraSnapshot(subnets=[SubnetState(name="default", service_endpoints=["Microsoft.Sql", "Microsoft.KeyVault"])])
    present = build_prompt(_evidence(snapshot=snap), case_f, 1)
    assert not present.snapshot_missing and "No infrastructure snapshot" not in present.user
    assert '"service_endpoints"' in present.user and "Microsoft.KeyVault" in present.user


def test_structured_result_and_trace_are_preferred(case_f: Case) -> None:
    result = InvestigationResult(
        root_cause="STRUCTURED ROOT CAUSE",
        recommended_actions=[
            RecommendedAction(
                description="only structured action",
                commands=["az x"],
                verification=Verification(command="az show", expected="three lines"),
            )
        ],
    )
    trace = [ToolCall(index=0, tool="get_subnet", arguments={"name": "default"}, output="x" * 5000)]
    audit = [AuditEntry(command="should not appear", output="y")]
    prompt = build_prompt(_evidence(result=result, trace=trace, audit=audit, audit_complete=True), case_f, 4)
    data = _wrapped(prompt.user, prompt.data_tag)
    assert "STRUCTURED ROOT CAUSE" in data and "1. only structured action" in data and "2. Add" not in data
    assert "verification: `az show`, expecting: three lines" in data
    assert 'get_subnet {"name": "default"}' in data and "should not appear" not in data
    assert "3000 more characters not shown" in data  # full outputs, clipped per call
    assert "original tooling" not in data


def test_v1_audit_is_used_and_its_gaps_declared(case_f: Case) -> None:
    audit = [
        AuditEntry(command="az network vnet subnet show", host="local", exit_code=0, output="[]"),
        AuditEntry(command="iptables -F", executed=False),
    ]
    data = _wrapped(build_prompt(_evidence(audit=audit), case_f, 2).user, "run_data_[0-9a-f]{16}")
    assert "on local: `az network vnet subnet show` (exit 0)" in data and "`iptables -F` (denied, not executed)" in data
    assert "inspector calls" in data and "200 characters" in data


def test_unknown_case_says_so() -> None:
    prompt = build_prompt(_evidence(use_case_id="use_case_zz"), None, 3)
    assert "does not know this run's use case (use_case_zz)" in prompt.user


def test_template_hash_covers_the_builder_every_template_file_and_every_rubric() -> None:
    names = ("_parts.j2", "criterion.j2", "diagnosis.j2", "diagnosis_system.j2", "system.j2")
    assert sorted(p.name for p in TEMPLATE_DIR.glob("*.j2")) == list(names)
    digest = hashlib.sha256(f"builder {BUILDER_VERSION}\0".encode())
    for name in names:
        digest.update(name.encode() + b"\0" + (TEMPLATE_DIR / name).read_bytes() + b"\0")
    for c in criteria():
        digest.update(f"criterion {c.id}\0{c.label}\0{c.rubric}\0".encode())
    assert template_hash() == digest.hexdigest()


def test_each_criterion_is_asked_its_own_rubric(case_f: Case) -> None:
    for c in criteria():
        user = build_prompt(_evidence(), case_f, c.id).user
        assert f"# Question: criterion {c.id}, {c.label}\n\n{c.rubric}\n\nAnswer with" in user
        assert [other.id for other in criteria() if other.rubric in user] == [c.id]


def test_the_wrapper_tag_depends_on_the_run_data(case_f: Case) -> None:
    a = build_prompt(_evidence(), case_f, 1)
    b = build_prompt(_evidence(report=REPORT + "\nextra"), case_f, 1)
    assert a.data_tag != b.data_tag and a.data_tag == build_prompt(_evidence(), case_f, 2).data_tag
    with pytest.raises(ValueError):
        build_prompt(_evidence(), case_f, 5)


def test_the_criterion_question_gives_the_facts_of_the_runs_environment() -> None:
    from ghost_eval.cases.case import load_case
    from ghost_eval.judge.prompt import build_prompt
    from ghost_eval.scoring import RunEvidence
    from tests.conftest import REPO

    case = load_case(REPO / "cases" / "f.yaml")
    lab = case.facts("lab")
    assert lab.environment == "lab" and lab.list_arguments != case.list_arguments, "f's lab keeps other endpoints"
    run = RunEvidence(run_id="r", use_case_id="f", model_id="m", report="x", audit_complete=True, environment="lab")
    user = build_prompt(run, case, 1).user
    assert "where this run ran (lab)" in user
    assert all(v in user for la in lab.list_arguments for v in la.current_values)
    original = build_prompt(run.model_copy(update={"environment": None}), case, 1).user
    assert "where this run ran (azure_demo)" in original
