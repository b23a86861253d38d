"""The blind kit gives a writer the cases without their answer keys, and a second expert a part without its labels."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench.blind_kit import ANSWER_KEYS, FAULT_KEYS, LABELS, write_kit, write_unlabelled
from bench.corpus_agreement import load_items


def _keys(value: object) -> set[str]:
    """Every mapping key at any depth of a loaded YAML value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_the_kit_holds_every_fault_case_and_no_answer_key(tmp_path: Path) -> None:
    assert write_kit(tmp_path / "kit") == 25
    for path in (tmp_path / "kit" / "cases").glob("*.yaml"):
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert not ANSWER_KEYS & _keys(case), path.name  # h's lab environment restates key facts and scope, t's phases
        assert "lab" not in case.get("environments", {}) or case["environments"]["lab"].get("differences"), path.name
        assert all(not FAULT_KEYS & set(fault) for fault in case["ground_truth"]), (
            path.name
        )  # d's faults say `reported`, v's `probe_visible`
    assert (tmp_path / "kit" / "FORMAT.md").read_text(encoding="utf-8").startswith("# Writing a blind corpus part")


def test_a_part_for_a_second_expert_keeps_every_item_and_no_label(tmp_path: Path) -> None:
    count = write_unlabelled("blind16", tmp_path)
    held = [
        i
        for kind in ("fixes", "diagnosis")
        for items in load_items(kind, None).values()
        for i in items
        if i["split"] == "blind16"
    ]
    assert count == len(held) == 205
    written = []
    for kind, key in (("fixes", "fixes"), ("diagnosis", "paragraphs")):
        for path in (tmp_path / "blind16" / kind).glob("*.yaml"):
            items = yaml.safe_load(path.read_text(encoding="utf-8"))[key]
            assert all(not LABELS & set(item) for item in items), path
            assert kind == "fixes" or all("style" not in item for item in items)  # "wrong_host" gives a label away
            written += [item["id"] for item in items]
    assert sorted(written) == sorted(i["id"] for i in held)
    with pytest.raises(FileExistsError):
        write_unlabelled("blind16", tmp_path)  # nothing already there is overwritten
    with pytest.raises(SystemExit, match="no corpus part 'blind99'"):
        write_unlabelled("blind99", tmp_path / "other")
