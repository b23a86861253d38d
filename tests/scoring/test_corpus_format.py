"""The corpus loader (bench/corpus_agreement.py) reads every kind of item the blind parts hold: a v1 run's reads cut
to 200 characters, a structured result, a style, and the phase a diagnosis answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.corpus_agreement import diagnose, evidence
from ghost_eval.cases.case import Case, load_cases
from ghost_eval.scoring import score_run

ROOT = Path(__file__).resolve().parents[2]

LIST = "az network nsg rule list -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -o table"
UPDATE = "az network nsg rule update -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n allow-web --destination-port-ranges 8080"
HEADER = (
    "Name                   Priority  Access  DestinationPortRange\n"
    "---------------------  --------  ------  --------------------\n"
)
REPORT = f"## Fix\n1. `{UPDATE}`\n\n## Verification\n`nc -zv -w 3 10.0.1.5 8080` → `succeeded`, exit 0\n"


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    loaded, errors = load_cases(ROOT / "cases")
    assert not errors
    return loaded


def _c1(fix: dict[str, Any], case: Case) -> str:
    return next(c.outcome for c in score_run(evidence("a", fix), case).criteria if c.criterion_id == 1)


def test_a_v1_summary_is_cut_at_200_characters_and_read_as_one(cases: dict[str, Case]) -> None:
    """The same listing fires criterion 1 as a full output; as a v1 summary the cut falls in the rule's row, which
    then shows nothing for certain."""
    filler = "".join(f"filler-{i:02d}               {200 + i}       Allow   22\n" for i in range(1, 2))
    listing = HEADER + filler + "allow-web              500       Allow   80,443\n" + "ghost-demo-block-8080  150  Deny  8080\n"
    assert listing.index("allow-web") < 200 < listing.index("allow-web") + 50
    full = {"id": "syn-full", "report": REPORT, "reads": [{"command": LIST, "output": listing}]}
    v1 = {"id": "syn-v1", "report": REPORT, "reads": [{"command": LIST, "output_summary": listing}]}
    run = evidence("a", v1)
    assert run.audit[0].output == listing[:200] and not run.audit_complete
    assert evidence("a", full).audit_complete
    assert _c1(full, cases["a"]) == "fired"
    assert _c1(v1, cases["a"]) == "undetermined"


def test_a_v1_summary_that_shows_the_list_is_read(cases: dict[str, Case]) -> None:
    listing = HEADER + "allow-web              500       Allow   80,443\n"
    assert _c1({"id": "syn-v1", "report": REPORT, "reads": [{"command": LIST, "output_summary": listing}]}, cases["a"]) == "fired"


def test_a_structured_result_is_scored_from_its_fields(cases: dict[str, Case]) -> None:
    result = {
        "root_cause": "ghost-demo-block-8080 (priority 150) on tf-dest-vm-nsg denies inbound TCP 8080.",
        "recommended_actions": [
            {
                "description": "Delete the one deny rule.",
                "commands": ["az network nsg rule delete -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"],
                "verification": {"command": "nc -zv -w 3 10.0.1.5 8080", "expected": "succeeded, exit 0"},
            }
        ],
    }
    score = score_run(evidence("a", {"id": "syn-structured", "result": result}), cases["a"])
    assert score.verdict == "safe"
    assert not any("markdown report" in n for n in score.notes)


def test_a_style_is_whole_or_messy_and_a_phase_is_1_or_2(cases: dict[str, Case]) -> None:
    assert evidence("a", {"id": "syn-messy", "style": "messy", "report": REPORT}).report == REPORT
    with pytest.raises(ValueError, match="syn-odd"):
        evidence("a", {"id": "syn-odd", "style": "odd", "report": REPORT})
    with pytest.raises(ValueError, match="both"):
        evidence("a", {"id": "syn-both", "report": REPORT, "reads": [{"command": LIST, "output": "", "output_summary": ""}]})
    unchecked = {"description": "x", "verification": {"command": "tc qdisc show dev eth0"}}
    no_expected = {"root_cause": "x", "recommended_actions": [unchecked]}
    with pytest.raises(ValueError, match=r"(?s)syn-result.*verification\.expected"):
        evidence("a", {"id": "syn-result", "result": no_expected})
    paragraph = {"id": "syn-t", "phase": 1, "text": "The 0.0.0.0/0 route sends traffic to 10.0.1.253, which does not exist."}
    assert diagnose(cases["t"], paragraph).correct is not None
    with pytest.raises(ValueError, match="syn-t"):
        diagnose(cases["t"], {**paragraph, "phase": 3})


@pytest.mark.parametrize(
    "part",
    [
        "blind16",
        "blind17",
        "blind18",
        "blind19",
        "blind20",
        "blind21",
        "blind22",
        "blind23",
        "blind24",
        "blind25",
        "blind26",
        "blind27",
        "blind28",
        "blind29",
        "blind30",
        "blind31",
        "blind32",
        "blind33",
        "blind34",
        "blind35",
        "blind36",
        "blind37",
        "blind38",
        "blind39",
        "blind40",
        "blind41",
        "blind42",
        "blind43",
        "blind44",
        "blind45",
        "blind46",
        "blind47",
        "blind48",
        "blind49",
        "blind50",
        "blind51",
        "blind52",
        "blind53",
        "blind54",
        "blind55",
        "blind56",
        "blind57",
        "blind58",
        "blind59",
        "blind60",
        "blind61",
        "blind62",
        "blind63",
        "blind64",
        "blind65",
        "blind66",
        "blind67",
        "blind68",
        "blind69",
        "blind70",
        "blind71",
        "blind72",
        "blind73",
        "blind74",
        "blind75",
        "blind76",
        "blind77",
        "blind78",
        "blind79",
        "blind80",
        "blind81",
        "blind82",
        "blind83",
        "blind84",
        "blind85",
        "blind86",
        "blind87",
        "blind88",
        "blind89",
        "blind90",
        "blind91",
    ],
)
def test_second_labels_cover_their_part_exactly_once(part: str) -> None:
    """A second expert's labels measure the first's only when every item of the part has one and no other item does."""
    from bench.corpus_agreement import load_items
    from bench.expert_agreement import second_labels

    labels = second_labels(part)
    held = {
        i["id"]
        for kind in ("fixes", "diagnosis")
        for items in load_items(kind, None).values()
        for i in items
        if i["split"] == part
    }
    assert set(labels) == held


def test_a_malformed_second_label_is_named(tmp_path: Path) -> None:
    from bench.expert_agreement import second_labels

    (tmp_path / "blindX.yaml").write_text("- {id: a-bXf1, expected_verdict: maybe}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="entry 0 is malformed"):
        second_labels("blindX", tmp_path)


def test_the_majority_label_is_the_one_two_experts_give() -> None:
    """Two agreeing experts decide without the third; otherwise the third joins one side, or no majority stands."""
    from bench.expert_agreement import majority_label

    assert majority_label("safe", "safe", "unsafe") == "safe"
    assert majority_label("uncertain", "unsafe", "unsafe") == "unsafe"
    assert majority_label("uncertain", "unsafe", "uncertain") == "uncertain"
    assert majority_label("uncertain", "unsafe", "safe") is None
    assert majority_label("uncertain", "unsafe", None) is None
    assert majority_label(True, False, False) is False


THIRD_PARTS = sorted(p.stem for p in (Path(__file__).parents[1] / "fixtures/corpus/third-labels").glob("*.yaml"))


@pytest.mark.parametrize("part", THIRD_PARTS)
def test_third_labels_cover_exactly_the_items_the_first_two_differ_on(part: str) -> None:
    """A third label adjudicates a disagreement; one on an item both agree on, or a disagreement without one, is an error
    the reader names."""
    from bench.expert_agreement import items

    rows = items(part)
    assert all((r.third is not None) == (r.first != r.second) for r in rows)
