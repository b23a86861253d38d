"""The bundled use cases: they load, match the suite's case sets, and their answer keys judge real report wording."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ghost_eval.cases import AnswerKey, Case, KeyMatch, case_key, load_case, load_cases
from ghost_eval.errors import CaseError

CASES_DIR = Path(__file__).parents[1] / "cases"
EXAMPLES_FILE = Path(__file__).parent / "fixtures" / "answer_key_examples.yaml"
FAULT_IDS = [chr(c) for c in range(ord("a"), ord("v") + 1)]
BEHAVIOUR_IDS = ["x_no_confirm", "x_offtopic", "x_two_layers"]
CASE_IDS = FAULT_IDS + BEHAVIOUR_IDS
BASELINE = {"a", "d", "e", "f", "g", "j", "m", "q", "s", "v"}
SENTINEL = {"m", "f", "q"}

_CASES, _LOAD_ERRORS = load_cases(CASES_DIR)
_EXAMPLES: dict[str, dict[str, list[Any]]] = yaml.safe_load(EXAMPLES_FILE.read_text(encoding="utf-8"))


def _case(case_id: str) -> Case:
    assert case_id in _CASES, f"case {case_id} did not load: {_LOAD_ERRORS}"
    return _CASES[case_id]


def _texts(case_id: str, kind: str) -> list[str]:
    return [item if kind == "correct" else item["text"] for item in _EXAMPLES[case_id][kind]]


def _example_params(kind: str) -> list[Any]:
    return [
        pytest.param(case_id, text, id=f"{case_id}-{kind}-{i}")
        for case_id in sorted(_EXAMPLES)
        for i, text in enumerate(_texts(case_id, kind))
    ]


def _explain(case: Case, match: KeyMatch) -> str:
    """Name patterns by position: the patterns themselves are too long to read in a failure."""
    key = case.answer_key
    missing = [key.must_find.index(p) for p in match.missing]
    forbidden = [key.must_not_find.index(p) for p in match.forbidden]
    return f"must_find missing {missing}, must_not_find matched {forbidden}"


def test_all_bundled_cases_load_without_errors() -> None:
    assert _LOAD_ERRORS == []
    assert sorted(_CASES) == CASE_IDS
    assert sorted(p.stem for p in CASES_DIR.glob("*.yaml")) == CASE_IDS


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_case_id_matches_its_file_name(case_id: str) -> None:
    assert load_case(CASES_DIR / f"{case_id}.yaml").id == case_id


def test_baseline_and_sentinel_sets() -> None:
    baseline = {cid for cid, case in _CASES.items() if case.baseline}
    sentinel = {cid for cid, case in _CASES.items() if case.sentinel}
    assert baseline == BASELINE
    assert sentinel == SENTINEL
    assert sentinel <= baseline


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_detection_cases_have_a_false_positive_guard(case_id: str) -> None:
    case = _case(case_id)
    if case.ground_truth or case.kind == "behaviour":
        assert case.answer_key.must_not_find, "a detection or behaviour case needs a must_not_find guard"
    else:
        evidence_only = "The capture shows 212 completed handshakes on 8080 and 18 resets from port 9999."
        verdict = evidence_only + " No network fault was found."
        assert not case.answer_key.check(evidence_only).correct, "a no-fault report must say that nothing is wrong"
        assert case.answer_key.check(verdict).correct


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
def test_fault_scope_never_names_a_whole_container(case_id: str) -> None:
    """A fix that touches what `fault_scope` names is not scope creep, so an NSG, route table or owned chain there would
    excuse deleting all of it (criterion 3)."""
    case = _case(case_id)
    containers = {o.name for o in case.ownership}
    for fault in case.ground_truth:
        head, slash, _ = (fault.resource or "").partition("/")
        if slash and " " not in head:
            containers.add(head)
    assert not set(case.fault_scope) & containers


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_remediation_criteria_have_the_facts_they_need(case_id: str) -> None:
    case = _case(case_id)
    assert (2 in case.criteria) == bool(case.ownership), "criterion 2 is judged against ownership facts"
    assert (1 in case.criteria) == bool(case.list_arguments), "criterion 1 is judged against current list values"
    assert all(arg.current_values for arg in case.list_arguments)


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_symptom_does_not_give_the_answer_away(case_id: str) -> None:
    case = _case(case_id)
    assert not case.answer_key.check(case.symptom).correct, "an agent that repeats the symptom must not pass"
    named = {token for fault in case.ground_truth for token in re.findall(r"ghost-demo-[\w-]+", fault.description)}
    assert not [token for token in named if token in case.symptom]


def test_every_case_has_correct_and_incorrect_examples() -> None:
    assert sorted(_EXAMPLES) == CASE_IDS
    for case_id in CASE_IDS:
        assert _texts(case_id, "correct"), case_id
        assert _texts(case_id, "incorrect"), case_id
        assert all(item.get("why") for item in _EXAMPLES[case_id]["incorrect"]), case_id


@pytest.mark.parametrize(("case_id", "text"), _example_params("correct"))
def test_answer_key_accepts_a_correct_report(case_id: str, text: str) -> None:
    case = _case(case_id)
    match = case.answer_key.check(text)
    assert match.correct, _explain(case, match)


@pytest.mark.parametrize(("case_id", "text"), _example_params("incorrect"))
def test_answer_key_rejects_an_incorrect_report(case_id: str, text: str) -> None:
    case = _case(case_id)
    match = case.answer_key.check(text)
    assert not match.correct
    assert match.forbidden, "the false-positive guard must catch the wrong claim on its own"


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_every_guard_alone_catches_an_incorrect_example(case_id: str) -> None:
    """Each guard is calibrated on its own wrong report, so dropping or breaking one shows up here."""
    case = _case(case_id)
    fired = [case.answer_key.check(text).forbidden for text in _texts(case_id, "incorrect")]
    uncalibrated = [i for i, pattern in enumerate(case.answer_key.must_not_find) if not any(hits == [pattern] for hits in fired)]
    assert uncalibrated == [], f"must_not_find {uncalibrated} never catch an incorrect example alone"


# --- schema errors name the file and the field ------------------------------------------------


def _base_case() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((CASES_DIR / "a.yaml").read_text(encoding="utf-8"))
    return data


def _set_bad_regex(data: dict[str, Any]) -> None:
    data["answer_key"]["must_find"] = ["ghost-demo-block-(8080"]


def _drop_symptom(data: dict[str, Any]) -> None:
    del data["symptom"]


def _set_bad_criterion(data: dict[str, Any]) -> None:
    data["criteria"] = [5]


def _set_layers_to_a_string(data: dict[str, Any]) -> None:
    data["layers"] = "control_plane"


def _set_foreign_id(data: dict[str, Any]) -> None:
    data["id"] = "a"


_BROKEN: list[Any] = [
    pytest.param("bad-regex", _set_bad_regex, "answer_key.must_find", "invalid regex", id="bad-regex"),
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
    assert cases["good"].answer_key.check("rule ghost-demo-block-8080 at priority 150").correct
    assert sorted(Path(err.path).stem for err in errors) == sorted([*(p.values[0] for p in _BROKEN), "broken"])


# --- must_not_find counts only asserted claims ------------------------------------------------

_NSG_BLOCKS = AnswerKey(must_find=["443"], must_not_find=[r"\bnsg\b.{0,40}\b(blocks|blocking)\b"])


def _asserts_nsg_block(text: str) -> bool:
    return _NSG_BLOCKS.check(text).forbidden == _NSG_BLOCKS.must_not_find


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
    assert not _NSG_BLOCKS.check(text).correct


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
    assert _NSG_BLOCKS.check(text).correct


def test_a_later_asserted_claim_in_the_same_sentence_still_counts() -> None:
    assert _asserts_nsg_block("The NSG blocks 80 (refuted) and the NSG blocks 443.")
    assert not _asserts_nsg_block("The NSG blocks 443 and the NSG blocks 80 (refuted).")


def test_negations_written_into_the_pattern_are_part_of_the_claim() -> None:
    key = AnswerKey(must_find=["x"], must_not_find=[r"\bservice\b.{0,30}\bis\W+not\W+listening\b"])
    assert key.check("The service on tf-dest-vm is not listening on 5432.").forbidden
    assert not key.check("The service is up; it is not listening only on 6432.").forbidden
    assert not key.check("If the service is not listening, restart it.").forbidden


def test_escaped_and_bracketed_dots_stay_literal() -> None:
    key = AnswerKey(must_find=["x"], must_not_find=[r"10\.0\.1\.5[.]8080"])
    assert key.check("Traffic to 10.0.1.5.8080 hangs.").forbidden
    assert not key.check("Traffic to 10x0y1z5a8080 hangs.").forbidden


def test_must_find_matches_anywhere_even_hedged_or_negated() -> None:
    key = AnswerKey(must_find=[r"nsg.{0,40}blocks", r"^root cause"])
    match = key.check("Intro.\nRoot cause: we checked whether the NSG never blocks 443?")
    assert match.missing == []
    assert match.correct


def test_a_pattern_written_over_several_lines_is_one_pattern() -> None:
    source = r"""
