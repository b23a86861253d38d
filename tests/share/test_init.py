"""`ghost-eval init`: the scaffold is complete, validates clean, and never overwrites."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ghost_eval.cli import main
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.promptfoo.adapters import suite_tests


def test_init_writes_three_suites_shims_an_example_case_and_ci(tmp_path: Path) -> None:
    target = tmp_path / "Team Repo"
    assert main(["init", str(target), "--team", "netops"]) == 0
    for rel in (
        "promptfooconfig.yaml",
        "variants/promptfooconfig.yaml",
        "sentinel/promptfooconfig.yaml",
        "providers/replay.py",
        "assertions/grades.yaml",
        "suites/tests.py",
        "sentinel/criteria.yaml",
        "variants/addons/tc-netfilter-boundary.txt",
        "cases/netops.example.yaml",
        "README.md",
        "ci/ghost-eval.yml",
    ):
        assert (target / rel).is_file(), rel
    cases, errors = load_case_set(["bundled", "cases"], target)
    assert errors == [] and cases["netops.example"].title.startswith("EXAMPLE")
    config = yaml.safe_load((target / "sentinel/promptfooconfig.yaml").read_text())
    assert config["providers"][0]["id"] == "file://../providers/replay.py"
    assert config["providers"][0]["config"]["cases"] == ["bundled", "../cases"]
    assert config["tests"]["config"] == {"suite": "sentinel", "cases": ["bundled", "cases"]}
    rows = suite_tests("baseline", ["bundled", "cases"], target)
    assert len(rows) == 10  # the example is not a baseline case until the team has runs of it


def test_the_team_defaults_to_the_folders_name(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path / "Net_Ops")]) == 0
    assert (tmp_path / "Net_Ops/cases/net_ops.example.yaml").is_file()


def test_a_team_name_that_is_no_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "x"), "--team", "9lives"]) == 2
    assert "team name '9lives'" in capsys.readouterr().err


def test_init_never_overwrites_and_names_what_exists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README.md").write_text("ours\n")
    assert main(["init", str(tmp_path), "--team", "netops"]) == 2
    assert f"{tmp_path / 'README.md'}" in capsys.readouterr().err
    assert (tmp_path / "README.md").read_text() == "ours\n"
    assert not (tmp_path / "promptfooconfig.yaml").exists()


def test_the_scaffold_validates_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["init", str(tmp_path), "--team", "netops"])
    assert main(["validate", str(tmp_path)]) == 0
    assert "0 problem(s)" in capsys.readouterr().out
