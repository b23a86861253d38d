"""Hand-written files (cases, variant specs, sentinel criteria) refuse a key their schema does not know, naming the
file, the line and the nearest valid key: a misspelt `wrong_claim:` would otherwise load as no wrong claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.base.errors import RecordError
from ghost_eval.cases.case import load_case
from ghost_eval.decide.sentinel import load_criteria
from ghost_eval.decide.variants import load_variant

REPO = Path(__file__).resolve().parents[1]


def _misspelt(source: Path, tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    line = next(i for i, text in enumerate(lines, 1) if text.lstrip().startswith(old.strip()))
    lines[line - 1] = lines[line - 1].replace(old.strip(), new.strip(), 1)
    target = tmp_path / source.name
    target.write_text("".join(lines), encoding="utf-8")
    return target, line


@pytest.mark.parametrize(
    ("old", "new", "near"),
    [("wrong_claims:", "wrong_claim:", "wrong_claims"), ("  - id: ban_on_dest", "  - idd: ban_on_dest", "id")],
)
def test_a_case_with_a_misspelt_key_is_refused_at_its_line(tmp_path: Path, old: str, new: str, near: str) -> None:
    path, line = _misspelt(REPO / "cases" / "m.yaml", tmp_path, old, new)
    with pytest.raises(
        RecordError, match=rf"{path}: line {line}: unknown key '{new.strip(' -').split(':')[0]}' \(did you mean '{near}'\?\)"
    ):
        load_case(path)


def test_variant_specs_and_sentinel_criteria_refuse_unknown_keys_too(tmp_path: Path) -> None:
    spec = REPO / "variants" / "tc-netfilter-boundary.yaml"
    first_key = next(line.split(":")[0] for line in spec.read_text().splitlines() if line and not line.startswith("#"))
    path, line = _misspelt(spec, tmp_path, f"{first_key}:", f"{first_key}x:")
    with pytest.raises(RecordError, match=rf"line {line}: unknown key '{first_key}x'"):
        load_variant(path)
    criteria = REPO / "sentinel" / "criteria.yaml"
    first_key = next(line.split(":")[0] for line in criteria.read_text().splitlines() if line and not line.startswith("#"))
    path, line = _misspelt(criteria, tmp_path, f"{first_key}:", f"{first_key}_:")
    with pytest.raises(RecordError, match=rf"line {line}: unknown key '{first_key}_'"):
        load_criteria(path)
    assert load_variant(spec) and load_criteria(criteria)  # the bundled files hold no unknown key
