"""The `recipe:` blocks of the bundled cases, read as typed recipes (no lab needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.base.errors import CaseError
from ghost_eval.cases.case import Case, load_case, load_cases
from ghost_eval.lab.layout import VMS
from ghost_eval.live.recipes import (
    CreateNetworkSecurityGroup,
    CreateRouteTable,
    CreateSecurityRule,
    SshStep,
    Symptom,
    recipe_of,
)

CASES_DIR = Path(__file__).parents[2] / "cases"
_CASES, _ERRORS = load_cases(CASES_DIR)
LAB_CASES = sorted(case_id for case_id, case in _CASES.items() if case.recipe is not None)
_VM_NAMES = {vm.name for vm in VMS}
_NSGS = {vm.nsg for vm in VMS}


@pytest.mark.parametrize("case_id", LAB_CASES)
def test_lab_cases_have_a_recipe_that_only_names_lab_resources(case_id: str) -> None:
    recipe = recipe_of(load_case(CASES_DIR / f"{case_id}.yaml"))
    assert recipe is not None and recipe.setup and recipe.teardown and recipe.symptoms
    assert any(s.faulty != s.expected_healthy for s in recipe.symptoms), "no symptom tells the fault apart"
    for step in [*recipe.setup, *recipe.teardown]:
        if isinstance(step, SshStep):
            assert step.ssh in _VM_NAMES
        elif isinstance(step, CreateSecurityRule):
            assert step.nsg in _NSGS
    for symptom in recipe.symptoms:
        assert (symptom.ssh in _VM_NAMES and symptom.run) or symptom.azure


def test_recipes_name_the_faulty_resources_of_their_ground_truth() -> None:
    cases, errors = load_cases(CASES_DIR, LAB_CASES)
    assert errors == []
    for case_id in ("a", "d", "l", "p", "q", "u", "v"):
        steps = recipe_of(cases[case_id]).setup  # type: ignore[union-attr]
        created = {f"{s.nsg}/{s.name}" for s in steps if isinstance(s, CreateSecurityRule)}
        created |= {f"{s.name}/{r.name}" for s in steps if isinstance(s, CreateNetworkSecurityGroup) for r in s.rules}
        assert {f.resource for f in cases[case_id].ground_truth if f.layer == "control_plane"} <= created
    for case_id in ("e", "s", "t"):
        (table,) = [s for s in recipe_of(cases[case_id]).setup if isinstance(s, CreateRouteTable)]  # type: ignore[union-attr]
        assert cases[case_id].ground_truth[0].resource.startswith(table.name)  # type: ignore[union-attr]


def test_every_fault_case_has_a_recipe() -> None:
    assert _ERRORS == []
    faults = {case_id for case_id, case in _CASES.items() if case.kind == "fault" and not case_id.startswith("x_")}
    assert faults == set(LAB_CASES)
    assert {"b", "c", "h", "i", "k", "l", "n", "p", "r", "t", "u"} <= faults


def test_recipe_phases_are_phases_of_their_case() -> None:
    phased = {case_id: recipe_of(_CASES[case_id]) for case_id in LAB_CASES}
    phased = {case_id: recipe for case_id, recipe in phased.items() if recipe is not None and recipe.phases}
    assert set(phased) == {"t"}
    for case_id, recipe in phased.items():
        assert set(recipe.phases) <= {phase.id for phase in _CASES[case_id].phases[1:]}


def test_behaviour_cases_have_no_recipe_of_their_own() -> None:
    behaviour = [case for case in _CASES.values() if case.kind == "behaviour"]
    assert behaviour and all(recipe_of(case) is None for case in behaviour)


def test_a_bad_recipe_names_the_case_and_field() -> None:
    case = Case.model_validate(
        {
            **load_case(CASES_DIR / "a.yaml").model_dump(),
            "recipe": {
                "setup": [{"azure": "create_security_rule", "nsg": "tf-dest-vm-nsg", "name": "x", "access": "Deny"}],
                "teardown": [{"ssh": "tf-dest-vm", "run": "true"}],
            },
        }
    )
    with pytest.raises(CaseError) as info:
        recipe_of(case)
    assert info.value.path == "cases/a.yaml"
    assert info.value.field == "recipe.setup.0.create_security_rule.priority"
    case.recipe = {"setup": [{"azure": "flush_everything"}], "teardown": [{"ssh": "tf-dest-vm", "run": "true"}]}
    with pytest.raises(CaseError, match="flush_everything"):
        recipe_of(case)


def test_a_symptom_is_healthy_the_other_way_unless_told() -> None:
    flips = Symptom(description="d", ssh="tf-dest-vm", run="true", faulty="fail")
    steady = Symptom(description="d", ssh="tf-dest-vm", run="true", faulty="pass", healthy="pass")
    assert (flips.expected_healthy, steady.expected_healthy) == ("pass", "pass")
    endpoint = Symptom(description="d", azure="service_endpoint", service="Microsoft.Storage", faulty="pass")
    assert endpoint.expected_healthy == "fail"