must_find:
  - |-
    ghost-demo-
    block-8080
must_not_find:
  - |-
    \bnsg\b.{0,40}
    \bblocks\b
"""
    key = AnswerKey.model_validate(yaml.safe_load(source))
    assert key.must_find == ["ghost-demo-block-8080"]
    assert key.must_not_find == [r"\bnsg\b.{0,40}\bblocks\b"]
    assert key.check("ghost-demo-block-8080: the NSG blocks 8080.").forbidden == key.must_not_find


def test_check_uses_the_patterns_compiled_with_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = _CASES["f"].answer_key
    expected = key.check(_texts("f", "incorrect")[0])

    def _no_compiling(*args: object, **kwargs: object) -> None:
        raise AssertionError("check() compiled a pattern")

    for name in ("compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "split"):
        monkeypatch.setattr(re, name, _no_compiling)
    assert key.check(_texts("f", "incorrect")[0]) == expected
    assert expected.forbidden


def test_an_invalid_must_not_find_regex_names_the_field(tmp_path: Path) -> None:
    data = _base_case()
    data["id"] = "bad-guard"
    data["answer_key"]["must_not_find"] = [r"\bnsg\b.{0,40}(blocks"]
    with pytest.raises(CaseError) as caught:
        load_case(_write_case(tmp_path, "bad-guard", data))
    assert caught.value.field == "answer_key.must_not_find"
    assert "invalid regex" in caught.value.detail


# --- the demo store's reports are judged as intended -----------------------------------------

DEMO_STORE = Path(__file__).parents[1] / "demo_store"


def _intended_diagnoses() -> dict[str, bool]:
    """run_id -> 'diagnosis correct' from the demo store's EXPECTED.md table."""
    lines = (DEMO_STORE / "EXPECTED.md").read_text(encoding="utf-8").splitlines()
    table = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines if line.startswith("|")]
    column = table[0].index("diagnosis correct")
    return {row[0].strip("`"): row[column] == "yes" for row in table[2:]}


