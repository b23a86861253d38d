"""Teams' checks: found by entry point (a real installed distribution's metadata) or import path, run on a
replayed run as `check_<name>` metrics; two checks of one name are an error naming both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ghost_eval.base.errors import ExtensionError
from ghost_eval.cli import main
from ghost_eval.evaluation.extensions import load_checks, load_criteria
from ghost_eval.promptfoo import adapters
from ghost_eval.promptfoo.adapters import replay_response
from ghost_eval.promptfoo.keys import GRADES_KEY
from ghost_eval.scoring.registry import criteria, unregister_criterion
from tests.judge.helpers import demo_copy
from tests.scoring.team_criterion import NO_INSTALL

CHECKS = """
from ghost_eval.evaluation.extensions import CheckOutcome


def mentions_fail2ban(evidence, case):
    return "fail2ban" in evidence.report


def explains(evidence, case):
    return CheckOutcome(name="ignored", passed=False, reason=f"case {case.id if case else None}")


def broken(evidence, case):
    raise RuntimeError("team bug")
"""


@pytest.fixture
def team_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module `teamchecks` importable from sys.path, and a distribution registering one of its checks."""
    site = tmp_path / "site"
    (site / "teamchecks-1.0.dist-info").mkdir(parents=True)
    (site / "teamchecks.py").write_text(CHECKS)
    (site / "teamchecks-1.0.dist-info/METADATA").write_text("Metadata-Version: 2.1\nName: teamchecks\nVersion: 1.0\n")
    (site / "teamchecks-1.0.dist-info/entry_points.txt").write_text(
        "[ghost_eval.checks]\nnetops.fail2ban_named = teamchecks:mentions_fail2ban\n"
    )
    monkeypatch.syspath_prepend(str(site))
    return site


def test_entry_point_and_import_path_checks_load_by_name(team_package: Path) -> None:
    checks = load_checks(["teamchecks:explains", "netops.bug=teamchecks:broken"])
    assert sorted(checks) == ["explains", "netops.bug", "netops.fail2ban_named"]
    assert "entry point netops.fail2ban_named of teamchecks" in checks["netops.fail2ban_named"].source


def test_two_checks_of_one_name_are_an_error_naming_both(team_package: Path) -> None:
    with pytest.raises(ExtensionError, match=r"entry point netops.fail2ban_named of teamchecks.*import path netops"):
        load_checks(["netops.fail2ban_named=teamchecks:explains"])


@pytest.mark.parametrize("spec", ["teamchecks", "teamchecks:absent", "no_such_module:f"])
def test_a_check_that_cannot_be_imported_is_named(team_package: Path, spec: str) -> None:
    with pytest.raises(ExtensionError, match=spec):
        load_checks([spec])


def _replay(checks: list[str]) -> dict[str, Any]:
    adapters._team_checks.cache_clear()  # a worker keeps its checks; each test installs its own
    response = replay_response(
        {"model": "claude-haiku-4-5-20251001", "checks": checks}, {"vars": {"use_case": "m"}, "repeatIndex": None}
    )
    assert "error" not in response, response
    grade: dict[str, Any] = response["metadata"][GRADES_KEY]["checks"]
    return grade


def test_replay_grades_every_team_check_and_a_raising_one_fails_alone(team_package: Path) -> None:
    grade = _replay(["teamchecks:explains", "netops.bug=teamchecks:broken"])
    assert grade["namedScores"] == {"check_netops.fail2ban_named": 1.0, "check_explains": 0.0, "check_netops.bug": 0.0}
    assert grade["pass"] is False
    assert "explains: fail (case m)" in grade["reason"] and "team bug" in grade["reason"]


def test_without_team_checks_the_grade_passes_and_says_so() -> None:
    assert _replay([]) == {"pass": True, "score": 1.0, "reason": "no team checks configured"}


def test_a_check_that_cannot_load_fails_the_grade_not_the_row(team_package: Path) -> None:
    grade = _replay(["teamchecks:absent"])
    assert grade["pass"] is False and "teamchecks:absent" in grade["reason"]


def test_entry_points_are_found_in_a_fresh_interpreter(team_package: Path) -> None:
    """The same discovery, without this process's sys.path changes: what Promptfoo's worker sees."""
    code = "from ghost_eval.evaluation.extensions import load_checks; import json; print(json.dumps(sorted(load_checks())))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(team_package), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["netops.fail2ban_named"]


def _scored(store: Path, capsys: pytest.CaptureFixture[str], *checks: str) -> list[dict[str, Any]]:
    args = ["score", "--store", str(store), "--use-case", "m", "--format", "jsonl", "--jobs", "1"]
    assert main(args + (["--checks", *checks] if checks else [])) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _verdict_files(store: Path) -> int:
    return len(list(store.rglob("verdicts/deterministic@*.json")))


