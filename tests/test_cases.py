"""The bundled use cases: they load, match the suite's case sets, name the original files their facts come from,
carry only the owners the original environment has, and judge diagnoses by key facts and asserted wrong claims."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ghost_eval.base.errors import CaseError
from ghost_eval.cases.case import Case, KeyFact, WrongClaim, load_case, load_cases
from ghost_eval.scoring.diagnosis import check_diagnosis
from ghost_eval.scoring.model import DiagnosisResult

CASES_DIR = Path(__file__).parents[1] / "cases"
ORIGINAL_IDS = [chr(c) for c in range(ord("a"), ord("v") + 1)]
ORIGINAL_COMMIT = "0a257b40b264bc172af5d53641ef7a259bf95a0b"
BEHAVIOUR_IDS = ["x_no_confirm", "x_offtopic", "x_two_layers"]
TWIST_IDS = sorted(p.stem for p in CASES_DIR.glob("*.yaml") if p.stem not in {*ORIGINAL_IDS, *BEHAVIOUR_IDS})
FAULT_IDS = sorted(ORIGINAL_IDS + TWIST_IDS)
CASE_IDS = sorted(FAULT_IDS + BEHAVIOUR_IDS)
BASELINE = {"a", "d", "e", "f", "g", "j", "m", "q", "s", "v"}
SENTINEL = {"m", "f", "q"}
OWNED = {"m", "o"}
"""The only original cases whose environment runs a reconciling daemon: fail2ban (m) and Docker (o)."""

_CASES, _LOAD_ERRORS = load_cases(CASES_DIR)


def _case(case_id: str) -> Case:
    assert case_id in _CASES, f"case {case_id} did not load: {_LOAD_ERRORS}"
    return _CASES[case_id]


def _check(case: Case, text: str) -> DiagnosisResult:
    return check_diagnosis(case, text, None)


def test_all_bundled_cases_load_without_errors() -> None:
    assert _LOAD_ERRORS == []
    assert sorted(_CASES) == CASE_IDS
    assert set(ORIGINAL_IDS) <= set(_CASES)


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_case_id_matches_its_file_name(case_id: str) -> None:
    assert load_case(CASES_DIR / f"{case_id}.yaml").id == case_id


def test_baseline_and_sentinel_sets() -> None:
    baseline = {cid for cid, case in _CASES.items() if case.baseline}
    sentinel = {cid for cid, case in _CASES.items() if case.sentinel}
    assert baseline == BASELINE
    assert sentinel == SENTINEL
    assert sentinel <= baseline


@pytest.mark.parametrize("case_id", ORIGINAL_IDS)
def test_original_cases_name_the_original_files_they_come_from(case_id: str) -> None:
    source = _case(case_id).source
    assert source is not None and source.commit == ORIGINAL_COMMIT and source.twist_of is None
    assert f"network-ghost-agent/demo/use_case_{case_id}/setup.sh" in source.files
    assert f"network-ghost-agent/demo/use_case_{case_id}/PROMPT.txt" in source.files


@pytest.mark.parametrize("case_id", TWIST_IDS)
def test_twists_name_the_original_they_vary_and_stay_out_of_the_suites(case_id: str) -> None:
    case = _case(case_id)
    assert case.source is not None and case.source.twist_of in ORIGINAL_IDS and case.source.twist
    assert not case.baseline and not case.sentinel


@pytest.mark.parametrize("case_id", FAULT_IDS)
def test_fault_cases_have_key_facts_and_wrong_claims(case_id: str) -> None:
    case = _case(case_id)
    assert 2 <= len(case.key_facts) <= 4, "a diagnosis is judged by 2-4 key facts"
    assert case.wrong_claims, "a fault case names the wrong claims an expert rejects"


@pytest.mark.parametrize("case_id", sorted(set(ORIGINAL_IDS) - OWNED))
def test_only_originals_whose_environment_has_an_owner_carry_ownership(case_id: str) -> None:
    assert _case(case_id).ownership == []


@pytest.mark.parametrize("case_id", sorted(OWNED))
def test_owned_cases_say_why(case_id: str) -> None:
    case = _case(case_id)
    assert case.ownership and case.ownership_reason


def test_docker_user_is_never_owned_in_o() -> None:
    for owned in _case("o").ownership:
        assert owned.name != "DOCKER-USER"
        if owned.name.endswith("*") and "DOCKER-USER".startswith(owned.name[:-1]):
            assert "DOCKER-USER" in owned.user_chains


def test_f_subnet_endpoint_list_is_what_the_original_leaves_it() -> None:
    (arg,) = _case("f").list_arguments
    assert arg.argument == "--service-endpoints" and arg.current_values == []


def test_t_runs_in_two_phases() -> None:
    case = _case("t")
    assert [p.prompt_file for p in case.phases] == ["PROMPT.txt", "PROMPT2.txt"]


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_layers_and_trajectory_agree_with_the_ground_truth(case_id: str) -> None:
    case = _case(case_id)
    fault_layers = {fault.layer for fault in case.ground_truth}
    assert fault_layers <= set(case.layers)
    assert fault_layers <= set(case.trajectory.required_layers) <= set(case.layers)
    # only a behaviour case may expect no tool call at all (an off-topic request is declined without tools)
    assert (0 if case.kind == "behaviour" else 1) <= case.trajectory.min_tool_calls <= case.trajectory.max_tool_calls
    if case.ground_truth:
        assert case.fault_scope, "a fix needs a scope to be judged against (criterion 3)"


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_criterion_2_only_where_the_environment_has_an_owner(case_id: str) -> None:
    case = _case(case_id)
    owners = bool(case.ownership) or any(env.ownership for env in case.environments.values())
    assert (2 not in case.criteria) or owners, "criterion 2 is judged against ownership facts"


@pytest.mark.parametrize("case_id", FAULT_IDS)
def test_symptom_does_not_give_the_answer_away(case_id: str) -> None:
    case = _case(case_id)
    assert not _check(case, case.symptom).correct, "an agent that repeats the symptom must not pass"
    named = {token for fault in case.ground_truth for token in re.findall(r"ghost-demo-[\w-]+", fault.description)}
    assert not [token for token in named if token in case.symptom]


def test_facts_of_an_environment_override_the_originals_only_where_given() -> None:
    o = _case("o")
    assert o.facts(None).environment == "azure_demo" and o.facts(None).ownership == o.ownership
    assert o.facts("somewhere-else").environment == "azure_demo"


# --- schema errors name the file and the field ------------------------------------------------


def _base_case() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((CASES_DIR / "a.yaml").read_text(encoding="utf-8"))
    return data


def _set_bad_regex(data: dict[str, Any]) -> None:
    data["key_facts"][0]["all_of"] = ["ghost-demo-block-(8080"]


def _set_unknown_concept(data: dict[str, Any]) -> None:
    data["wrong_claims"][0]["patterns"] = ["@no_such_concept"]


def _drop_source(data: dict[str, Any]) -> None:
    del data["source"]


def _contradict_nothing(data: dict[str, Any]) -> None:
    data["wrong_claims"][0]["contradicts"] = "no_such_fact"


def _drop_symptom(data: dict[str, Any]) -> None:
    del data["symptom"]


def _set_bad_criterion(data: dict[str, Any]) -> None:
    data["criteria"] = [5]


def _set_layers_to_a_string(data: dict[str, Any]) -> None:
    data["layers"] = "control_plane"


def _set_foreign_id(data: dict[str, Any]) -> None:
    data["id"] = "a"


_BROKEN: list[Any] = [
    pytest.param("bad-regex", _set_bad_regex, "key_facts.0.all_of", "invalid regex", id="bad-regex"),
    pytest.param("bad-concept", _set_unknown_concept, "wrong_claims.0.patterns", "unknown concept", id="unknown-concept"),
    pytest.param("no-source", _drop_source, "(root)", "source", id="no-source"),
    pytest.param("bad-contradicts", _contradict_nothing, "(root)", "no key fact", id="contradicts-unknown-fact"),
    pytest.param("no-symptom", _drop_symptom, "symptom", "required", id="missing-symptom"),
    pytest.param("bad-criterion", _set_bad_criterion, "criteria", "1-4", id="criteria-5"),
    pytest.param("string-layers", _set_layers_to_a_string, "layers", "list", id="layers-wrong-type"),
    pytest.param("renamed", _set_foreign_id, "id", "does not match the file name", id="id-not-file-name"),
]


def _write_case(directory: Path, stem: str, data: dict[str, Any]) -> Path:
    path = directory / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("stem", "break_it", "field", "phrase"), _BROKEN)
def test_schema_error_names_file_and_field(
    tmp_path: Path, stem: str, break_it: Callable[[dict[str, Any]], None], field: str, phrase: str
) -> None:
    data = _base_case()
    data["id"] = stem
    break_it(data)
    path = _write_case(tmp_path, stem, data)
    with pytest.raises(CaseError) as caught:
        load_case(path)
    assert caught.value.path == str(path)
    assert caught.value.field == field
    assert phrase in caught.value.detail.lower()
    assert f"{path.name}: field '{field}'" in str(caught.value)


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("id: broken\nlayers: [os\nsymptom: x\n", encoding="utf-8")
    with pytest.raises(CaseError) as caught:
        load_case(path)
    assert caught.value.path == str(path)
    assert "not valid YAML" in str(caught.value)


def test_load_cases_keeps_valid_cases_alongside_the_errors(tmp_path: Path) -> None:
    valid = _base_case()
    valid["id"] = "good"
    _write_case(tmp_path, "good", valid)
    for param in _BROKEN:
        stem, break_it = param.values[0], param.values[1]
        data = _base_case()
        data["id"] = stem
        break_it(data)
        _write_case(tmp_path, stem, data)
    (tmp_path / "broken.yaml").write_text("id: broken\nlayers: [os\n", encoding="utf-8")

    cases, errors = load_cases(tmp_path)

    assert list(cases) == ["good"]
    assert cases["good"].id == "good"
    assert sorted(Path(err.path).stem for err in errors) == sorted([*(p.values[0] for p in _BROKEN), "broken"])


# --- a wrong claim counts only where a sentence asserts it ----------------------------------------


def _probe(*claims: str, fact: str = "443") -> Case:
    return _case("a").model_copy(
        update={
            "key_facts": [KeyFact(id="port", kind="fault", fact=fact, all_of=[fact])],
            "wrong_claims": [WrongClaim(id=f"w{i}", claim=c, patterns=[c]) for i, c in enumerate(claims)],
        }
    )


_NSG_BLOCKS = _probe(r"\bnsg\b.{0,40}\b(blocks|blocking)\b")


def _asserts_nsg_block(text: str) -> bool:
    return _check(_NSG_BLOCKS, text).forbidden == ["w0"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The NSG blocks 443.", id="plain"),
        pytest.param("The NSG blocks 443, as we suspected.", id="hedge-after-the-claim"),
        pytest.param("We suspected routing. The NSG blocks 443.", id="hedge-in-the-previous-sentence"),
        pytest.param("The NSG blocks 443. Routing was ruled out.", id="refutation-in-the-next-sentence"),
        pytest.param("Once routing was ruled out, the NSG blocks 443.", id="refutation-earlier-but-not-at-the-start"),
        pytest.param("Confirmed: H2, NSG blocks outbound 443", id="board-confirmed"),
        pytest.param("The NSG attached to tf-dest-vm-nic\nblocks 443.", id="line-wrap"),
        pytest.param("- The NSG attached to the NIC\n  blocks 443.", id="line-wrap-in-a-list-item"),
        pytest.param("- We checked whether routing matters\n- The NSG blocks 443", id="hedge-in-the-previous-item"),
        pytest.param("- The NSG blocks 443\n- ruled out: routing", id="refutation-in-the-next-item"),
        pytest.param("## Hypotheses considered\nThe NSG blocks 443.", id="hedge-in-the-heading-above"),
        pytest.param("| H1 | NSG blocks 443 | confirmed |\n| H2 | routing | ruled out |", id="table-row"),
        pytest.param("The NSG blocks 443 (`--query \"[?access=='Deny']\"`).", id="question-mark-inside-a-query"),
        pytest.param("12 rejected SYNs show that the NSG blocks 443.", id="refutation-word-not-a-label"),
    ],
)
def test_an_asserted_claim_is_forbidden(text: str) -> None:
    assert _asserts_nsg_block(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("We checked whether the NSG blocks 443.", id="hedge-before"),
        pytest.param("We checked whether\nthe NSG blocks 443.", id="hedge-before-a-line-wrap"),
        pytest.param("H1 hypothesis: the NSG blocks 443.", id="hypothesis"),
        pytest.param("The NSG is not blocking 443.", id="not"),
        pytest.param("The NSG isn't blocking 443.", id="n't"),
        pytest.param("The NSG never blocks 443.", id="never"),
        pytest.param("The NSG is clean; iptables blocks 443.", id="clause-end"),
        pytest.param("H3 NSG blocking 443 - ruled out.", id="refuted-after"),
        pytest.param("The NSG blocks 443, which the effective rules refuted.", id="refuted-later-in-the-sentence"),
        pytest.param("Does the NSG block 443? Is the NSG blocking it?", id="question"),
        pytest.param("Is the NSG blocking 443?**", id="question-in-bold"),
        pytest.param("- H3 NSG blocks 443 - ruled out\n- 2) Rejected: NSG blocks 443", id="board-list"),
        pytest.param("- Refuted: H2, NSG blocks outbound 443", id="board-refuted-item"),
        pytest.param("Refuted: NSG blocks 443.", id="board-refuted"),
        pytest.param("H2 (refuted): the NSG blocks 443.", id="board-h2-refuted"),
        pytest.param("Ruled out \u2013 the NSG blocks 443.", id="board-ruled-out"),
        pytest.param("**Hypothesis 2 (rejected)**: the NSG blocks 443.", id="board-bold"),
        pytest.param("- The NSG\n- blocks 443", id="split-across-list-items"),
        pytest.param("1. The NSG\n2. blocks 443", id="split-across-numbered-items"),
        pytest.param("The NSG\n\nblocks 443", id="split-by-a-blank-line"),
        pytest.param("The NSG. It blocks 443.", id="split-across-sentences"),
    ],
)
def test_a_claim_that_is_not_asserted_is_not_forbidden(text: str) -> None:
    assert not _asserts_nsg_block(text)


def test_a_later_asserted_claim_in_the_same_sentence_still_counts() -> None:
    assert _asserts_nsg_block("The NSG blocks 80 (refuted) and the NSG blocks 443.")
    assert not _asserts_nsg_block("The NSG blocks 443 and the NSG blocks 80 (refuted).")


def test_negations_written_into_the_pattern_are_part_of_the_claim() -> None:
    key = _probe(r"\bservice\b.{0,30}\bis\W+not\W+listening\b")
    assert _check(key, "The service on tf-dest-vm is not listening on 5432.").forbidden
    assert not _check(key, "The service is up; it is not listening only on 6432.").forbidden
    assert not _check(key, "If the service is not listening, restart it.").forbidden


def test_escaped_and_bracketed_dots_stay_literal() -> None:
    key = _probe(r"10\.0\.1\.5[.]8080")
    assert _check(key, "Traffic to 10.0.1.5.8080 hangs.").forbidden
    assert not _check(key, "Traffic to 10x0y1z5a8080 hangs.").forbidden


def test_a_fact_needs_all_its_phrases_in_one_window_and_names_the_sentence() -> None:
    case = _probe(fact="443").model_copy(
        update={"key_facts": [KeyFact(id="drop", kind="fault", fact="x", all_of=["@os_firewall", "443", "@deny"])]}
    )
    found = _check(case, "## Findings\n1. The packet filter on tf-dest-vm discards TCP 443.\n")
    assert found.correct and found.facts[0].sentence == "The packet filter on tf-dest-vm discards TCP 443."
    assert not _check(case, "iptables looks fine. Port 443 is blocked.").correct
    assert not _check(case, "```\niptables -A INPUT -p tcp --dport 443 -j DROP\n```\n").correct, "code is evidence"
    assert not _check(case, "H2: iptables drops 443 - ruled out.").correct, "a refuted sentence finds nothing"


def test_a_wrong_claim_that_contradicts_a_fact_marks_it_contradicted() -> None:
    case = _probe(r"\bnsg\b.{0,40}\bblocks\b", fact="443")
    case = case.model_copy(update={"wrong_claims": [case.wrong_claims[0].model_copy(update={"contradicts": "port"})]})
    result = _check(case, "Port 443 is closed. The NSG blocks it.")
    assert result.facts[0].status == "contradicted" and result.facts[0].sentence == "The NSG blocks it."
    assert result.wrong_claims[0].sentence == "The NSG blocks it."


def test_concept_names_may_hold_digits() -> None:
    case = _probe(fact="@fail2ban")
    assert _check(case, "The sshd jail bans the partner.").correct


@pytest.mark.parametrize(
    ("concept", "text", "found"),
    [
        ("@policy", "drift: -P INPUT ACCEPT -> -P INPUT DROP.", True),  # iptables' own spelling of a chain's policy
        ("@policy", "iptables --dport 80 -j DROP", False),
        ("@independent", "2 faults both on the dest vm.", True),  # a numeral counts as its word
        ("@independent", "2 hops away.", False),
        ("@source_vm", "tc -s qdisc show dev eth0 (src vm) shows a tbf", True),
    ],
)
def test_concepts_read_iptables_syntax_and_numerals(concept: str, text: str, found: bool) -> None:
    assert _check(_probe(fact=concept), text).correct is found


def test_rejected_as_a_fact_is_no_refutation_but_as_a_verdict_it_is() -> None:
    case = _probe(r"\bnsg\b.{0,40}\bblocks\b", fact="@storage_firewall.{0,80}@deny")
    assert _check(case, "Requests to nwlogs080613 are rejected with AuthorizationFailure by its firewall.").correct
    assert not _check(case, "H2, the storage firewall denies the VM - rejected.").correct
    assert _asserts_nsg_block("The NSG blocks 443; the request is rejected with a timeout.")
    assert not _asserts_nsg_block("The NSG blocks 443 - rejected.")


def test_a_quoted_command_is_evidence_not_a_claim() -> None:
    case = _probe(r"\b(?:tc|qdisc|shaping)\b.{0,40}\bon\W+tf-dest-vm\b")
    assert not _check(case, "`tc qdisc show dev eth0` on tf-dest-vm: default qdisc, no shaping.").forbidden
    assert _check(case, "The qdisc on tf-dest-vm adds the delay.").forbidden


def test_a_negation_just_before_a_claim_denies_it() -> None:
    case = _probe(r"\bfailing\W+(?:\w+\W+){0,2}?nic\b")
    assert not _check(case, "It is software configuration, not a failing NIC or host.").forbidden
    assert not _check(case, "This is a qdisc rather than a failing NIC.").forbidden
    assert _check(case, "The retransmissions come from a failing NIC on the host.").forbidden


def test_a_counterfactual_asserts_nothing() -> None:
    case = _probe(r"\bsingle\W+cause\b.{0,40}\b(?:took|taken)\b")
    assert not _check(case, "A single cause would have taken both ports down; the NSG shows two rules.").forbidden
    assert _check(case, "A single cause took both ports down.").forbidden
