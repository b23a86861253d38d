"""`ghost-eval validate`: every problem named by file and line; exit 1 on any; nothing needs a store or tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.promptfoo.validate import validate_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    assert main(["init", str(tmp_path), "--team", "netops"]) == 0
    return tmp_path


def _lines(path: Path, needle: str) -> int:
    """The 1-based line of the first line containing `needle`."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_a_bad_field_deep_in_a_case_is_named_by_file_and_line(project: Path) -> None:
    case = project / "cases/netops.example.yaml"
    _edit(case, "    kind: fault\n", "    kind: symptom\n")
    (finding,) = validate_project(project)
    assert finding.file == str(case)
    assert finding.line == _lines(case, "kind: symptom")
    assert "key_facts.1.kind" in finding.message


def test_a_yaml_syntax_error_is_named_by_line(project: Path) -> None:
    case = project / "cases/netops.example.yaml"
    _edit(case, "fault_scope: [8443/tcp]\n", "fault_scope: [8443/tcp\n")
    (finding,) = validate_project(project)
    assert finding.file == str(case) and finding.line is not None and finding.line >= _lines(case, "fault_scope")


def test_an_answer_key_that_rejects_its_own_root_cause(project: Path) -> None:
    case = project / "cases/netops.example.yaml"
    _edit(case, "      - '8443'\n", "      - '9443'\n")
    (finding,) = validate_project(project)
    assert finding.file == str(case) and finding.line == _lines(case, "id: drop_rule")
    assert "A DROP rule matches tcp port 8443." in finding.message and "missing" in finding.message


def test_an_unnamespaced_team_case(project: Path) -> None:
    case = project / "cases/netops.example.yaml"
    bare = project / "cases/example.yaml"
    bare.write_text(case.read_text().replace("id: netops.example", "id: example"))
    (finding,) = validate_project(project)
    assert finding.file == str(bare) and finding.line == _lines(bare, "id: example")


def test_config_problems_name_the_provider_entry(project: Path) -> None:
    config = project / "sentinel/promptfooconfig.yaml"
    _edit(config, "file://../providers/replay.py", "file://../providers/gone.py")
    _edit(
        config,
        "claude-sonnet-4-6, cases: [bundled, ../cases], addon: none}",
        "claude-sonnet-4-6, cases: [bundled, ../cases], addon: none, checks: [no_such:c]}",
    )
    _edit(project / "variants/promptfooconfig.yaml", "addon: addons/tc-netfilter-boundary.txt", "addon: addons/absent.txt")
    found = {(Path(f.file).parent.name, f.line): f.message for f in validate_project(project)}
    assert "gone.py does not exist" in found["sentinel", _lines(config, "gone.py")]
    third = _lines(config, "no_such:c") - 2  # the entry starts at its `- id:` line
    assert "cannot be imported" in found["sentinel", third]
    variants = project / "variants/promptfooconfig.yaml"
    assert "absent.txt does not exist" in found["variants", _lines(variants, "absent.txt") - 2]


def test_a_suite_whose_rows_cannot_be_built(project: Path) -> None:
    config = project / "promptfooconfig.yaml"
    _edit(config, "suite: baseline", "suite: nightly")
    (finding,) = validate_project(project)
    assert finding.line == _lines(config, "path: file://suites/tests.py") and "unknown suite 'nightly'" in finding.message


def test_sentinel_criteria_naming_a_case_not_on_the_case_path(project: Path) -> None:
    criteria = project / "sentinel/criteria.yaml"
    _edit(criteria, "cases: [m, f, q]", "cases:\n  - m\n  - f\n  - q\n  - netops.absent")
    _edit(criteria, "checks:\n", "checks:\n  netops.absent:\n    - {kind: diagnosis}\n")
    findings = validate_project(project)
    assert any(f.file == str(criteria) and f.line == _lines(criteria, "netops.absent") for f in findings), findings


def test_the_cli_exits_1_and_prints_file_and_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = project / "cases/netops.example.yaml"
    _edit(case, "criteria: [3, 4]", "criteria: [3, 7]")
    assert main(["validate", str(project)]) == 1
    assert f"{case}:{_lines(case, 'criteria: [3, 7]')}: field 'criteria'" in capsys.readouterr().err