def test_score_runs_team_checks_beside_unchanged_built_in_verdicts(
    team_package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = demo_copy(tmp_path)
    plain = _scored(store, capsys)
    with_checks = _scored(store, capsys, "teamchecks:explains", "netops.bug=teamchecks:broken")
    assert len(plain) == len(with_checks) == 3
    for before, after in zip(plain, with_checks, strict=True):
        assert [o["name"] for o in before["team_checks"]] == ["netops.fail2ban_named"]  # the installed entry point
        assert {k: v for k, v in after.items() if k != "team_checks"} == {k: v for k, v in before.items() if k != "team_checks"}
        outcomes = {o["name"]: o for o in after["team_checks"]}
        assert sorted(outcomes) == ["explains", "netops.bug", "netops.fail2ban_named"]
        assert outcomes["netops.bug"]["passed"] is False and outcomes["netops.bug"]["error"] == "RuntimeError('team bug')"
        assert outcomes["explains"] == {**outcomes["explains"], "passed": False, "reason": "case m", "error": None}
        assert outcomes["explains"]["version"].startswith("src-")
    assert (
        main(["score", "--store", str(store), "--use-case", "m", "--no-write", "--checks", "netops.bug=teamchecks:broken"]) == 0
    )
    assert "netops.bug error" in capsys.readouterr().out  # the table names the check that raised


def test_a_cached_verdict_is_reused_only_for_the_same_team_checks(
    team_package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = demo_copy(tmp_path)
    _scored(store, capsys)
    assert _verdict_files(store) == 3
    first = _scored(store, capsys, "teamchecks:explains")
    assert _verdict_files(store) == 6 and all(len(r["team_checks"]) == 2 for r in first)  # not the verdict without them
    assert _scored(store, capsys, "teamchecks:explains") == first and _verdict_files(store) == 6  # the same checks: reused
    (team_package / "teamchecks.py").write_text(CHECKS.replace('f"case {case.id', 'f"Case {case.id'))
    sys.modules.pop("teamchecks", None)  # an edited check is a new version (a hash of its source)
    edited = _scored(store, capsys, "teamchecks:explains")
    assert _verdict_files(store) == 9 and {o["reason"] for r in edited for o in r["team_checks"]} >= {"Case m"}


def test_a_check_declares_its_version_and_what_it_reads(team_package: Path) -> None:
    (team_package / "versioned.py").write_text(
        "def check(evidence, case):\n    return True\ncheck.version = '7'\ncheck.reads = ('report',)\n"
    )
    (entry,) = [c for name, c in load_checks(["versioned:check"]).items() if name == "check"]
    assert (entry.version, entry.reads) == ("7", ("report",))
    assert load_checks()["netops.fail2ban_named"].reads == ("evidence", "case")


@pytest.fixture
def team_criterion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution on sys.path (nothing installed) whose entry point names a team's fifth criterion; removed after."""
    site = tmp_path / "criteria-site"
    (site / "teamcriteria-1.0.dist-info").mkdir(parents=True)
    (site / "teamcriteria-1.0.dist-info/METADATA").write_text("Metadata-Version: 2.1\nName: teamcriteria\nVersion: 1.0\n")
    (site / "teamcriteria-1.0.dist-info/entry_points.txt").write_text(
        "[ghost_eval.criteria]\nno_install = tests.scoring.team_criterion:NO_INSTALL\n"
    )
    monkeypatch.syspath_prepend(str(site))
    try:
        yield site
    finally:
        if NO_INSTALL in criteria():
            unregister_criterion(NO_INSTALL.id)


def test_an_installed_criterion_is_registered_where_commands_load_their_cases(
    team_criterion: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert [c.id for c in criteria()] == [1, 2, 3, 4]
    (row, *_) = _scored(demo_copy(tmp_path), capsys)
    assert [c["criterion_id"] for c in row["criteria"]] == [1, 2, 3, 4, 5]
    assert row["criteria"][4]["criterion_label"] == "Software installed"
    assert load_criteria() == [NO_INSTALL] and [c.id for c in criteria()] == [1, 2, 3, 4, 5]  # loading again adds none


def test_an_entry_point_that_is_no_criterion_is_an_error_naming_it(team_criterion: Path) -> None:
    (team_criterion / "teamcriteria-1.0.dist-info/entry_points.txt").write_text(
        "[ghost_eval.criteria]\nnot_one = tests.scoring.team_criterion:RUBRIC\n"
    )
    with pytest.raises(ExtensionError, match=r"not_one of teamcriteria .*: is a str, not a Criterion"):
        load_checks()
