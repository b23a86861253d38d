"""A case path: the bundled cases and a team's own, namespaced; clashes and bare team ids are errors naming files."""

from __future__ import annotations

import shutil
from pathlib import Path

from ghost_eval.evaluation.evaluate import BUNDLED_CASES, load_case_set
from tests.conftest import REPO

BUNDLED = REPO / "cases"


def _team_case(folder: Path, case_id: str) -> Path:
    """A copy of case m under a new id (a valid schema-2 case)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{case_id}.yaml"
    path.write_text((BUNDLED / "m.yaml").read_text().replace("id: m\n", f"id: {case_id}\n", 1))
    return path


def test_team_cases_join_the_bundled_ones(tmp_path: Path) -> None:
    _team_case(tmp_path / "cases", "netops.ban")
    cases, errors = load_case_set([BUNDLED_CASES, "cases"], tmp_path)
    assert errors == []
    assert "netops.ban" in cases and "m" in cases


def test_the_same_id_in_two_teams_folders_names_both_files(tmp_path: Path) -> None:
    first = _team_case(tmp_path / "one", "shared.ban")
    second = _team_case(tmp_path / "two", "shared.ban")
    cases, errors = load_case_set([BUNDLED_CASES, str(tmp_path / "one"), str(tmp_path / "two")])
    assert "shared.ban" not in cases  # neither copy is used
    (error,) = errors
    assert error.path == str(second) and str(first) in str(error) and error.field == "id"


def test_a_team_case_must_be_namespaced(tmp_path: Path) -> None:
    _team_case(tmp_path / "cases", "ban")
    cases, errors = load_case_set(f"{BUNDLED_CASES}:{tmp_path / 'cases'}")
    assert "ban" not in cases
    assert "namespaced" in str(errors[0]) and errors[0].path.endswith("cases/ban.yaml")


def test_a_folder_of_its_own_replaces_the_bundled_cases_as_before(tmp_path: Path) -> None:
    shutil.copy(BUNDLED / "m.yaml", tmp_path / "m.yaml")
    cases, errors = load_case_set(tmp_path)
    assert errors == [] and sorted(cases) == ["m"]


def test_the_bundled_folder_named_twice_loads_once() -> None:
    cases, errors = load_case_set([BUNDLED_CASES, BUNDLED])
    assert errors == [] and "m" in cases


def test_a_missing_case_folder_is_named(tmp_path: Path) -> None:
    _, errors = load_case_set([BUNDLED_CASES, "nowhere"], tmp_path)
    assert [e.path for e in errors] == [str(tmp_path / "nowhere")]