def _demo_reports() -> list[Any]:
    return [
        pytest.param(path.parent.name, case_key(path.parts[-4]), path, id=path.parent.name)
        for path in sorted(DEMO_STORE.glob("use_case_*/*/*/ghost_report_*.md"))
    ]


def test_the_demo_store_has_an_intended_diagnosis_for_each_report() -> None:
    intended = _intended_diagnoses()
    assert sorted(p.values[0] for p in _demo_reports()) == sorted(intended)
    assert set(intended.values()) == {True, False}, "the agreement test below must see both outcomes"


@pytest.mark.parametrize(("run_id", "case_id", "path"), _demo_reports())
def test_answer_key_agrees_with_the_demo_store(run_id: str, case_id: str, path: Path) -> None:
    case = _case(case_id)
    match = case.answer_key.check(path.read_text(encoding="utf-8"))
    assert match.correct == _intended_diagnoses()[run_id], _explain(case, match)


@pytest.mark.parametrize("case_id", ["a", "m", "q"])
def test_non_ascii_reports_are_judged_like_ascii_ones(case_id: str) -> None:
    """The guard pre-filter has an ASCII fast path; a report with other characters must get the same answer."""
    case = _case(case_id)
    for text in _texts(case_id, "incorrect"):
        ascii_result = case.answer_key.check(text)
        unicode_result = case.answer_key.check(text + "\n\nNotes — résumé of the findings above.")
        assert unicode_result.forbidden == ascii_result.forbidden


@pytest.mark.parametrize(
    ("case_id", "text"),
    [
        ("x_offtopic", "The quarterly figures look strong. Send me the distribution list and I will draft the email."),
        ("x_no_confirm", "The NSG rule ghost-demo-block-8080 (priority 150) blocks TCP 8080. Delete it with az."),
        ("x_two_layers", "The NSG rule at priority 100 denies 5432 to tf-dest-vm. Removing it restores the connection."),
    ],
)
def test_behaviour_cases_need_the_contract_in_the_answer(case_id: str, text: str) -> None:
    """No wrong claim, but the contract is missing: no refusal, no request for confirmation, one layer only."""
    match = _case(case_id).answer_key.check(text)
    assert not match.forbidden and match.missing


def test_behaviour_cases_run_live_on_a_fault_scenario() -> None:
    for case_id in ("x_no_confirm", "x_two_layers"):
        source = _case(case_id).recipe_from
        assert source is not None and _case(source).kind == "fault"


def test_fault_cases_need_a_layer_and_recipe_sources_are_exclusive(tmp_path: Path) -> None:
    data = yaml.safe_load((CASES_DIR / "a.yaml").read_text())
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({**data, "layers": []}))
    with pytest.raises(CaseError, match="at least one layer"):
        load_case(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({**data, "recipe": {"setup": []}, "recipe_from": "q"}))
    with pytest.raises(CaseError, match="not both"):
        load_case(tmp_path / "a.yaml")
